#include "syncscope/trace/trace.hpp"

#include <algorithm>
#include <array>
#include <tuple>

namespace syncscope {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& other) : strings_(other.strings_) {
  index_.reserve(strings_.size());
  for (std::size_t i = 0; i < strings_.size(); ++i) index_.emplace(strings_[i], static_cast<StringId>(i));
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) *this = StringTable(other);
  return *this;
}

StringId StringTable::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(std::string_view(strings_.back()), id);
  return id;
}

std::optional<StringId> StringTable::find(std::string_view s) const {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  return std::nullopt;
}

namespace {

template <class T>
void sort_by_time(std::vector<T>& v) {
  const auto before = [](const T& a, const T& b) {
    return std::tie(a.start, b.end) < std::tie(b.start, a.end);  // longer first on ties: parents before children
  };
  // Sources mostly deliver records in order already (CUPTI per buffer, Kineto per track):
  // checking first skips stable_sort's temporary buffer of half the records.
  if (std::is_sorted(v.begin(), v.end(), before)) return;
  std::stable_sort(v.begin(), v.end(), before);
}

void compute_depths(std::vector<Range>& ranges) {
  // ranges are sorted by (start asc, end desc). One stack of open ends per track.
  std::map<std::tuple<bool, std::int64_t, std::int64_t>, std::vector<Ns>> open;
  for (auto& r : ranges) {
    const bool gpu = r.kind == RangeKind::GpuUserAnnotation;
    auto& stack = open[{gpu, gpu ? r.device : r.pid, gpu ? r.stream : r.tid}];
    while (!stack.empty() && stack.back() <= r.start) stack.pop_back();
    r.depth = static_cast<std::int32_t>(stack.size());
    stack.push_back(r.end);
  }
}

template <class T>
void widen(std::pair<Ns, Ns>& span, bool& any, const std::vector<T>& v) {
  for (const auto& r : v) {
    if (!any) {
      span = {r.start, r.end};
      any = true;
    } else {
      span.first = std::min(span.first, r.start);
      span.second = std::max(span.second, r.end);
    }
  }
}

}  // namespace

void Trace::finalize() {
  sort_by_time(api_calls);
  sort_by_time(kernels);
  sort_by_time(memcpys);
  sort_by_time(memsets);
  sort_by_time(syncs);
  sort_by_time(ranges);
  sort_by_time(overheads);
  std::stable_sort(cuda_events.begin(), cuda_events.end(),
                   [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  std::stable_sort(others.begin(), others.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  // Stable: an allocation and a free in the same microsecond keep the order they were made in.
  std::stable_sort(memory.begin(), memory.end(),
                   [](const auto& a, const auto& b) { return a.timestamp < b.timestamp; });
  compute_depths(ranges);
}

std::pair<Ns, Ns> Trace::time_span() const {
  std::pair<Ns, Ns> span{0, 0};
  bool any = false;
  widen(span, any, api_calls);
  widen(span, any, kernels);
  widen(span, any, memcpys);
  widen(span, any, memsets);
  widen(span, any, syncs);
  widen(span, any, ranges);
  return span;
}

std::size_t Trace::record_count() const {
  return api_calls.size() + kernels.size() + memcpys.size() + memsets.size() + syncs.size() + cuda_events.size() +
         ranges.size() + overheads.size() + others.size() + memory.size();
}

namespace {
constexpr std::array<std::string_view, 2> kApi = {"runtime", "driver"};
constexpr std::array<std::string_view, 6> kCopy = {"unknown", "HtoD", "DtoH", "DtoD", "PtoP", "HtoH"};
constexpr std::array<std::string_view, 5> kMem = {"unknown", "pageable", "pinned", "device", "managed"};
constexpr std::array<std::string_view, 5> kSync = {"unknown", "event_sync", "stream_wait_event", "stream_sync",
                                                   "context_sync"};
constexpr std::array<std::string_view, 6> kRange = {"nvtx_push_pop",       "nvtx_start_end", "user_annotation",
                                                    "gpu_user_annotation", "cpu_op",         "python_function"};
constexpr std::array<std::string_view, 4> kClock = {"unknown", "unix_epoch", "monotonic", "simulated"};

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, E e) {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : std::string_view("invalid");
}

template <class E, std::size_t N>
std::optional<E> parse_of(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}
}  // namespace

std::string describe(const ReadWarning& w) {
  const std::string cat = w.category.empty() ? "uncategorized" : "\"" + w.category + "\"";
  const std::string first = "first: traceEvents[" + std::to_string(w.first_event) + "]";
  const std::string n = std::to_string(w.count);
  switch (w.kind) {
    case ReadWarning::Kind::ArgumentType:
      return n + " " + cat + " events have \"" + w.field + "\" that is not " + w.expected + " (" + first + ": " +
             w.example + "); kept as text, not used";
    case ReadWarning::Kind::SkippedEvent:
      return n + " " + cat + " events were skipped: their \"" + w.field + "\" is not " + w.expected + " (" + first +
             ": " + w.example + ") and the analyses need it";
    case ReadWarning::Kind::DuplicateKey:
      return n + " " + cat + " events give the key \"" + w.field + "\" more than once (" + first +
             (w.example.empty() ? std::string() : " at " + w.example) + "); the first value was kept";
    case ReadWarning::Kind::ImplausibleValue:
      return n + " " + cat + " events have \"" + w.field + "\" outside " + w.expected + " (" + first + ": " +
             w.example + "); left unknown";
    case ReadWarning::Kind::MissingField:
      return n + " " + cat + " events lack \"" + w.field + "\" (" + first + "); left unknown";
  }
  return n + " events: " + w.field;
}

std::string_view kind_name(ApiKind e) { return name_of(kApi, e); }
std::string_view kind_name(CopyKind e) { return name_of(kCopy, e); }
std::string_view kind_name(MemoryKind e) { return name_of(kMem, e); }
std::string_view kind_name(SyncType e) { return name_of(kSync, e); }
std::string_view kind_name(RangeKind e) { return name_of(kRange, e); }
std::string_view kind_name(ClockBase e) { return name_of(kClock, e); }
std::optional<CopyKind> parse_copy_kind(std::string_view s) { return parse_of<CopyKind>(kCopy, s); }
std::optional<MemoryKind> parse_memory_kind(std::string_view s) { return parse_of<MemoryKind>(kMem, s); }
std::optional<SyncType> parse_sync_type(std::string_view s) { return parse_of<SyncType>(kSync, s); }
std::optional<RangeKind> parse_range_kind(std::string_view s) { return parse_of<RangeKind>(kRange, s); }

}  // namespace syncscope
