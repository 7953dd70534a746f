// Writes a large synthetic trace in torch.profiler's (Kineto's) Chrome JSON layout, for the
// import benchmark: training steps of a 16-layer model with the event mix a real profile
// has (Python functions, aten ops, runtime and driver launches, kernels with flow arrows,
// host<->device copies, .item() syncs with cuda_sync records, user and GPU annotations,
// profiler overhead), formatted the way libkineto prints it. Synthetic data: not a
// measurement of anything.
//   syncscope_gen_trace OUT [--bytes N] [--seed S] [--dense]     (gzip when OUT ends in .gz)
// --dense: the same events as a profile recorded without record_shapes (no "Input Dims" /
// "Input type" on CPU ops), with no whitespace outside strings (as json.dumps(...,
// separators=(",", ":")) re-saves a trace): the most records per byte a real trace of this
// mix has, for the memory bound (peak RSS <= 0.5x the file).
#include <zlib.h>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

namespace {

class Out {
 public:
  Out(const std::string& path, bool dense)
      : gz_(path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0), dense_(dense) {
    if (gz_) gzf_ = gzopen(path.c_str(), "wb6");
    else f_ = std::fopen(path.c_str(), "wb");
    if (gz_ ? gzf_ == nullptr : f_ == nullptr) {
      std::fprintf(stderr, "syncscope_gen_trace: cannot open %s\n", path.c_str());
      std::exit(1);
    }
    buf_.reserve(1 << 21);
  }
  ~Out() {
    flush();
    if (gz_) gzclose(gzf_);
    else std::fclose(f_);
  }
  std::string& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= (1 << 20)) flush();
  }
  std::uint64_t written() const { return written_ + buf_.size(); }

 private:
  // Drops whitespace outside strings; the state carries across flushes.
  void minify() {
    std::size_t w = 0;
    for (const char c : buf_) {
      if (in_string_) {
        if (escaped_) escaped_ = false;
        else if (c == '\\') escaped_ = true;
        else if (c == '"') in_string_ = false;
      } else if (c == '"') {
        in_string_ = true;
      } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
        continue;
      }
      buf_[w++] = c;
    }
    buf_.resize(w);
  }
  void flush() {
    if (dense_) minify();
    if (buf_.empty()) return;
    const bool ok =
        gz_ ? gzwrite(gzf_, buf_.data(), static_cast<unsigned>(buf_.size())) == static_cast<int>(buf_.size())
            : std::fwrite(buf_.data(), 1, buf_.size(), f_) == buf_.size();
    if (!ok) {
      std::fprintf(stderr, "syncscope_gen_trace: write failed (disk full?)\n");
      std::exit(1);
    }
    written_ += buf_.size();
    buf_.clear();
  }
  bool gz_;
  bool dense_;
  bool in_string_ = false;
  bool escaped_ = false;
  gzFile gzf_ = nullptr;
  std::FILE* f_ = nullptr;
  std::string buf_;
  std::uint64_t written_ = 0;
};

const std::array<const char*, 12> kKernels = {
    "void "
    "cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(cutlass_80_tensorop_bf16_"
    "s16816gemm_relu_bf16_256x128_32x3_tn_align8::Params)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
    "cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
    "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "
    "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
    "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
    "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
    "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, "
    "false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)",
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() "
    "const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
    "at::native::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() "
    "const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
    "at::native::MaxNanFunctor<float> >, unsigned int, float, 4> >(at::native::ReduceOp<float, "
    "at::native::func_wrapper_t<float, at::native::MaxNanFunctor<float> >, unsigned int, float, 4>)",
    "triton_poi_fused__to_copy_add_mul_rsqrt_0",
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1",
    "void at::native::index_elementwise_kernel<128, 4, "
    "at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
    "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
    "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> "
    ">(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} "
    "const&)::{lambda(int)#1}>(long, "
    "at::native::gpu_index_kernel<at::native::index_kernel_impl<at::native::OpaqueType<2> >(at::TensorIteratorBase&, "
    "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}>(at::TensorIteratorBase&, "
    "c10::ArrayRef<long>, c10::ArrayRef<long>, at::native::index_kernel_impl<at::native::OpaqueType<2> "
    ">(at::TensorIteratorBase&, c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1} "
    "const&)::{lambda(int)#1})",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, c10::BFloat16, "
    "at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, float, float, float, true, "
    "false, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float*, float "
    "const*, float const*, float const*, float const*, float*, void*, long, float*, int*, float*, float*, float "
    "const*, float const*, float const*, float const*, float const*)",
};
const std::array<const char*, 6> kOps = {"aten::linear",     "aten::mul",
                                         "aten::layer_norm", "aten::scaled_dot_product_attention",
                                         "aten::silu",       "aten::add"};

class Gen {
 public:
  Gen(Out& out, std::uint64_t seed, bool dense) : o_(out), rng_(seed), dense_(dense) {}

  void header() {
    o_.buf() += R"({
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    }
  ],
  "cuda_driver_version": 13000,
  "cuda_runtime_version": 13000,
  "cupti_version": 130001,
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1790857026000000000,
  "traceEvents": [)";
  }

  void step(std::uint64_t n) {
    const std::int64_t step_start = host_;
    host_ += 50'000;
    copy_in();
    const std::int64_t fwd_start = host_;
    for (int layer = 0; layer < 16; ++layer) {
      const std::int64_t layer_start = host_;
      const std::int64_t gpu_layer_start = std::max(gpu_, host_ + 4000);
      for (int op = 0; op < 10; ++op) launch_op(static_cast<int>((layer + op) % kOps.size()));
      if (layer % 4 == 3) item();
      host_ += 2'000;
      x("user_annotation", "layer_" + two(layer), pid_, tid_, layer_start, host_ - layer_start, ext_++);
      x("gpu_user_annotation", "layer_" + two(layer), 0, 7, gpu_layer_start - 1, gpu_ - gpu_layer_start + 2, ext_ - 1);
    }
    x("python_function", "nn.Module: Model_0", pid_, tid_, fwd_start, host_ - fwd_start, 0, true);
    if (n % 8 == 0) x("overhead", "Activity Buffer Request", -1, 0, host_, 2'500, 0);
    host_ = std::max(host_, gpu_) + 20'000;
    x("user_annotation", "ProfilerStep#" + std::to_string(n), pid_, tid_, step_start, host_ - step_start, ext_++);
  }

  void footer() {
    o_.buf() += R"(,
  {
    "name": "Record Window End", "ph": "i", "s": "g",
    "pid": "", "tid": "", "ts": )";
    us(host_);
    o_.buf() += R"(
  }
  ],
  "traceName": "synthetic-kineto-trace.json"
}
)";
  }

 private:
  static std::string two(int v) { return (v < 10 ? "0" : "") + std::to_string(v); }
  void num(std::int64_t v) {
    char b[24];
    auto [e, ec] = std::to_chars(b, b + sizeof b, v);
    o_.buf().append(b, e);
  }
  void us(std::int64_t ns) {  // microseconds relative to base, three decimals
    num(ns / 1000);
    char frac[5] = {'.', static_cast<char>('0' + ns / 100 % 10), static_cast<char>('0' + ns / 10 % 10),
                    static_cast<char>('0' + ns % 10), 0};
    o_.buf() += frac;
  }
  void sep() {
    if (!first_) o_.buf() += ",";
    first_ = false;
    o_.buf() += "\n  {\n    ";
    o_.maybe_flush();
  }
  // {"ph": "X", ...} with Kineto's spacing; `args` is the text inside "args": {...}.
  void x(const char* cat, std::string_view name, std::int64_t pid, std::int64_t tid, std::int64_t ts, std::int64_t dur,
         std::uint64_t ext, bool python = false, const std::string& args = {}) {
    sep();
    auto& b = o_.buf();
    b += R"("ph": "X", "cat": ")";
    b += cat;
    b += R"(", "name": ")";
    b += name;
    b += R"(", "pid": )";
    num(pid);
    b += R"(, "tid": )";
    num(tid);
    b += ",\n    \"ts\": ";
    us(ts);
    b += ", \"dur\": ";
    us(dur);
    if (python) {
      b += ",\n    \"args\": {\n      \"Python parent id\": 1, \"Python id\": ";
      num(static_cast<std::int64_t>(ext_));
      b += ", \"Python thread\": 0\n    }";
    } else if (!args.empty() || ext != 0) {
      b += ",\n    \"args\": {\n      ";
      if (ext != 0) {
        b += "\"External id\": ";
        num(static_cast<std::int64_t>(ext));
        if (!args.empty()) b += ",";
      }
      b += args;
      b += "\n    }";
    }
    b += "\n  }";
  }
  void flow(char ph, std::uint64_t id, std::int64_t pid, std::int64_t tid, std::int64_t ts) {
    sep();
    auto& b = o_.buf();
    b += "\"ph\": \"";
    b += ph;
    b += "\", \"id\": ";
    num(static_cast<std::int64_t>(id));
    b += ", \"pid\": ";
    num(pid);
    b += ", \"tid\": ";
    num(tid);
    b += ", \"ts\": ";
    us(ts);
    b += ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"";
    if (ph == 'f') b += ", \"bp\": \"e\"";
    b += "\n  }";
  }
  std::string cpu_args() {
    std::uniform_int_distribution<int> dim(1, 8192);
    const std::string ids = "\"Record function id\": 0, \"Sequence number\": " + std::to_string(seq_++) +
                            ", \"Fwd thread id\": 0, \"Ev Idx\": " + std::to_string(ev_++);
    if (dense_) return ids;  // record_shapes=False
    return ids + ", \"Input Dims\": [[" + std::to_string(dim(rng_)) + ", " + std::to_string(dim(rng_)) + "], [" +
           std::to_string(dim(rng_)) + "]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]";
  }
  // One aten op: cpu_op > cudaLaunchKernel (runtime, or cuLaunchKernel now and then) ->
  // kernel on stream 7 with its ac2g flow.
  void launch_op(int op) {
    std::uniform_int_distribution<int> pick(0, static_cast<int>(kKernels.size()) - 1);
    std::uniform_int_distribution<int> klen(3'000, 90'000);
    const std::uint64_t ext = ext_++;
    const std::int64_t op_start = host_;
    host_ += 6'000;
    const std::uint64_t corr = corr_++;
    const bool driver = corr % 7 == 0;
    const std::int64_t launch_start = host_;
    const std::int64_t launch_dur = 4'000 + static_cast<std::int64_t>(corr % 5) * 1'000;
    host_ += launch_dur + 3'000;
    const std::int64_t k_start = std::max(gpu_, launch_start + launch_dur + 2'000);
    const std::int64_t k_dur = klen(rng_);
    gpu_ = k_start + k_dur + 1'000;
    x("cpu_op", kOps[static_cast<std::size_t>(op)], pid_, tid_, op_start, host_ - op_start, ext, false, cpu_args());
    x(driver ? "cuda_driver" : "cuda_runtime", driver ? "cuLaunchKernel" : "cudaLaunchKernel", pid_, tid_, launch_start,
      launch_dur, ext, false,
      std::string("\"cbid\": ") + (driver ? "307" : "211") + ", \"correlation\": " + std::to_string(corr));
    flow('s', corr, pid_, tid_, launch_start);
    const char* name = kKernels[static_cast<std::size_t>(pick(rng_))];
    x("kernel", name, 0, 7, k_start, k_dur, ext, false,
      "\n      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": " +
          std::to_string(corr) +
          ",\n      \"registers per thread\": 128,\n      \"shared memory\": 49152,\n      \"blocks per SM\": "
          "1.939394,\n"
          "      \"warps per SM\": 7.757576,\n      \"grid\": [132, 2, 1],\n      \"block\": [128, 1, 1],\n"
          "      \"est. achieved occupancy %\": 12");
    flow('f', corr, 0, 7, k_start);
    host_ += 2'000;
  }
  // A host->device copy of the batch (pinned) on stream 7.
  void copy_in() {
    const std::uint64_t ext = ext_++;
    const std::uint64_t corr = corr_++;
    const std::int64_t start = host_;
    host_ += 9'000;
    const std::int64_t c_start = std::max(gpu_, start + 5'000);
    const std::int64_t c_dur = 60'000;
    gpu_ = c_start + c_dur;
    x("cpu_op", "aten::copy_", pid_, tid_, start - 1'000, 11'000, ext, false, cpu_args());
    x("cuda_runtime", "cudaMemcpyAsync", pid_, tid_, start, 7'000, ext, false,
      "\"cbid\": 41, \"correlation\": " + std::to_string(corr));
    flow('s', corr, pid_, tid_, start);
    x("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 7, c_start, c_dur, ext, false,
      "\n      \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": " + std::to_string(corr) +
          ",\n      \"bytes\": 3145728, \"memory bandwidth (GB/s)\": 52.4288");
    flow('f', corr, 0, 7, c_start);
    host_ += 3'000;
  }
  // .item(): aten::item > aten::_local_scalar_dense > cudaMemcpyAsync D2H + cudaStreamSynchronize.
  void item() {
    const std::uint64_t ext = ext_++;
    const std::int64_t start = host_;
    const std::uint64_t corr = corr_++;
    const std::int64_t copy_call = start + 3'000;
    const std::int64_t c_start = std::max(gpu_, copy_call + 6'000);
    gpu_ = c_start + 1'700;
    const std::int64_t sync_call = copy_call + 8'000;
    const std::int64_t sync_end = std::max(sync_call + 4'000, gpu_ + 3'000);
    const std::uint64_t sync_corr = corr_++;
    host_ = sync_end + 2'000;
    x("cpu_op", "aten::item", pid_, tid_, start, host_ - start, ext, false, cpu_args());
    x("cpu_op", "aten::_local_scalar_dense", pid_, tid_, start + 1'000, host_ - start - 2'000, ext, false, cpu_args());
    x("cuda_runtime", "cudaMemcpyAsync", pid_, tid_, copy_call, 6'500, ext, false,
      "\"cbid\": 41, \"correlation\": " + std::to_string(corr));
    flow('s', corr, pid_, tid_, copy_call);
    x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 0, 7, c_start, 1'700, ext, false,
      "\n      \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": " + std::to_string(corr) +
          ",\n      \"bytes\": 4, \"memory bandwidth (GB/s)\": 0.002352941176470588");
    flow('f', corr, 0, 7, c_start);
    x("cuda_runtime", "cudaStreamSynchronize", pid_, tid_, sync_call, sync_end - sync_call, ext, false,
      "\"cbid\": 131, \"correlation\": " + std::to_string(sync_corr));
    x("cuda_sync", "Stream Sync", 0, 7, sync_call + 500, sync_end - sync_call - 1'000, ext, false,
      "\n      \"cuda_sync_kind\": \"Stream Sync\",\n      \"stream\": 7, \"correlation\": " +
          std::to_string(sync_corr) + ",\n      \"device\": 0, \"context\": 1");
  }

  Out& o_;
  std::mt19937_64 rng_;
  bool dense_;
  bool first_ = true;
  const std::int64_t pid_ = 915;
  const std::int64_t tid_ = 915;
  std::int64_t host_ = 5'140'410'405'188'709;  // relative ns, like the H200 fixture
  std::int64_t gpu_ = 0;
  std::uint64_t ext_ = 1;
  std::uint64_t corr_ = 10;
  std::uint64_t seq_ = 0;
  std::uint64_t ev_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  std::uint64_t bytes = 1'000'000'000;
  std::uint64_t seed = 1;
  bool dense = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--dense") dense = true;
    else if (a == "--bytes" && i + 1 < argc) bytes = std::stoull(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "-h" || a == "--help") {
      std::printf(
          "usage: syncscope_gen_trace OUT [--bytes N (default 1000000000)] [--seed S (default 1)] [--dense]\n"
          "Writes a synthetic torch.profiler-style trace of about N bytes (uncompressed);\n"
          "gzip-compressed when OUT ends in .gz. --dense: no input shapes, no whitespace\n"
          "(the most records per byte: for the memory bound).\n");
      return 0;
    } else if (out_path.empty() && !a.empty() && a[0] != '-') out_path = std::string(a);
    else {
      std::fprintf(stderr, "syncscope_gen_trace: unknown argument %s (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (out_path.empty()) {
    std::fprintf(stderr, "syncscope_gen_trace: missing OUT (see --help)\n");
    return 2;
  }
  Out out(out_path, dense);
  Gen gen(out, seed, dense);
  gen.header();
  std::uint64_t steps = 0;
  while (out.written() < bytes) gen.step(steps++);
  gen.footer();
  std::printf("syncscope_gen_trace: %s: %llu steps, %llu bytes of JSON\n", out_path.c_str(),
              static_cast<unsigned long long>(steps), static_cast<unsigned long long>(out.written()));
  return 0;
}
