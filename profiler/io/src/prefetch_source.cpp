#include "prefetch_source.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <system_error>
#include <vector>

namespace syncscope::io_detail {

struct PrefetchSource::Shared {
  struct Block {
    std::vector<char> data;
    std::size_t size = 0;
  };
  std::unique_ptr<ByteSource> in;
  std::mutex m;
  std::condition_variable have_free, have_full;
  std::deque<std::vector<char>> free;  // empty blocks for the producer
  std::deque<Block> full;              // filled blocks, in input order
  std::exception_ptr error;            // after the last full block
  bool done = false;                   // the producer hit the end or an error
  bool stop = false;                   // the consumer is gone

  // The producer: one read per block (a pipe hands out what has arrived, a file or gzip
  // fills the block), so a slow writer is passed on as soon as it writes.
  void produce() {
    for (;;) {
      std::vector<char> b;
      {
        std::unique_lock lock(m);
        have_free.wait(lock, [&] { return stop || !free.empty(); });
        if (stop) return;
        b = std::move(free.front());
        free.pop_front();
      }
      std::size_t n = 0;
      std::exception_ptr err;
      try {
        n = in->read(b.data(), b.size());
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard lock(m);
      if (n > 0) full.push_back({std::move(b), n});
      else free.push_back(std::move(b));
      if (err || n == 0) {
        error = err;
        done = true;
      }
      have_full.notify_one();
      if (done) return;
    }
  }
};

PrefetchSource::PrefetchSource(std::unique_ptr<ByteSource> in, std::size_t block_bytes, std::size_t blocks,
                               bool may_block)
    : s_(std::make_shared<Shared>()), unit_(in->offset_unit()), may_block_(may_block) {
  block_bytes = std::clamp<std::size_t>(block_bytes, std::size_t{64} << 10, std::size_t{16} << 20);
  blocks = std::clamp<std::size_t>(blocks, 2, 64);
  s_->in = std::move(in);
  for (std::size_t i = 0; i < blocks; ++i) s_->free.emplace_back(block_bytes);
  try {
    worker_ = std::thread([s = s_] { s->produce(); });
  } catch (const std::system_error&) {
    inline_ = std::move(s_->in);  // no thread: read in the caller's, as before
    s_.reset();
  }
}

PrefetchSource::~PrefetchSource() {
  if (!worker_.joinable()) return;
  {
    std::lock_guard lock(s_->m);
    s_->stop = true;
  }
  s_->have_free.notify_all();
  // A file's read returns soon: join. A pipe's may never: the thread owns the shared state
  // (and the input) and ends at its next read.
  if (may_block_) worker_.detach();
  else worker_.join();
}

std::uint64_t PrefetchSource::size_hint() const {
  // The source's own hint is thread-safe (ByteSource::size_hint), so the producer may be reading it.
  return inline_ ? inline_->size_hint() : s_->in ? s_->in->size_hint() : 0;
}

std::size_t PrefetchSource::read(char* dst, std::size_t max) {
  if (inline_) return inline_->read(dst, max);
  if (max == 0) return 0;
  Shared& s = *s_;
  // The block being handed out lives at the front of `full` until it is used up; only the
  // consumer pops it, so reading it needs no lock.
  for (;;) {
    Shared::Block* cur = nullptr;
    {
      std::unique_lock lock(s.m);
      s.have_full.wait(lock, [&] { return s.done || !s.full.empty(); });
      if (s.full.empty()) {
        if (s.error) std::rethrow_exception(s.error);
        return 0;
      }
      cur = &s.full.front();  // deque: references stay valid while the producer pushes at the back
    }
    const std::size_t n = std::min(max, cur->size - pos_);
    std::memcpy(dst, cur->data.data() + pos_, n);
    pos_ += n;
    if (pos_ == cur->size) {
      pos_ = 0;
      std::lock_guard lock(s.m);
      s.free.push_back(std::move(s.full.front().data));
      s.full.pop_front();
      s.have_free.notify_one();
    }
    if (n > 0) return n;
  }
}

}  // namespace syncscope::io_detail
