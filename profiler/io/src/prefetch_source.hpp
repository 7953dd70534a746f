// Reading ahead in a thread of its own: a producer thread reads (and, for gzip, inflates)
// the input into a bounded ring of blocks while the caller parses the blocks already
// filled, so inflating a .json.gz or waiting on a pipe is off the parser's critical path.
// Memory: `blocks` + 1 blocks of `block_bytes`. No lock is held while the producer reads or
// the caller parses: the lock only guards handing a block from one to the other.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "byte_source.hpp"

namespace syncscope::io_detail {

class PrefetchSource final : public ByteSource {
 public:
  // `may_block`: the input is a pipe, FIFO, terminal or socket, whose read can wait forever
  // (a writer that never writes nor closes). On destruction the producer is then detached
  // rather than joined (it owns what it uses, and stops at its next read); otherwise joined.
  // When the thread cannot be started (thread limit, address-space limit) reads happen in
  // the caller's thread, as without prefetching.
  PrefetchSource(std::unique_ptr<ByteSource> in, std::size_t block_bytes, std::size_t blocks, bool may_block);
  ~PrefetchSource() override;
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  // Errors of the producer (read errors, corrupt gzip: InputError with the file and the
  // offset) are rethrown here once the blocks read before them have been handed out, and
  // again on every later call.
  std::size_t read(char* dst, std::size_t max) override;
  std::string_view offset_unit() const override { return unit_; }
  std::uint64_t size_hint() const override;
  bool threaded() const { return worker_.joinable(); }

 private:
  struct Shared;
  std::shared_ptr<Shared> s_;
  std::string unit_;
  std::thread worker_;
  bool may_block_;
  std::size_t pos_ = 0;                 // bytes of the front full block already handed out
  std::unique_ptr<ByteSource> inline_;  // only when no thread could be started
};

}  // namespace syncscope::io_detail
