// The replay section's identity figures are honest (issue 36): printed only over replayed
// steps, with how many; a figure outside the goal is marked so; nothing replayed, no figure.
#include <gtest/gtest.h>

#include <string>

#include "syncscope/replay/replay.hpp"
#include "syncscope/reports/replay_printers.hpp"

namespace syncscope {
namespace {

replay::ReplayReport with_errors(double median, double max, std::size_t steps) {
  replay::ReplayReport r;
  r.median_abs_error = median;
  r.max_abs_error = max;
  r.error_steps = steps;
  for (std::size_t i = 0; i < steps; ++i) r.steps.push_back({"ProfilerStep#" + std::to_string(i), 100, 100, 0});
  return r;
}

TEST(ReplayPrinter, NothingReplayedPrintsNoErrorFigure) {
  const std::string s = replay_to_text(replay::ReplayReport{});
  EXPECT_NE(s.find("no step replayed"), std::string::npos) << s;
  EXPECT_EQ(s.find("median"), std::string::npos) << s;
  const std::string j = replay::prediction_with_replay_to_json(model::PredictionReport{}, replay::ReplayReport{});
  EXPECT_NE(j.find("\"replayed_steps\": 0"), std::string::npos) << j;
  EXPECT_EQ(j.find("median_abs_error"), std::string::npos) << j;
  EXPECT_EQ(j.find("within_goal"), std::string::npos) << j;
}

TEST(ReplayPrinter, AFigureOutsideTheGoalIsMarked) {
  const replay::ReplayReport bad = with_errors(0.60, 0.64, 6);
  EXPECT_FALSE(bad.within_goal());
  const std::string s = replay_to_text(bad);
  EXPECT_NE(s.find("over 6 step(s)"), std::string::npos) << s;
  EXPECT_NE(s.find("OUTSIDE THE GOAL"), std::string::npos) << s;
  EXPECT_NE(replay::prediction_with_replay_to_json(model::PredictionReport{}, bad).find("\"within_goal\": false"),
            std::string::npos);
  // Max over 5% alone is outside too.
  EXPECT_FALSE(with_errors(0.005, 0.06, 3).within_goal());
  const replay::ReplayReport good = with_errors(0.002, 0.004, 3);
  EXPECT_TRUE(good.within_goal());
  EXPECT_EQ(replay_to_text(good).find("OUTSIDE"), std::string::npos);
  EXPECT_NE(replay::prediction_with_replay_to_json(model::PredictionReport{}, good).find("\"within_goal\": true"),
            std::string::npos);
}

}  // namespace
}  // namespace syncscope
