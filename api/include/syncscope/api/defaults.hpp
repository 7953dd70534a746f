// The user-facing options' defaults and bounds, defined once: the CLI's option defaults and
// validators (cli/) and the Python module's keyword defaults and checks (python/, through
// syncscope._core.defaults()) read these. Each bound says why, as core/bounds.hpp's do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "syncscope/analysis/kernel_sequences.hpp"
#include "syncscope/core/bounds.hpp"

namespace syncscope::api {

// Steps: torch.profiler's own step ranges ("ProfilerStep#12").
inline constexpr const char* kDefaultStepRange = "ProfilerStep#*";
// analyze: sync points written to JSON (the rest counted in sync_points_truncated).
inline constexpr std::size_t kDefaultMaxSyncPoints = 10000;
// analyze: the worst causes whose removal is replayed (the table shows six).
inline constexpr std::size_t kDefaultReplayCauses = 6;
// analyze: a stream's launch queue counts as full at this many queued activities (HTA's
// CUDA_MAX_LAUNCH_QUEUE_PER_STREAM, hta/common/constants.py).
inline constexpr std::uint64_t kDefaultQueueFull = 1024;
// predict: Monte Carlo draws for interval propagation, and their seed.
inline constexpr int kDefaultSamples = 4000;
inline constexpr std::uint64_t kDefaultSeed = 0x5eed'5c09eULL;

// analyze: frequent kernel sequences, HTA's defaults (syncscope/analysis/kernel_sequences.hpp).
using syncscope::kDefaultSequenceMinLen;
using syncscope::kDefaultSequenceTop;
inline constexpr bounds::Range kSequenceMinLen{
    1, 100000, "a pattern longer than 100000 kernels under one op is no fusion candidate"};
inline constexpr bounds::Range kSequenceTop{1, 10000, "more than 10000 patterns is a listing, not a ranking"};
inline constexpr bounds::Range kReplayCauses{0, 1000, "each cause is one more replay of the whole trace"};
inline constexpr bounds::Range kQueueFull{1, 1099511627776.0, "a launch queue holds at most a few thousand entries"};
// Traces read at once by the many-rank analysis (0: one per core).
inline constexpr bounds::Range kJobs{0, 4096, "0 is one per core; more readers than 4096 cores gain nothing"};

// How an option is spelled where the caller wrote it: in a refusal, the CLI says
// `--prefetch-depth`, Python `prefetch_depth`.
enum class Spelling { Cli, Python };
// "prefetch_depth" -> "--prefetch-depth" (Cli) or "prefetch_depth" (Python).
std::string option_name(Spelling spelling, const std::string& python_name);
// A fix's option flag as Python spells it: "prefetch-depth" -> "prefetch_depth".
std::string python_name(const std::string& flag);

}  // namespace syncscope::api
