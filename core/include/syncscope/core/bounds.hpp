// Physical-sense bounds on every numeric input, checked arithmetic, and the memory check
// made before a large allocation. One place says what a possible value is, with the reason,
// so the scenario loader, the Hugging Face config reader, the GPU profile loader and the
// command options refuse the same things (nothing unbounded).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace syncscope::bounds {

// An inclusive range and why it is what it is (said in the error message).
struct Range {
  double lo;
  double hi;
  const char* why;
  bool contains(double v) const { return v >= lo && v <= hi; }  // false for NaN
};

// "an integer in 1..1024 (the largest published LLMs have fewer than 200 layers)"
std::string describe_int(const Range& r);
// "a number in [1e+06, 1e+16] (...)"
std::string describe_number(const Range& r, const char* unit = "");
// The whole of `text` as an integer (a number) within `r`; nullopt for anything else (a
// suffix, no digits, out of range, NaN). The option parsers' one reading: the CLI's validators
// (cli/option_bounds.hpp) and predict's fix options (model/analytic/src/predict_explicit.cpp).
std::optional<long long> parse_int_in(const std::string& text, const Range& r);
std::optional<double> parse_number_in(const std::string& text, const Range& r);

// ---- model shape (Hugging Face config names) --------------------------------------------
// The largest published decoder stacks: Llama 3.1 405B 126 layers, GPT-3 96, DeepSeek-V3
// 61; hidden sizes up to 16384 (Llama 3.1 405B) and 18432 (Megatron 1T); intermediate
// sizes up to 53248 (Llama 3.1 405B); vocabularies up to 262144 (Gemma 3); experts up to
// 512 (Qwen3-Next). Each bound leaves 4x or more headroom over those.
inline constexpr Range kLayers{1, 1024, "the largest published LLMs have fewer than 200 decoder layers"};
inline constexpr Range kHiddenSize{1, 131072, "the largest published hidden size is 18432"};
inline constexpr Range kHeads{1, 1024, "published models have at most 128 attention heads"};
inline constexpr Range kHeadDim{1, 4096, "published head dimensions are 64 to 256"};
inline constexpr Range kIntermediateSize{1, 1048576, "the largest published FFN width is 53248"};
inline constexpr Range kVocabSize{1, 4194304, "the largest published vocabulary has 262144 tokens"};
inline constexpr Range kExperts{0, 1024, "the largest published mixture-of-experts layers have 512 experts"};
// An expert count given as an option (predict --experts, --top-k): at least one.
inline constexpr Range kExpertsGiven{1, 1024, "the largest published mixture-of-experts layers have 512 experts"};
inline constexpr Range kSlidingWindow{0, 16777216, "a window longer than 16M tokens exceeds every published context"};
inline constexpr Range kRopeTheta{1e-3, 1e12, "published RoPE bases are 1e4 to 1e8"};

// ---- batch and measurement ---------------------------------------------------------------
// A packed fine-tuning batch of 16M tokens is 100x the largest published per-GPU context
// (128k-1M tokens); a sequence cannot be longer than that either.
inline constexpr Range kTokens{1, 16777216, "16M tokens is over 16x the longest published context window (1M)"};
// A step takes at least milliseconds; 10000 measured steps is hours of a GPU and gives no
// tighter interval than the first few dozen.
inline constexpr Range kSteps{1, 10000, "10000 steps of a training step is hours of GPU time"};
inline constexpr Range kWarmupSteps{0, 10000, "10000 warm-up steps is hours of GPU time"};
// Look-ahead of the reload ring: more buffers than layers buys nothing.
inline constexpr Range kPrefetchDepth{1, 1024, "a ring deeper than the most layers a model has (1024) buys nothing"};

// ---- GPU profile -------------------------------------------------------------------------
// Latencies: one clock cycle is ~1 ns; a host-device latency above one second is a hung
// GPU, not a latency.
inline constexpr Range kLatencyNs{1, 1e9, "a latency under 1 ns is below one clock cycle, above 1 s is a hang"};
// Byte rates: from 1 MB/s (a degraded link) to 10 PB/s (100x the fastest HBM, 8 TB/s).
inline constexpr Range kBytesPerS{1e6, 1e16, "1 MB/s to 10 PB/s spans every link and memory, with 100x headroom"};
// Arithmetic rates: the fastest GPU (B200) runs dense bf16 at 2.25e15 FLOP/s; 1e16 leaves
// 4x headroom. 1e9 is below any GPU of the last decade.
inline constexpr Range kFlopsPerS{1e9, 1e16, "the fastest GPU (B200) runs dense bf16 at 2.25e15 FLOP/s"};
inline constexpr Range kSmCount{1, 4096, "the largest GPUs have 160 to 192 SMs"};
// Device memory: 1e8 (100 MB) to 1e13 (10 TB): the largest single GPU holds 288 GB.
inline constexpr Range kMemoryBytes{1e8, 1e13, "the largest single GPU holds 288 GB"};
inline constexpr Range kSlowdown{0, 10, "a fraction (0 = free overlap); beyond 10x the copy would not be overlapped"};

// ---- prediction options ------------------------------------------------------------------
// Monte Carlo draws: fewer than 100 leave under 5 draws in each 5% tail of a 90% interval;
// more than 1e6 costs memory (8 bytes x draws x parameters) without changing the printed
// digits.
inline constexpr Range kSamples{100, 1000000, "90% intervals need >= 100 draws; 1e6 already fixes every printed digit"};
// Times given on the command line, in ns: up to one hour per step or per layer.
inline constexpr Range kOptionTimeNs{0, 3.6e12, "one hour per step is beyond any training step"};

// ---- names -------------------------------------------------------------------------------
inline constexpr std::size_t kMaxNameChars = 128;

// ---- file sizes --------------------------------------------------------------------------
// Scenarios, GPU profiles and Hugging Face configs are a few KB; 16 MiB leaves room for a
// `lengths` list of a million sequences.
inline constexpr std::uint64_t kMaxConfigBytes = 16ull << 20;
// Results and other generated inputs: 80k variants of results.json are ~80 MB.
inline constexpr std::uint64_t kMaxResultsBytes = 1ull << 30;

// ---- checked arithmetic ------------------------------------------------------------------
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);
std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b);
// A non-negative time in ns as an integer, or nullopt when it is not finite, negative or at
// or past 2^62 ns (146 years: far past any trace, and room left for sums of two).
inline constexpr double kMaxTimeNs = 4611686018427387904.0;  // 2^62
std::optional<std::int64_t> ns_checked(double ns);

// ---- memory ------------------------------------------------------------------------------
// MemAvailable from /proc/meminfo, in bytes; nullopt when it cannot be read (not Linux).
// $SYNCSCOPE_MEM_AVAILABLE_BYTES replaces it (tests; a cgroup limit the kernel does not show).
std::optional<std::uint64_t> mem_available_bytes();
// "1.5 GiB"
std::string format_bytes(double bytes);
// Throws InputError "<what> needs an estimated <N> of memory, more than the <M> available
// (MemAvailable); <fix>" when the estimate exceeds what the machine has available.
void check_memory(double estimated_bytes, const std::string& what, const std::string& fix);

}  // namespace syncscope::bounds
