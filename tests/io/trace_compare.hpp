// Field-by-field comparison of two traces (strings compared by text, not by id), for the
// round-trip tests and the fuzzer. Returns "" when equal, else the first difference.
#pragma once

#include <sstream>
#include <string>

#include "syncscope/trace/trace.hpp"

namespace syncscope::test {

class TraceDiff {
 public:
  TraceDiff(const Trace& a, const Trace& b) : a_(a), b_(b) {}

  std::string run() {
    meta();
    if (!out_.empty()) return out_;
    vec("devices", a_.devices, b_.devices, [&](const auto& x, const auto& y) {
      f("id", x.id, y.id);
      f("name", x.name, y.name);
      f("compute_major", x.compute_major, y.compute_major);
      f("compute_minor", x.compute_minor, y.compute_minor);
      f("total_memory_bytes", x.total_memory_bytes, y.total_memory_bytes);
      f("sm_count", x.sm_count, y.sm_count);
      f("max_threads_per_block", x.max_threads_per_block, y.max_threads_per_block);
      f("max_threads_per_sm", x.max_threads_per_sm, y.max_threads_per_sm);
      f("warp_size", x.warp_size, y.warp_size);
      f("regs_per_block", x.regs_per_block, y.regs_per_block);
      f("regs_per_sm", x.regs_per_sm, y.regs_per_sm);
      f("shared_mem_per_block", x.shared_mem_per_block, y.shared_mem_per_block);
      f("shared_mem_per_block_optin", x.shared_mem_per_block_optin, y.shared_mem_per_block_optin);
      f("shared_mem_per_sm", x.shared_mem_per_sm, y.shared_mem_per_sm);
    });
    vec("api_calls", a_.api_calls, b_.api_calls, [&](const auto& x, const auto& y) {
      f("kind", int(x.kind), int(y.kind));
      s("name", x.name, y.name);
      f("cbid", x.cbid, y.cbid);
      f("pid", x.pid, y.pid);
      f("tid", x.tid, y.tid);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("correlation", x.correlation, y.correlation);
      f("external_id", x.external_id, y.external_id);
      f("return_code", x.return_code, y.return_code);
      f("device", x.device, y.device);
    });
    vec("kernels", a_.kernels, b_.kernels, [&](const auto& x, const auto& y) {
      s("name", x.name, y.name);
      f("device", x.device, y.device);
      f("context", x.context, y.context);
      f("stream", x.stream, y.stream);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("correlation", x.correlation, y.correlation);
      f("external_id", x.external_id, y.external_id);
      for (int i = 0; i < 3; ++i) {
        f("grid", x.grid[i], y.grid[i]);
        f("block", x.block[i], y.block[i]);
      }
      f("registers_per_thread", x.registers_per_thread, y.registers_per_thread);
      f("shared_memory_bytes", x.shared_memory_bytes, y.shared_memory_bytes);
      f("has process_group", x.process_group != kNoString, y.process_group != kNoString);
      if (x.process_group != kNoString && y.process_group != kNoString)
        s("process_group", x.process_group, y.process_group);
    });
    vec("memcpys", a_.memcpys, b_.memcpys, [&](const auto& x, const auto& y) {
      f("kind", int(x.kind), int(y.kind));
      f("src_kind", int(x.src_kind), int(y.src_kind));
      f("dst_kind", int(x.dst_kind), int(y.dst_kind));
      f("async", x.async, y.async);
      f("bytes", x.bytes, y.bytes);
      f("device", x.device, y.device);
      f("peer_device", x.peer_device, y.peer_device);
      f("context", x.context, y.context);
      f("stream", x.stream, y.stream);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("correlation", x.correlation, y.correlation);
      f("external_id", x.external_id, y.external_id);
    });
    vec("memsets", a_.memsets, b_.memsets, [&](const auto& x, const auto& y) {
      f("bytes", x.bytes, y.bytes);
      f("value", x.value, y.value);
      f("memory_kind", int(x.memory_kind), int(y.memory_kind));
      f("async", x.async, y.async);
      f("device", x.device, y.device);
      f("context", x.context, y.context);
      f("stream", x.stream, y.stream);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("correlation", x.correlation, y.correlation);
      f("external_id", x.external_id, y.external_id);
    });
    vec("syncs", a_.syncs, b_.syncs, [&](const auto& x, const auto& y) {
      f("type", int(x.type), int(y.type));
      f("device", x.device, y.device);
      f("context", x.context, y.context);
      f("stream", x.stream, y.stream);
      f("event_id", x.event_id, y.event_id);
      f("event_sync_id", x.event_sync_id, y.event_sync_id);
      f("wait_on_stream", x.wait_on_stream, y.wait_on_stream);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("correlation", x.correlation, y.correlation);
      f("external_id", x.external_id, y.external_id);
      f("return_code", x.return_code, y.return_code);
      f("is_query", x.is_query, y.is_query);
      f("wait_on_event_record_correlation", x.wait_on_event_record_correlation, y.wait_on_event_record_correlation);
    });
    vec("cuda_events", a_.cuda_events, b_.cuda_events, [&](const auto& x, const auto& y) {
      f("device", x.device, y.device);
      f("context", x.context, y.context);
      f("stream", x.stream, y.stream);
      f("event_id", x.event_id, y.event_id);
      f("event_sync_id", x.event_sync_id, y.event_sync_id);
      f("timestamp", x.timestamp, y.timestamp);
      f("correlation", x.correlation, y.correlation);
    });
    vec("ranges", a_.ranges, b_.ranges, [&](const auto& x, const auto& y) {
      f("kind", int(x.kind), int(y.kind));
      s("name", x.name, y.name);
      s("domain", x.domain, y.domain);
      f("pid", x.pid, y.pid);
      f("tid", x.tid, y.tid);
      f("device", x.device, y.device);
      f("stream", x.stream, y.stream);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
      f("depth", x.depth, y.depth);
      f("external_id", x.external_id, y.external_id);
      f("correlation", x.correlation, y.correlation);
    });
    vec("overheads", a_.overheads, b_.overheads, [&](const auto& x, const auto& y) {
      s("name", x.name, y.name);
      f("pid", x.pid, y.pid);
      f("tid", x.tid, y.tid);
      f("start", x.start, y.start);
      f("end", x.end, y.end);
    });
    vec("others", a_.others, b_.others, [&](const auto& x, const auto& y) {
      s("category", x.category, y.category);
      s("name", x.name, y.name);
      f("phase", x.phase, y.phase);
      s("pid", x.pid, y.pid);
      s("tid", x.tid, y.tid);
      f("start", x.start, y.start);
      f("duration", x.duration, y.duration);
      s("flow_id", x.flow_id, y.flow_id);
      f("bind_enclosing", x.bind_enclosing, y.bind_enclosing);
    });
    vec("track_order", a_.track_order, b_.track_order, [&](const auto& x, const auto& y) {
      f("kind", static_cast<int>(x.kind), static_cast<int>(y.kind));
      f("pid", x.pid, y.pid);
      f("tid", x.tid, y.tid);
      f("sort_index", x.sort_index, y.sort_index);
      f("labels", x.labels, y.labels);
    });
    vec("track_names", a_.track_names, b_.track_names, [&](const auto& x, const auto& y) {
      f("pid", x.pid, y.pid);
      f("tid", x.tid, y.tid);
      f("name", x.name, y.name);
    });
    return out_;
  }

 private:
  void meta() {
    const auto& x = a_.meta;
    const auto& y = b_.meta;
    where_ = "meta";
    f("source_tool", x.source_tool, y.source_tool);
    f("source_version", x.source_version, y.source_version);
    f("trace_name", x.trace_name, y.trace_name);
    f("schema_version", x.schema_version, y.schema_version);
    f("source_schema_version", x.source_schema_version, y.source_schema_version);
    f("dropped_records", x.dropped_records, y.dropped_records);
    f("clock", int(x.clock), int(y.clock));
    f("base_time_ns", x.base_time_ns, y.base_time_ns);
    f("unknown_categories", x.unknown_categories, y.unknown_categories);
    f("extra", x.extra, y.extra);
  }
  template <class T, class F>
  void vec(const char* name, const std::vector<T>& x, const std::vector<T>& y, F&& fields) {
    if (!out_.empty()) return;
    if (x.size() != y.size()) {
      out_ = std::string(name) + ": size " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
      return;
    }
    for (std::size_t i = 0; i < x.size() && out_.empty(); ++i) {
      where_ = std::string(name) + "[" + std::to_string(i) + "]";
      fields(x[i], y[i]);
    }
  }
  template <class V>
  void f(const char* field, const V& x, const V& y) {
    if (!out_.empty() || x == y) return;
    std::ostringstream os;
    os << where_ << "." << field << ": ";
    if constexpr (requires(std::ostream & o, const V& v) { o << v; }) os << x << " vs " << y;
    else os << "differs";
    out_ = os.str();
  }
  void s(const char* field, StringId x, StringId y) { f(field, std::string(a_.str(x)), std::string(b_.str(y))); }

  const Trace& a_;
  const Trace& b_;
  std::string where_;
  std::string out_;
};

inline std::string diff_traces(const Trace& a, const Trace& b) { return TraceDiff(a, b).run(); }

}  // namespace syncscope::test
