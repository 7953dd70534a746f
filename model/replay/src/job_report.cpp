// The whole-job replay as JSON (predict --trace DIR --format json).
//
// Names (errors are fractions, times ns):
//   {"schema_version", "kind": "job_replay", "source", "ranks_from" (only when the ranks are one file's
//    processes), "step_glob", "rests_on": [...],
//    "collectives", "collective_groups", "matched_by": {"seq", "group_order", "stream_order"} (how many of
//    "collectives" each rule matched), "nccl_checked" (of "collectives", those whose NCCL calls, from NCCL's NVTX
//    ranges, are known on two or more ranks and one operation), "unreadable_group_ranks", "world_size" (null: unknown),
//    "peers_anchored", "out_of_order", "mismatches":
//    [...], "mismatches_total", "replayed_steps", "median_abs_error", "max_abs_error", "within_goal" (these three only
//    when replayed_steps > 0), "straggler" (null without one), "ranks": [{"rank", "source", "clock_offset_ns",
//    "collectives", "unmatched", "last_arrivals",
//               "replayed_steps", "median_abs_error", "max_abs_error" (when replayed_steps > 0),
//               "steps": [{"name", "measured_ns", "replayed_ns", "single_rank_replayed_ns"}...],
//               "warnings": [...]}...],
//    "what_if": [{"edit", "rank", "notes": [...],
//                 "ranks": [{"rank", "replayed_step_ns", "saving_ns" (null: not fully built)}...]}...],
//    "warnings": [...]}
#include <nlohmann/json.hpp>

#include "syncscope/replay/replay_job.hpp"

namespace syncscope::replay {
namespace {

using ojson = nlohmann::ordered_json;

void errors(ojson& j, std::size_t steps, double median, double max, bool with_goal, bool within) {
  j["replayed_steps"] = steps;
  if (steps == 0) return;  // nothing replayed: no figure that looks like a pass
  j["median_abs_error"] = median;
  j["max_abs_error"] = max;
  if (with_goal) j["within_goal"] = within;
}

ojson rank_json(const JobRankReplay& r) {
  ojson j;
  j["rank"] = r.rank;
  j["source"] = r.source;
  j["clock_offset_ns"] = r.clock_offset_ns;
  j["collectives"] = r.collectives;
  j["unmatched"] = r.unmatched;
  j["last_arrivals"] = r.last_arrivals;
  errors(j, r.error_steps, r.median_abs_error, r.max_abs_error, false, false);
  ojson steps = ojson::array();
  for (std::size_t s = 0; s < r.steps.size(); ++s)
    steps.push_back({{"name", r.steps[s].name},
                     {"measured_ns", r.steps[s].measured_ns},
                     {"replayed_ns", r.steps[s].replayed_ns},
                     {"single_rank_replayed_ns", s < r.single_steps.size() ? r.single_steps[s].replayed_ns : 0}});
  j["steps"] = std::move(steps);
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace

std::string job_replay_to_json(const JobReplayReport& rep) {
  ojson j;
  j["schema_version"] = rep.schema_version;
  j["kind"] = "job_replay";
  j["source"] = rep.source;
  if (!rep.ranks_from.empty()) j["ranks_from"] = rep.ranks_from;
  j["step_glob"] = rep.step_glob;
  j["rests_on"] = {
      "collectives matched by Kineto's (\"Process Group Name\", \"Seq\") where the trace has them (record_param_comms "
      "args on the kernel or its CPU op; only the ranks in \"Process Group Ranks\" take part), else by process group "
      "name, else by stream (first use), then by order; the collective from \"Collective name\" or the kernel name",
      "a collective ends at its last participant's start plus that participant's recorded duration",
      "rank clocks aligned by the median difference of shared collectives' recorded ends",
      "a rank's anchored and held work (no traced launch, waits the trace does not show) stays at its recorded time"};
  j["collectives"] = rep.collectives;
  j["collective_groups"] = rep.collective_groups;
  j["matched_by"] = {{"seq", rep.matched_by_seq},
                     {"group_order", rep.matched_by_group_order},
                     {"stream_order", rep.matched_by_stream_order}};
  j["nccl_checked"] = rep.nccl_checked;
  j["unreadable_group_ranks"] = rep.unreadable_group_ranks;
  j["world_size"] = rep.world_size ? ojson(*rep.world_size) : ojson(nullptr);
  j["peers_anchored"] = rep.peers_anchored;
  j["out_of_order"] = rep.out_of_order;
  j["mismatches"] = rep.mismatches;
  j["mismatches_total"] = rep.mismatches_total;
  errors(j, rep.error_steps, rep.median_abs_error, rep.max_abs_error, true, rep.within_goal());
  j["straggler"] = rep.straggler >= 0 ? ojson(rep.straggler) : ojson(nullptr);
  ojson ranks = ojson::array();
  for (const auto& r : rep.ranks) ranks.push_back(rank_json(r));
  j["ranks"] = std::move(ranks);
  ojson wi = ojson::array();
  for (const auto& w : rep.what_if) {
    ojson e;
    e["edit"] = w.edit;
    e["rank"] = w.rank;
    e["notes"] = w.notes;
    ojson per = ojson::array();
    for (std::size_t r = 0; r < w.replayed_step_ns.size() && r < rep.ranks.size(); ++r)
      per.push_back({{"rank", rep.ranks[r].rank},
                     {"replayed_step_ns", w.replayed_step_ns[r]},
                     {"saving_ns", w.saving_ns[r] ? ojson(*w.saving_ns[r]) : ojson(nullptr)}});
    e["ranks"] = std::move(per);
    wi.push_back(std::move(e));
  }
  j["what_if"] = std::move(wi);
  j["warnings"] = rep.warnings;
  return j.dump(2) + "\n";
}

}  // namespace syncscope::replay
