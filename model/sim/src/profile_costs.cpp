#include "profile_costs.hpp"

#include <cctype>
#include <iterator>

#include "syncscope/sim/simulator.hpp"

namespace syncscope::sim::detail {

namespace {

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `needle` occurs in `hay` with no identifier character joined to it on either side.
bool contains_identifier(std::string_view hay, std::string_view needle) {
  for (std::size_t i = hay.find(needle); i != std::string_view::npos; i = hay.find(needle, i + 1)) {
    const bool left = i == 0 || !ident_char(hay[i - 1]) || !ident_char(needle.front());
    const std::size_t j = i + needle.size();
    const bool right = j == hay.size() || !ident_char(hay[j]) || !ident_char(needle.back());
    if (left && right) return true;
  }
  return false;
}

}  // namespace

const model::FittedKernel* fitted_kernel(const model::GpuProfile& p, std::string_view name) {
  if (name.empty()) return nullptr;
  const model::FittedKernel* best = nullptr;
  for (const auto& k : p.kernels)
    if (contains_identifier(k.name, name) && (!best || k.events > best->events)) best = &k;
  return best;
}

OpHostCost op_host_cost(const program::Op& op, const model::GpuProfile& p) {
  using program::OpKind;
  OpHostCost c;
  switch (op.kind) {
    case OpKind::Kernel:
    case OpKind::Memset:
    case OpKind::Copy: {
      if (op.continues_op) break;
      c.starts_op = true;
      const model::FittedKernel* k = op.kind == OpKind::Kernel ? fitted_kernel(p, op.name) : nullptr;
      const bool own = k && k->host_events > 0;
      c.before = (own ? k->host_before_ns : p.host_launch_op_ns) + p.plain_ops_per_launch_op * p.host_op_ns;
      c.after = own ? k->host_after_ns : p.host_after_launch_ns;
      break;
    }
    case OpKind::RangePush:
    case OpKind::RangePop:
      c.boundary = true;
      c.before = p.host_range_ns;
      break;
    default: break;
  }
  return c;
}

}  // namespace syncscope::sim::detail

namespace syncscope::sim {

model::GpuProfile with_cpp_host(model::GpuProfile p) {
  p.host_op_ns = 0;
  p.host_launch_op_ns = 0;
  p.host_after_launch_ns = 0;
  p.host_range_ns = 0;
  p.plain_ops_per_launch_op = 0;
  for (auto& k : p.kernels) k.host_events = 0;
  for (auto it = p.provenance.begin(); it != p.provenance.end();)
    it = it->first.rfind("host_costs", 0) == 0 ? p.provenance.erase(it) : std::next(it);
  p.provenance["host_costs"] =
      "C++ (scenario host: cpp): no host time per op beyond the runtime calls (launch_overhead_ns each); an "
      "assumption, not a measurement";
  return p;
}

}  // namespace syncscope::sim
