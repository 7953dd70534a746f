// libFuzzer target for timelines.json (what `report` reads back from a run directory).
// Properties checked on every input: it never crashes or trips ASan/UBSan, throws nothing
// but InputError; strips it accepts write back (timelines_to_json) to text it reads again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/model/run_directory.hpp"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_timelines: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace syncscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<TimelineStrip> strips;
  try {
    strips = model::timelines_from_json(text, "timelines.json");
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  try {
    const std::string json = model::timelines_to_json(strips);
    (void)model::timelines_from_json(json, "written");
  } catch (const std::exception& e) {
    die("accepted timelines fail to read back", e.what());
  }
  return 0;
}
