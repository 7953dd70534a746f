// The Nsight Systems export reader's state, shared by the files that read its tables:
// nsys_reader.cpp (metadata, devices, processes and threads, API calls, the whole run),
// nsys_activity.cpp (kernels, copies, memsets, synchronization and CUDA event records, and
// joining them to API calls by correlation id), nsys_nvtx.cpp (NVTX ranges).
//
// Tables are read one at a time with one statement each, row by row, so memory is the
// records kept plus SQLite's page cache; nothing holds a whole table's rows as text.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "nsys_schema.hpp"
#include "sqlite_db.hpp"
#include "syncscope/trace/trace.hpp"

namespace syncscope::nsys_detail {

class Reader {
 public:
  Reader(const Db& db, Trace& trace);
  void run();

 private:
  // nsys_reader.cpp
  void check_is_export() const;
  void read_metadata();
  void read_devices();
  void read_processes_and_threads();
  void read_api_calls(const char* table);
  void drop_duplicate_calls();
  void sort_records();

  // nsys_activity.cpp
  void read_kernels();
  void read_memcpys();
  void read_memsets();
  void read_syncs();
  void read_cuda_events();
  // Sync records whose deviceId is not the device of their process's context (Nsight Systems
  // 2026.2 writes 0 for every rank's) take that device, counted in the notes.
  void give_syncs_their_contexts_device();
  void make_correlations_unique();
  void link_to_api_calls();
  // The columns every GPU activity table is selected with first (start, end, deviceId,
  // contextId, streamId, correlationId, globalPid, in that order) into `a` and `pid`;
  // false, the row counted as skipped, when its times are missing or impossible.
  bool read_activity(const Stmt& s, const char* table, GpuActivity& a, std::int32_t& pid);

  // nsys_nvtx.cpp
  void read_nvtx();

  // A device as the export numbers it for one process: CUPTI's per-process ordinal mapped
  // to the GPU's id through TARGET_INFO_CUDA_DEVICE (pid, cudaId -> gpuId) when the export
  // has it (CUDA_VISIBLE_DEVICES renumbers devices per process).
  std::int32_t device_of(std::int64_t pid, std::int64_t device_id) const;
  // A session time as a trace time (plus the session's UTC start when known).
  Ns at(std::int64_t session_ns) const { return base_ + session_ns; }
  // Reserves room for a table's rows in `v` (and in the side vector `pids`), so millions of
  // records are not copied while a vector doubles, nor held twice while it does.
  template <class V>
  void reserve_rows(const char* table, V& v, std::vector<std::int32_t>* pids = nullptr);
  // Counts a skipped row of `table` with the reason.
  void skip(const std::string& table, const char* why) { notes_.add("rows of " + table + " skipped: " + why); }

  const Db& db_;
  Trace& t_;
  Enums enums_;
  StringIds strings_;
  Notes notes_;
  Ns base_ = 0;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int32_t> gpu_of_;  // (pid, cudaId) -> gpuId
  // The process of each GPU record (globalPid), parallel to the trace's vectors, until the
  // correlation ids are made unique across processes (the model's records carry no pid).
  std::vector<std::int32_t> kernel_pid_, memcpy_pid_, memset_pid_, sync_pid_, event_pid_;
};

template <class V>
void Reader::reserve_rows(const char* table, V& v, std::vector<std::int32_t>* pids) {
  Stmt s = db_.prepare(std::string("SELECT count(*) FROM \"") + table + "\"", std::string("counting ") + table);
  if (!s.step()) return;
  const std::int64_t n = s.i64(0);
  // A row of these tables takes tens of bytes in the file: a count the file could not hold
  // is damage, and the rows are then kept as they come instead.
  if (n <= 0 || static_cast<std::uint64_t>(n) > db_.size_bytes() / 16) return;
  v.reserve(v.size() + static_cast<std::size_t>(n));
  if (pids != nullptr) pids->reserve(static_cast<std::size_t>(n));
}

}  // namespace syncscope::nsys_detail
