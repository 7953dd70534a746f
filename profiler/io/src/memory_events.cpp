// Chrome trace JSON -> Trace: torch.profiler's profile_memory events ("[memory]" instants,
// written by PyTorch's profiler_kineto.cpp with "Total Allocated", "Total Reserved", "Bytes",
// "Addr", "Device Type", "Device Id") onto MemoryEvent records.
//
// Generous: no field is needed. A value of another type is counted by accept_fields (as for
// every event); a missing one and one outside physical sense (a size beyond kMaxMemoryBytes,
// a negative total, a device type outside c10::DeviceType's int8 range) are counted here, once
// per (kind, category, field), and the value is left unknown. The event is always kept.
#include <string>

#include "chrome_reader_impl.hpp"

namespace syncscope::io_detail {

using schema::Arg;

namespace {

// Largest device index we take as real: far beyond any machine (CUDA's device ordinals are
// int8 in c10::Device); c10 device types are int8 (c10/core/DeviceType.h).
constexpr std::int64_t kMaxDeviceIndex = 1 << 16;
constexpr std::int64_t kMaxDeviceType = 127;

}  // namespace

void ChromeReader::memory_event(const Event& e) {
  if (!accept_fields(e, schema::Cat::Memory)) return;  // never: no field is needed
  const Args& a = e.args;
  const std::string_view category = e.cat.value_or("");
  // The value of `arg` when present, of its type (checked by parse_args) and within [lo, hi];
  // else `missing`, counted.
  auto value = [&](Arg arg, std::int64_t lo, std::int64_t hi, std::string_view range,
                   std::int64_t missing) -> std::int64_t {
    const std::string field = "args." + std::string(schema::arg_name(arg));
    if (!a.has(arg)) {
      if ((a.bad & schema::bit(arg)) == 0) warn(ReadWarning::Kind::MissingField, category, field, "", "");
      return missing;
    }
    const std::int64_t v = a.i(arg, missing);
    if (v < lo || v > hi) {
      warn(ReadWarning::Kind::ImplausibleValue, category, field, range, std::to_string(v));
      return missing;
    }
    return v;
  };
  MemoryEvent m;
  m.pid = id_or(e.pid, -1);
  m.tid = id_or(e.tid, -1);
  m.timestamp = *e.ts;
  m.bytes = value(Arg::MemBytes, -kMaxMemoryBytes, kMaxMemoryBytes, "-1 PiB .. 1 PiB", 0);
  m.total_allocated = value(Arg::TotalAllocated, 0, kMaxMemoryBytes, "0 .. 1 PiB", -1);
  m.total_reserved = value(Arg::TotalReserved, 0, kMaxMemoryBytes, "0 .. 1 PiB", -1);
  m.device_type = static_cast<std::int32_t>(value(Arg::DeviceType, 0, kMaxDeviceType, "0 .. 127", -1));
  m.device = static_cast<std::int32_t>(value(Arg::DeviceId, -1, kMaxDeviceIndex, "-1 .. 65536", -1));
  // An address is any 64-bit pattern; only its presence is checked (0 is never allocated).
  if (a.has(Arg::Addr)) m.address = a.u(Arg::Addr, 0);
  else if ((a.bad & schema::bit(Arg::Addr)) == 0)
    warn(ReadWarning::Kind::MissingField, category, "args." + std::string(schema::arg_name(Arg::Addr)), "", "");
  note_start(m.timestamp);
  note_end(m.timestamp);
  memory_.push(m);
}

}  // namespace syncscope::io_detail
