// The step program of a reference training step: what the LibTorch step issues, as a
// syncscope::program::Program. Torch-free and CUDA-free.
//
// Faithfulness, and where it stops
// - Copies, events, stream waits, host reads (.item(), .tolist(), nonzero, bincount) and
//   NVTX ranges are exactly those the LibTorch step issues: the offload choreography is
//   the same build_choreography() list the step executes, and the number of host syncs
//   per step equals ReferenceStep's StepResult::host_syncs (tested).
// - Kernels follow the step's forward operator by operator with flops = 2*m*n*k per GEMM
//   and bytes = elements in + out; attention is one SDPA kernel (the PyTorch >= 2 path;
//   LibTorch 1.13 on CPU runs the explicit matmul-mask-softmax-matmul form instead).
//   Backward is modelled per forward op (a GEMM's dgrad and wgrad, SDPA backward at twice
//   the forward flops, one kernel per elementwise op at 1.5x its bytes): autograd's exact
//   kernel list depends on the PyTorch version.
// - MoE expert sizes depend on the router's choices, unknown before running: the program
//   assumes balanced routing, T*k/E tokens per expert (all experts non-empty).
#pragma once

#include "syncscope/program/program.hpp"
#include "syncscope/program/step_options.hpp"

namespace syncscope::program {

// One training step for `options` (validated; InputError when invalid). Streams: 0 "main"
// (the legacy default stream LibTorch uses), 1 "copy" (non-blocking) when offloading.
// An offload budget left to the device counts as 0 here (every layer offloaded).
program::Program build_step_program(const StepOptions& options);

}  // namespace syncscope::program
