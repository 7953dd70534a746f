// libFuzzer target for the results.json reader (what `validate` and `report` read).
// Properties checked on every input: it never crashes or trips ASan/UBSan, throws nothing
// but InputError; results it returns validate and print (table and JSON) without an error
// whatever their names hold, and write back (results_to_json) to text that reads as the
// same results.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/model/results.hpp"
#include "syncscope/model/validate.hpp"
#include "syncscope/reports/model_printers.hpp"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_results: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace syncscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  model::RunResults r;
  try {
    r = model::results_from_json(text, "results.json");
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  try {
    const model::ValidationReport v = model::validate_results(r, "results.json");
    (void)validation_to_table(v);
    (void)model::validation_to_json(v);
    (void)model::results_to_csv(r);
    const std::string json = model::results_to_json(r);
    const model::RunResults back = model::results_from_json(json, "written");
    if (model::results_to_json(back) != json) die("results round trip differs", json.substr(0, 200));
  } catch (const std::exception& e) {
    die("accepted results fail to validate, print or read back", e.what());
  }
  return 0;
}
