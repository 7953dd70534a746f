// The reader across nsys releases and recording options: each fixture reproduces one
// variation (tests/fixtures/nsys/*.sql; the expected figures are worked out in their
// headers), and variations of the 2024.6 fixture drop tables or renumber enumerations.
#include <gtest/gtest.h>

#include <algorithm>

#include "nsys_fixture.hpp"
#include "syncscope/analysis/analysis.hpp"
#include "syncscope/io/nsys_sqlite.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

using test::kSessionUtc;

Trace load(const std::string& name, const std::string& extra_sql = "") {
  test::TempDir dir;
  return read_trace(test::build_export(dir, name, extra_sql));
}

const SyncRecord& sync_of(const Trace& t, std::uint64_t corr) {
  auto it = std::find_if(t.syncs.begin(), t.syncs.end(), [&](const SyncRecord& s) { return s.correlation == corr; });
  if (it == t.syncs.end()) throw std::runtime_error("no sync record " + std::to_string(corr));
  return *it;
}

bool has_warning(const Trace& t, std::string_view text) {
  return std::any_of(t.meta.warnings.begin(), t.meta.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

TEST(NsysVersions, Schema2026SyncTypeIsNotTrusted) {
  const Trace t = load("nsys_2026_4");
  EXPECT_EQ(t.meta.extra.at("nsys.EXPORT_SCHEMA_VERSION"), "3.28.1");
  // syncType says event / stream / stream-wait; the calls say otherwise, and decide.
  EXPECT_EQ(sync_of(t, 13).type, SyncType::StreamSync);
  EXPECT_EQ(sync_of(t, 13).stream, 7);
  EXPECT_EQ(sync_of(t, 15).type, SyncType::EventSync);
  EXPECT_EQ(sync_of(t, 15).event_sync_id, 900u);
  EXPECT_EQ(sync_of(t, 16).type, SyncType::ContextSync);
  ASSERT_EQ(t.cuda_events.size(), 1u);
  EXPECT_EQ(t.cuda_events[0].event_sync_id, 900u);
  EXPECT_EQ(t.cuda_events[0].timestamp, kSessionUtc + 158000);  // the device timestamp
  // CUDA_VISIBLE_DEVICES=1: the process's device 0 is GPU 1.
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[0].device, 1);
  EXPECT_EQ(t.memcpys[0].device, 1);
  EXPECT_EQ(sync_of(t, 13).device, 1);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[1].name, "NVIDIA H200");
  EXPECT_EQ(t.memcpys[0].bytes, 4096u);  // a batch of 4 copies in one record (copyCount)
  EXPECT_TRUE(t.memcpys[0].async);
  EXPECT_EQ(t.str(t.api_calls[1].name), "cudaMemcpyBatchAsync");  // 5-digit _v12080 removed

  const AnalysisResult r = analyze(t, {});
  ASSERT_EQ(r.sync_points.size(), 3u);
  EXPECT_EQ(r.sync_points[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(r.sync_points[0].device, 1);
  EXPECT_EQ(r.sync_points[0].blocked_ns, 30000);
  EXPECT_EQ(r.sync_points[0].bubble_ns, 30000);
  EXPECT_EQ(r.sync_points[1].api, "cudaEventSynchronize");
  EXPECT_EQ(r.sync_points[1].blocked_ns, 17000);
  EXPECT_EQ(r.sync_points[1].bubble_ns, 30000);
  EXPECT_EQ(r.sync_points[2].api, "cudaDeviceSynchronize");
  EXPECT_EQ(r.sync_points[2].blocked_ns, 20000);
  EXPECT_EQ(r.sync_points[2].bubble_ns, 0);
  EXPECT_EQ(r.totals.syncs.blocked_ns, 67000);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].syncs.total, 3u);
}

TEST(NsysVersions, OlderExportMetaDataTable) {
  const Trace t = load("nsys_export_meta_data");
  EXPECT_EQ(t.meta.extra.at("nsys.metadata_table"), "EXPORT_META_DATA");
  EXPECT_EQ(t.meta.source_version, "2022.4.2");
  EXPECT_EQ(t.meta.base_time_ns, 1650000000000000000);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(t.devices[0].sm_count, 108);
  EXPECT_EQ(t.devices[0].compute_major, 0);  // no such column in that release: unknown
  EXPECT_EQ(t.kernels[0].mangled_name, kNoString);
  ASSERT_EQ(t.cuda_events.size(), 0u);
  const AnalysisResult r = analyze(t, {});
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_EQ(r.sync_points[0].api, "cudaMemcpyAsync");  // D2H into pageable memory on its own
  EXPECT_FALSE(r.sync_points[0].merged_copy);
  EXPECT_EQ(r.sync_points[0].blocked_ns, 40000);
  EXPECT_EQ(r.sync_points[0].bubble_ns, 18000);
  EXPECT_EQ(r.sync_points[1].api, "cudaStreamSynchronize");
  EXPECT_EQ(r.sync_points[1].blocked_ns, 22000);
  EXPECT_EQ(r.sync_points[1].bubble_ns, 0);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].name, "ProfilerStep#0");
}

TEST(NsysVersions, OldestLayoutWithoutMetadataEnumsOrEventClass) {
  const Trace t = load("nsys_oldest");
  EXPECT_EQ(t.meta.extra.at("nsys.metadata_table"), "none");
  EXPECT_EQ(t.meta.clock, ClockBase::Monotonic);  // no session start: session-relative
  EXPECT_EQ(t.meta.base_time_ns, 0);
  ASSERT_EQ(t.api_calls.size(), 5u);
  const auto ctx = std::find_if(t.api_calls.begin(), t.api_calls.end(),
                                [&](const ApiCall& c) { return t.str(c.name) == "cuCtxSynchronize"; });
  ASSERT_NE(ctx, t.api_calls.end());
  EXPECT_EQ(ctx->kind, ApiKind::Driver);  // by its name: no eventClass column
  EXPECT_EQ(t.api_calls[0].kind, ApiKind::Runtime);
  ASSERT_EQ(t.memcpys.size(), 1u);
  EXPECT_EQ(t.memcpys[0].dst_kind, MemoryKind::Pageable);  // documented numbering: 0 is pageable
  EXPECT_EQ(t.memcpys[0].src_kind, MemoryKind::Device);
  EXPECT_TRUE(t.syncs.empty());
  const AnalysisResult r = analyze(t, {});
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_TRUE(r.sync_points[0].merged_copy);
  EXPECT_EQ(r.sync_points[0].start, 4000);
  EXPECT_EQ(r.sync_points[0].blocked_ns, 8000);
  EXPECT_EQ(r.sync_points[0].bubble_ns, 4000);
  EXPECT_EQ(r.sync_points[1].api, "cuCtxSynchronize");
  EXPECT_EQ(r.sync_points[1].blocked_ns, 4000);
  EXPECT_EQ(r.sync_points[1].bubble_ns, 0);
}

TEST(NsysVersions, BacktraceRowsAreNotCalls) {
  const Trace t = load("nsys_backtraces");
  EXPECT_EQ(t.api_calls.size(), 4u);
  EXPECT_EQ(t.meta.extra.at("nsys.backtrace_rows"), "4");
  EXPECT_EQ(t.meta.extra.at("nsys.duplicate_calls_dropped"), "1");
  const AnalysisResult r = analyze(t, {});
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_TRUE(r.sync_points[0].merged_copy);
  EXPECT_EQ(r.sync_points[0].blocked_ns, 8000);
  EXPECT_EQ(r.sync_points[1].api, "cudaDeviceSynchronize");
  EXPECT_EQ(r.totals.syncs.by_api.at("cudaDeviceSynchronize"), 1u);
}

TEST(NsysVersions, ProcessesKeepTheirOwnCorrelationsAndGpus) {
  const Trace t = load("nsys_multi_process");
  ASSERT_EQ(t.kernels.size(), 4u);
  for (const auto& k : t.kernels) EXPECT_NE(k.correlation >> 32, 0u) << "correlations carry their process";
  EXPECT_NE(t.meta.extra.count("nsys.correlation"), 0u);
  AnalysisOptions rank0;
  rank0.pid = 100;
  const AnalysisResult a = analyze(t, rank0);
  ASSERT_EQ(a.sync_points.size(), 1u);
  EXPECT_TRUE(a.sync_points[0].merged_copy);  // its own pageable copy, not rank 1's pinned one
  EXPECT_EQ(a.sync_points[0].device, 0);
  EXPECT_EQ(a.sync_points[0].blocked_ns, 8000);
  EXPECT_EQ(a.sync_points[0].bubble_ns, 9000);
  AnalysisOptions rank1;
  rank1.pid = 200;
  const AnalysisResult b = analyze(t, rank1);
  ASSERT_EQ(b.sync_points.size(), 1u);
  EXPECT_FALSE(b.sync_points[0].merged_copy);  // a pinned copy: the sync alone
  EXPECT_EQ(b.sync_points[0].device, 1);
  EXPECT_EQ(b.sync_points[0].blocked_ns, 3000);
  EXPECT_EQ(b.sync_points[0].bubble_ns, 8000);
  EXPECT_EQ(analyze(t, {}).sync_points.size(), 2u);
}

// Nsight Systems 2026.2's 2-GPU torchrun exports write deviceId 0 on the second rank's sync
// records while their context (and streams) are device 1's. Here rank 1 (pid 200) runs on
// device 1 in context 2 (no CUDA_VISIBLE_DEVICES mapping) and its sync record says device 0:
// the reader gives it its context's device, counted. A sync of a context no other record of its
// process ran in keeps the device the export gave.
TEST(NsysVersions, ASyncRecordTakesItsContextsDevice) {
  const std::string rank1 = "(1 << 56) + 200 * 16777216";
  const Trace t = load("nsys_multi_process",
                       "DELETE FROM TARGET_INFO_CUDA_DEVICE WHERE pid = 200;"
                       "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1, contextId = 2 WHERE globalPid = " +
                           rank1 +
                           ";"
                           "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET deviceId = 1, contextId = 2 WHERE globalPid = " +
                           rank1 +
                           ";"
                           "UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET contextId = 2 WHERE globalPid = " +
                           rank1 +
                           ";"
                           "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES(5000,8000,0,9,NULL,7,99," +
                           rank1 + ",3,4294967295);");
  EXPECT_EQ(sync_of(t, (std::uint64_t{100} << 32) | 3).device, 0);
  EXPECT_EQ(sync_of(t, (std::uint64_t{200} << 32) | 3).device, 1);
  EXPECT_EQ(sync_of(t, (std::uint64_t{200} << 32) | 99).device, 0);  // context 9: nothing else ran there
  EXPECT_TRUE(has_warning(t, "1 CUPTI_ACTIVITY_KIND_SYNCHRONIZATION rows of pid 200 whose deviceId is not the device"));
  AnalysisOptions rank1_only;
  rank1_only.pid = 200;
  const AnalysisResult b = analyze(t, rank1_only);
  ASSERT_EQ(b.sync_points.size(), 1u);
  EXPECT_EQ(b.sync_points[0].device, 1);
  EXPECT_EQ(b.sync_points[0].blocked_ns, 3000);
  EXPECT_EQ(b.sync_points[0].bubble_ns, 8000);
  // The unchanged fixture: every sync record already names its context's device, no note.
  EXPECT_FALSE(has_warning(load("nsys_multi_process"), "whose deviceId is not the device its kernels"));
}

TEST(NsysVersions, UnifiedMemoryOnAnIntegratedGpu) {
  const Trace t = load("nsys_unified_jetson");
  EXPECT_EQ(t.meta.extra.at("nsys.gpu0.integrated"), "true");
  EXPECT_EQ(t.meta.extra.at("nsys.gpu0.chip"), "ga10b");
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "Orin (nvgpu)");
  EXPECT_EQ(t.devices[0].compute_major, 8);
  EXPECT_EQ(t.devices[0].compute_minor, 7);
  ASSERT_EQ(t.memcpys.size(), 3u);
  const Memcpy& in = t.memcpys[0];  // UVM migration host -> device
  EXPECT_EQ(in.kind, CopyKind::HtoD);
  EXPECT_EQ(in.src_kind, MemoryKind::Managed);
  EXPECT_EQ(in.dst_kind, MemoryKind::Managed);
  EXPECT_EQ(in.stream, -1);
  EXPECT_EQ(in.correlation, 0u);
  EXPECT_EQ(t.memcpys[1].kind, CopyKind::DtoH);
  EXPECT_EQ(t.meta.extra.at("nsys.unified_memory_copies"), "2");
  EXPECT_EQ(t.memcpys[2].src_kind, MemoryKind::Managed);
  EXPECT_EQ(t.memcpys[2].dst_kind, MemoryKind::Pageable);
  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets[0].memory_kind, MemoryKind::Managed);
  const AnalysisResult r = analyze(t, {});
  ASSERT_EQ(r.sync_points.size(), 2u);
  EXPECT_EQ(r.sync_points[0].api, "cudaMemcpy");
  EXPECT_EQ(r.sync_points[0].blocked_ns, 3000);
  EXPECT_EQ(r.sync_points[1].api, "cudaDeviceSynchronize");
  EXPECT_EQ(r.totals.gpu_busy_ns, 2000 + 5000 + 1000 + 500 + 1000);
}

TEST(NsysVersions, NoCudaDataReadsEmptyWithAWarning) {
  const Trace t = load("nsys_no_cuda");
  EXPECT_TRUE(t.api_calls.empty());
  EXPECT_TRUE(t.kernels.empty());
  EXPECT_EQ(t.ranges.size(), 1u);
  EXPECT_TRUE(has_warning(t, "the export has no CUDA data"));
  const AnalysisResult r = analyze(t, {});
  EXPECT_EQ(r.totals.syncs.total, 0u);
  EXPECT_EQ(r.totals.gpu_busy_ns, 0);
  EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(),
                          [](const std::string& w) { return w.find("no CUDA data") != std::string::npos; }));
}

TEST(NsysVersions, AnyTableMayBeMissing) {
  const Trace full = load("nsys_2024_6");
  for (const char* table :
       {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "NVTX_EVENTS", "ThreadNames",
        "PROCESSES", "TARGET_INFO_GPU", "TARGET_INFO_SESSION_START_TIME", "META_DATA_EXPORT", "ENUM_CUDA_MEMCPY_OPER",
        "ENUM_CUDA_MEM_KIND", "ENUM_NSYS_EVENT_TYPE", "ENUM_NSYS_EVENT_CLASS", "CUPTI_ACTIVITY_KIND_RUNTIME"}) {
    SCOPED_TRACE(table);
    const Trace t = load("nsys_2024_6", std::string("DROP TABLE ") + table + ";");
    const std::string which(table);
    EXPECT_EQ(t.kernels.size(), which == "CUPTI_ACTIVITY_KIND_KERNEL" ? 0u : full.kernels.size());
    EXPECT_EQ(t.api_calls.size(), which == "CUPTI_ACTIVITY_KIND_RUNTIME" ? 0u : full.api_calls.size());
    EXPECT_EQ(t.ranges.size(), which == "NVTX_EVENTS" ? 0u : full.ranges.size());
    if (which.rfind("ENUM_", 0) == 0) {  // the documented numbering gives the same kinds
      EXPECT_EQ(t.memcpys[0].dst_kind, MemoryKind::Pageable);
      EXPECT_EQ(t.memcpys[1].kind, CopyKind::HtoD);
      EXPECT_EQ(t.ranges.size(), full.ranges.size());
      EXPECT_EQ(t.api_calls[0].kind, full.api_calls[0].kind);
    }
  }
}

TEST(NsysVersions, EnumerationsAreReadFromTheFile) {
  // The same export with every enumeration renumbered (ids + 100, rows updated to match):
  // the reader follows the file's ENUM_* tables, so the trace is the same.
  const std::string renumber = R"(
    UPDATE ENUM_CUDA_MEMCPY_OPER SET id = id + 100;
    UPDATE ENUM_CUDA_MEM_KIND SET id = id + 100;
    UPDATE ENUM_NSYS_EVENT_CLASS SET id = id + 100;
    UPDATE ENUM_NSYS_EVENT_TYPE SET id = id + 100;
    UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = copyKind + 100, srcKind = srcKind + 100, dstKind = dstKind + 100;
    UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET memKind = memKind + 100;
    UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET eventClass = eventClass + 100;
    UPDATE NVTX_EVENTS SET eventType = eventType + 100;)";
  const Trace a = load("nsys_2024_6"), b = load("nsys_2024_6", renumber);
  ASSERT_EQ(a.memcpys.size(), b.memcpys.size());
  for (std::size_t i = 0; i < a.memcpys.size(); ++i) {
    EXPECT_EQ(a.memcpys[i].kind, b.memcpys[i].kind);
    EXPECT_EQ(a.memcpys[i].src_kind, b.memcpys[i].src_kind);
    EXPECT_EQ(a.memcpys[i].dst_kind, b.memcpys[i].dst_kind);
  }
  EXPECT_EQ(a.memsets[0].memory_kind, b.memsets[0].memory_kind);
  ASSERT_EQ(a.api_calls.size(), b.api_calls.size());
  for (std::size_t i = 0; i < a.api_calls.size(); ++i) EXPECT_EQ(a.api_calls[i].kind, b.api_calls[i].kind);
  EXPECT_EQ(a.ranges.size(), b.ranges.size());
  EXPECT_EQ(analyze(a, {}).totals.syncs.total, analyze(b, {}).totals.syncs.total);
}

TEST(NsysVersions, ImpossibleRowsAreCountedNotFatal) {
  // Damage inside rows the reader needs: a kernel ending before it starts, a call 200 days
  // into the session, an end that is not a number. Each is skipped and counted; the rest reads.
  const Trace t = load("nsys_2024_6", R"(
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE correlationId = 205;
    UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET end = 17280000000000000 WHERE correlationId = 209;
    UPDATE CUPTI_ACTIVITY_KIND_MEMSET SET end = 'garbage';
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = -5, deviceId = 99999 WHERE correlationId = 101;
    UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -1 WHERE correlationId = 105;)");
  EXPECT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(t.api_calls.size(), 15u);
  EXPECT_TRUE(t.memsets.empty());
  EXPECT_TRUE(has_warning(t, "1 rows of CUPTI_ACTIVITY_KIND_KERNEL skipped: start or end missing or impossible"));
  EXPECT_TRUE(has_warning(t, "1 rows of CUPTI_ACTIVITY_KIND_RUNTIME skipped"));
  EXPECT_TRUE(has_warning(t, "1 rows of CUPTI_ACTIVITY_KIND_MEMSET skipped"));
  EXPECT_EQ(t.kernels[0].grid[0], 0);
  EXPECT_EQ(t.kernels[0].device, -1);
  EXPECT_EQ(t.memcpys[1].bytes, 0u);
}

TEST(NsysVersions, PerLayerSyncsFromEmitNvtx) {
  // tests/fixtures/nsys/nsys_layer_syncs.sql: 3 steps x 4 layers, one .item() per layer.
  AnalysisOptions o;
  o.layer_glob = "layer_*";
  const AnalysisResult r = analyze(load("nsys_layer_syncs"), o);
  EXPECT_EQ(r.totals.syncs.total, 12u);
  EXPECT_EQ(r.totals.syncs.by_cause.at("aten::item"), 12u);
  EXPECT_EQ(r.totals.syncs.blocked_ns, 12 * 58000);
  EXPECT_EQ(r.totals.syncs.bubble_ns, 2 * (3 * 44000 + 94000) + 3 * 44000);
  ASSERT_EQ(r.steps.size(), 3u);
  for (const auto& s : r.steps) EXPECT_EQ(s.syncs.total, 4u);
  ASSERT_EQ(r.layers.size(), 12u);
  for (const auto& l : r.layers) EXPECT_EQ(l.syncs.total, 1u);
}

TEST(NsysVersions, NamesAreBytesAndStillConvert) {
  // SQLite TEXT holds any bytes: a kernel name that is not UTF-8, an NVTX text with quotes,
  // a newline and a control character. The trace converts to JSON that reads back.
  const Trace t = load("nsys_2024_6", R"(
    UPDATE StringIds SET value = X'6B65726E656CFFFE2280' WHERE id = 13;
    UPDATE NVTX_EVENTS SET text = 'step "1"' || char(10) || char(1) WHERE text = 'ProfilerStep#1';)");
  ASSERT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.str(t.kernels[0].name), std::string("kernel\xFF\xFE\"\x80"));
  const Trace back = parse_chrome_json(chrome_json_string(t), "converted");
  EXPECT_EQ(back.kernels.size(), t.kernels.size());
  EXPECT_EQ(back.ranges.size(), t.ranges.size());
}

}  // namespace
}  // namespace syncscope
