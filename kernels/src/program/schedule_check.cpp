// Happens-before over a Program with vector clocks. Chains: 0 is the host thread, 1+s is
// stream s. Every op the host issues is a host node; work on a stream is also a node on
// that stream's chain. A node's clock holds, per chain, the highest index of a node of
// that chain known to have FINISHED before the node starts. Chains are totally ordered
// (host program order; a stream runs its work in order), so "op A finished before op B
// starts" in every legal timing holds exactly when clock(B)[chain(A)] >= index(A).
#include "syncscope/program/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "syncscope/core/error.hpp"

namespace syncscope::program {

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::Kernel: return "Kernel";
    case OpKind::Copy: return "Copy";
    case OpKind::Memset: return "Memset";
    case OpKind::HostWork: return "HostWork";
    case OpKind::StreamSync: return "StreamSync";
    case OpKind::DeviceSync: return "DeviceSync";
    case OpKind::EventRecord: return "EventRecord";
    case OpKind::StreamWait: return "StreamWait";
    case OpKind::EventSync: return "EventSync";
    case OpKind::RangePush: return "RangePush";
    case OpKind::RangePop: return "RangePop";
  }
  return "Unknown";
}

namespace {

using Clock = std::vector<long long>;  // per chain; -1: nothing known finished

void join(Clock& into, const Clock& other) {
  for (std::size_t i = 0; i < into.size(); ++i) into[i] = std::max(into[i], other[i]);
}

struct Node {
  int chain = 0;
  long long index = 0;
  Clock clock;  // finished before this node starts
};

bool runs_on_stream(const Op& op) {
  switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Copy:
    case OpKind::Memset:
    case OpKind::EventRecord:
    case OpKind::StreamWait: return true;
    case OpKind::HostWork:
      // An allocator hand-back (or any HostWork touching a buffer) takes effect at its
      // place in the stream's order.
      if (op.buffer >= 0) return true;
      return std::any_of(op.more_buffers.begin(), op.more_buffers.end(),
                         [](const BufferUse& u) { return u.buffer >= 0; });
    default: return false;
  }
}

std::string op_label(const Program& p, int i) {
  const Op& op = p.ops[static_cast<std::size_t>(i)];
  std::string stream = (op.stream >= 0 && op.stream < static_cast<int>(p.streams.size()))
                           ? p.streams[static_cast<std::size_t>(op.stream)].name
                           : std::to_string(op.stream);
  return fmt::format("op {} ({} \"{}\" on stream {}{})", i, op_kind_name(op.kind), op.name, stream,
                     op.layer >= 0 ? fmt::format(", layer {}", op.layer) : "");
}

std::string buffer_label(const Program& p, int b) {
  if (b >= 0 && b < static_cast<int>(p.buffer_names.size()) && !p.buffer_names[static_cast<std::size_t>(b)].empty())
    return fmt::format("buffer {} \"{}\"", b, p.buffer_names[static_cast<std::size_t>(b)]);
  return fmt::format("buffer {}", b);
}

}  // namespace

std::vector<BufferViolation> check_buffer_safety(const Program& p) {
  const int num_streams = static_cast<int>(p.streams.size());
  SYNCSCOPE_THROW_IF(num_streams == 0, "check_buffer_safety: program has no streams");
  const std::size_t chains = static_cast<std::size_t>(num_streams) + 1;
  const bool legacy = !p.streams[0].non_blocking;  // stream 0 blocking: the legacy default stream

  Clock host(chains, -1);
  long long host_index = -1;
  std::vector<long long> stream_index(static_cast<std::size_t>(num_streams), -1);
  // Clock after the last node of each stream has finished (includes that node).
  std::vector<Clock> tail(static_cast<std::size_t>(num_streams), Clock(chains, -1));
  // Clock after the last record of each event has finished; empty: never recorded.
  std::vector<Clock> recorded(static_cast<std::size_t>(std::max(p.num_events, 0)));

  struct Access {
    int op = -1;
    Node node;
  };
  struct BufferState {
    std::optional<Access> last_write;
    std::vector<Access> reads_since_write;
  };
  std::vector<BufferState> buffers(static_cast<std::size_t>(std::max(p.num_buffers, 0)));
  std::vector<BufferViolation> out;
  int open_ranges = 0;

  auto finished_before = [](const Node& later, const Node& earlier) {
    return later.clock[static_cast<std::size_t>(earlier.chain)] >= earlier.index;
  };
  auto report = [&](BufferViolation::Kind kind, int buffer, int earlier, int later) {
    static constexpr const char* what[] = {"writes", "reads", "writes"};
    static constexpr const char* before[] = {"reads", "writes", "writes"};
    BufferViolation v;
    v.kind = kind;
    v.buffer = buffer;
    v.earlier = earlier;
    v.later = later;
    const int k = static_cast<int>(kind);
    v.message = fmt::format(
        "{}: {} {} it while {}, which {} it, may still be running (no event, stream order or "
        "host sync orders them)",
        buffer_label(p, buffer), op_label(p, later), what[k], op_label(p, earlier), before[k]);
    out.push_back(std::move(v));
  };

  for (int i = 0; i < static_cast<int>(p.ops.size()); ++i) {
    const Op& op = p.ops[static_cast<std::size_t>(i)];
    ++host_index;
    host[0] = host_index;  // the host's own earlier steps are done when it issues this one

    Node node;
    node.chain = 0;
    node.index = host_index;
    node.clock = host;
    if (runs_on_stream(op)) {
      SYNCSCOPE_THROW_IF(op.stream < 0 || op.stream >= num_streams,
                         fmt::format("check_buffer_safety: {} names a stream out of range", op_label(p, i)));
      const auto s = static_cast<std::size_t>(op.stream);
      node.chain = op.stream + 1;
      node.index = ++stream_index[s];
      join(node.clock, tail[s]);
      const bool blocking = !p.streams[s].non_blocking;
      if (legacy && blocking) {
        if (s == 0) {
          for (int t = 1; t < num_streams; ++t)
            if (!p.streams[static_cast<std::size_t>(t)].non_blocking)
              join(node.clock, tail[static_cast<std::size_t>(t)]);
        } else {
          join(node.clock, tail[0]);
        }
      }
      if (op.kind == OpKind::StreamWait) {
        SYNCSCOPE_THROW_IF(op.event < 0 || op.event >= p.num_events,
                           fmt::format("check_buffer_safety: {} names an event out of range", op_label(p, i)));
        // Waiting on an event never recorded is a no-op in CUDA: no ordering.
        const Clock& r = recorded[static_cast<std::size_t>(op.event)];
        if (!r.empty()) join(node.clock, r);
      }
      Clock after = node.clock;
      after[static_cast<std::size_t>(node.chain)] = node.index;
      tail[s] = after;
      if (op.kind == OpKind::EventRecord) {
        SYNCSCOPE_THROW_IF(op.event < 0 || op.event >= p.num_events,
                           fmt::format("check_buffer_safety: {} names an event out of range", op_label(p, i)));
        recorded[static_cast<std::size_t>(op.event)] = after;
      }
      // A copy into pageable memory returns to the host only when done (D2H).
      if (op.kind == OpKind::Copy && op.host_memory == MemoryKind::Pageable && op.copy == CopyKind::DtoH)
        join(host, after);
    } else {
      switch (op.kind) {
        case OpKind::StreamSync:
          SYNCSCOPE_THROW_IF(op.stream < 0 || op.stream >= num_streams,
                             fmt::format("check_buffer_safety: {} names a stream out of range", op_label(p, i)));
          join(host, tail[static_cast<std::size_t>(op.stream)]);
          break;
        case OpKind::DeviceSync:
          for (const Clock& t : tail) join(host, t);
          break;
        case OpKind::EventSync: {
          SYNCSCOPE_THROW_IF(op.event < 0 || op.event >= p.num_events,
                             fmt::format("check_buffer_safety: {} names an event out of range", op_label(p, i)));
          const Clock& r = recorded[static_cast<std::size_t>(op.event)];
          if (!r.empty()) join(host, r);
          break;
        }
        case OpKind::RangePush: ++open_ranges; break;
        case OpKind::RangePop:
          SYNCSCOPE_THROW_IF(open_ranges == 0,
                             fmt::format("check_buffer_safety: {} pops a range never pushed", op_label(p, i)));
          --open_ranges;
          break;
        default: break;
      }
    }

    std::vector<BufferUse> uses;
    if (op.buffer >= 0) uses.push_back({op.buffer, op.access});
    uses.insert(uses.end(), op.more_buffers.begin(), op.more_buffers.end());
    for (const BufferUse& u : uses) {
      if (u.buffer < 0 || u.access == program::Access::None) continue;
      SYNCSCOPE_THROW_IF(u.buffer >= p.num_buffers,
                         fmt::format("check_buffer_safety: {} names buffer {} but the program has {}", op_label(p, i),
                                     u.buffer, p.num_buffers));
      BufferState& st = buffers[static_cast<std::size_t>(u.buffer)];
      if (u.access == program::Access::Read) {
        if (st.last_write && st.last_write->op != i && !finished_before(node, st.last_write->node))
          report(BufferViolation::Kind::ReadAfterWrite, u.buffer, st.last_write->op, i);
        st.reads_since_write.push_back({i, node});
      } else {
        if (st.last_write && st.last_write->op != i && !finished_before(node, st.last_write->node))
          report(BufferViolation::Kind::WriteAfterWrite, u.buffer, st.last_write->op, i);
        for (const Access& r : st.reads_since_write)
          if (r.op != i && !finished_before(node, r.node))
            report(BufferViolation::Kind::WriteAfterRead, u.buffer, r.op, i);
        st.reads_since_write.clear();
        st.last_write = Access{i, node};
      }
    }
  }
  return out;
}

ProgramStats program_stats(const Program& p) {
  ProgramStats s;
  for (const Op& op : p.ops) {
    switch (op.kind) {
      case OpKind::Kernel:
        ++s.kernels;
        s.flops += op.flops;
        s.kernel_bytes += op.bytes;
        break;
      case OpKind::Copy:
        ++s.copies;
        s.copy_bytes += op.bytes;
        if (op.host_memory == MemoryKind::Pageable) ++s.pageable_copies;
        break;
      case OpKind::StreamSync:
        ++s.host_syncs;
        ++s.stream_syncs;
        s.mean_host_syncs += 1.0 / std::max(1, op.period);
        break;
      case OpKind::DeviceSync:
      case OpKind::EventSync:
        ++s.host_syncs;
        s.mean_host_syncs += 1.0 / std::max(1, op.period);
        break;
      case OpKind::EventRecord: ++s.event_records; break;
      case OpKind::StreamWait: ++s.stream_waits; break;
      default: break;
    }
  }
  return s;
}

}  // namespace syncscope::program
