// What a run says about MoE routing through the registry (FixSpec::run_prediction_setup and
// untested_note, src/run.cpp), as pipeline/ calls them for every fix: the device variant's
// expert GEMM in the results' environment, and the padding price handed to predict --trace
// only where that GEMM pads.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "syncscope/fixes/fix_spec.hpp"
#include "syncscope/fixes/moe_routing/moe_routing.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/program/step_options.hpp"
#include "syncscope/scenario/scenario.hpp"

namespace syncscope::fixes::moe_routing {
namespace {

struct RunOut {
  model::TracePredictOptions predict;
  std::map<std::string, std::string> environment;
};

RunOut setup(const scenario::Scenario& s, const program::StepOptions& o, const std::string& mode,
             std::function<std::string(const program::StepOptions&, std::string*)> device_choice = {}) {
  register_moe_routing_fix();
  RunOut r;
  RunPredictionContext c{s, o, mode, r.predict, r.environment, std::move(device_choice)};
  fix_spec(kFix).run_prediction_setup(c);
  return r;
}

scenario::Scenario moe_scenario() {
  scenario::Scenario s;
  s.name = "toy";
  s.model.name = "toy-moe";
  s.model.num_local_experts = 8;
  s.model.num_experts_per_tok = 2;
  return s;
}

TEST(MoeRoutingRun, SimulatedRunsChargePaddingOnlyWhereTheOptionsPad) {
  const scenario::Scenario s = moe_scenario();
  program::StepOptions o;  // expert_gemm "auto": the simulator models the grouped GEMM
  RunOut grouped = setup(s, o, "simulated");
  EXPECT_FALSE(grouped.predict.fix_number("moe_routing", kTopKTraceKey).has_value());
  EXPECT_EQ(grouped.environment["moe_device_expert_gemm"],
            "grouped (modelled: at::_grouped_mm, LibTorch >= 2.8 on sm90+)");
  set_expert_gemm(o, "padded");
  RunOut padded = setup(s, o, "simulated");
  EXPECT_EQ(padded.predict.fix_number("moe_routing", kTopKTraceKey), 2.0);  // k, experts per token
  EXPECT_EQ(padded.environment["moe_device_expert_gemm"], "padded (modelled)");
}

TEST(MoeRoutingRun, MeasuredRunsAskTheBackendAboutTheDeviceVariantOnCuda) {
  const scenario::Scenario s = moe_scenario();
  const program::StepOptions o;
  std::string asked;
  auto answer = [&](std::string choice) {
    return [&asked, choice](const program::StepOptions& d, std::string* why) {
      asked = variant_name(variant(d)) + "@" + d.device;
      *why = "no at::_grouped_mm below sm90";
      return choice;
    };
  };
  RunOut padded = setup(s, o, "measured", answer("padded"));
  EXPECT_EQ(asked, "device@cuda");
  EXPECT_EQ(padded.environment["moe_device_expert_gemm"], "padded: no at::_grouped_mm below sm90");
  EXPECT_EQ(padded.predict.fix_number("moe_routing", kTopKTraceKey), 2.0);
  RunOut grouped = setup(s, o, "measured", answer("grouped"));
  EXPECT_EQ(grouped.environment["moe_device_expert_gemm"], "grouped (at::_grouped_mm)");
  EXPECT_FALSE(grouped.predict.fix_number("moe_routing", kTopKTraceKey).has_value());
  // A backend without LibTorch answers "": the device variant pads there.
  RunOut none = setup(s, o, "measured", answer(""));
  EXPECT_EQ(none.predict.fix_number("moe_routing", kTopKTraceKey), 2.0);
}

TEST(MoeRoutingRun, ADenseModelHasNothingToSay) {
  scenario::Scenario s = moe_scenario();
  s.model.num_local_experts = 0;
  const program::StepOptions o;
  RunOut r = setup(s, o, "simulated");
  EXPECT_TRUE(r.environment.empty());
  EXPECT_TRUE(r.predict.fix_numbers.empty());
  EXPECT_FALSE(fix_spec(kFix).untested_note(s, o).has_value());
}

}  // namespace
}  // namespace syncscope::fixes::moe_routing
