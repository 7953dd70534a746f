// tests/device/item_loop.py as a step program, op for op: per layer a 64x1024 @ 1024x1024
// fp32 matmul (cuBLASLt's SIMT sgemm and its split-K reduce), tanh, abs, max, then .item():
// a 4-byte device-to-host copy into pinned memory and a stream sync; each layer inside a
// "layer_NN" range. Kernel names are the identifiers of the kernels torch.profiler recorded
// on the H200 (tests/fixtures/torch/item_loop_l8_h200.json.gz), so a profile fitted from that
// trace gives each its traced duration.
#pragma once

#include <cstdio>

#include "sim_test_util.hpp"

namespace syncscope::simtest {

inline Program item_loop_program(int layers = 8) {
  const double M = 64, K = 1024, N = 1024, f32 = 4;
  Program p;
  p.name = "item_loop";
  for (int l = 0; l < layers; ++l) {
    char name[24];
    std::snprintf(name, sizeof name, "layer_%02d", l);
    p.ops.push_back(simple(OpKind::RangePush, 0, -1, name));
    Op mm = kernel("cutlass_80_simt_sgemm_64x64_8x5_nn_align1", 0, 0);
    mm.flops = 2 * M * K * N;
    mm.bytes = (M * K + K * N + 2 * M * N) * f32;
    mm.bf16 = false;
    p.ops.push_back(mm);
    for (const char* k : {"splitKreduce_kernel", "tanh_kernel_cuda", "AbsFunctor", "MaxNanFunctor"}) {
      Op e = kernel(k, 0, 0);
      e.bytes = 2 * M * N * f32;
      e.continues_op = p.ops.back().name == mm.name;  // aten::mm launches the reduce too
      p.ops.push_back(e);
    }
    p.ops.push_back(copy(CopyKind::DtoH, 0, 0));
    p.ops.back().bytes = 4;
    p.ops.push_back(simple(OpKind::StreamSync, 0));
    p.ops.push_back(simple(OpKind::RangePop));
  }
  return p;
}

}  // namespace syncscope::simtest
