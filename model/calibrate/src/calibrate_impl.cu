// CUDA microbenchmarks behind `syncscope calibrate`. C++17 (nvcc); every CUDA runtime and
// cuBLAS return code is checked and a failure throws calibrate_detail::Failure naming the
// call. Timing: CUDA events for GPU-side durations, std::chrono::steady_clock for what the
// host observes (round trip, launch overhead, launch latency, pageable copies); warm-up
// first, then the median of the repeats. Budget: well under 60 s on an H200 (the largest
// items are the 8192^3 bf16 GEMMs, ~1.5 ms each, and 256 MiB copies).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "calibrate_impl.hpp"

namespace syncscope::calibrate_detail {

namespace {

using Clock = std::chrono::steady_clock;

void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::ostringstream os;
  os << call << " failed: " << cudaGetErrorName(e) << " (" << cudaGetErrorString(e) << ") at " << file << ":" << line;
  throw Failure(os.str(), static_cast<int>(e));
}

void check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::ostringstream os;
  os << call << " failed: cuBLAS status " << static_cast<int>(s) << " at " << file << ":" << line;
  throw Failure(os.str(), static_cast<int>(s));
}

#define CK(call) check((call), #call, __FILE__, __LINE__)
// Kernel launches report through cudaGetLastError.
#define CK_LAUNCH() check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ns_since(Clock::time_point a, Clock::time_point b) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// ---- RAII holders: nothing leaks when a check throws ----
struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
struct HostFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
using DevicePtr = std::unique_ptr<void, DeviceFree>;
using PinnedPtr = std::unique_ptr<void, HostFree>;

DevicePtr device_alloc(std::size_t bytes) {
  void* p = nullptr;
  CK(cudaMalloc(&p, bytes));
  return DevicePtr(p);
}
PinnedPtr pinned_alloc(std::size_t bytes, unsigned flags = cudaHostAllocDefault) {
  void* p = nullptr;
  CK(cudaHostAlloc(&p, bytes, flags));
  return PinnedPtr(p);
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { CK(cudaEventCreate(&e)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

double elapsed_ns(const Event& a, const Event& b) {
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a.e, b.e));
  return static_cast<double>(ms) * 1e6;
}

struct Cublas {
  cublasHandle_t h = nullptr;
  Cublas() { CK(cublasCreate(&h)); }
  ~Cublas() { cublasDestroy(h); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;
};

// ---- kernels ----
__global__ void empty_kernel() {}

__global__ void set_flag(volatile int* flag) { *flag = 1; }

// Deterministic pseudo-random bf16 in [-1, 1): random data, not zeros, so the GEMM does not
// run on a power-saving all-zero path.
__global__ void fill_bf16(__nv_bfloat16* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    p[i] = __float2bfloat16(static_cast<float>(x) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

// Bandwidth-bound: reads and writes every element once (float4, grid-stride).
__global__ void stream_copy(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float4 v = in[i];
    v.x += 1.0f;
    out[i] = v;
  }
}

// FP32 FMA throughput: 8 independent chains per thread, `iters` iterations, 2 FLOP per FMA.
__global__ void fma_chain(float* out, int iters, float a, float b) {
  float x[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) x[k] = static_cast<float>(threadIdx.x + k);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) x[k] = fmaf(x[k], a, b);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) s += x[k];
  if (s == 12345.678f) out[blockIdx.x] = s;  // keeps the chains alive; practically never taken
}

// ---- measurements ----
double sync_round_trip(const Stream& st, int warmup, int reps) {
  std::vector<double> t;
  for (int i = 0; i < warmup + reps; ++i) {
    auto a = Clock::now();
    empty_kernel<<<1, 1, 0, st.s>>>();
    CK_LAUNCH();
    CK(cudaStreamSynchronize(st.s));
    auto b = Clock::now();
    if (i >= warmup) t.push_back(ns_since(a, b));
  }
  return median(t);
}

double launch_overhead(const Stream& st, int batches, int per_batch) {
  std::vector<double> t;
  for (int r = 0; r < batches + 1; ++r) {
    CK(cudaStreamSynchronize(st.s));
    auto a = Clock::now();
    for (int i = 0; i < per_batch; ++i) empty_kernel<<<1, 1, 0, st.s>>>();
    auto b = Clock::now();
    CK_LAUNCH();
    if (r > 0) t.push_back(ns_since(a, b) / per_batch);  // batch 0 is warm-up
  }
  CK(cudaStreamSynchronize(st.s));
  return median(t);
}

// Host time from the launch call to the moment the kernel's write to mapped pinned memory
// is visible: the launch latency of an idle GPU plus one PCIe write.
double launch_latency(const Stream& st, int warmup, int reps) {
  PinnedPtr flag_host = pinned_alloc(sizeof(int), cudaHostAllocMapped);
  volatile int* flag = static_cast<volatile int*>(flag_host.get());
  int* flag_dev = nullptr;
  CK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&flag_dev), flag_host.get(), 0));
  std::vector<double> t;
  for (int i = 0; i < warmup + reps; ++i) {
    CK(cudaStreamSynchronize(st.s));
    *flag = 0;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    auto a = Clock::now();
    set_flag<<<1, 1, 0, st.s>>>(flag_dev);
    CK_LAUNCH();
    Clock::time_point b;
    for (;;) {
      if (*flag == 1) {
        b = Clock::now();
        break;
      }
      if (ns_since(a, Clock::now()) > 2e9) throw Failure("launch latency: kernel flag not seen within 2 s", 0);
    }
    if (i >= warmup) t.push_back(ns_since(a, b));
  }
  CK(cudaStreamSynchronize(st.s));
  return median(t);
}

double copy_rate_events(const Stream& st, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int reps,
                        double bytes_counted) {
  Event e0, e1;
  std::vector<double> t;
  for (int i = 0; i < reps + 1; ++i) {
    CK(cudaEventRecord(e0.e, st.s));
    CK(cudaMemcpyAsync(dst, src, bytes, kind, st.s));
    CK(cudaEventRecord(e1.e, st.s));
    CK(cudaEventSynchronize(e1.e));
    if (i > 0) t.push_back(elapsed_ns(e0, e1));
  }
  double ns = median(t);
  return ns > 0 ? bytes_counted * 1e9 / ns : 0;
}

// Pageable copies go through a staging buffer and return when done: host clock.
double copy_rate_pageable(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int reps) {
  std::vector<double> t;
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < reps + 1; ++i) {
    auto a = Clock::now();
    CK(cudaMemcpy(dst, src, bytes, kind));
    auto b = Clock::now();
    if (i > 0) t.push_back(ns_since(a, b));
  }
  double ns = median(t);
  return ns > 0 ? static_cast<double>(bytes) * 1e9 / ns : 0;
}

double bf16_gemm_rate(const Stream& st, int n, int reps, std::string& note) {
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  DevicePtr A = device_alloc(elems * sizeof(__nv_bfloat16));
  DevicePtr B = device_alloc(elems * sizeof(__nv_bfloat16));
  DevicePtr C = device_alloc(elems * sizeof(__nv_bfloat16));
  fill_bf16<<<1024, 256, 0, st.s>>>(static_cast<__nv_bfloat16*>(A.get()), elems, 1u);
  CK_LAUNCH();
  fill_bf16<<<1024, 256, 0, st.s>>>(static_cast<__nv_bfloat16*>(B.get()), elems, 2u);
  CK_LAUNCH();
  CK(cudaMemsetAsync(C.get(), 0, elems * sizeof(__nv_bfloat16), st.s));
  Cublas blas;
  CK(cublasSetStream(blas.h, st.s));
  const float alpha = 1.0f, beta = 0.0f;
  Event e0, e1;
  std::vector<double> t;
  const int warmup = 2;
  for (int i = 0; i < warmup + reps; ++i) {
    CK(cudaEventRecord(e0.e, st.s));
    CK(cublasGemmEx(blas.h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, A.get(), CUDA_R_16BF, n, B.get(), CUDA_R_16BF, n,
                    &beta, C.get(), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CK(cudaEventRecord(e1.e, st.s));
    CK(cudaEventSynchronize(e1.e));
    if (i >= warmup) t.push_back(elapsed_ns(e0, e1));
  }
  double ns = median(t);
  std::ostringstream os;
  os << "cublasGemmEx " << n << "^3, bf16 A/B/C, CUBLAS_COMPUTE_32F, random data, " << warmup << " warm-up, median of "
     << reps << " (CUDA events)";
  note = os.str();
  return ns > 0 ? 2.0 * n * static_cast<double>(n) * n * 1e9 / ns : 0;
}

double fp32_rate(const Stream& st, int sms, int reps, std::string& note) {
  DevicePtr out = device_alloc(sizeof(float) * 65536);
  const int blocks = sms * 8, threads = 256, iters = 1 << 14;
  Event e0, e1;
  std::vector<double> t;
  for (int i = 0; i < reps + 1; ++i) {
    CK(cudaEventRecord(e0.e, st.s));
    fma_chain<<<blocks, threads, 0, st.s>>>(static_cast<float*>(out.get()), iters, 0.999f, 0.001f);
    CK_LAUNCH();
    CK(cudaEventRecord(e1.e, st.s));
    CK(cudaEventSynchronize(e1.e));
    if (i > 0) t.push_back(elapsed_ns(e0, e1));
  }
  double ns = median(t);
  std::ostringstream os;
  os << "FMA chains: " << blocks << " blocks x " << threads << " threads x " << iters << " x 8 FMA, median of " << reps;
  note = os.str();
  return ns > 0 ? 2.0 * 8.0 * iters * static_cast<double>(blocks) * threads * 1e9 / ns : 0;
}

// A bandwidth-bound kernel timed alone and while a large pinned H2D copy runs on another
// non-blocking stream. The kernel stream waits on an event recorded just before the copy,
// so the kernels start with the copy; each run checks the kernels ended before the copy did.
double copy_compute_slowdown(const Stream& ks, const Stream& cs, void* kin, void* kout, std::size_t kbytes,
                             void* host_src, void* dev_dst, std::size_t cbytes, int reps, std::string& note) {
  const std::size_t n4 = kbytes / sizeof(float4);
  const int blocks = 1024, threads = 256, kernels_per_run = 3;
  Event k0, k1, c0, c1;
  auto run_kernels = [&]() {
    CK(cudaEventRecord(k0.e, ks.s));
    for (int j = 0; j < kernels_per_run; ++j) {
      stream_copy<<<blocks, threads, 0, ks.s>>>(static_cast<const float4*>(kin), static_cast<float4*>(kout), n4);
      CK_LAUNCH();
    }
    CK(cudaEventRecord(k1.e, ks.s));
  };
  std::vector<double> alone, with;
  for (int i = 0; i < reps + 1; ++i) {
    run_kernels();
    CK(cudaEventSynchronize(k1.e));
    if (i > 0) alone.push_back(elapsed_ns(k0, k1));
  }
  int valid = 0;
  for (int i = 0; i < reps + 1; ++i) {
    CK(cudaEventRecord(c0.e, cs.s));
    CK(cudaMemcpyAsync(dev_dst, host_src, cbytes, cudaMemcpyHostToDevice, cs.s));
    CK(cudaEventRecord(c1.e, cs.s));
    CK(cudaStreamWaitEvent(ks.s, c0.e, 0));
    run_kernels();
    CK(cudaEventSynchronize(k1.e));
    CK(cudaEventSynchronize(c1.e));
    double copy_ns = elapsed_ns(c0, c1);
    double kernel_end = elapsed_ns(c0, k1);
    if (i > 0 && kernel_end <= copy_ns) {
      with.push_back(elapsed_ns(k0, k1));
      ++valid;
    }
  }
  std::ostringstream os;
  os << kernels_per_run << " stream-copy kernels over " << (kbytes >> 20) << " MiB, alone vs beside a "
     << (cbytes >> 20) << " MiB pinned H2D copy on another stream, median of " << reps << " (" << valid
     << " runs fully overlapped); slowdown = t_with / t_alone - 1";
  note = os.str();
  if (with.empty() || alone.empty()) {
    note += "; NOT MEASURED: the kernels never ran entirely inside the copy";
    return 0;
  }
  double s = median(with) / median(alone) - 1.0;
  if (s < 0) {
    note += "; measured below 0 (noise), recorded as 0";
    s = 0;
  }
  return s;
}

std::string version_text(int v) {
  std::ostringstream os;
  os << v / 1000 << "." << (v % 1000) / 10;
  return os.str();
}

}  // namespace

model::CalibrationMeasurements run(const model::CalibrationOptions& opt) {
  auto t_start = Clock::now();
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::ostringstream os;
    os << "no usable CUDA device (cudaGetDeviceCount: "
       << (e != cudaSuccess ? std::string(cudaGetErrorName(e)) + " - " + cudaGetErrorString(e)
                            : std::string("0 devices"))
       << ")";
    throw NoDevice(os.str());
  }
  if (opt.device < 0 || opt.device >= count) {
    std::ostringstream os;
    os << "device " << opt.device << " does not exist (" << count << " devices)";
    throw Failure(os.str(), 0);
  }
  CK(cudaSetDevice(opt.device));
  CK(cudaFree(nullptr));  // create the context before anything is timed

  model::CalibrationMeasurements m;
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, opt.device));
  m.gpu_name = prop.name;
  m.compute_major = prop.major;
  m.compute_minor = prop.minor;
  m.sm_count = prop.multiProcessorCount;
  m.memory_bytes = static_cast<double>(prop.totalGlobalMem);
  m.unified_memory = prop.integrated != 0;
  int drv = 0, rt = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  m.cuda_driver_api = version_text(drv);
  m.cuda_runtime = version_text(rt);

  const bool q = opt.quick;
  const int reps = q ? 3 : 7;
  const std::size_t copy_bytes = (q ? 64ull : 256ull) << 20;
  Stream st, side;

  m.sync_round_trip_ns = sync_round_trip(st, 20, q ? 50 : 300);
  m.method["sync_round_trip_ns"] = std::string(
                                       "empty kernel launch + cudaStreamSynchronize on an idle non-blocking "
                                       "stream, host steady_clock, 20 warm-up, median of ") +
                                   (q ? "50" : "300");
  m.launch_overhead_ns = launch_overhead(st, q ? 5 : 21, 1000);
  m.method["launch_overhead_ns"] = std::string(
                                       "1000 back-to-back empty-kernel launches per batch, host time / 1000, "
                                       "median of ") +
                                   (q ? "5" : "21") + " batches";
  m.launch_latency_ns = launch_latency(st, 10, q ? 30 : 200);
  m.method["launch_latency_ns"] = std::string(
                                      "launch call to the kernel's write into mapped pinned memory seen by the "
                                      "host (includes one PCIe write), idle GPU, median of ") +
                                  (q ? "30" : "200");

  {
    DevicePtr d0 = device_alloc(copy_bytes), d1 = device_alloc(copy_bytes);
    PinnedPtr hp = pinned_alloc(copy_bytes);
    std::memset(hp.get(), 1, copy_bytes);
    std::unique_ptr<char[]> pageable(new char[copy_bytes]);
    std::memset(pageable.get(), 1, copy_bytes);  // touch every page before timing
    CK(cudaMemset(d0.get(), 0, copy_bytes));
    CK(cudaMemset(d1.get(), 0, copy_bytes));
    const double b = static_cast<double>(copy_bytes);
    std::ostringstream size;
    size << (copy_bytes >> 20) << " MiB";
    m.h2d_pinned_bytes_per_s = copy_rate_events(st, d0.get(), hp.get(), copy_bytes, cudaMemcpyHostToDevice, reps, b);
    m.d2h_pinned_bytes_per_s = copy_rate_events(st, hp.get(), d0.get(), copy_bytes, cudaMemcpyDeviceToHost, reps, b);
    m.method["h2d_pinned_bytes_per_s"] =
        "cudaMemcpyAsync " + size.str() + " pinned -> device, CUDA events, median of " + std::to_string(reps);
    m.method["d2h_pinned_bytes_per_s"] =
        "cudaMemcpyAsync " + size.str() + " device -> pinned, CUDA events, median of " + std::to_string(reps);
    m.h2d_pageable_bytes_per_s = copy_rate_pageable(d0.get(), pageable.get(), copy_bytes, cudaMemcpyHostToDevice, reps);
    m.d2h_pageable_bytes_per_s = copy_rate_pageable(pageable.get(), d0.get(), copy_bytes, cudaMemcpyDeviceToHost, reps);
    m.method["h2d_pageable_bytes_per_s"] =
        "cudaMemcpy " + size.str() + " pageable -> device, host clock, median of " + std::to_string(reps);
    m.method["d2h_pageable_bytes_per_s"] =
        "cudaMemcpy " + size.str() + " device -> pageable, host clock, median of " + std::to_string(reps);
    m.dram_bytes_per_s = copy_rate_events(st, d1.get(), d0.get(), copy_bytes, cudaMemcpyDeviceToDevice, reps, 2 * b);
    m.method["dram_bytes_per_s"] = "cudaMemcpyAsync " + size.str() +
                                   " device -> device, read + write counted (2x "
                                   "bytes), CUDA events, median of " +
                                   std::to_string(reps);

    std::string note;
    DevicePtr kin = device_alloc(copy_bytes), kout = device_alloc(copy_bytes);
    CK(cudaMemset(kin.get(), 0, copy_bytes));
    m.copy_compute_slowdown = copy_compute_slowdown(st, side, kin.get(), kout.get(), copy_bytes / 4, hp.get(), d0.get(),
                                                    copy_bytes, reps, note);
    m.method["copy_compute_slowdown"] = note;
  }
  {
    std::string note;
    m.bf16_flops_per_s = bf16_gemm_rate(st, q ? 4096 : 8192, q ? 3 : 10, note);
    m.method["bf16_flops_per_s"] = note;
    m.fp32_flops_per_s = fp32_rate(st, m.sm_count, reps, note);
    m.method["fp32_flops_per_s"] = note;
  }
  CK(cudaDeviceSynchronize());
  m.wall_seconds = ns_since(t_start, Clock::now()) / 1e9;
  return m;
}

}  // namespace syncscope::calibrate_detail
