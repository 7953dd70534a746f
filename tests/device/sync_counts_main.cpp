// Runs the sync-count workload once, untraced or under `syncscope trace`:
//   syncscope trace -o w.json -- build/.../syncscope_sync_counts [N M K]
// Prints what it did; exit 0 on success, 1 on a CUDA error.
#include <cstdio>
#include <cstdlib>

#include "sync_counts.hpp"

int main(int argc, char** argv) {
  syncscope::device_test::SyncWorkload w;
  if (argc >= 4) {
    w.stream_syncs = std::atoi(argv[1]);
    w.event_syncs = std::atoi(argv[2]);
    w.pageable_copies = std::atoi(argv[3]);
  }
  auto nothing = [](void*) {};
  const auto r = syncscope::device_test::run_sync_workload(w, nothing, nothing, nullptr);
  if (!r.ok) {
    std::fprintf(stderr, "sync_counts: %s\n", r.error.c_str());
    return 1;
  }
  std::printf(
      "sync_counts: %d stream syncs, %d event syncs, %d pageable D2H copies, 1 device sync; "
      "long kernel %.2f ms, pinned H2D %.2f ms\n",
      w.stream_syncs, w.event_syncs, w.pageable_copies, r.long_kernel_ms_measured, r.h2d_ms_measured);
  return 0;
}
