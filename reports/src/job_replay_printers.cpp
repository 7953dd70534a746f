// The whole-job replay as text for people (`predict --trace DIR`): per rank its identity figures
// beside its single-rank replay, the collectives matched and what disagreed, then each what-if
// edit on one rank with every rank's new step. The struct and its JSON are the model's
// (replay/replay_job.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "syncscope/core/text.hpp"
#include "syncscope/reports/replay_printers.hpp"
#include "text_cells.hpp"

namespace syncscope {
namespace {

using reports_detail::ms_text;

Ns median_ns(std::vector<Ns> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string rank_table(const replay::JobReplayReport& r) {
  std::string s =
      fmt::format("  {:>5} {:>7} {:>12} {:>12} {:>9} {:>12} {:>9} {:>11} {:>9} {:>13}\n", "rank", "steps", "measured",
                  "job replay", "error", "rank alone", "error", "collectives", "last at", "clock offset");
  for (const auto& k : r.ranks) {
    std::vector<Ns> meas, job, alone;
    for (const auto& st : k.steps) meas.push_back(st.measured_ns), job.push_back(st.replayed_ns);
    for (const auto& st : k.single_steps) alone.push_back(st.replayed_ns);
    const double m = static_cast<double>(median_ns(meas));
    auto err = [&](Ns x) { return m > 0 ? fmt::format("{:+.2f}%", (static_cast<double>(x) - m) / m * 100) : "-"; };
    s += fmt::format("  {:>5} {:>7} {:>12} {:>12} {:>9} {:>12} {:>9} {:>11} {:>9} {:>10.3f} ms\n", k.rank,
                     k.steps.size(), ms_text(m), ms_text(static_cast<double>(median_ns(job))), err(median_ns(job)),
                     ms_text(static_cast<double>(median_ns(alone))), err(median_ns(alone)),
                     fmt::format("{}+{}", k.collectives, k.unmatched), k.last_arrivals,
                     static_cast<double>(k.clock_offset_ns) / 1e6);
  }
  return s;
}

}  // namespace

std::string job_replay_to_text(const replay::JobReplayReport& r) {
  std::string s = fmt::format(
      "Whole-job replay of {} rank {} {} (docs/replay.md, \"Whole-job replay\"): {} collective(s) matched in "
      "{} group(s)\n",
      r.ranks.size(), r.ranks_from.empty() ? "trace(s) in" : "process(es) of one file,", printable(r.source),
      r.collectives, r.collective_groups);
  if (!r.ranks_from.empty()) s += "  ranks: " + printable(r.ranks_from) + "\n";
  s += fmt::format(
      "  matched by: {} Kineto's (process group, Seq), {} process group name then order, {} stream then order\n",
      r.matched_by_seq, r.matched_by_group_order, r.matched_by_stream_order);
  if (r.nccl_checked > 0)
    s += fmt::format(
        "  NCCL calls: {} of the {} collective(s) launched by one operation on every rank that recorded it (NCCL's "
        "NVTX ranges); the rest not recorded on two ranks\n",
        r.nccl_checked, r.collectives);
  s += "  rests on: collectives matched by (process group, Seq) where the trace has them (only the ranks in its "
       "Process Group Ranks take part), else by process group name, else by stream, then by order; a collective ends "
       "at its last participant's start plus that rank's recorded duration; clocks aligned on shared collectives' "
       "ends\n";
  for (const auto& w : r.warnings) s += "  warning: " + printable(w) + "\n";
  for (const auto& m : r.mismatches) s += "  mismatch: " + printable(m) + "\n";
  if (r.mismatches_total > r.mismatches.size())
    s += fmt::format("  ... {} more mismatch(es) (all of them: --format json)\n",
                     r.mismatches_total - r.mismatches.size());
  s += "  per rank, median over its steps (collectives: matched+anchored; last at: collectives it started last):\n";
  s += rank_table(r);
  if (r.error_steps == 0) s += "  identity replay: no step replayed, so no error figure\n";
  else
    s += fmt::format(
        "  identity replay of the job over {} step(s) of {} rank(s), step time |error|: median {:.2f}%, max {:.2f}% "
        "(goal: median <= {:.0f}%, max <= {:.0f}%){}\n",
        r.error_steps, r.ranks.size(), r.median_abs_error * 100, r.max_abs_error * 100,
        replay::kIdentityGoalMedian * 100, replay::kIdentityGoalMax * 100, r.within_goal() ? "" : " OUTSIDE THE GOAL");
  if (r.straggler >= 0) s += fmt::format("  straggler: rank {} (started the most collectives last)\n", r.straggler);
  for (const auto& w : r.what_if) {
    s += fmt::format(
        "What-if {} on rank {}, every rank replayed again (median step, saving against the job's identity "
        "replay):\n",
        printable(w.edit), w.rank);
    for (std::size_t k = 0; k < w.replayed_step_ns.size() && k < r.ranks.size(); ++k)
      s += fmt::format("  rank {:>5}  step {:>12}  saving {}\n", r.ranks[k].rank,
                       ms_text(static_cast<double>(w.replayed_step_ns[k])),
                       w.saving_ns[k] ? ms_text(static_cast<double>(*w.saving_ns[k])) : std::string("not claimed"));
    for (const auto& n : w.notes) s += "    note: " + printable(n) + "\n";
  }
  return s;
}

}  // namespace syncscope
