// Writes a synthetic Nsight Systems SQLite export in the 2024.6 layout (the tables and
// columns of tests/fixtures/nsys/nsys_2024_6.sql) of about N bytes: training steps of a
// 16-layer model, each layer six emit_nvtx op ranges around cudaLaunchKernel + kernel, and
// one .item() (aten::item range; cudaMemcpyAsync D2H into pageable memory + memcpy record,
// cudaStreamSynchronize + synchronization record); per step an NVTX ProfilerStep range and
// an H2D pinned copy on a second stream. Synthetic data for the import benchmark, not a
// measurement.
//   syncscope_gen_nsys_export OUT [--bytes N (default 1e9)]
#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace {

constexpr const char* kSchema = R"(
PRAGMA page_size = 4096;
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, totalMemory INTEGER, smCount INTEGER, chipName TEXT, threadsPerWarp INTEGER,
  maxWarpsPerSm INTEGER, maxThreadsPerBlock INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER,
  launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,
  gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,
  localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL,
  sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,
  globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER,
  dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER,
  migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_PRODUCT_VERSION','synthetic (syncscope_gen_nsys_export)');
INSERT INTO META_DATA_EXPORT VALUES('EXPORT_SCHEMA_VERSION','3.16.1');
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES(1732924800000000000,'2024-11-30T00:00:00.000Z','');
INSERT INTO TARGET_INFO_GPU VALUES(0,0,'NVIDIA H100 80GB HBM3','0000:18:00.0',1,85520809984,132,'GH100',32,64,1024,9,0);
INSERT INTO StringIds VALUES(1,'cudaLaunchKernel_v7000');
INSERT INTO StringIds VALUES(2,'cudaMemcpyAsync_v3020');
INSERT INTO StringIds VALUES(3,'cudaStreamSynchronize_v3020');
INSERT INTO StringIds VALUES(4,'python3');
INSERT INTO StringIds VALUES(10,'void gemm_bf16_kernel<128, 256, 64>(Params)');
INSERT INTO StringIds VALUES(11,'void flash_fwd_kernel<128, 64>(Flash_fwd_params)');
INSERT INTO StringIds VALUES(12,'void rms_norm_kernel<bf16>(bf16 *, const bf16 *, float, int)');
INSERT INTO StringIds VALUES(13,'void silu_mul_kernel<bf16>(bf16 *, const bf16 *, int)');
INSERT INTO StringIds VALUES(14,'void rotary_kernel<bf16>(bf16 *, const float *, int)');
INSERT INTO StringIds VALUES(15,'void reduce_max_kernel<int>(int *, const int *, int)');
INSERT INTO StringIds VALUES(20,'gemm_bf16_kernel');
INSERT INTO StringIds VALUES(21,'flash_fwd_kernel');
INSERT INTO StringIds VALUES(22,'rms_norm_kernel');
INSERT INTO StringIds VALUES(23,'silu_mul_kernel');
INSERT INTO StringIds VALUES(24,'rotary_kernel');
INSERT INTO StringIds VALUES(25,'reduce_max_kernel');
)";

constexpr std::int64_t kPid = 4242;
constexpr std::int64_t kGlobalPid = (std::int64_t{1} << 56) + kPid * 16777216;
constexpr std::int64_t kGlobalTid = kGlobalPid + kPid;
constexpr const char* kOps[6] = {"aten::mm",       "aten::_flash_attention_forward",
                                 "aten::rms_norm", "aten::silu",
                                 "aten::mul",      "aten::max"};

struct Db {
  sqlite3* db = nullptr;
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::fprintf(stderr, "syncscope_gen_nsys_export: %s\n", err ? err : "SQLite error");
      std::exit(1);
    }
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "syncscope_gen_nsys_export: %s\n", sqlite3_errmsg(db));
      std::exit(1);
    }
    return s;
  }
};

// Binds the integers in order (NULL for -1 where the column allows it is not needed here).
template <class... T>
void row(sqlite3* db, sqlite3_stmt* s, T... v) {
  int i = 1;
  ((sqlite3_bind_int64(s, i++, static_cast<sqlite3_int64>(v))), ...);
  if (sqlite3_step(s) != SQLITE_DONE) {
    std::fprintf(stderr, "syncscope_gen_nsys_export: %s\n", sqlite3_errmsg(db));
    std::exit(1);
  }
  sqlite3_reset(s);
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  double target = 1e9;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--bytes" && i + 1 < argc) target = std::atof(argv[++i]);
    else if (a == "-h" || a == "--help") {
      std::printf("usage: syncscope_gen_nsys_export OUT [--bytes N (default 1e9)]\n");
      return 0;
    } else out = std::string(a);
  }
  if (out.empty() || target <= 0) {
    std::fprintf(stderr, "syncscope_gen_nsys_export: missing OUT (see --help)\n");
    return 2;
  }
  if (std::filesystem::exists(out)) {
    std::fprintf(stderr, "syncscope_gen_nsys_export: %s already exists; choose another name\n", out.c_str());
    return 2;
  }
  const std::string tmp = out + ".tmp";
  std::filesystem::remove(tmp);
  Db d;
  if (sqlite3_open(tmp.c_str(), &d.db) != SQLITE_OK) {
    std::fprintf(stderr, "syncscope_gen_nsys_export: cannot create %s\n", tmp.c_str());
    return 1;
  }
  d.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;");
  d.exec(kSchema);
  d.exec("BEGIN");
  sqlite3_stmt* api = d.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES(?,?,0,?,?,?,0,NULL)");
  sqlite3_stmt* kern = d.prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL "
      "VALUES(?,?,0,1,NULL,?,?,?,?,?,NULL,1,0,?,?,1,1,?,1,1,0,?,0,0,?,0,NULL,NULL)");
  sqlite3_stmt* copy = d.prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES(?,?,0,1,NULL,?,?,?,?,?,NULL,?,?,0,1,0,1,NULL,NULL,NULL)");
  sqlite3_stmt* sync =
      d.prepare("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(?,?,0,1,NULL,7,?,?,3,4294967295)");
  sqlite3_stmt* nvtx = d.prepare(
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) "
      "VALUES(?,?,59,?,?,0)");
  auto range = [&](std::int64_t start, std::int64_t end, const std::string& text) {
    sqlite3_bind_int64(nvtx, 1, start);
    sqlite3_bind_int64(nvtx, 2, end);
    sqlite3_bind_text(nvtx, 3, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(nvtx, 4, kGlobalTid);
    if (sqlite3_step(nvtx) != SQLITE_DONE) std::exit(1);
    sqlite3_reset(nvtx);
  };

  // t: the host thread's clock; gpu: when stream 7's queue drains (kernels run in order).
  std::int64_t t = 1'000'000, gpu = 0, corr = 1, seq = 1, grid = 1;
  std::uint64_t steps = 0;
  for (;;) {
    const std::int64_t step_start = t;
    // The batch's H2D copy on the copy stream.
    row(d.db, api, t, t + 8'000, kGlobalTid, corr, 2);
    row(d.db, copy, t + 10'000, t + 400'000, 13, corr, kGlobalPid, 33554432, 1, 1, 2);
    ++corr;
    t += 20'000;
    for (int layer = 0; layer < 16; ++layer) {
      const std::int64_t layer_start = t;
      for (int op = 0; op < 6; ++op) {
        const std::int64_t launch = t + 3'000;
        row(d.db, api, launch, launch + 4'000, kGlobalTid, corr, 1);
        const std::int64_t kstart = std::max(launch + 5'000, gpu), kend = kstart + 30'000 + op * 5'000;
        row(d.db, kern, kstart, kend, 7, corr, kGlobalPid, 10 + op, 20 + op, 32 + op * 8, grid++ % 4096 + 1, 128,
            op * 1024, corr);
        gpu = kend;
        range(t, launch + 6'000, std::string(kOps[op]) + ", seq = " + std::to_string(seq++));
        ++corr;
        t = launch + 8'000;
      }
      // .item(): D2H into pageable memory once the queue drains, then the stream sync.
      const std::int64_t item = t;
      row(d.db, api, item + 2'000, item + 9'000, kGlobalTid, corr, 2);
      const std::int64_t cstart = std::max(item + 9'000, gpu), cend = cstart + 2'000;
      row(d.db, copy, cstart, cend, 7, corr, kGlobalPid, 4, 2, 2, 0);
      gpu = cend;
      ++corr;
      row(d.db, api, item + 9'000, cend + 1'000, kGlobalTid, corr, 3);
      row(d.db, sync, item + 9'000, cend + 1'000, corr, kGlobalPid);
      ++corr;
      range(item, cend + 2'000, "aten::item, seq = " + std::to_string(seq++));
      t = cend + 3'000;
      range(layer_start, t, "layer_" + std::to_string(layer));
    }
    range(step_start, t, "ProfilerStep#" + std::to_string(steps));
    ++steps;
    if (steps % 64 == 0) {
      sqlite3_stmt* pc = d.prepare("PRAGMA page_count");
      sqlite3_step(pc);
      const double bytes = static_cast<double>(sqlite3_column_int64(pc, 0)) * 4096;
      sqlite3_finalize(pc);
      if (bytes >= target) break;
    }
  }
  for (sqlite3_stmt* s : {api, kern, copy, sync, nvtx}) sqlite3_finalize(s);
  d.exec("COMMIT");
  sqlite3_close(d.db);
  std::filesystem::rename(tmp, out);
  std::printf("%s: %llu steps, %llu correlation ids, %.1f MB\n", out.c_str(), static_cast<unsigned long long>(steps),
              static_cast<unsigned long long>(corr - 1), std::filesystem::file_size(out) / 1e6);
  return 0;
}
