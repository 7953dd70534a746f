// One trace per process with GPU work (split_processes.hpp has the rules).
#include "syncscope/trace/split_processes.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

namespace syncscope {
namespace {

constexpr std::int64_t kNobody = -1;  // a record no output takes
constexpr std::int64_t kShared = -2;  // a correlation id or a device of several processes

// The process of each correlation id's host call: kShared where calls of two processes carry
// the id (a merged trace whose processes number their ids alike), so it decides nothing.
std::unordered_map<std::uint64_t, std::int64_t> call_pids(const Trace& t) {
  std::unordered_map<std::uint64_t, std::int64_t> pid_of;
  for (const ApiCall& c : t.api_calls) {
    if (c.correlation == 0 || c.pid < 0) continue;
    auto [it, added] = pid_of.emplace(c.correlation, c.pid);
    if (!added && it->second != c.pid) it->second = kShared;
  }
  return pid_of;
}

std::int64_t by_correlation(const std::unordered_map<std::uint64_t, std::int64_t>& pid_of, std::uint64_t corr) {
  if (corr == 0) return kNobody;
  const auto it = pid_of.find(corr);
  return it == pid_of.end() || it->second == kShared ? kNobody : it->second;
}

std::optional<std::int64_t> parse_pid(std::string_view s) {
  std::int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Who takes each record of one kind, decided once so every output filters the same lists.
struct Owners {
  std::vector<std::int64_t> kernels, memcpys, memsets, syncs, events, gpu_ranges, collectives;
};

class Splitter {
 public:
  explicit Splitter(const Trace& t) : t_(t), pid_of_(call_pids(t)) {}

  ProcessSplit run();

 private:
  // Devices each process's GPU work joined by correlation ran on; then each device's owner.
  template <class T>
  void note_devices(const std::vector<T>& v) {
    for (const T& r : v) {
      const std::int64_t pid = by_correlation(pid_of_, r.correlation);
      if (pid < 0) continue;
      devices_of_[pid].insert(r.device);
      auto [it, added] = owner_of_device_.emplace(r.device, pid);
      if (!added && it->second != pid) it->second = kShared;
    }
  }
  std::int64_t owner(std::uint64_t corr, std::int32_t device) {
    if (const std::int64_t pid = by_correlation(pid_of_, corr); pid >= 0) return pid;
    const auto it = owner_of_device_.find(device);
    if (it != owner_of_device_.end() && it->second >= 0) return it->second;
    ++split_.unassigned_gpu_records;
    return kNobody;
  }
  template <class T>
  std::vector<std::int64_t> owners(const std::vector<T>& v) {
    std::vector<std::int64_t> out;
    out.reserve(v.size());
    for (const T& r : v) out.push_back(owner(r.correlation, r.device));
    return out;
  }
  std::int64_t collective_owner(const CollectiveArgs& c);
  void decide_owners();
  void give_ranks();
  Trace one_process(std::int64_t pid) const;
  std::string name_of(std::int64_t pid) const;

  const Trace& t_;
  std::unordered_map<std::uint64_t, std::int64_t> pid_of_;
  std::map<std::int64_t, std::set<std::int32_t>> devices_of_;  // processes with GPU work
  std::map<std::int32_t, std::int64_t> owner_of_device_;
  std::unordered_map<std::uint64_t, std::int64_t> pid_of_external_;  // CPU ops' external ids
  Owners own_;
  ProcessSplit split_;
};

std::string Splitter::name_of(std::int64_t pid) const {
  const std::string text = std::to_string(pid);
  for (const TrackName& n : t_.track_names)
    if (n.pid == text && n.tid.empty()) return n.name;
  return {};
}

// A collective's args sit on its kernel (joined by correlation) or on its CPU op (joined by
// the op's external id, which only its own process's ranges carry).
std::int64_t Splitter::collective_owner(const CollectiveArgs& c) {
  if (c.on == CollectiveArgs::On::Kernel) return owner(c.correlation, -1);
  const auto it = pid_of_external_.find(c.external_id);
  if (c.external_id != 0 && it != pid_of_external_.end() && it->second >= 0) return it->second;
  ++split_.unassigned_host_records;
  return kNobody;
}

void Splitter::decide_owners() {
  note_devices(t_.kernels);
  note_devices(t_.memcpys);
  note_devices(t_.memsets);
  own_.kernels = owners(t_.kernels);
  own_.memcpys = owners(t_.memcpys);
  own_.memsets = owners(t_.memsets);
  own_.syncs = owners(t_.syncs);
  own_.events = owners(t_.cuda_events);
  for (const Range& r : t_.ranges) {
    if (r.kind == RangeKind::GpuUserAnnotation) {
      own_.gpu_ranges.push_back(owner(r.correlation, r.device));
    } else {
      own_.gpu_ranges.push_back(kNobody);  // host ranges go by pid
      if (r.external_id == 0 || r.pid < 0) continue;
      auto [it, added] = pid_of_external_.emplace(r.external_id, r.pid);
      if (!added && it->second != r.pid) it->second = kShared;
    }
  }
  for (const CollectiveArgs& c : t_.collectives) own_.collectives.push_back(collective_owner(c));
}

// Device index when every process ran on one device and the devices are 0..N-1 (LOCAL_RANK
// picks the device under torchrun on one node); else pid order, which at least is stable.
void Splitter::give_ranks() {
  std::set<std::int32_t> seen;
  bool by_device = true;
  for (const ProcessTrace& p : split_.processes)
    by_device = by_device && p.devices.size() == 1 && seen.insert(p.devices.front()).second;
  by_device =
      by_device && !seen.empty() && *seen.begin() == 0 && *seen.rbegin() == static_cast<std::int32_t>(seen.size()) - 1;
  split_.rank_rule = by_device ? RankRule::Device : RankRule::PidOrder;
  std::int64_t next = 0;
  for (ProcessTrace& p : split_.processes) p.rank = by_device ? p.devices.front() : next++;
  std::sort(split_.processes.begin(), split_.processes.end(),
            [](const ProcessTrace& a, const ProcessTrace& b) { return a.rank < b.rank; });
  std::string line = by_device ? "ranks from the device each process ran on (no rank in the file; torchrun's "
                                 "LOCAL_RANK picks the device on one node):"
                               : "ranks in the order of the process ids (no rank in the file, and the devices do "
                                 "not give one: a process ran on several devices, two on one, or not on 0..N-1):";
  for (const ProcessTrace& p : split_.processes) line += " " + describe(p) + ";";
  line.pop_back();
  split_.warnings.push_back(line);
}

template <class T>
void take(std::vector<T>& out, const std::vector<T>& in, const std::vector<std::int64_t>& owner, std::int64_t pid) {
  for (std::size_t i = 0; i < in.size(); ++i)
    if (owner[i] == pid) out.push_back(in[i]);
}

template <class T>
void take_by_pid(std::vector<T>& out, const std::vector<T>& in, std::int64_t pid) {
  for (const T& r : in)
    if (r.pid == pid) out.push_back(r);
}

Trace Splitter::one_process(std::int64_t pid) const {
  Trace out;
  out.meta = t_.meta;
  out.strings = t_.strings;
  out.devices = t_.devices;
  take_by_pid(out.api_calls, t_.api_calls, pid);
  take(out.kernels, t_.kernels, own_.kernels, pid);
  take(out.memcpys, t_.memcpys, own_.memcpys, pid);
  take(out.memsets, t_.memsets, own_.memsets, pid);
  take(out.syncs, t_.syncs, own_.syncs, pid);
  take(out.cuda_events, t_.cuda_events, own_.events, pid);
  for (std::size_t i = 0; i < t_.ranges.size(); ++i) {
    const Range& r = t_.ranges[i];
    if (r.kind == RangeKind::GpuUserAnnotation ? own_.gpu_ranges[i] == pid : r.pid == pid) out.ranges.push_back(r);
  }
  take_by_pid(out.overheads, t_.overheads, pid);
  take_by_pid(out.memory, t_.memory, pid);
  take(out.collectives, t_.collectives, own_.collectives, pid);
  const std::string text = std::to_string(pid);
  for (const OtherEvent& e : t_.others)
    if (t_.str(e.pid) == text) out.others.push_back(e);
  for (const TrackName& n : t_.track_names)
    if (n.pid == text) out.track_names.push_back(n);
  for (const TrackOrder& o : t_.track_order)
    if (o.pid == text) out.track_order.push_back(o);
  return out;
}

ProcessSplit Splitter::run() {
  decide_owners();
  for (const auto& [pid, devices] : devices_of_) {
    ProcessTrace p;
    p.pid = pid;
    p.name = name_of(pid);
    p.devices.assign(devices.begin(), devices.end());
    split_.processes.push_back(std::move(p));
  }
  if (split_.processes.empty()) {
    split_.warnings.push_back(
        "no process with GPU work: no host call with a process id carries a GPU record's correlation id, so the "
        "processes cannot be told apart");
    return std::move(split_);
  }
  // The processes dropped: any pid a host record names that ran no GPU work.
  std::set<std::int64_t> host_pids;
  for (const ApiCall& c : t_.api_calls) host_pids.insert(c.pid);
  for (const Range& r : t_.ranges)
    if (r.kind != RangeKind::GpuUserAnnotation) host_pids.insert(r.pid);
  for (const TrackName& n : t_.track_names)
    if (const auto pid = parse_pid(n.pid)) host_pids.insert(*pid);
  for (const std::int64_t pid : host_pids)
    if (pid >= 0 && !devices_of_.count(pid)) split_.dropped_pids.push_back(pid);
  for (const ApiCall& c : t_.api_calls) split_.unassigned_host_records += c.pid < 0;
  for (const Range& r : t_.ranges)
    split_.unassigned_host_records += r.kind != RangeKind::GpuUserAnnotation && r.pid < 0;
  give_ranks();
  for (ProcessTrace& p : split_.processes) {
    p.trace = one_process(p.pid);
    p.trace.meta.extra["syncscope.process"] =
        describe(p) + " of a trace holding " + std::to_string(split_.processes.size()) + " processes with GPU work";
  }
  if (!split_.dropped_pids.empty()) {
    std::string line = std::to_string(split_.dropped_pids.size()) + " process(es) with no GPU work left out:";
    for (const std::int64_t pid : split_.dropped_pids) {
      const std::string name = name_of(pid);
      line += " " + std::to_string(pid) + (name.empty() ? "" : " (" + name + ")") + ",";
    }
    line.pop_back();
    split_.warnings.push_back(line);
  }
  if (split_.unassigned_gpu_records > 0)
    split_.warnings.push_back(std::to_string(split_.unassigned_gpu_records) +
                              " GPU record(s) left out: no host call of one process has their correlation id, and "
                              "their device is not one process's");
  if (split_.unassigned_host_records > 0)
    split_.warnings.push_back(std::to_string(split_.unassigned_host_records) +
                              " host record(s) left out: they name no process (pid unknown) or a CPU op not found");
  return std::move(split_);
}

}  // namespace

std::vector<std::int64_t> gpu_processes(const Trace& trace) {
  const auto pid_of = call_pids(trace);
  std::set<std::int64_t> pids;
  auto add = [&](const auto& v) {
    for (const auto& r : v)
      if (const std::int64_t pid = by_correlation(pid_of, r.correlation); pid >= 0) pids.insert(pid);
  };
  add(trace.kernels);
  add(trace.memcpys);
  add(trace.memsets);
  return {pids.begin(), pids.end()};
}

bool holds_several_processes(const Trace& trace) {
  std::int64_t first = -1;
  bool two = false;
  for (const ApiCall& c : trace.api_calls) {
    if (c.correlation == 0 || c.pid < 0) continue;
    if (first < 0) first = c.pid;
    else if (c.pid != first) {
      two = true;
      break;
    }
  }
  return two && gpu_processes(trace).size() >= 2;
}

ProcessSplit split_processes(const Trace& trace) { return Splitter(trace).run(); }

std::string describe(const ProcessTrace& p) {
  std::string s = "pid " + std::to_string(p.pid) + (p.name.empty() ? "" : " (" + p.name + ")") + " as rank " +
                  std::to_string(p.rank);
  std::string devices;
  for (const std::int32_t d : p.devices) devices += (devices.empty() ? "" : ", ") + std::to_string(d);
  s += (p.devices.size() == 1 ? " (device " : " (devices ") + devices + ")";
  return s;
}

}  // namespace syncscope
