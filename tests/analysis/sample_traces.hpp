// Traces shared by the analysis and printer tests.
#pragma once

#include "trace_builder.hpp"

namespace syncscope::test {

// Three steps and two layers; see the numbers in the comments.
inline Trace windows_trace() {
  TraceBuilder b;
  // steps S0 [0,1000), S1 [1000,2500), S2 [2500,3000): durations 1000, 1500, 500.
  b.annotation("ProfilerStep#0", 0, 1000);
  b.annotation("ProfilerStep#1", 1000, 2500);
  b.annotation("ProfilerStep#2", 2500, 3000);
  // the GPU projection of a step is not a step
  b.range(RangeKind::GpuUserAnnotation, "ProfilerStep#0", 0, 1000).device = 0;
  // layers: layer_a [100,500), layer_b [1100,1400)
  b.annotation("layer_a", 100, 500);
  b.annotation("layer_b", 1100, 1400);
  // kernels on device 0: [900,1100) straddles S0/S1 -> 100 busy in each; [1200,1300) in S1;
  // [2600,2900) in S2. Busy S0 100, S1 200, S2 300. Counted by start: 1, 1, 1.
  b.kernel(0, 7, 900, 1100);
  b.kernel(0, 7, 1200, 1300);
  b.kernel(0, 7, 2600, 2900);
  // syncs:
  //  A [950,1050): starts in S0 (ends in S1); returns at 1050 while [900,1100) runs -> bubble 0; blocked 100.
  //  B [1120,1150): S1 and layer_b; returns 1150, last end 1100, next start 1200 -> bubble 100; blocked 30.
  //  C [1310,1320): S1 and layer_b, inside aten::nonzero; last end 1300, next start 2600 -> bubble 2600 - 1300 = 1300;
  //  blocked 10. D [3100,3110): in no step; nothing after -> bubble 0; blocked 10.
  b.api("cudaStreamSynchronize", 950, 1050, 1);
  b.api("cudaStreamSynchronize", 1120, 1150, 2);
  b.cpu_op("aten::nonzero", 1305, 1325);
  b.api("cudaStreamSynchronize", 1310, 1320, 3);
  b.api("cudaStreamSynchronize", 3100, 3110, 4);
  return b.done();
}

}  // namespace syncscope::test
