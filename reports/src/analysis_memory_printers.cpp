#include "analysis_memory_printers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "syncscope/core/bounds.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/reports/analysis_printers.hpp"

namespace syncscope::reports_detail {

using nlohmann::ordered_json;

namespace {

std::string bytes_text(std::int64_t b) {
  return b < 0 ? std::string("-") : bounds::format_bytes(static_cast<double>(b));
}

// Seconds from the trace's first memory event, for people: absolute ns stay in JSON/CSV.
std::string at_text(Ns t, Ns origin) { return "+" + format_duration(t - origin); }

}  // namespace

ordered_json memory_json(const MemoryAnalysis& m) {
  ordered_json j{{"events", m.events}, {"devices", ordered_json::array()}};
  for (const auto& d : m.devices) {
    ordered_json owners = ordered_json::array();
    for (const auto& o : d.owners)
      owners.push_back(ordered_json{{"op", o.op}, {"allocations", o.allocations}, {"bytes", o.bytes}});
    ordered_json t = ordered_json::array(), a = ordered_json::array(), r = ordered_json::array();
    for (const auto& p : d.series) {
      t.push_back(p.time_ns);
      a.push_back(p.allocated_bytes);
      r.push_back(p.reserved_bytes);
    }
    j["devices"].push_back(ordered_json{
        {"device_type", d.device_type},
        {"device", d.device},
        {"name", d.name},
        {"events", d.events},
        {"allocations", d.allocations},
        {"frees", d.frees},
        {"allocated_bytes", d.allocated_bytes},
        {"freed_bytes", d.freed_bytes},
        {"totals_from_trace", d.totals_from_trace},
        {"peak_allocated_bytes", d.peak_allocated_bytes},
        {"peak_allocated_ns", d.peak_allocated_ns},
        {"peak_reserved_bytes", d.peak_reserved_bytes},
        {"peak_reserved_ns", d.peak_reserved_ns},
        {"live_at_peak_bytes", d.live_at_peak_bytes},
        {"unattributed_bytes", d.unattributed_bytes},
        {"unmatched_frees", d.unmatched_frees},
        {"owner_ops", d.owner_ops},
        {"owners", std::move(owners)},
        {"series",
         ordered_json{{"time_ns", std::move(t)}, {"allocated_bytes", std::move(a)}, {"reserved_bytes", std::move(r)}}},
    });
  }
  return j;
}

void memory_rows(const MemoryAnalysis& m, CsvWriter& csv, const std::string& version) {
  auto n = [](auto v) { return fmt::format("{}", v); };
  for (const auto& d : m.devices) {
    auto row = [&](const std::string& kind, std::size_t index, const std::string& metric, const std::string& value) {
      csv.row({kind, printable(d.name), std::to_string(index), printable(metric), printable(value), version});
    };
    row("memory", 0, "device_type", n(d.device_type));
    row("memory", 0, "device", n(d.device));
    row("memory", 0, "events", n(d.events));
    row("memory", 0, "allocations", n(d.allocations));
    row("memory", 0, "frees", n(d.frees));
    row("memory", 0, "allocated_bytes", n(d.allocated_bytes));
    row("memory", 0, "freed_bytes", n(d.freed_bytes));
    row("memory", 0, "totals_from_trace", d.totals_from_trace ? "true" : "false");
    row("memory", 0, "peak_allocated_bytes", n(d.peak_allocated_bytes));
    row("memory", 0, "peak_allocated_ns", n(d.peak_allocated_ns));
    row("memory", 0, "peak_reserved_bytes", n(d.peak_reserved_bytes));
    row("memory", 0, "peak_reserved_ns", n(d.peak_reserved_ns));
    row("memory", 0, "live_at_peak_bytes", n(d.live_at_peak_bytes));
    row("memory", 0, "unattributed_bytes", n(d.unattributed_bytes));
    row("memory", 0, "unmatched_frees", n(d.unmatched_frees));
    row("memory", 0, "owner_ops", n(d.owner_ops));
    for (std::size_t i = 0; i < d.owners.size(); ++i) {
      row("memory_owner", i, "op", d.owners[i].op);
      row("memory_owner", i, "allocations", n(d.owners[i].allocations));
      row("memory_owner", i, "bytes", n(d.owners[i].bytes));
    }
    for (std::size_t i = 0; i < d.series.size(); ++i) {
      row("memory_series", i, "time_ns", n(d.series[i].time_ns));
      row("memory_series", i, "allocated_bytes", n(d.series[i].allocated_bytes));
      row("memory_series", i, "reserved_bytes", n(d.series[i].reserved_bytes));
    }
  }
}

void print_memory_table(const MemoryAnalysis& m, std::ostream& out) {
  if (m.devices.empty()) return;
  // A device's series starts at its first event (memory.cpp, thin_series).
  Ns origin = m.devices.front().series.front().time_ns;
  for (const auto& d : m.devices) origin = std::min(origin, d.series.front().time_ns);
  out << fmt::format("\nmemory ({} profile_memory events; times from the first)\n", m.events);
  out << fmt::format("  {:<12}{:>9}{:>14}{:>14}{:>14}{:>14}\n", "device", "events", "peak alloc", "at", "peak reserved",
                     "at");
  for (const auto& d : m.devices)
    out << fmt::format("  {:<12}{:>9}{:>14}{:>14}{:>14}{:>14}\n", printable(d.name), d.events,
                       bytes_text(d.peak_allocated_bytes), at_text(d.peak_allocated_ns, origin),
                       bytes_text(d.peak_reserved_bytes),
                       d.peak_reserved_bytes < 0 ? std::string("-") : at_text(d.peak_reserved_ns, origin));
  for (const auto& d : m.devices) {
    if (d.owners.empty()) continue;
    out << fmt::format("  at {}'s peak: {} allocated in the trace and live, {} from before it or unmatched{}\n",
                       printable(d.name), bytes_text(d.live_at_peak_bytes), bytes_text(d.unattributed_bytes),
                       d.totals_from_trace ? "" : " (no Total Allocated: running sums of Bytes)");
    for (std::size_t i = 0; i < std::min<std::size_t>(5, d.owners.size()); ++i) {
      const auto& o = d.owners[i];
      std::string op = printable(o.op);
      if (op.size() > 43) op = op.substr(0, 40) + "...";
      out << fmt::format("    {:<44}{:>8} x {:>12}\n", op, o.allocations, bytes_text(o.bytes));
    }
  }
}

}  // namespace syncscope::reports_detail
