#pragma once
// The Hugging Face config fixtures (tests/fixtures/hf/) as test_hf_models.cpp and
// test_hf_architectures.cpp read them.
#include <cstdint>
#include <string>

#include "syncscope/program/network.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"
#include "test_paths.hpp"

namespace syncscope::test {

inline scenario::ModelShape fixture_model(const std::string& dir) {
  return scenario::load_hf_config(fixture("hf/" + dir + "/config.json"));
}

// The model's parameters as syncscope counts them for a full fine-tune.
inline std::int64_t base_parameters(const scenario::ModelShape& m) {
  program::StepOptions o;
  o.model = m;
  o.training.mode = "full";
  return program::network_summary(o).base_parameters;
}

}  // namespace syncscope::test
