// libFuzzer target for the GPU profile reader (YAML or JSON). Properties checked on every
// input: it never crashes or trips ASan/UBSan (float-to-integer overflow included), throws
// nothing but InputError; a profile it returns writes back (gpu_profile_to_yaml) to text
// that reads as the same profile, and simulates a small step program (kernels, copies both
// ways, a memset, a sync) without any error: every value it accepts is physical.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "syncscope/core/error.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/sim/simulator.hpp"

namespace {

using namespace syncscope;

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_gpu_profile: %s: %s\n", what, detail.c_str());
  std::abort();
}

program::Program small_program() {
  program::Program p;
  p.name = "fuzz";
  p.streams.push_back({"copy", true});
  auto op = [&](program::OpKind k) {
    program::Op o;
    o.kind = k;
    return o;
  };
  auto gemm = op(program::OpKind::Kernel);
  gemm.name = "gemm";
  gemm.flops = 2.0 * 4096 * 4096 * 4096;  // a large bf16 GEMM
  gemm.bytes = 3.0 * 4096 * 4096 * 2;
  p.ops.push_back(gemm);
  auto fp32 = op(program::OpKind::Kernel);
  fp32.name = "softmax";
  fp32.bf16 = false;
  fp32.flops = 1e9;
  fp32.bytes = 1e8;
  p.ops.push_back(fp32);
  auto set = op(program::OpKind::Memset);
  set.bytes = 1 << 20;
  p.ops.push_back(set);
  for (CopyKind k : {CopyKind::HtoD, CopyKind::DtoH, CopyKind::DtoD}) {
    auto c = op(program::OpKind::Copy);
    c.copy = k;
    c.host_memory = k == CopyKind::DtoH ? MemoryKind::Pageable : MemoryKind::Pinned;
    c.bytes = 512.0 * (1 << 20);
    c.stream = k == CopyKind::HtoD ? 1 : 0;
    p.ops.push_back(c);
  }
  p.ops.push_back(op(program::OpKind::StreamSync));
  p.ops.push_back(op(program::OpKind::DeviceSync));
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  model::GpuProfile p;
  try {
    p = model::parse_gpu_profile(text, "fuzz.yaml");
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  model::GpuProfile back;
  try {
    back = model::parse_gpu_profile(model::gpu_profile_to_yaml(p), "written.yaml");
  } catch (const std::exception& e) {
    die("our own profile YAML does not read back", e.what());
  }
  if (back.name != p.name || back.sm_count != p.sm_count || back.sources != p.sources)
    die("profile round trip differs", model::gpu_profile_to_yaml(p));
  try {
    sim::SimOptions o;
    o.steps = 2;
    const Trace t = sim::simulate(small_program(), p, o);
    for (const auto& k : t.kernels)
      if (k.end < k.start || k.start < 0) die("simulated kernel with a negative time", p.name);
  } catch (const std::exception& e) {
    die("an accepted profile fails to simulate", e.what());
  }
  return 0;
}
