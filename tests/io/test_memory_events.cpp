// torch.profiler's profile_memory events ("[memory]" instants) read into Trace::memory, generous
// with odd arguments (counted, left unknown, never a rejected trace), and written back in
// Kineto's form by the writer and `syncscope convert` (so tools reading Kineto traces, Holistic
// Trace Analysis among them, still find them).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "io_test_util.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

namespace fs = std::filesystem;

Trace parse(std::string_view events) {
  return parse_chrome_json("{\"traceEvents\": [" + std::string(events) + "]}", "mem.json");
}

const ReadWarning* find_warning(const Trace& t, ReadWarning::Kind kind, std::string_view field) {
  for (const auto& w : t.meta.read_warnings)
    if (w.kind == kind && w.field == field) return &w;
  return nullptr;
}

bool same(const MemoryEvent& a, const MemoryEvent& b) {
  return a.pid == b.pid && a.tid == b.tid && a.timestamp == b.timestamp && a.bytes == b.bytes &&
         a.total_allocated == b.total_allocated && a.total_reserved == b.total_reserved && a.address == b.address &&
         a.device_type == b.device_type && a.device == b.device;
}

// As PyTorch 1.13-2.x writes them (fields and order from HTA's df_index_resolver test trace),
// plus what older or odd writers give.
constexpr const char* kEvents = R"j(
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":7,"tid":8,"ts":100,
   "args":{"Ev Idx":1,"Device Type":1,"Device Id":0,"Addr":4096,"Bytes":1024,"Total Allocated":5120,"Total Reserved":8192}},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":7,"tid":8,"ts":"200.5",
   "args":{"Device Type":1,"Device Id":0,"Addr":"0x1000","Bytes":-1024,"Total Allocated":4096,"Total Reserved":8192}},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":7,"tid":8,"ts":95.085,
   "args":{"Device Type":0,"Device Id":-1,"Addr":94119953593280,"Bytes":20,"Total Allocated":20,"Total Reserved":0,"finished":false}},
  {"ph":"i","s":"t","name":"[memory]","pid":7,"tid":9,"ts":300,
   "args":{"Device Type":1,"Device Id":0,"Addr":8192,"Bytes":64}},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":7,"tid":8,"ts":400,
   "args":{"Device Type":1,"Device Id":0,"Addr":12288,"Bytes":{"n":1},"Total Allocated":1152921504606846976,"Total Reserved":-5}},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":7,"tid":8,"ts":500,
   "args":{"Device Type":300,"Device Id":70000,"Addr":-1,"Bytes":2251799813685248,"Total Allocated":0,"Total Reserved":0}},
  {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[OutOfMemory]","pid":7,"tid":8,"ts":600,
   "args":{"Device Type":1,"Device Id":0,"Bytes":1}}
)j";

TEST(MemoryEvents, ReadWithEveryFieldAndFreesNegative) {
  const Trace t = parse(kEvents);
  ASSERT_EQ(t.memory.size(), 6u);  // the "[OutOfMemory]" instant is not a memory event
  // In time order: 95.085 us, 100, 200.5, 300, 400, 500.
  const MemoryEvent& cpu = t.memory[0];
  EXPECT_EQ(cpu.timestamp, 95085);
  EXPECT_EQ(cpu.device_type, 0);
  EXPECT_EQ(cpu.device, -1);
  EXPECT_EQ(cpu.address, 94119953593280u);
  EXPECT_EQ(cpu.bytes, 20);
  EXPECT_EQ(cpu.total_reserved, 0);
  const MemoryEvent& a = t.memory[1];
  EXPECT_EQ(a.pid, 7);
  EXPECT_EQ(a.tid, 8);
  EXPECT_EQ(a.timestamp, 100000);
  EXPECT_EQ(a.bytes, 1024);
  EXPECT_EQ(a.total_allocated, 5120);
  EXPECT_EQ(a.total_reserved, 8192);
  EXPECT_EQ(a.address, 4096u);
  EXPECT_EQ(a.device_type, 1);
  EXPECT_EQ(a.device, 0);
  const MemoryEvent& f = t.memory[2];
  EXPECT_EQ(f.timestamp, 200500);
  EXPECT_EQ(f.bytes, -1024);    // a free is negative
  EXPECT_EQ(f.address, 4096u);  // "0x1000": the same block as the allocation
  EXPECT_EQ(t.others.size(), 1u);
  EXPECT_EQ(t.meta.unknown_categories.at("cpu_instant_event"), 1u);  // only the [OutOfMemory] one
}

TEST(MemoryEvents, OddArgumentsAreCountedAndLeftUnknownNeverRejected) {
  const Trace t = parse(kEvents);
  ASSERT_EQ(t.memory.size(), 6u);
  // Kineto of 2021: no category, no totals; kept, the missing totals counted.
  const MemoryEvent& old = t.memory[3];
  EXPECT_EQ(old.bytes, 64);
  EXPECT_EQ(old.total_allocated, -1);
  EXPECT_EQ(old.total_reserved, -1);
  const ReadWarning* missing = find_warning(t, ReadWarning::Kind::MissingField, "args.Total Allocated");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->count, 1u);
  EXPECT_EQ(missing->category, "");
  // "Bytes" an object: counted as a type warning; a total of 2^60 bytes and a negative one:
  // outside physical sense, counted, unknown.
  const MemoryEvent& odd = t.memory[4];
  EXPECT_EQ(odd.bytes, 0);
  EXPECT_EQ(odd.total_allocated, -1);
  EXPECT_EQ(odd.total_reserved, -1);
  EXPECT_EQ(odd.address, 12288u);
  ASSERT_NE(find_warning(t, ReadWarning::Kind::ArgumentType, "args.Bytes"), nullptr);
  const ReadWarning* big = find_warning(t, ReadWarning::Kind::ImplausibleValue, "args.Total Allocated");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->example, "1152921504606846976");
  EXPECT_NE(describe(*big).find("left unknown"), std::string::npos) << describe(*big);
  ASSERT_NE(find_warning(t, ReadWarning::Kind::ImplausibleValue, "args.Total Reserved"), nullptr);
  // 2 PiB in one allocation, device type 300, device 70000, a negative address: all counted.
  const MemoryEvent& absurd = t.memory[5];
  EXPECT_EQ(absurd.bytes, 0);
  EXPECT_EQ(absurd.device_type, -1);
  EXPECT_EQ(absurd.device, -1);
  EXPECT_EQ(absurd.address, 0u);
  EXPECT_EQ(absurd.total_allocated, 0);
  const ReadWarning* bytes = find_warning(t, ReadWarning::Kind::ImplausibleValue, "args.Bytes");
  ASSERT_NE(bytes, nullptr);
  EXPECT_EQ(bytes->count, 1u);
  EXPECT_NE(find_warning(t, ReadWarning::Kind::ImplausibleValue, "args.Device Type"), nullptr);
  EXPECT_NE(find_warning(t, ReadWarning::Kind::ImplausibleValue, "args.Device Id"), nullptr);
  EXPECT_NE(find_warning(t, ReadWarning::Kind::ArgumentType, "args.Addr"), nullptr);
}

TEST(MemoryEvents, WriterGivesThemBackInKinetosForm) {
  const Trace t = parse(kEvents);
  const std::string json = chrome_json_string(t);
  EXPECT_NE(json.find(R"("cat":"cpu_instant_event")"), std::string::npos);
  EXPECT_NE(json.find(R"("name":"[memory]")"), std::string::npos);
  EXPECT_NE(json.find(R"("Total Allocated":5120)"), std::string::npos) << json.substr(0, 2000);
  const Trace back = parse_chrome_json(json, "back.json");
  ASSERT_EQ(back.memory.size(), t.memory.size());
  for (std::size_t i = 0; i < t.memory.size(); ++i) EXPECT_TRUE(same(back.memory[i], t.memory[i])) << i;
  // On the whole-microsecond grid (HTA's reading): times move, nothing else.
  const Trace grid = parse_chrome_json(chrome_json_string(on_microsecond_grid(t)), "grid.json");
  ASSERT_EQ(grid.memory.size(), t.memory.size());
  EXPECT_EQ(grid.memory[0].timestamp % 1000, 0);
  EXPECT_EQ(grid.memory[2].bytes, -1024);
}

// `syncscope convert` on a real torch.profiler trace with profile_memory=True (HTA's test
// data, tests/fixtures/memory/README.md): every memory event comes back, field for field.
TEST(MemoryEvents, ConvertKeepsEveryEventOfARealTrace) {
  const fs::path in = test::fixture("memory/hta_df_index_resolver_rank1.json.gz");
  const Trace original = read_trace(in);
  SYNCSCOPE_SKIP_WITHOUT_CLI();
  ASSERT_EQ(original.memory.size(), 28010u);  // tests/analysis/memory_fixture_expectations.py
  EXPECT_TRUE(original.meta.read_warnings.empty()) << describe(original.meta.read_warnings.front());
  test::TempDir dir;
  const fs::path exe = fs::path(SYNCSCOPE_BINARY_DIR) / "cli" / "syncscope";
  const std::string cmd = "'" + exe.string() + "' convert '" + in.string() + "' '" + (dir / "out.json").string() +
                          "' >/dev/null 2>'" + (dir / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << test::slurp(dir / "err");
  const Trace back = read_trace(dir / "out.json");
  ASSERT_EQ(back.memory.size(), original.memory.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < back.memory.size(); ++i) differ += same(back.memory[i], original.memory[i]) ? 0 : 1;
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(back.meta.unknown_categories.count("cpu_instant_event"), 0u);
}

}  // namespace
}  // namespace syncscope
