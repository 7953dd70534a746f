// syncscope_bench_kernels: per-variant microbenchmarks of the three fixes and L-sweeps of
// the packing and offload fixes on a CUDA device, printing each measured saving beside the
// simple model's prediction: packing (L-1)*s with s the measured per-layer metadata cost,
// offload (L-1)*min(c,g) with c the measured reload copy and g the measured per-layer
// recompute+backward (docs/sources.md#offload-double-buffer). Medians over repeats after warm-up, fresh random inputs
// per repeat (seeds printed), host wall time for anything that may sync (a sync's cost is
// the point) and CUDA events for pure device work. Results are printed, never invented:
// without a GPU it prints "skipped: no CUDA device" and exits 0.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <any>
#include <chrono>
#include <cstring>
#include <map>
#include <random>

#include "cuda/cuda_api.h"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/moe_routing/options.hpp"
#include "syncscope/fixes/moe_routing/torch_step.hpp"
#include "syncscope/fixes/offload/options.hpp"
#include "syncscope/fixes/packing/options.hpp"
#include "syncscope/fixes/packing/torch_step.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/kernels/step.hpp"
#include "syncscope/program/reference.hpp"
#include "torch/internal.hpp"

namespace sk = syncscope::kernels;
namespace dt = syncscope::kernels::detail;
namespace sp = syncscope::program;

namespace {

struct Config {
  bool quick = false;
  int warmup = 2;
  int repeats = 7;
  int tokens = 2048;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

void check(int rc, const char* what) { dt::check_cuda(rc, what); }

// Host wall time of f() until the device is idle, in ms.
template <typename F>
double host_ms(F&& f) {
  check(ss_cuda_device_synchronize(), "cudaDeviceSynchronize");
  const auto t0 = std::chrono::steady_clock::now();
  f();
  check(ss_cuda_device_synchronize(), "cudaDeviceSynchronize");
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class GpuTimer {
 public:
  GpuTimer() {
    check(ss_cuda_event_create(&a_, 1), "cudaEventCreate");
    check(ss_cuda_event_create(&b_, 1), "cudaEventCreate");
  }
  ~GpuTimer() {
    (void)ss_cuda_event_destroy(a_);
    (void)ss_cuda_event_destroy(b_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;
  // Device time of the work f() queues on `stream` (NULL: the legacy default stream).
  template <typename F>
  double ms(F&& f, void* stream = nullptr) {
    check(ss_cuda_event_record(a_, stream), "cudaEventRecord");
    f();
    check(ss_cuda_event_record(b_, stream), "cudaEventRecord");
    check(ss_cuda_event_synchronize(b_), "cudaEventSynchronize");
    float out = 0;
    check(ss_cuda_event_elapsed_ms(&out, a_, b_), "cudaEventElapsedTime");
    return out;
  }

 private:
  void* a_ = nullptr;
  void* b_ = nullptr;
};

std::vector<int> random_lengths(std::mt19937_64& rng, int total, int lo, int hi) {
  std::vector<int> out;
  for (int left = total; left > 0;) {
    const int len = std::min(left, lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1)));
    out.push_back(len);
    left -= len;
  }
  return out;
}

syncscope::scenario::ModelShape qwen3_06b() {  // docs/sources.md#model-shapes: Qwen3-0.6B
  syncscope::scenario::ModelShape m;
  m.name = "Qwen3-0.6B";
  m.model_type = "qwen3";
  m.num_hidden_layers = 28;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_key_value_heads = 8;
  m.head_dim = 128;
  m.intermediate_size = 3072;
  m.vocab_size = 151936;
  m.rope_theta = 1000000.0;
  return m;
}

// The step's context on the GPU, wired to counters of its own (StandaloneCtx), in bf16.
struct Dev : dt::StandaloneCtx {
  Dev() {
    ctx.device = torch::Device(torch::kCUDA, 0);
    ctx.dtype = torch::kBFloat16;
    ctx.cuda = true;
  }
};

// NF4 dequantization (qlora): each numbered variant is first checked against the CPU
// reference (fp32, bit for bit), then timed with CUDA events on a Qwen3-14B MLP weight
// (17408 x 5120 values), bf16 out. Bandwidth counts codes + absmax read and bf16 written.
void bench_nf4(const Config& cfg, std::uint64_t seed) {
  const std::int64_t n = cfg.quick ? 5120LL * 1024 : 17408LL * 5120;
  fmt::print("\n== NF4 dequantization, {} values (bf16 out) ==\n", n);
  fmt::print("{:<8} {:>10} {:>12} {:>10}\n", "variant", "checked", "ms", "GB/s");
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(static_cast<std::size_t>(n));
  for (auto& x : w) x = normal(rng);
  const sp::Nf4Tensor q = sp::nf4_quantize(w, false);
  const std::vector<float> ref = sp::nf4_dequantize(q);
  void *codes = nullptr, *absmax = nullptr, *out = nullptr;
  check(ss_cuda_malloc(&codes, q.codes.size()), "cudaMalloc");
  check(ss_cuda_malloc(&absmax, q.absmax.size() * 4), "cudaMalloc");
  check(ss_cuda_malloc(&out, static_cast<std::size_t>(n) * 4), "cudaMalloc");
  check(ss_cuda_memcpy(codes, q.codes.data(), q.codes.size(), 1), "cudaMemcpy");
  check(ss_cuda_memcpy(absmax, q.absmax.data(), q.absmax.size() * 4, 1), "cudaMemcpy");
  const double bytes = static_cast<double>(q.codes.size()) + 4.0 * static_cast<double>(q.absmax.size()) + 2.0 * n;
  GpuTimer timer;
  for (int v = 1; v <= SS_NF4_VARIANTS; ++v) {
    const auto* c = static_cast<const std::uint8_t*>(codes);
    const auto* a = static_cast<const float*>(absmax);
    check(ss_cuda_memset(out, 0xFF, static_cast<std::size_t>(n) * 4), "cudaMemset");
    check(ss_nf4_dequantize(c, a, n, out, SS_DTYPE_F32, v, nullptr), "ss_nf4_dequantize");
    check(ss_cuda_device_synchronize(), "cudaDeviceSynchronize");
    std::vector<float> got(static_cast<std::size_t>(n));
    check(ss_cuda_memcpy(got.data(), out, got.size() * 4, 2), "cudaMemcpy");
    std::int64_t bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) bad += std::memcmp(&got[i], &ref[i], 4) != 0;
    if (bad != 0) {
      fmt::print("{:<8} {:>10} (not timed: {} values differ from the CPU reference)\n", v, "FAILED", bad);
      continue;
    }
    std::vector<double> t;
    for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
      const double ms =
          timer.ms([&] { check(ss_nf4_dequantize(c, a, n, out, SS_DTYPE_BF16, v, nullptr), "ss_nf4_dequantize"); });
      if (r >= cfg.warmup) t.push_back(ms);
    }
    const double m = median(t);
    fmt::print("{:<8} {:>10} {:>12.4f} {:>10.1f}\n", v, "ok", m, bytes / (m * 1e-3) / 1e9);
  }
  ss_cuda_free(codes);
  ss_cuda_free(absmax);
  ss_cuda_free(out);
}

// Packing: L mask() calls on one fresh batch per repeat; per-layer cost s of the baseline
// is (t_rebuild - t_cached) / (L - 1).
double bench_packing(const Config& cfg, std::uint64_t seed) {
  const int L = 16;
  fmt::print("\n== packing metadata: {} layers' mask() calls on one packed batch, T={} (lengths 64..1024) ==\n", L,
             cfg.tokens);
  fmt::print("{:<10} {:>12} {:>14} {:>12}\n", "variant", "ms/batch", "ms/layer", "syncs/batch");
  std::map<std::string, double> per_batch;
  for (const std::string& v : syncscope::scenario::fix_variants(syncscope::fixes::packing::kFix)) {
    Dev d;
    std::mt19937_64 rng(seed);
    std::vector<double> t;
    std::uint64_t gen = 0;
    int syncs = 0;
    for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
      syncscope::fixes::packing::PackingMetadata pm(syncscope::fixes::packing::to_variant(v));
      const dt::HostBatch host = dt::pack_batch(random_lengths(rng, cfg.tokens, 64, 1024), 1000, rng(), true);
      const dt::PackedBatch batch = dt::upload(host, d.ctx, ++gen);
      d.syncs = {};
      const double ms = host_ms([&] {
        for (int l = 0; l < L; ++l) (void)pm.mask(batch, 0, d.ctx);
      });
      syncs = d.syncs.total();
      if (r >= cfg.warmup) t.push_back(ms);
    }
    per_batch[v] = median(t);
    fmt::print("{:<10} {:>12.3f} {:>14.4f} {:>12}\n", v, per_batch[v], per_batch[v] / L, syncs);
  }
  const double s = (per_batch["rebuild"] - per_batch["cached"]) / (L - 1);
  fmt::print("measured s (per-layer rebuild cost the cache saves) = {:.4f} ms\n", s);
  return s;
}

void bench_moe(const Config& cfg, std::uint64_t seed) {
  // gpt-oss-20b's MoE block (docs/sources.md#model-shapes): E = 32, top-4, hidden 2880, 2880 per expert.
  const std::int64_t T = cfg.tokens, H = 2880, I = 2880, k = 4;
  const int E = 32;
  fmt::print("\n== MoE dispatch forward (gpt-oss-20b block: E={}, top-{}, H={}, I={}), T={} ==\n", E, k, H, I, T);
  fmt::print("{:<10} {:>12} {:>12} {:>10}\n", "variant", "host ms", "device ms", "syncs");
  Dev d;
  torch::manual_seed(seed);
  const auto o = torch::TensorOptions().device(d.ctx.device).dtype(d.ctx.dtype);
  dt::ExpertWeights w{torch::randn({E, H, I}, o) * 0.02, torch::randn({E, H, I}, o) * 0.02,
                      torch::randn({E, I, H}, o) * 0.02};
  GpuTimer timer;
  for (const std::string& v : syncscope::scenario::fix_variants(syncscope::fixes::moe_routing::kFix)) {
    std::vector<double> host, dev;
    int syncs = 0;
    for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
      torch::NoGradGuard no_grad;
      const torch::Tensor x = torch::randn({T, H}, o);
      auto top = torch::topk(torch::randn({T, E}, o), k, -1);
      const torch::Tensor wts = torch::softmax(std::get<0>(top).to(torch::kFloat32), -1);
      d.syncs = {};
      double dms = 0;
      const double hms = host_ms([&] {
        dms = timer.ms([&] {
          (void)syncscope::fixes::moe_routing::moe_experts(syncscope::fixes::moe_routing::to_variant(v), x,
                                                           std::get<1>(top), wts, w, d.ctx);
        });
      });
      syncs = d.syncs.total();
      if (r >= cfg.warmup) {
        host.push_back(hms);
        dev.push_back(dms);
      }
    }
    fmt::print("{:<10} {:>12.3f} {:>12.3f} {:>10}\n", v, median(host), median(dev), syncs);
  }
  fmt::print("(device = capacity-padded bmm with C = T: E/k = {}x the expert FLOPs of the others, no host sync)\n",
             E / k);
}

struct CopyCompute {
  double c = 0;  // ms: one checkpoint's pinned H2D reload
  double g = 0;  // ms: one layer's recompute + backward
};

CopyCompute bench_offload_parts(const Config& cfg, std::uint64_t seed) {
  const syncscope::scenario::ModelShape m = qwen3_06b();
  const std::int64_t T = cfg.tokens, H = m.hidden_size;
  Dev d;
  GpuTimer timer;
  void* stream = nullptr;
  check(ss_cuda_stream_create_nonblocking(&stream), "cudaStreamCreateWithFlags");
  const torch::Tensor host = torch::randn({T, H}).to(torch::kBFloat16).pin_memory();
  torch::Tensor dev = torch::empty({T, H}, d.ctx.opts());
  std::vector<double> c;
  for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
    const double ms = timer.ms(
        [&] {
          check(ss_cuda_memcpy_async(dev.data_ptr(), host.data_ptr(), host.nbytes(), 1, stream), "cudaMemcpyAsync");
        },
        stream);
    if (r >= cfg.warmup) c.push_back(ms);
  }
  check(ss_cuda_stream_destroy(stream), "cudaStreamDestroy");
  sp::StepOptions o;
  o.model = m;
  o.dtype = "bf16";
  o.device = "cuda";
  syncscope::fixes::packing::set_variant(o, syncscope::fixes::packing::Variant::Device);
  o.seed = seed;
  const dt::ModelWeights w = dt::make_weights(o, 1, d.ctx);
  std::mt19937_64 rng(seed);
  std::vector<double> g;
  std::uint64_t gen = 0;
  for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
    const dt::HostBatch hb = dt::pack_batch(random_lengths(rng, cfg.tokens, 64, 1024), m.vocab_size, rng(), true);
    const dt::PackedBatch batch = dt::upload(hb, d.ctx, ++gen);
    const dt::Rope rope = dt::rope_tables(batch.position_ids, m, d.ctx);
    // The packing fix's device mask, built once per batch outside the layer timing (the layer
    // then reads it from the fix's cache in `states`).
    std::map<syncscope::fixes::Fix, std::any> states;
    (void)dt::fix_attention_mask(o, 0, 0, batch, states, d.ctx);
    const torch::Tensor x = torch::randn({T, H}, d.ctx.opts()).requires_grad_(true);
    const torch::Tensor grad = torch::randn({T, H}, d.ctx.opts());
    const double ms = timer.ms([&] {
      const torch::Tensor out = dt::layer_forward(o, 0, w.layers[0], x, batch, rope, states, d.ctx);
      torch::autograd::backward({out}, {grad});
    });
    if (r >= cfg.warmup) g.push_back(ms);
  }
  CopyCompute cc{median(c), median(g)};
  fmt::print(
      "\n== offload parts (Qwen3-0.6B layer, T={}, bf16) ==\nc (reload of {:.1f} MiB, pinned H2D) = {:.4f} ms "
      "({:.1f} GB/s); g (recompute + backward of one layer) = {:.4f} ms\n",
      cfg.tokens, static_cast<double>(host.nbytes()) / (1 << 20), cc.c,
      static_cast<double>(host.nbytes()) / (cc.c * 1e6), cc.g);
  return cc;
}

// Median step time (host wall, each run() ends with the loss read) over fresh batches.
double step_ms(const sp::StepOptions& o, const Config& cfg) {
  sk::ReferenceStep step(o);
  std::vector<double> t;
  for (int r = 0; r < cfg.warmup + cfg.repeats; ++r) {
    step.next_batch();
    const double ms = host_ms([&] { (void)step.run(); });
    if (r >= cfg.warmup) t.push_back(ms);
  }
  return median(t);
}

sp::StepOptions sweep_options(const Config& cfg, int layers, std::uint64_t seed) {
  sp::StepOptions o;
  o.model = qwen3_06b();
  o.layers = layers;
  o.batch.packed_tokens = cfg.tokens;
  o.batch.distribution = "uniform";
  o.batch.min_len = 64;
  o.batch.max_len = 1024;
  o.batch.seed = seed;
  o.dtype = "bf16";
  o.device = "cuda";
  o.seed = seed;
  return o;
}

void sweep(const Config& cfg, double s, const CopyCompute& cc, std::uint64_t seed) {
  const std::vector<int> Ls = cfg.quick ? std::vector<int>{2, 4, 8} : std::vector<int>{2, 4, 8, 16, 28};
  fmt::print("\n== L-sweep, packing (Qwen3-0.6B, T={}, bf16, no offload): saving = T_rebuild - T_cached ==\n",
             cfg.tokens);
  fmt::print("{:>3} {:>12} {:>12} {:>12} {:>14} {:>16}\n", "L", "rebuild ms", "cached ms", "saving ms", "saving/(L-1)",
             "model (L-1)*s");
  for (int L : Ls) {
    sp::StepOptions o = sweep_options(cfg, L, seed);
    syncscope::fixes::packing::set_variant(o, syncscope::fixes::packing::Variant::Rebuild);
    const double a = step_ms(o, cfg);
    syncscope::fixes::packing::set_variant(o, syncscope::fixes::packing::Variant::Cached);
    const double b = step_ms(o, cfg);
    fmt::print("{:>3} {:>12.3f} {:>12.3f} {:>12.3f} {:>14.4f} {:>16.3f}\n", L, a, b, a - b, (a - b) / (L - 1),
               (L - 1) * s);
  }
  fmt::print("\n== L-sweep, offload (packing device, every layer offloaded): saving = T_single - T_double ==\n");
  fmt::print("{:>3} {:>11} {:>11} {:>13} {:>11} {:>14} {:>18}\n", "L", "single ms", "double ms", "prefetch ms",
             "saving ms", "saving/(L-1)", "model (L-1)*min(c,g)");
  for (int L : Ls) {
    sp::StepOptions o = sweep_options(cfg, L, seed);
    syncscope::fixes::packing::set_variant(o, syncscope::fixes::packing::Variant::Device);
    syncscope::fixes::offload::set_budget_bytes(o, 0);  // force offloading (the memory-aware plan would keep all)
    syncscope::fixes::offload::set_variant(o, syncscope::fixes::offload::Variant::Single);
    const double a = step_ms(o, cfg);
    syncscope::fixes::offload::set_variant(o, syncscope::fixes::offload::Variant::Double);
    const double b = step_ms(o, cfg);
    syncscope::fixes::offload::set_variant(o, syncscope::fixes::offload::Variant::Prefetch);
    const double p = step_ms(o, cfg);
    fmt::print("{:>3} {:>11.3f} {:>11.3f} {:>13.3f} {:>11.3f} {:>14.4f} {:>18.3f}\n", L, a, b, p, a - b,
               (a - b) / (L - 1), (L - 1) * std::min(cc.c, cc.g));
  }
}

}  // namespace

int main(int argc, char** argv) {
  syncscope::fixes::register_shipped_torch_steps();  // the variants' names and the fixes' LibTorch hooks (shipped.hpp)
  CLI::App app{
      "Microbenchmarks of the three fixes' variants and L-sweeps of the packing and offload fixes on a CUDA "
      "device (medians after warm-up; fresh random inputs per repeat)."};
  Config cfg;
  app.add_flag("--quick", cfg.quick, "smaller sweep and fewer repeats (about a minute on an H200)")
      ->capture_default_str();
  app.add_option("--repeats", cfg.repeats, "timed repeats per measurement (median reported)")->capture_default_str();
  app.add_option("--warmup", cfg.warmup, "untimed warm-up runs per measurement")->capture_default_str();
  app.add_option("--tokens", cfg.tokens, "packed tokens T per batch")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 20));
  CLI11_PARSE(app, argc, argv);
  if (cfg.quick && app.count("--repeats") == 0) cfg.repeats = 5;
  if (!sk::cuda_available()) {
    fmt::print("syncscope_bench_kernels: skipped: no CUDA device (LibTorch {})\n", sk::torch_version());
    return 0;
  }
  try {
    char name[256];
    int driver = 0;
    check(ss_cuda_device_name(name, sizeof name, &driver), "cudaGetDeviceProperties");
    const std::uint64_t seed = std::random_device{}();
    fmt::print("syncscope_bench_kernels: machine {} (driver {}), LibTorch {}, commit {}, date {}, seed {}{}\n", name,
               driver, sk::torch_version(), syncscope::build_commit(), syncscope::utc_now_iso8601(), seed,
               cfg.quick ? ", --quick" : "");
    const double s = bench_packing(cfg, seed);
    bench_moe(cfg, seed);
    bench_nf4(cfg, seed);
    const CopyCompute cc = bench_offload_parts(cfg, seed);
    sweep(cfg, s, cc, seed);
  } catch (const std::exception& e) {
    fmt::print(stderr, "syncscope_bench_kernels: {}\n", e.what());
    return 1;
  }
  return 0;
}
