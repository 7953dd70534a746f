// NVTX push/pop and start/end ranges: the steps and layers of --step-range/--layer-range.
#include <map>

#include "nsys_reader.hpp"

namespace syncscope::nsys_detail {
namespace {

// PyTorch's torch.autograd.profiler.emit_nvtx() names each op's range "aten::mm, seq = 12,
// op_id = 7, sizes = [[2, 3], [3, 4]]" (torch/csrc/profiler/util.cpp, getNvtxStr); only the
// op name is the op. Such ranges are the ops a sync point's cause is looked up in, as a
// torch.profiler trace's cpu_op events are.
std::string_view torch_op_name(std::string_view text) {
  if (!text.starts_with("aten::")) return {};
  const std::size_t comma = text.find(", ");
  if (comma == std::string_view::npos) return text;
  const std::string_view rest = text.substr(comma + 2);
  for (std::string_view key : {"seq = ", "op_id = ", "sizes = ", "input_op_ids = "})
    if (rest.starts_with(key)) return text.substr(0, comma);
  return {};
}

}  // namespace

void Reader::read_nvtx() {
  const Columns cols(db_, kNvtxTable);
  if (!cols.present()) return;
  Stmt s = db_.prepare(cols.select({"start", "end", "eventType", "text", "textId", "globalTid", "domainId"}),
                       "reading NVTX_EVENTS");
  std::map<std::int64_t, StringId> domains;                     // domainId -> name (NvtxDomainCreate rows)
  std::vector<std::pair<std::size_t, std::int64_t>> in_domain;  // (range, domainId) when not the default
  reserve_rows(kNvtxTable, t_.ranges);
  while (s.step()) {
    if (!s.integer_row({3})) {
      skip(kNvtxTable, "text or a blob where an integer belongs");
      continue;
    }
    const std::int64_t type = s.i64(2);
    const bool push_pop = type == enums_.nvtx_push_pop, start_end = type == enums_.nvtx_start_end;
    if (!push_pop && !start_end && type != enums_.nvtx_domain_create) continue;  // marks, categories...
    // A registered string (nvtxDomainRegisterString) is in textId, any other in text.
    const StringId registered = s.is_null(3) ? strings_.get(s.i64(4)) : kNoString;
    std::string_view text = s.is_null(3) ? t_.str(registered) : s.text(3);
    if (text.size() > (std::size_t{1} << 20)) {
      text = text.substr(0, std::size_t{1} << 20);
      notes_.add("NVTX_EVENTS texts longer than 1 MiB cut to 1 MiB");
    }
    const std::int64_t domain = s.is_null(6) ? 0 : s.i64(6);
    if (type == enums_.nvtx_domain_create) {
      if (domain != 0 && domains.size() < 65536) domains[domain] = t_.intern(text);
      continue;
    }
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
    // Only the op name is interned for an op range: its "seq = N" makes every text unique,
    // and millions of them would cost more memory than the ranges.
    const std::string_view op = push_pop && domain == 0 ? torch_op_name(text) : std::string_view();
    if (!op.empty()) r.kind = RangeKind::CpuOp;
    r.name = !op.empty() ? t_.intern(op) : registered != kNoString ? registered : t_.intern(text);
    if (!s.is_null(5)) {  // a start/end range belongs to the thread that started it
      r.pid = pid_of(s.i64(5));
      r.tid = tid_of(s.i64(5));
    }
    r.start = at(s.i64(0));
    r.end = at(s.i64(1));
    if (domain != 0) in_domain.emplace_back(t_.ranges.size(), domain);
    t_.ranges.push_back(r);
  }
  for (const auto& [i, domain] : in_domain)
    if (auto it = domains.find(domain); it != domains.end()) t_.ranges[i].domain = it->second;
}

}  // namespace syncscope::nsys_detail
