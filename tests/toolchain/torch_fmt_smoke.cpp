// LibTorch and fmt in one translation unit, fmt header-only (FMT_HEADER_ONLY, from
// fmt::fmt-header-only). PyTorch wheels from 2.10 ship fmt 12 headers under torch/include,
// which come before ours on the include path (pytorch PR #174372; docs/sources.md#torch-fmt): a file that
// sees them and calls compiled fmt compiles against fmt 12 and links against the system's
// libfmt (9 on Debian 12): undefined fmt::v12 symbols. Header-only, nothing of fmt is left
// for the linker to find, whichever fmt the headers are. Built by the toolchain check
// (tests/toolchain) and by the main build's tests (tests/toolchain/checks), where its
// object is also scanned for undefined fmt symbols.
#ifndef FMT_HEADER_ONLY
#error "torch_fmt_smoke.cpp must be compiled with FMT_HEADER_ONLY (link fmt::fmt-header-only)"
#endif
#include <torch/torch.h>

#include <fmt/format.h>

#include <cstdio>
#include <string>

int main() {
  const torch::Tensor t = torch::arange(6, torch::kFloat32).reshape({2, 3});
  const std::string s =
      fmt::format("{}x{} sum {:.1f} fmt {}", t.size(0), t.size(1), t.sum().item<float>(), FMT_VERSION);
  std::printf("%s\n", s.c_str());
  return s.rfind("2x3 sum 15.0 fmt ", 0) == 0 ? 0 : 1;
}
