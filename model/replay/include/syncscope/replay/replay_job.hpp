// Whole-job replay: the rank traces of one distributed job replayed together, so that what one
// rank changes reaches the others through the collectives they share (issue 36).
//
// Each rank is its own replay graph (replay.hpp), built from its own trace. What joins them
// (docs/replay.md, "Whole-job replay"):
// - Collectives are matched across ranks by the first rule the trace allows (docs/replay.md):
//   1. "seq": Kineto's own identity, (process group name, "Seq") from the record_param_comms
//      args on the kernel or its CPU op (PyTorch >= 2.4); only the ranks in the group's "Process
//      Group Ranks" take part; point-to-point ops (send/recv) keep rule 2 or 3.
//   2. "group order": the process group's name ("Process Group Name", PyTorch >= 2.2), then order.
//   3. "stream order": the stream the kernels run on (a process group's collectives share one
//      stream per device in PyTorch's ProcessGroupNCCL: "stream#0" is the first stream the rank
//      ran a collective on), then order on that stream.
//   The collective ("Collective name", else AllReduce, SendRecv, ... from the kernel's name) must
//   agree; under rule 1 the message sizes and dtype too, where the collective has one size.
// - A matched collective ends when its last participant has started it plus its transfer time,
//   the recorded duration on the rank that started it last (it did not wait for a peer); each
//   rank's kernel ends then, and no earlier than its start plus its shortest run.
// - Each rank keeps its own clock: the offset between two ranks' clocks is the median
//   difference of the recorded ends of the collectives they share (participants end together),
//   from the lowest rank outwards.
// - A communication kernel with no matched peer keeps the single-rank rule: anchored at its
//   recorded end, counted and named.
// What it rests on is said with every output, with how many collectives each rule matched; a
// rank's own held or anchored work stays where it was recorded.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "syncscope/replay/replay.hpp"

namespace syncscope::replay {

inline constexpr int kJobReplaySchemaVersion = 1;
// A job replay holds every rank's graph at once (about 100 bytes a node, 10^4 - 10^6 nodes a
// rank): beyond this many ranks give the ranks to look at, not the whole job.
inline constexpr std::size_t kMaxJobReplayRanks = 256;

struct JobRankInput {
  std::string source;                // the trace file, for messages
  std::function<Trace()> load;       // reads it; called once, or twice for the edited rank
  std::optional<std::int64_t> rank;  // from the file name, when the trace does not say
};

struct JobReplayOptions {
  std::string step_glob = "ProfilerStep#*";
  std::vector<std::string> what_if;          // each replayed on `what_if_rank` alone
  std::optional<std::int64_t> what_if_rank;  // default: the rank that started the most collectives last
  model::TracePredictOptions predict;        // what the edits need (prefetch depth, ...)
};

struct JobRankReplay {
  std::int64_t rank = -1;
  std::string source;
  std::vector<ReplayedStep> steps;                 // the whole job replayed together
  std::vector<ReplayedStep> single_steps;          // this rank on its own, its peers anchored
  Ns clock_offset_ns = 0;                          // this rank's clock minus the lowest rank's
  std::uint64_t collectives = 0;                   // communication kernels matched with a peer
  std::uint64_t unmatched = 0;                     // communication kernels with no matched peer: anchored
  std::uint64_t last_arrivals = 0;                 // matched collectives this rank started last (recorded)
  double median_abs_error = 0, max_abs_error = 0;  // job replay over `error_steps`
  std::size_t error_steps = 0;
  std::vector<std::string> warnings;  // the rank's graph problems
};

// One edit on one rank and what every rank's step became.
struct JobWhatIf {
  std::string edit;
  std::int64_t rank = -1;
  std::vector<Ns> replayed_step_ns;          // per rank (the report's order): median over steps
  std::vector<std::optional<Ns>> saving_ns;  // per rank: median over steps of (identity - edited)
  std::vector<std::string> notes;
};

struct JobReplayReport {
  int schema_version = kJobReplaySchemaVersion;
  std::string source;
  // How the ranks were found when not one trace file each: "" for a directory of rank traces;
  // one file holding several ranks' processes (trace/split_processes.hpp) says so here, with
  // the rule that numbered them.
  std::string ranks_from;
  std::string step_glob;
  std::vector<JobRankReplay> ranks;  // by rank
  std::uint64_t collectives = 0;     // matched across at least two ranks
  std::uint64_t collective_groups = 0;
  // How many of `collectives` each rule matched (replay_job.hpp's header): (group, Seq), group
  // name then order, stream then order.
  std::uint64_t matched_by_seq = 0, matched_by_group_order = 0, matched_by_stream_order = 0;
  std::uint64_t unreadable_group_ranks = 0;  // "Process Group Ranks" values not read: participants from the traces
  std::optional<std::int64_t> world_size;    // the job's, when the traces say (distributedInfo)
  bool peers_anchored = false;               // fewer ranks given than world_size: their ends anchored
  std::uint64_t out_of_order = 0;            // collectives timed before all their peers reached them (see warnings)
  // Matched collectives whose NCCL calls (NVTX ranges, nsys) are known on two or more ranks, the same
  // operation on each (JobLinks::nccl_checked).
  std::uint64_t nccl_checked = 0;
  std::vector<std::string> mismatches;  // one line each: rank, group, sequence, what disagrees
  std::uint64_t mismatches_total = 0;   // mismatches holds the first kMaxMismatchLines
  // Over every rank's replayed steps; 0 steps: nothing replayed, the figures mean nothing.
  double median_abs_error = 0, max_abs_error = 0;
  std::size_t error_steps = 0;
  bool within_goal() const {
    return error_steps > 0 && median_abs_error <= kIdentityGoalMedian && max_abs_error <= kIdentityGoalMax;
  }
  std::int64_t straggler = -1;  // the rank that started the most collectives last
  std::vector<JobWhatIf> what_if;
  std::vector<std::string> warnings;  // about the set
};
inline constexpr std::size_t kMaxMismatchLines = 20;

// Replays the job. Throws InputError: two files of one rank (naming both), more than
// kMaxJobReplayRanks, a rank with no number, --what-if-rank not among the ranks, or, with two
// or more ranks, not one collective matched (naming why). One rank: replayed with its peers
// anchored, and said.
JobReplayReport replay_job(std::vector<JobRankInput> ranks, const JobReplayOptions& options, std::string source);

// JSON (names in model/replay/src/job_report.cpp's header comment; errors fractions, times ns).
std::string job_replay_to_json(const JobReplayReport& report);

// ---- the parts, for tests (model/replay/src/job_match.cpp, job_run.cpp) ----

// The collective a communication kernel runs, from its name: "ncclKernel_AllReduce_RING_LL_Sum_float(...)"
// and "ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)" are "AllReduce"; a name of another shape is
// itself up to its argument list.
std::string collective_of_kernel(std::string_view kernel_name);

// One rank's communication kernels as the matching sees them.
struct JobComm {
  std::uint32_t node = kNoNode;
  std::string group;       // "pg 0" (the trace's process group name), else "stream#0", ...
  std::string collective;  // "allreduce" (Kineto's "Collective name"), else "AllReduce" from the kernel name
  Ns rec_start = 0, rec_end = 0;
  std::optional<std::int64_t> seq;  // Kineto's "Seq" in its group (not for send/recv: they keep order)
  // The ranks taking part, from "Process Group Ranks" (empty: not known). PyTorch writes past 30
  // ranks "[0, 1, ..., 127]": the full list when the written ones are evenly spaced and
  // "Group size" says how many, else the written ones with `ranks_partial`.
  std::vector<std::int64_t> group_ranks;
  bool ranks_partial = false;
  std::string dtype;                             // "dtype" ("" not given)
  std::int64_t in_nelems = -1, out_nelems = -1;  // "In msg nelems", "Out msg nelems" (-1 not given)
  // The NCCL calls that launched it, from NCCL's NVTX ranges (nccl_calls; "" when the trace has
  // none around its launch): matched collectives must agree on nccl_operation of it.
  std::string nccl;
};
// The NCCL calls that launched each of `kernels` (indices into trace.kernels), from the NVTX
// ranges NCCL pushes on the calling thread (domain "NCCL", or a domain the trace does not name,
// named after the function: an Nsight Systems export; model/replay/src/job_nccl.cpp): the call
// whose range holds the kernel's launch call ("ncclAllReduce"), or for a group the calls between
// its ncclGroupStart and the ncclGroupEnd whose range holds the launch ("ncclRecv x2 + ncclSend
// x2"); "" when no NCCL range holds it.
std::vector<std::string> nccl_calls(const Trace& trace, const std::vector<std::uint32_t>& kernels);
// What must be the same on every rank of one collective: the calls without their counts, a send
// and a receive one kind ("ncclSend/ncclRecv": one rank's send is its peer's receive).
std::string nccl_operation(std::string_view calls);

// `unreadable_ranks`, when given, counts "Process Group Ranks" values that could not be read.
std::vector<JobComm> job_comms(const Trace& trace, const ReplayGraph& graph, std::uint64_t* unreadable_ranks = nullptr);

// "[0, 1, 2, 3]" and PyTorch's truncated "[0, 1, ..., 127]" (with `group_size`, -1 unknown);
// nullopt for anything else (counted by the caller). The bool: the list is partial.
std::optional<std::pair<std::vector<std::int64_t>, bool>> parse_group_ranks(std::string_view text,
                                                                            std::int32_t group_size);

struct JobCollective {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> members;  // (rank index, node)
  Ns transfer_ns = 0;                                            // recorded duration on the member that started last
  std::uint32_t last = 0;                                        // index into members of that member
  // Peers whose traces are not given (fewer ranks than the job's world_size) are anchored: the
  // collective ends no earlier than its recorded end (the last member's, first rank's clock).
  std::optional<Ns> anchored_end;
  // The ranks taking part ("Process Group Ranks"), complete, or empty when not known: a
  // collective whose participants are all given needs no anchor, whatever the job's size.
  std::vector<std::int64_t> participants;
};
enum class MatchRule : std::uint8_t { Seq = 0, GroupOrder = 1, StreamOrder = 2 };
struct JobLinks {
  std::vector<JobCollective> collectives;
  std::vector<MatchRule> rule;  // per collective: the rule that matched it
  std::vector<Ns> offset_ns;    // per rank index: its clock minus the first rank's
  std::uint64_t groups = 0;
  std::vector<std::string> mismatches;
  std::uint64_t mismatches_total = 0;
  // Collectives whose NCCL calls (JobComm::nccl) are known on two or more members, the same
  // operation on each (a member that disagrees is named in mismatches and not matched).
  std::uint64_t nccl_checked = 0;
};
// Matches the ranks' collectives (`ranks[i]` the rank number of comms[i], for messages).
JobLinks match_collectives(const std::vector<std::vector<JobComm>>& comms, const std::vector<std::int64_t>& ranks);

// Times every rank's graph together (run_replay's rules, and a matched collective's end as
// above). Never hangs: when every unfinished rank waits at a collective a peer has not reached
// (the ranks disagree on the order), the earliest such collective is timed with the peers that
// have arrived and its missing peers' recorded starts, and counted in `out_of_order`.
std::vector<ReplayTimes> run_job_replay(const std::vector<const ReplayGraph*>& graphs,
                                        const std::vector<const ReplayOrder*>& orders, const JobLinks& links,
                                        std::uint64_t* out_of_order = nullptr);

}  // namespace syncscope::replay
