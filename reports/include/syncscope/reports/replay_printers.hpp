// The replay's, diff's and simulator check's results as text for people, beside the model
// printers: the structs are the model's (replay/replay.hpp, replay_diff.hpp, sim/compare.hpp),
// and so is their JSON.
#pragma once

#include <string>

#include "syncscope/replay/replay.hpp"
#include "syncscope/replay/replay_diff.hpp"
#include "syncscope/replay/replay_job.hpp"
#include "syncscope/sim/compare.hpp"

namespace syncscope {

// `predict --trace`'s replay section: identity accuracy per step, the median step's critical
// path, each what-if edit with its saving beside the closed form, and its notes.
std::string replay_to_text(const replay::ReplayReport& report);
// `predict --trace DIR`: the whole-job replay, per rank beside its single-rank replay, the
// collectives matched and what disagreed, and each edit's every-rank steps.
std::string job_replay_to_text(const replay::JobReplayReport& report);
// `syncscope diff`: per-step medians of both traces side by side with their change, syncs per
// cause, the 10 kernel names that changed most, and the what-if's replayed step against AFTER.
std::string diff_to_text(const replay::DiffReport& diff);
// The simulator against a measured trace: one row per metric, simulated, measured, the
// difference and the relative error, then the notes.
std::string comparison_to_text(const sim::TraceComparison& comparison);

}  // namespace syncscope
