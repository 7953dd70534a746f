#include <cstdio>
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/trace_io.hpp"
int main(int argc, char** argv) {
  auto t = syncscope::read_trace(argv[1]);
  syncscope::AnalysisOptions o;
  o.step_glob = "train_step#*";
  auto r = syncscope::analyze(t, o);
  std::printf("%llu sync points, %zu steps\n", (unsigned long long)r.totals.syncs.total, r.steps.size());
  return r.totals.syncs.total == 26 ? 0 : 1;
}
