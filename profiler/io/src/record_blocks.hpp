// Storage for a streaming reader: records accumulate in fixed-size blocks (no doubling
// copies while loading), and strings are interned through a cheap sampled hash.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace syncscope::io_detail {

// Records accumulate in fixed-size blocks and are copied into one exact-size vector at the
// end, so loading never holds a vector plus its doubled copy (peak ~ records + one block).
// Blocks and the final vector ask for transparent huge pages: first-touch page faults are
// a large part of loading time on some VMs (~40 us per 4 KiB page measured on ours).
//
// When the reader can estimate the final count (the input's size is known: ChromeReader::reserve_estimate calls
// reserve()), records go straight into a vector reserved for that many instead: no copy at the end and no block pages
// besides the vector's (zeroing fresh pages was ~15-20% of read_trace in perf on the project's VM). A reservation is
// address space only: the pages an over-estimate never uses are never touched. Records beyond it go to blocks, as
// before.
inline void advise_huge(void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto b = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);  // a hint: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

template <class T>
class ChunkedVec {
  static_assert(std::is_trivially_copyable_v<T>, "records are copied with memcpy");

 public:
  static constexpr std::size_t kBlockBytes = std::size_t{2} << 20;
  static constexpr std::size_t kBlock = kBlockBytes / sizeof(T);
  ChunkedVec() = default;
  ChunkedVec(const ChunkedVec&) = delete;
  ChunkedVec& operator=(const ChunkedVec&) = delete;
  ~ChunkedVec() { free_blocks(); }
  void push(const T& v) {
    if (head_.size() < head_.capacity()) {  // never reallocates
      head_.push_back(v);
      return;
    }
    if (fill_ == kBlock || blocks_.empty()) {
      void* p = std::aligned_alloc(kBlockBytes, kBlockBytes);
      if (p == nullptr) throw std::bad_alloc();
      // Huge pages from the second block on: a small trace then costs 4 KiB pages, not a
      // 2 MiB page per record kind (~19 MB of RSS for a trace of a few KB).
      if (!blocks_.empty()) advise_huge(p, kBlockBytes);
      blocks_.push_back(static_cast<T*>(p));
      fill_ = 0;
    }
    std::memcpy(static_cast<void*>(blocks_.back() + fill_), &v, sizeof(T));
    ++fill_;
    ++blocks_size_;
  }
  std::size_t size() const { return head_.size() + blocks_size_; }
  // Reserves room for `n` records (kept only if it is more than there are and at most
  // `max_bytes`) and moves the records so far into it; later records go there until it is
  // full. Once only: false when not done (the blocks then carry on).
  bool reserve(std::size_t n, std::size_t max_bytes = std::size_t{1} << 36) {
    if (head_.capacity() != 0 || n <= size() || n > max_bytes / sizeof(T)) return false;
    std::vector<T> head;
    try {
      head.reserve(n);
    } catch (const std::bad_alloc&) {
      return false;
    }
    advise_huge(head.data(), n * sizeof(T));
    for_each_block([&](T* b, std::size_t k) { head.insert(head.end(), b, b + k); });
    free_blocks();
    head_ = std::move(head);
    return true;
  }
  template <class F>
  void for_each(F&& f) {
    for (T& r : head_) f(r);
    for_each_block([&](T* b, std::size_t k) {
      for (std::size_t j = 0; j < k; ++j) f(b[j]);
    });
  }
  void move_into(std::vector<T>& out) {
    if (blocks_.empty() && head_.capacity() != 0) {  // everything is in the reserved vector: no copy
      out = std::move(head_);
      head_ = std::vector<T>();
      return;
    }
    out.clear();
    out.shrink_to_fit();
    out.reserve(size());
    advise_huge(out.data(), size() * sizeof(T));
    out.insert(out.end(), head_.begin(), head_.end());
    head_ = std::vector<T>();
    for_each_block([&](T* b, std::size_t k) { out.insert(out.end(), b, b + k); });
    free_blocks();
  }

 private:
  template <class F>
  void for_each_block(F&& f) {
    for (std::size_t i = 0; i < blocks_.size(); ++i) f(blocks_[i], i + 1 == blocks_.size() ? fill_ : kBlock);
  }
  void free_blocks() {
    for (T* b : blocks_) std::free(b);
    blocks_.clear();
    blocks_size_ = 0;
    fill_ = 0;
  }

  std::vector<T> head_;  // reserved by reserve(), filled first
  std::vector<T*> blocks_;
  std::size_t fill_ = 0;         // records in the last block
  std::size_t blocks_size_ = 0;  // records in all blocks
};

// Interning by a hash of a few sampled words instead of every byte: kernel names run to
// hundreds of characters and repeat millions of times. Equal strings are still compared
// in full, so collisions cost time, never correctness.
struct SampledHash {
  static std::uint64_t word(const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  }
  std::size_t operator()(std::string_view s) const noexcept {
    std::uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
    auto mix = [&h](std::uint64_t w) {
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    };
    const std::size_t n = s.size();
    if (n >= 8) {
      mix(word(s.data()));
      mix(word(s.data() + n - 8));
      mix(word(s.data() + std::min(n / 3, n - 8)));
      mix(word(s.data() + std::min((2 * n) / 3, n - 8)));
    } else {
      std::uint64_t w = 0;
      std::memcpy(&w, s.data(), n);
      mix(w);
    }
    return static_cast<std::size_t>(h);
  }
};

}  // namespace syncscope::io_detail
