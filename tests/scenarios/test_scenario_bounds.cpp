// Every numeric scenario and config.json field bounded by physical sense, names
// printable, duplicate config.json keys refused, each at load with file:line:column; and
// scenarios read from pipes (one open, no re-read).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope {
namespace {

const char* kBoundsValid = R"(name: t
model:
  num_hidden_layers: 4
  hidden_size: 256
  num_attention_heads: 8
  num_key_value_heads: 4
  intermediate_size: 512
  vocab_size: 1000
batch:
  packed_tokens: 512
  min_len: 16
  max_len: 128
fixes:
  packing:
    variants: [rebuild, cached]
measure:
  warmup_steps: 0
  repeat_steps: 2
)";

std::string replaced_in(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

std::string parse_error(const std::string& text) {
  try {
    scenario::parse_scenario(text, "x.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Row {
  const char* name;
  const char* from;
  std::string to;
  const char* error;  // substring; nullptr: loads
};

// One row per bounded field: the largest sensible value loads, one past it (or an absurd
// one from the issue) is refused at the field's line and column with the bound and reason.
const Row kRows[] = {
    {"layers at the bound", "num_hidden_layers: 4", "num_hidden_layers: 1024", nullptr},
    {"layers 1e9 (issue: 17 GB then bad_alloc)", "num_hidden_layers: 4", "num_hidden_layers: 1000000000",
     "x.yaml:3:22: model.num_hidden_layers: expected an integer in 1..1024 (the largest published LLMs"},
    {"layers 0", "num_hidden_layers: 4", "num_hidden_layers: 0", "x.yaml:3:22: model.num_hidden_layers"},
    {"hidden size", "hidden_size: 256", "hidden_size: 1000000",
     "x.yaml:4:16: model.hidden_size: expected an integer in 1..131072"},
    {"heads", "num_attention_heads: 8", "num_attention_heads: 4096",
     "model.num_attention_heads: expected an integer in 1..1024"},
    {"intermediate", "intermediate_size: 512", "intermediate_size: 2000000000", "model.intermediate_size"},
    {"vocabulary", "vocab_size: 1000", "vocab_size: 100000000", "x.yaml:8:15: model.vocab_size"},
    {"experts", "vocab_size: 1000", "vocab_size: 1000\n  num_local_experts: 100000\n  num_experts_per_tok: 2",
     "x.yaml:9:22: model.num_local_experts: expected an integer in 0..1024"},
    {"rope theta", "vocab_size: 1000", "vocab_size: 1000\n  rope_theta: 1e300", "x.yaml:9:15: model.rope_theta"},
    {"sliding window", "vocab_size: 1000", "vocab_size: 1000\n  sliding_window: 2000000000", "model.sliding_window"},
    {"tokens 2e9 (issue: grows past 5-16 GB)", "packed_tokens: 512", "packed_tokens: 2000000000",
     "x.yaml:10:18: batch.packed_tokens: expected an integer in 1..16777216"},
    {"max_len", "max_len: 128", "max_len: 2000000000", "x.yaml:12:12: batch.max_len"},
    {"repeat steps 1e8 (issue)", "repeat_steps: 2", "repeat_steps: 100000000",
     "x.yaml:18:17: measure.repeat_steps: expected an integer in 1..10000"},
    {"repeat steps at the bound", "repeat_steps: 2", "repeat_steps: 10000", nullptr},
    {"warmup steps", "warmup_steps: 0", "warmup_steps: 1000000", "x.yaml:17:17: measure.warmup_steps"},
    {"prefetch depth", "fixes:\n  packing:\n    variants: [rebuild, cached]",
     "offload: true\nfixes:\n  offload:\n    prefetch_depth: 100000",
     "fixes.offload.prefetch_depth: expected an integer in 1..1024"},
    // Names (issue item 5): UTF-8, printable, at most 128 characters, at their line:column.
    {"name with a newline", "name: t", "name: \"a\\nb\"",
     "x.yaml:1:7: name: the name holds a control character (U+000A"},
    {"name with NUL", "name: t", "name: \"a\\0b\"", "x.yaml:1:7: name: the name holds a control character (U+0000"},
    {"name of invalid UTF-8", "name: t", "name: t\xFF", "name: the name is not valid UTF-8"},
    {"name of 1 MB", "name: t", "name: " + std::string(1 << 20, 'n'),
     "name: the name has 1048576 characters; at most 128"},
    {"name of 128 characters", "name: t", "name: " + std::string(128, 'n'), nullptr},
    {"name with an escape sequence", "name: t", "name: \"red\\e[31m\"", "control character (U+001B"},
    {"model name", "model:\n", "model:\n  name: \"x\\ty\"\n", "x.yaml:3:9: model.name: the name holds a control"},
    {"unicode name", "name: t", "name: Modèle µ 日本語", nullptr},
};

class ScenarioBounds : public ::testing::TestWithParam<Row> {};

TEST_P(ScenarioBounds, Row) {
  const Row& r = GetParam();
  const std::string err = parse_error(replaced_in(kBoundsValid, r.from, r.to));
  if (r.error == nullptr) {
    EXPECT_EQ(err, "") << r.name;
  } else {
    EXPECT_NE(err.find(r.error), std::string::npos) << r.name << "\n  got: " << err.substr(0, 400);
  }
}

std::string row_name(const ::testing::TestParamInfo<Row>& row) {
  std::string n = row.param.name;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Fields, ScenarioBounds, ::testing::ValuesIn(kRows), row_name);

TEST(ScenarioBounds, ShippedScenariosLoad) {
  for (const char* f :
       {"qwen3-0.6b.yaml", "qwen3-0.6b-lsweep.yaml", "llama-3.2-1b.yaml", "qwen3-14b.yaml", "gpt-oss-20b.yaml"})
    EXPECT_NO_THROW(scenario::load_scenario(test::source_dir() / "scenarios" / f)) << f;
}

TEST(ScenarioBounds, ChangedInCodeIsCheckedToo) {
  scenario::Scenario s = scenario::parse_scenario(kBoundsValid, "x.yaml");
  s.measure.repeat_steps = 1000000;  // e.g. from --repeats
  EXPECT_THROW(scenario::validate_scenario(s), InputError);
  s.measure.repeat_steps = 2;
  s.name = "line\nbreak";
  EXPECT_THROW(scenario::validate_scenario(s), InputError);
}

TEST(ScenarioBounds, OversizedFileRefusedBeforeParsing) {
  test::TempDir dir;
  const auto p = dir / "big.yaml";
  {
    std::ofstream out(p);
    out << kBoundsValid << "# " << std::string(17 << 20, 'x') << "\n";
  }
  try {
    scenario::load_scenario(p);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 16.0 MiB"), std::string::npos) << e.what();
  }
}

TEST(ScenarioPipes, LoadsFromAFifoAndAPipeOnce) {
  test::TempDir dir;
  const auto fifo = dir / "s.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << kBoundsValid; });
  const scenario::Scenario s = scenario::load_scenario(fifo);
  writer.join();
  EXPECT_EQ(s.name, "t");

  write_file_atomic(dir / "gz.yaml.gz", std::string(kBoundsValid));
  std::string gz;
  {
    std::ifstream in(dir / "gz.yaml.gz", std::ios::binary);
    gz.assign(std::istreambuf_iterator<char>(in), {});
  }
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread pw([&] {
    (void)!::write(fds[1], gz.data(), gz.size());
    ::close(fds[1]);
  });
  const scenario::Scenario g =
      scenario::load_scenario("/dev/fd/" + std::to_string(fds[0]));  // <(zcat ...) and <(cat x.gz) alike
  pw.join();
  ::close(fds[0]);
  EXPECT_EQ(g.name, "t");
}

// ---- Hugging Face config.json ----------------------------------------------------------

const char* kConfig = R"({
  "num_hidden_layers": 28,
  "hidden_size": 1024,
  "num_attention_heads": 16,
  "num_key_value_heads": 8,
  "head_dim": 128,
  "intermediate_size": 3072,
  "vocab_size": 151936
})";

std::string config_error(const std::string& text) {
  try {
    scenario::parse_hf_config(text, "config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HfConfigBounds, Table) {
  const Row rows[] = {
      {"valid", "", "", nullptr},
      {"layers 1e9 (issue)", "\"num_hidden_layers\": 28", "\"num_hidden_layers\": 1000000000",
       "config.json:2:3: num_hidden_layers: expected an integer in 1..1024"},
      {"duplicate key (issue: last-wins)", "\"vocab_size\": 151936", "\"vocab_size\": 151936,\n  \"hidden_size\": 4",
       "config.json:9:3: hidden_size: duplicate key (first at line 3, column 3); give it once"},
      {"duplicate key spelled with an escape", "\"vocab_size\": 151936",
       "\"vocab_size\": 151936,\n  \"hidden_\\u0073ize\": 4", "config.json:9:3: hidden_size: duplicate key"},
      {"duplicate key in a nested object", "\"vocab_size\": 151936",
       "\"vocab_size\": 151936,\n  \"rope_scaling\": {\"factor\": 2, \"factor\": 4}",
       "config.json:9:33: rope_scaling.factor: duplicate key (first at line 9, column 20)"},
      {"same key in two objects is fine", "\"vocab_size\": 151936",
       "\"vocab_size\": 151936,\n  \"a\": {\"factor\": 2}, \"b\": {\"factor\": 4}", nullptr},
      {"experts", "\"vocab_size\": 151936",
       "\"vocab_size\": 151936, \"num_local_experts\": 5000, \"num_experts_per_tok\": 2",
       "num_local_experts: expected an integer in 0..1024"},
      // Found by fuzz_hf_config: nlohmann throws out_of_range (not parse_error) for this.
      {"number beyond a double", "\"vocab_size\": 151936", "\"vocab_size\": 151936, \"rope_theta\": 21e308",
       "config.json: not valid JSON: [json.exception.out_of_range.406] number overflow"},
  };
  for (const auto& r : rows) {
    const std::string text = *r.from ? replaced_in(kConfig, r.from, r.to) : std::string(kConfig);
    const std::string err = config_error(text);
    if (r.error == nullptr) {
      EXPECT_EQ(err, "") << r.name;
    } else {
      EXPECT_NE(err.find(r.error), std::string::npos) << r.name << "\n  got: " << err;
    }
  }
}

TEST(HfConfigBounds, NestedTextConfigPositions) {
  const std::string text =
      "{\"model_type\": \"mm\",\n \"text_config\": {\"num_hidden_layers\": 5000, \"hidden_size\": 8,"
      " \"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 8}}";
  EXPECT_NE(config_error(text).find("config.json:2:18: num_hidden_layers"), std::string::npos) << config_error(text);
}

TEST(HfConfigBounds, UnprintableOrLongNamesFallBackInsteadOfFailing) {
  struct NameRow {
    std::string name_or_path;
    const char* want;
  } rows[] = {
      {"Qwen/Qwen3-0.6B", "Qwen/Qwen3-0.6B"},
      {"/home/user/.cache/huggingface/hub/" + std::string(150, 'x') + "/Qwen3-0.6B", "Qwen3-0.6B"},
      {"bad\\nname", "qwen3-28L-1024H"},  // the family and shape when no name is printable
  };
  for (const auto& r : rows) {
    std::string text = replaced_in(kConfig, "\"num_hidden_layers\": 28",
                                   "\"_name_or_path\": \"" + r.name_or_path +
                                       "\", \"model_type\": \"qwen3\", "
                                       "\"num_hidden_layers\": 28");
    EXPECT_EQ(scenario::parse_hf_config(text, "config.json").name, r.want);
  }
}

}  // namespace
}  // namespace syncscope
