// libFuzzer target for the scenario YAML loader. Properties checked on every input:
// - it never crashes, hangs or trips ASan/UBSan, and throws nothing but InputError;
// - a scenario it returns passes validate_scenario() (the loader's rules hold for what it
//   returns), has printable names, and its sequence lengths (bounded by the loader) sum to
//   the packed tokens.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_scenario: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace syncscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  scenario::Scenario s;
  try {
    s = scenario::parse_scenario(text, "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  try {
    scenario::validate_scenario(s);
  } catch (const std::exception& e) {
    die("a loaded scenario fails validate_scenario", e.what());
  }
  if (name_problem(s.name)) die("unprintable scenario name accepted", printable(s.name));
  if (name_problem(s.model.name)) die("unprintable model name accepted", printable(s.model.name));
  long long sum = 0;
  for (int len : scenario::sequence_lengths(s.batch)) {
    if (len <= 0) die("non-positive sequence length", std::to_string(len));
    sum += len;
  }
  if (sum != s.batch.packed_tokens) die("lengths do not sum to packed_tokens", std::to_string(sum));
  return 0;
}
