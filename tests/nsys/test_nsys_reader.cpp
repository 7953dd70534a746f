// The Nsight Systems reader's mapping of each table into the trace model, on the 2024.6
// fixture (tests/fixtures/nsys/nsys_2024_6.sql): every value below is read off that script.
#include <gtest/gtest.h>

#include <algorithm>

#include "nsys_fixture.hpp"
#include "syncscope/io/nsys_sqlite.hpp"
#include "syncscope/io/trace_io.hpp"

namespace syncscope {
namespace {

using test::kSessionUtc;
constexpr Ns at(Ns session_ns) { return kSessionUtc + session_ns; }

class Nsys2024 : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    path_ = new std::filesystem::path(test::build_export(*dir_, "nsys_2024_6"));
    trace_ = new Trace(read_trace(*path_));  // through the dispatch: picked by content
  }
  static void TearDownTestSuite() {
    delete trace_;
    delete path_;
    delete dir_;
  }
  static const Trace& t() { return *trace_; }
  static const ApiCall& call(std::uint64_t corr) {
    auto it = std::find_if(t().api_calls.begin(), t().api_calls.end(),
                           [&](const ApiCall& c) { return c.correlation == corr; });
    EXPECT_NE(it, t().api_calls.end()) << "no call with correlation " << corr;
    return *it;
  }
  static test::TempDir* dir_;
  static std::filesystem::path* path_;
  static Trace* trace_;
};
test::TempDir* Nsys2024::dir_ = nullptr;
std::filesystem::path* Nsys2024::path_ = nullptr;
Trace* Nsys2024::trace_ = nullptr;

TEST_F(Nsys2024, IsRecognizedByContentNotName) {
  EXPECT_TRUE(is_sqlite_file(*path_));
  const auto renamed = *dir_ / "report.json";  // a misleading name changes nothing
  std::filesystem::copy_file(*path_, renamed);
  EXPECT_EQ(read_trace(renamed).api_calls.size(), t().api_calls.size());
  EXPECT_FALSE(is_sqlite_file(test::fixture("torch/item_loop_l8_h200.json.gz")));
}

TEST_F(Nsys2024, Metadata) {
  EXPECT_EQ(t().meta.source_tool, "nsys");
  EXPECT_EQ(t().meta.source_version, "2024.6.2.225");
  EXPECT_EQ(t().meta.extra.at("nsys.EXPORT_SCHEMA_VERSION"), "3.16.1");
  EXPECT_EQ(t().meta.extra.at("nsys.metadata_table"), "META_DATA_EXPORT");
  EXPECT_EQ(t().meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(t().meta.base_time_ns, kSessionUtc);
  EXPECT_EQ(t().meta.trace_name, "nsys_2024_6.sqlite");
}

TEST_F(Nsys2024, ApiCallsRuntimeAndDriverFromOneTable) {
  ASSERT_EQ(t().api_calls.size(), 16u);
  const ApiCall& launch = call(101);
  EXPECT_EQ(launch.kind, ApiKind::Runtime);
  EXPECT_EQ(t().str(launch.name), "cudaLaunchKernel");  // nsys's "_v7000" removed
  EXPECT_EQ(launch.pid, 4242);
  EXPECT_EQ(launch.tid, 4242);
  EXPECT_EQ(launch.start, at(1010000));
  EXPECT_EQ(launch.end, at(1015000));
  EXPECT_EQ(t().str(call(102).name), "cudaMemcpyAsync_ptsz");  // per-thread form kept
  EXPECT_EQ(call(206).return_code, 600);                       // cudaErrorNotReady from the query
  const ApiCall& driver = call(208);
  EXPECT_EQ(driver.kind, ApiKind::Driver);
  EXPECT_EQ(t().str(driver.name), "cuMemcpyDtoH_v2");  // the driver's real _v2 stays
  const ApiCall& other_thread = call(209);
  EXPECT_EQ(other_thread.kind, ApiKind::Driver);
  EXPECT_EQ(t().str(other_thread.name), "cuStreamSynchronize");
  EXPECT_EQ(other_thread.tid, 4250);
  EXPECT_EQ(other_thread.pid, 4242);
}

TEST_F(Nsys2024, Kernels) {
  ASSERT_EQ(t().kernels.size(), 4u);
  const Kernel& k = t().kernels[0];  // sorted by start
  EXPECT_EQ(t().str(k.name), "void gemm_kernel<float, 128>(const float *, float *, int)");
  EXPECT_EQ(t().str(k.mangled_name), "_Z11gemm_kernelIfLi128EEvPKfPfi");
  EXPECT_EQ(k.device, 0);
  EXPECT_EQ(k.context, 1u);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.correlation, 101u);
  EXPECT_EQ(k.start, at(1020000));
  EXPECT_EQ(k.end, at(1300000));
  EXPECT_EQ(k.grid[0], 256);
  EXPECT_EQ(k.block[0], 128);
  EXPECT_EQ(k.registers_per_thread, 64);
  EXPECT_EQ(k.shared_memory_bytes, 1024 + 2048);
  const Kernel& ln = t().kernels[3];
  EXPECT_EQ(t().str(ln.name), "layer_norm_kernel");
  EXPECT_EQ(ln.mangled_name, kNoString);  // mangledName NULL
  EXPECT_EQ(ln.stream, 13);
}

TEST_F(Nsys2024, CopiesWithDirectionAndMemoryKinds) {
  ASSERT_EQ(t().memcpys.size(), 3u);
  const Memcpy& d2h = t().memcpys[0];
  EXPECT_EQ(d2h.kind, CopyKind::DtoH);
  EXPECT_EQ(d2h.src_kind, MemoryKind::Device);
  EXPECT_EQ(d2h.dst_kind, MemoryKind::Pageable);  // nsys numbers pageable 0
  EXPECT_EQ(d2h.bytes, 4u);
  EXPECT_TRUE(d2h.async);  // from its call, cudaMemcpyAsync_ptsz
  const Memcpy& h2d = t().memcpys[1];
  EXPECT_EQ(h2d.kind, CopyKind::HtoD);
  EXPECT_EQ(h2d.src_kind, MemoryKind::Pinned);
  EXPECT_EQ(h2d.dst_kind, MemoryKind::Device);
  EXPECT_EQ(h2d.bytes, 1048576u);
  EXPECT_EQ(h2d.stream, 13);
  EXPECT_TRUE(h2d.async);
  const Memcpy& sync_copy = t().memcpys[2];
  EXPECT_EQ(sync_copy.kind, CopyKind::DtoH);
  EXPECT_EQ(sync_copy.dst_kind, MemoryKind::Pinned);
  EXPECT_FALSE(sync_copy.async);  // cudaMemcpy
  ASSERT_EQ(t().memsets.size(), 1u);
  EXPECT_EQ(t().memsets[0].bytes, 256u);
  EXPECT_EQ(t().memsets[0].memory_kind, MemoryKind::Device);
  EXPECT_TRUE(t().memsets[0].async);
  EXPECT_EQ(t().memsets[0].start, at(1720000));
}

TEST_F(Nsys2024, SyncRecordsTypedByTheirApiCall) {
  ASSERT_EQ(t().syncs.size(), 6u);
  auto rec = [&](std::uint64_t corr) -> const SyncRecord& {
    return *std::find_if(t().syncs.begin(), t().syncs.end(),
                         [&](const SyncRecord& s) { return s.correlation == corr; });
  };
  EXPECT_EQ(rec(103).type, SyncType::StreamSync);
  EXPECT_EQ(rec(103).stream, 7);
  EXPECT_EQ(rec(106).type, SyncType::ContextSync);
  EXPECT_EQ(rec(106).stream, -1);  // 4294967295: not applicable
  EXPECT_EQ(rec(203).type, SyncType::EventSync);
  EXPECT_EQ(rec(203).event_id, 17u);
  EXPECT_EQ(rec(204).type, SyncType::StreamWaitEvent);
  EXPECT_TRUE(rec(206).is_query);
  EXPECT_FALSE(rec(203).is_query);
  EXPECT_EQ(rec(209).type, SyncType::StreamSync);  // the driver's cuStreamSynchronize
  ASSERT_EQ(t().cuda_events.size(), 1u);
  EXPECT_EQ(t().cuda_events[0].event_id, 17u);
  EXPECT_EQ(t().cuda_events[0].timestamp, at(2016000));  // no device timestamp: the record call's
}

TEST_F(Nsys2024, NvtxRanges) {
  auto range = [&](std::string_view name) -> const Range* {
    for (const auto& r : t().ranges)
      if (t().str(r.name) == name) return &r;
    return nullptr;
  };
  const Range* step = range("ProfilerStep#1");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->kind, RangeKind::NvtxPushPop);
  EXPECT_EQ(step->start, at(1000000));
  EXPECT_EQ(step->end, at(2000000));
  EXPECT_EQ(step->pid, 4242);
  EXPECT_EQ(step->tid, 4242);
  EXPECT_EQ(step->depth, 0);
  // torch.autograd.profiler.emit_nvtx's op ranges are ops, named without "seq = ...".
  const Range* item = range("aten::item");
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind, RangeKind::CpuOp);
  ASSERT_NE(range("aten::_local_scalar_dense"), nullptr);
  EXPECT_EQ(range("aten::_local_scalar_dense")->kind, RangeKind::CpuOp);
  // In a domain of its own a range is the user's, whatever its name.
  const Range* fake = range("aten::fake");
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->kind, RangeKind::NvtxPushPop);
  EXPECT_EQ(t().str(fake->domain), "my_domain");
  const Range* loading = range("data_loading");
  ASSERT_NE(loading, nullptr);
  EXPECT_EQ(loading->kind, RangeKind::NvtxStartEnd);
  EXPECT_EQ(loading->tid, 4250);
  EXPECT_NE(range("registered_range"), nullptr);  // text through textId -> StringIds
  EXPECT_EQ(range("never_ends"), nullptr);
  EXPECT_EQ(range("a mark"), nullptr);
  EXPECT_EQ(range("my_domain"), nullptr);
  EXPECT_EQ(t().ranges.size(), 9u);
  // The unterminated range is counted, not silently lost.
  ASSERT_EQ(t().meta.warnings.size(), 1u);
  EXPECT_EQ(t().meta.warnings[0], "1 rows of NVTX_EVENTS skipped: a range that never ended (no end time)");
}

TEST_F(Nsys2024, ProcessesThreadsAndDevices) {
  auto named = [&](const std::string& pid, const std::string& tid) -> std::string {
    for (const auto& n : t().track_names)
      if (n.pid == pid && n.tid == tid) return n.name;
    return "<none>";
  };
  EXPECT_EQ(named("4242", ""), "python3");
  EXPECT_EQ(named("4242", "4242"), "python3");
  EXPECT_EQ(named("4242", "4250"), "pt_autograd_0");
  ASSERT_EQ(t().devices.size(), 1u);
  const DeviceProperties& d = t().devices[0];
  EXPECT_EQ(d.id, 0);
  EXPECT_EQ(d.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.compute_major, 9);
  EXPECT_EQ(d.compute_minor, 0);
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.total_memory_bytes, 85520809984u);
  EXPECT_EQ(d.warp_size, 32);
  EXPECT_EQ(d.max_threads_per_sm, 64 * 32);
  EXPECT_EQ(d.shared_mem_per_block_optin, 232448);
  EXPECT_EQ(t().meta.extra.at("nsys.gpu0.integrated"), "false");
}

TEST_F(Nsys2024, MemoryImageReadsTheSame) {
  const Trace m = read_nsys_sqlite_memory(test::slurp_file(*path_), "image");
  EXPECT_EQ(m.api_calls.size(), t().api_calls.size());
  EXPECT_EQ(m.kernels.size(), t().kernels.size());
  EXPECT_EQ(m.ranges.size(), t().ranges.size());
  EXPECT_EQ(m.kernels[0].start, t().kernels[0].start);
}

TEST_F(Nsys2024, TheFileIsNotModified) {
  const std::string before = test::slurp_file(*path_);
  const auto mtime = std::filesystem::last_write_time(*path_);
  (void)read_trace(*path_);
  EXPECT_EQ(test::slurp_file(*path_), before);
  EXPECT_EQ(std::filesystem::last_write_time(*path_), mtime);
  for (const char* side : {"-journal", "-wal", "-shm"})
    EXPECT_FALSE(std::filesystem::exists(path_->string() + side)) << side;
}

}  // namespace
}  // namespace syncscope
