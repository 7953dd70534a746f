// libFuzzer target for the Hugging Face config.json reader. Properties checked on every
// input: it never crashes or trips ASan/UBSan, throws nothing but InputError, and a shape
// it returns is within the loader's bounds with a printable name.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace {

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_hf_config: %s: %s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace syncscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  scenario::ModelShape m;
  try {
    m = scenario::parse_hf_config(text, "config.json");
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  if (name_problem(m.name)) die("unprintable model name", printable(m.name));
  if (!bounds::kLayers.contains(m.num_hidden_layers) || !bounds::kHiddenSize.contains(m.hidden_size) ||
      !bounds::kExperts.contains(m.num_local_experts) || m.head_dim <= 0 || m.num_key_value_heads <= 0)
    die("shape outside the bounds accepted", m.name);
  return 0;
}
