// NVTX push/pop and start/end ranges: the steps and layers of --step-range/--layer-range.
#include <map>

#include "nsys_reader.hpp"

namespace syncscope::nsys_detail {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// PyTorch's torch.autograd.profiler.emit_nvtx() names each op's range "aten::mm, seq = 12,
// op_id = 7, sizes = [[2, 3], [3, 4]]" (torch/csrc/profiler/util.cpp, getNvtxStr); only the
// op name is the op. Such ranges are the ops a sync point's cause is looked up in, as a
// torch.profiler trace's cpu_op events are.
std::string_view torch_op_name(std::string_view text) {
  if (!starts_with(text, "aten::")) return {};
  const std::size_t comma = text.find(", ");
  if (comma == std::string_view::npos) return text;
  const std::string_view rest = text.substr(comma + 2);
  for (std::string_view key : {"seq = ", "op_id = ", "sizes = ", "input_op_ids = "})
    if (starts_with(rest, key)) return text.substr(0, comma);
  return {};
}

}  // namespace

void Reader::read_nvtx() {
  const Columns cols(db_, kNvtxTable);
  if (!cols.present()) return;
  Stmt s = db_.prepare(cols.select({"start", "end", "eventType", "text", "textId", "globalTid", "domainId"}),
                       "reading NVTX_EVENTS");
  std::map<std::int64_t, StringId> domains;  // domainId -> name (NvtxDomainCreate rows)
  std::vector<std::int64_t> range_domain;    // parallel to the ranges added here
  const std::size_t first = t_.ranges.size();
  while (s.step()) {
    const std::int64_t type = s.i64(2);
    const bool push_pop = type == enums_.nvtx_push_pop, start_end = type == enums_.nvtx_start_end;
    StringId name = kNoString;
    if (push_pop || start_end || type == enums_.nvtx_domain_create) {
      // A registered string (nvtxDomainRegisterString) is in textId, any other in text.
      std::string_view text = s.text(3);
      if (text.size() > (std::size_t{1} << 20)) text = text.substr(0, std::size_t{1} << 20);
      name = !s.is_null(3) ? t_.intern(text) : strings_.get(s.i64(4));
    }
    if (type == enums_.nvtx_domain_create) {
      if (!s.is_null(6) && domains.size() < 65536) domains[s.i64(6)] = name;
      continue;
    }
    if (!push_pop && !start_end) continue;  // marks, categories, thread names
    if (s.is_null(1)) {
      skip(kNvtxTable, "a range that never ended (no end time)");
      continue;
    }
    if (s.is_null(0) || !plausible_interval(s.i64(0), s.i64(1))) {
      skip(kNvtxTable, "start or end impossible");
      continue;
    }
    Range r;
    r.kind = start_end ? RangeKind::NvtxStartEnd : RangeKind::NvtxPushPop;
    r.name = name;
    const std::int64_t domain = s.is_null(6) ? 0 : s.i64(6);
    if (push_pop && domain == 0) {
      const std::string_view op = torch_op_name(t_.str(name));
      if (!op.empty()) {
        r.kind = RangeKind::CpuOp;
        r.name = t_.intern(op);
      }
    }
    if (!s.is_null(5)) {  // a start/end range belongs to the thread that started it
      r.pid = pid_of(s.i64(5));
      r.tid = tid_of(s.i64(5));
    }
    r.start = at(s.i64(0));
    r.end = at(s.i64(1));
    t_.ranges.push_back(r);
    range_domain.push_back(domain);
  }
  for (std::size_t i = 0; i < range_domain.size(); ++i)
    if (range_domain[i] != 0)
      if (auto it = domains.find(range_domain[i]); it != domains.end()) t_.ranges[first + i].domain = it->second;
}

}  // namespace syncscope::nsys_detail
