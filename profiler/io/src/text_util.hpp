// Exact conversions between the text of Chrome trace numbers and integer nanoseconds, and
// the spellings Kineto gives copy, memory and sync kinds. Shared by the reader and writer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "syncscope/trace/trace.hpp"

namespace syncscope::io_detail {

// Microseconds written as a JSON number (or the text of a "us.nnn" string) to integer
// nanoseconds, without going through a double: Kineto writes microseconds with three
// decimals and absolute microsecond timestamps have 16+ significant digits, more than a
// double holds. Digits past the nanosecond round half away from zero. nullopt when the
// text is not a number or the value does not fit in int64 nanoseconds.
std::optional<std::int64_t> parse_us_as_ns(std::string_view text);

// A whole decimal integer ("-12", "7"); nullopt for anything else or overflow.
std::optional<std::int64_t> parse_int64(std::string_view text);

// An integer written as text, as traces write ids, streams and pointers: decimal ("31",
// "-1") or hexadecimal ("0x1f", "0X1F"), surrounding spaces allowed. The value as two's
// complement in 64 bits (hex up to 0xffffffffffffffff); nullopt for anything else.
std::optional<std::uint64_t> parse_integer_text(std::string_view text);

// A copy direction written by a trace: cudaMemcpyKind/hipMemcpyKind numbers (0 HtoH, 1 HtoD,
// 2 DtoH, 3 DtoD; 4, "default", is Unknown) or Kineto's spellings ("HtoD", ...). nullopt when
// the value is neither.
std::optional<CopyKind> copy_kind_from_number(std::int64_t v);
std::optional<CopyKind> copy_kind_from_text(std::string_view text);
// The cudaMemcpyKind number we write for a direction; -1 when it has none (PtoP, Unknown).
int memcpy_kind_number(CopyKind k);

// The stream in a tid written "stream 7" (Kineto of 2021 names GPU tracks so).
std::optional<std::int64_t> stream_from_track_name(std::string_view tid);

// The integer when `text` is exactly its canonical spelling ("7" yes, "07" and "+7" no),
// so that writing it as a JSON number and reading it back gives the same text.
std::optional<std::int64_t> canonical_int(std::string_view text);

// Nanoseconds as microseconds with exactly three decimals ("12.345", "-0.001").
void append_us(std::string& out, std::int64_t ns);

// Kineto names: "Memcpy DtoH (Device -> Pinned)", "Memset (Device)", "Stream Sync".
std::string_view kineto_copy_kind(CopyKind k);
std::string_view kineto_memory_kind(MemoryKind k);
std::string_view kineto_sync_kind(SyncType t);
std::string memcpy_name(CopyKind kind, MemoryKind src, MemoryKind dst);
std::string memset_name(MemoryKind kind);
// Parsers for the above; unknown spellings (e.g. CUPTI's "Array" memory) give Unknown.
void parse_memcpy_name(std::string_view name, CopyKind& kind, MemoryKind& src, MemoryKind& dst);
MemoryKind parse_memset_name(std::string_view name);
SyncType parse_kineto_sync_kind(std::string_view s);

}  // namespace syncscope::io_detail
