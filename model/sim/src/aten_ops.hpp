// The CPU ops a simulated launch sits in (private to the simulator).
#pragma once

#include <string>

#include "syncscope/program/program.hpp"

namespace syncscope::sim::detail {

// The CPU op around a launch the program gave no framework op: named like the program op
// (a kernel's name as its trace shows it); an unnamed copy is PyTorch's aten::copy_ (the op
// behind .to() and .copy_() that calls cudaMemcpyAsync), an unnamed kernel or memset by kind.
std::string launch_op_name(const program::Op& op);

// The name of the aten:: CPU op that encloses a launch's runtime call, as torch.profiler
// records one around every cudaLaunchKernel / cudaMemcpyAsync it dispatches ("aten::mm",
// "aten::copy_"), from the program op's kind and name; empty when the op is already named as
// an op of its own namespace ("aten::item ...", a custom op "syncscope::nf4_dequantize ...",
// which a real trace shows without an aten:: op inside).
std::string aten_op_for_launch(const program::Op& op);

}  // namespace syncscope::sim::detail
