// decode_activity_buffer on synthetic CUPTI buffers: every record kind the tracer enables,
// every synchronization type, the joins finish() makes, and what it does with kinds it does
// not model and with malformed buffers. cuptiActivityGetNextRecord iterates these without
// a GPU (docs/sources.md#verified-cuda-cupti, "Verified on our CPU machines").
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "activity_decoder.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/tracer/tracer.hpp"

namespace syncscope::cupti_detail {
namespace {

// 8-byte aligned storage for records laid out as CUPTI lays them out.
class Buffer {
 public:
  template <class T>
  void add(const T& record) {
    static_assert(sizeof(T) % 8 == 0, "CUPTI records are 8-byte multiples");
    const std::size_t off = words_.size() * 8;
    words_.resize(words_.size() + sizeof(T) / 8);
    std::memcpy(reinterpret_cast<std::uint8_t*>(words_.data()) + off, &record, sizeof(T));
  }
  const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(words_.data()); }
  std::size_t size() const { return words_.size() * 8; }

 private:
  std::vector<std::uint64_t> words_;
};

template <class T>
T record(CUpti_ActivityKind kind) {
  T r;
  std::memset(&r, 0, sizeof r);
  r.kind = kind;
  return r;
}

KernelRecord kernel(const char* name, std::uint32_t corr, std::uint64_t start, std::uint64_t end) {
  auto k = record<KernelRecord>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.name = name;
  k.correlationId = corr;
  k.start = start;
  k.end = end;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  return k;
}

ApiRecord api(CUpti_ActivityKind kind, std::uint32_t cbid, std::uint32_t corr, std::uint64_t start, std::uint64_t end,
              std::uint32_t tid = 42) {
  auto a = record<ApiRecord>(kind);
  a.cbid = cbid;
  a.correlationId = corr;
  a.start = start;
  a.end = end;
  a.processId = 1000;
  a.threadId = tid;
  return a;
}

SyncRecordT sync(CUpti_ActivitySynchronizationType type, std::uint32_t corr, std::uint64_t start, std::uint64_t end) {
  auto s = record<SyncRecordT>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  s.type = type;
  s.correlationId = corr;
  s.start = start;
  s.end = end;
  s.contextId = 1;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return s;
}

MarkerRecord marker(std::uint32_t id, CUpti_ActivityFlag flags, std::uint64_t ts, const char* name,
                    CUpti_ActivityObjectKind object = CUPTI_ACTIVITY_OBJECT_THREAD, const char* domain = nullptr) {
  auto m = record<MarkerRecord>(CUPTI_ACTIVITY_KIND_MARKER);
  m.id = id;
  m.flags = flags;
  m.timestamp = ts;
  m.name = name;
  m.domain = domain;
  m.objectKind = object;
  m.objectId.pt.processId = 1000;
  m.objectId.pt.threadId = object == CUPTI_ACTIVITY_OBJECT_THREAD ? 42 : 0;
  return m;
}

Trace decode(const Buffer& b, std::uint64_t* n = nullptr) {
  TraceBuilder builder;
  const std::uint64_t count = decode_activity_buffer(b.data(), b.size(), builder);
  if (n) *n = count;
  return builder.finish();
}

TEST(CuptiRecordLayout, NewestStructsOfTheseHeaders) {
  // docs/sources.md#cupti-13: CUDA 13.0 (CUPTI_API_VERSION 130001) has Kernel10 of 216 bytes and
  // Synchronization2 of 56 bytes; newer headers pick newer structs (activity_decoder.hpp).
#if CUPTI_API_VERSION < 130100
  static_assert(std::is_same_v<KernelRecord, CUpti_ActivityKernel10>);
  EXPECT_EQ(sizeof(KernelRecord), 216u);
#endif
#if CUPTI_API_VERSION < 130400
  static_assert(std::is_same_v<MemcpyRecord, CUpti_ActivityMemcpy6>);
  static_assert(std::is_same_v<MemsetRecord, CUpti_ActivityMemset4>);
#endif
#if CUPTI_API_VERSION < 130500
  static_assert(std::is_same_v<CudaEventRecordT, CUpti_ActivityCudaEvent2>);
#endif
  EXPECT_EQ(sizeof(SyncRecordT), 56u);
}

TEST(CuptiDecoder, EmptyAndNullBuffersDecodeNothing) {
  TraceBuilder b;
  EXPECT_EQ(decode_activity_buffer(nullptr, 100, b), 0u);
  Buffer empty;
  EXPECT_EQ(decode_activity_buffer(empty.data(), 0, b), 0u);
  Trace t = b.finish();
  EXPECT_EQ(t.record_count(), 0u);
  EXPECT_EQ(t.meta.source_tool, "syncscope-tracer");
  EXPECT_EQ(t.meta.clock, ClockBase::UnixEpoch);
  EXPECT_EQ(t.meta.dropped_records, 0u);
}

TEST(CuptiDecoder, KernelFieldByField) {
  Buffer b;
  auto k = kernel("_Z6squarePfi", 11, 1'000, 5'000);
  k.gridX = 64;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 32;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 4096;
  k.deviceId = 3;
  k.contextId = 9;
  k.streamId = 13;
  b.add(k);
  b.add(kernel("triton_poi_fused_add_0", 12, 6'000, 7'000));  // not mangled: kept as is
  std::uint64_t n = 0;
  Trace t = decode(b, &n);
  EXPECT_EQ(n, 2u);
  ASSERT_EQ(t.kernels.size(), 2u);
  const Kernel& a = t.kernels[0];
  EXPECT_EQ(t.str(a.name), "square(float*, int)");
  EXPECT_EQ(t.str(a.mangled_name), "_Z6squarePfi");
  EXPECT_EQ(a.device, 3);
  EXPECT_EQ(a.context, 9u);
  EXPECT_EQ(a.stream, 13);
  EXPECT_EQ(a.start, 1'000);
  EXPECT_EQ(a.end, 5'000);
  EXPECT_EQ(a.correlation, 11u);
  EXPECT_EQ(a.grid[0], 64);
  EXPECT_EQ(a.grid[1], 2);
  EXPECT_EQ(a.grid[2], 1);
  EXPECT_EQ(a.block[0], 256);
  EXPECT_EQ(a.registers_per_thread, 32);
  EXPECT_EQ(a.shared_memory_bytes, 1024 + 4096);
  const Kernel& c = t.kernels[1];
  EXPECT_EQ(t.str(c.name), "triton_poi_fused_add_0");
  EXPECT_EQ(c.mangled_name, kNoString);
}

TEST(CuptiDecoder, RecordsWithoutTimestampsAreCountedNotKept) {
  Buffer b;
  b.add(kernel("k", 1, 0, 0));
  b.add(kernel("k", 2, 10, 20));
  Trace t = decode(b);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].correlation, 2u);
  EXPECT_EQ(t.meta.extra.at("records_without_timestamps"), "1");
}

TEST(CuptiDecoder, MemcpyKindsMemoryKindsAndCorrelation) {
  Buffer b;
  auto d2h = record<MemcpyRecord>(CUPTI_ACTIVITY_KIND_MEMCPY);
  d2h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  d2h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  d2h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  d2h.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  d2h.bytes = 4096;
  d2h.start = 100;
  d2h.end = 300;
  d2h.deviceId = 1;
  d2h.contextId = 2;
  d2h.streamId = 7;
  d2h.correlationId = 51;         // the nested driver call
  d2h.runtimeCorrelationId = 50;  // the cudaMemcpyAsync
  b.add(d2h);
  auto h2d = d2h;
  h2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  h2d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  h2d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h2d.flags = 0;
  h2d.correlationId = 60;
  h2d.runtimeCorrelationId = 0;  // issued through the driver API directly
  h2d.start = 400;
  h2d.end = 500;
  b.add(h2d);
  auto other = d2h;
  other.start = 600;
  other.end = 700;
  for (auto [ck, expected] : {std::pair{CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, CopyKind::DtoD},
                              std::pair{CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, CopyKind::DtoH},
                              std::pair{CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, CopyKind::HtoD},
                              std::pair{CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, CopyKind::HtoH},
                              std::pair{CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CopyKind::Unknown}}) {
    (void)expected;
    other.copyKind = static_cast<std::uint8_t>(ck);
    other.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
    other.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
    other.start += 1000;
    other.end += 1000;
    b.add(other);
  }
  Trace t = decode(b);
  ASSERT_EQ(t.memcpys.size(), 7u);
  const Memcpy& a = t.memcpys[0];
  EXPECT_EQ(a.kind, CopyKind::DtoH);
  EXPECT_EQ(a.src_kind, MemoryKind::Device);
  EXPECT_EQ(a.dst_kind, MemoryKind::Pageable);
  EXPECT_TRUE(a.async);
  EXPECT_EQ(a.bytes, 4096u);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.context, 2u);
  EXPECT_EQ(a.stream, 7);
  EXPECT_EQ(a.start, 100);
  EXPECT_EQ(a.end, 300);
  EXPECT_EQ(a.correlation, 50u) << "a runtime-issued copy carries the runtime call's correlation id";
  const Memcpy& c = t.memcpys[1];
  EXPECT_EQ(c.kind, CopyKind::HtoD);
  EXPECT_EQ(c.src_kind, MemoryKind::Pinned);
  EXPECT_EQ(c.dst_kind, MemoryKind::Device);
  EXPECT_FALSE(c.async);
  EXPECT_EQ(c.correlation, 60u);
  const CopyKind expected[] = {CopyKind::DtoD, CopyKind::DtoH, CopyKind::HtoD, CopyKind::HtoH, CopyKind::Unknown};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.memcpys[2 + i].kind, expected[i]) << i;
    EXPECT_EQ(t.memcpys[2 + i].src_kind, MemoryKind::Managed);
    EXPECT_EQ(t.memcpys[2 + i].dst_kind, MemoryKind::Device);
  }
}

TEST(CuptiDecoder, PeerCopiesFromMemcpy2) {
  Buffer b;
  auto p = record<PeerCopyRecord>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.bytes = 1 << 20;
  p.start = 10;
  p.end = 90;
  p.deviceId = 0;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.contextId = 1;
  p.streamId = 3;
  p.correlationId = 77;
  b.add(p);
  auto q = p;  // a DtoD between two devices is a peer copy as well
  q.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  q.deviceId = 1;
  q.srcDeviceId = 0;
  q.dstDeviceId = 1;
  q.start = 100;
  q.end = 120;
  b.add(q);
  Trace t = decode(b);
  ASSERT_EQ(t.memcpys.size(), 2u);
  EXPECT_EQ(t.memcpys[0].kind, CopyKind::PtoP);
  EXPECT_EQ(t.memcpys[0].device, 0);
  EXPECT_EQ(t.memcpys[0].peer_device, 1);
  EXPECT_EQ(t.memcpys[0].bytes, 1u << 20);
  EXPECT_EQ(t.memcpys[0].correlation, 77u);
  EXPECT_EQ(t.memcpys[1].kind, CopyKind::PtoP);
  EXPECT_EQ(t.memcpys[1].device, 1);
  EXPECT_EQ(t.memcpys[1].peer_device, 0);
}

TEST(CuptiDecoder, Memset) {
  Buffer b;
  auto m = record<MemsetRecord>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.value = 0xab;
  m.bytes = 1 << 16;
  m.start = 5;
  m.end = 25;
  m.deviceId = 2;
  m.contextId = 4;
  m.streamId = 9;
  m.correlationId = 31;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  b.add(m);
  Trace t = decode(b);
  ASSERT_EQ(t.memsets.size(), 1u);
  const Memset& s = t.memsets[0];
  EXPECT_EQ(s.value, 0xabu);
  EXPECT_EQ(s.bytes, 1u << 16);
  EXPECT_EQ(s.memory_kind, MemoryKind::Device);
  EXPECT_TRUE(s.async);
  EXPECT_EQ(s.device, 2);
  EXPECT_EQ(s.context, 4u);
  EXPECT_EQ(s.stream, 9);
  EXPECT_EQ(s.start, 5);
  EXPECT_EQ(s.end, 25);
  EXPECT_EQ(s.correlation, 31u);
}

TEST(CuptiDecoder, MemsetNamesTheRuntimeCallThroughItsTracedDriverCall) {
  // A memset record carries the driver call's correlation id only (cupti_activity.h,
  // CUpti_ActivityMemset4). cudaMemsetAsync [100, 200] runs cuMemsetD8Async [120, 180]
  // inside it; with the driver call traced, the memset ends up naming the runtime call.
  Buffer b;
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, 40, 100, 200, 7));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async, 41, 120, 180, 7));
  auto m = record<MemsetRecord>(CUPTI_ACTIVITY_KIND_MEMSET);
  m.bytes = 64;
  m.start = 300;
  m.end = 310;
  m.contextId = 1;
  m.streamId = 7;
  m.correlationId = 41;
  b.add(m);
  Trace t = decode(b);
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.str(t.api_calls[0].name), "cudaMemsetAsync");
  ASSERT_EQ(t.memsets.size(), 1u);
  EXPECT_EQ(t.memsets[0].correlation, 40u);
}

TEST(CuptiDecoder, ApiCallsAreNamedAndLinkedToTheirKernels) {
  Buffer b;
  // Kernel records usually arrive before the launch's API record (written at API exit).
  b.add(kernel("_Z4stepv", 515, 2'000, 9'000));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 515, 1'000, 1'500));
  auto ss = api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 516, 1'600, 9'100);
  ss.returnValue = 0;
  b.add(ss);
  auto pt =
      api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000, 517, 9'200, 9'300);
  pt.returnValue = 700;  // an error code is kept as is
  b.add(pt);
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2, 518, 9'400, 9'500));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 519, 9'600, 9'700));
  Trace t = decode(b);
  ASSERT_EQ(t.api_calls.size(), 5u);
  const ApiCall& launch = t.api_calls[0];
  EXPECT_EQ(launch.kind, ApiKind::Runtime);
  EXPECT_EQ(t.str(launch.name), "cudaLaunchKernel");
  EXPECT_EQ(launch.cbid, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
  EXPECT_EQ(launch.pid, 1000);
  EXPECT_EQ(launch.tid, 42);
  EXPECT_EQ(launch.start, 1'000);
  EXPECT_EQ(launch.end, 1'500);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].correlation, launch.correlation);
  EXPECT_EQ(t.str(t.api_calls[1].name), "cudaStreamSynchronize");
  EXPECT_EQ(t.api_calls[1].cbid, 131);  // docs/sources.md#cupti-13
  EXPECT_EQ(t.str(t.api_calls[2].name), "cudaStreamSynchronize_ptsz");
  EXPECT_EQ(t.api_calls[2].return_code, 700);
  EXPECT_EQ(t.api_calls[3].kind, ApiKind::Driver);
  EXPECT_EQ(t.str(t.api_calls[3].name), "cuCtxSynchronize_v2");
  EXPECT_EQ(t.str(t.api_calls[4].name), "cuLaunchKernel");
}

TEST(CuptiDecoder, DriverCallsInsideRuntimeCallsAreDroppedAndTheirGpuWorkRelinked) {
  Buffer b;
  // cudaLaunchKernel [100, 200] on thread 7 runs cuLaunchKernel [120, 180] inside it; the
  // kernel names the inner call's correlation id.
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 11, 120, 180, 7));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 10, 100, 200, 7));
  b.add(kernel("k", 11, 300, 400));
  // A driver sync nested in cudaStreamSynchronize would count twice: dropped too.
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 12, 510, 590, 7));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 12, 500, 600, 7));
  // Direct driver calls (Triton's launches), on another thread or outside runtime calls: kept.
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 13, 150, 160, 8));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 14, 700, 710, 7));
  Trace t = decode(b);
  ASSERT_EQ(t.api_calls.size(), 4u);
  std::vector<std::uint64_t> corr;
  for (const auto& a : t.api_calls) corr.push_back(a.correlation);
  EXPECT_EQ(corr, (std::vector<std::uint64_t>{10, 13, 12, 14}));
  EXPECT_EQ(t.api_calls[2].kind, ApiKind::Runtime);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].correlation, 10u);
  EXPECT_EQ(t.meta.extra.at("nested_driver_calls_dropped"), "2");
}

TEST(CuptiDecoder, EverySynchronizationType) {
  Buffer b;
  b.add(kernel("k", 1, 1, 2));  // context 1 runs on device 0
  auto es = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 20, 100, 200);
  es.cudaEventId = 5;
  es.cudaEventSyncId = 900;
  b.add(es);
  auto swe = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 21, 210, 211);
  swe.streamId = 14;
  swe.cudaEventId = 5;
  swe.cudaEventSyncId = 901;
  b.add(swe);
  auto ss = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 22, 300, 400);
  ss.streamId = 7;
  b.add(ss);
  auto cs = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 23, 500, 600);
  b.add(cs);
  auto unk = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN, 24, 700, 701);
  unk.contextId = 99;  // no record names this context's device
  b.add(unk);
  Trace t = decode(b);
  ASSERT_EQ(t.syncs.size(), 5u);
  const SyncRecord& a = t.syncs[0];
  EXPECT_EQ(a.type, SyncType::EventSync);
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(a.context, 1u);
  EXPECT_EQ(a.stream, -1);
  EXPECT_EQ(a.event_id, 5u);
  EXPECT_EQ(a.event_sync_id, 900u);
  EXPECT_EQ(a.start, 100);
  EXPECT_EQ(a.end, 200);
  EXPECT_EQ(a.correlation, 20u);
  EXPECT_FALSE(a.is_query);
  EXPECT_EQ(t.syncs[1].type, SyncType::StreamWaitEvent);
  EXPECT_EQ(t.syncs[1].stream, 14);
  EXPECT_EQ(t.syncs[2].type, SyncType::StreamSync);
  EXPECT_EQ(t.syncs[2].stream, 7);
  EXPECT_EQ(t.syncs[2].event_id, 0u);
  EXPECT_EQ(t.syncs[2].event_sync_id, 0u);
  EXPECT_EQ(t.syncs[3].type, SyncType::ContextSync);
  EXPECT_EQ(t.syncs[3].stream, -1);
  EXPECT_EQ(t.syncs[3].device, 0);
  EXPECT_EQ(t.syncs[4].type, SyncType::Unknown);
  EXPECT_EQ(t.syncs[4].device, -1);
}

TEST(CuptiDecoder, SyncRecordsWithoutTimestampsAreCountedNotKept) {
  // start = end = 0: "timestamps could not be collected" (cupti_activity.h). Kept, such a
  // record would sit at the epoch and stretch the trace's span over 56 years.
  Buffer b;
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 50, 0, 0));
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 51, 1'000, 2'000));
  Trace t = decode(b);
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs[0].correlation, 51u);
  EXPECT_EQ(t.meta.extra.at("records_without_timestamps"), "1");
  EXPECT_EQ(t.time_span().first, 1'000);
}

TEST(CuptiDecoder, QuerySyncRecordsAreMarkedFromTheirApiCall) {
  Buffer b;
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 30, 100, 101));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, 30, 99, 102));
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 31, 200, 201));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, 31, 199, 202));
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 32, 300, 400));
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 32, 299, 401));
  b.add(sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, 33, 500, 501));
  b.add(api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, 33, 499, 502, 99));
  Trace t = decode(b);
  ASSERT_EQ(t.syncs.size(), 4u);
  EXPECT_TRUE(t.syncs[0].is_query);
  EXPECT_TRUE(t.syncs[1].is_query);
  EXPECT_FALSE(t.syncs[2].is_query);
  EXPECT_TRUE(t.syncs[3].is_query);
}

TEST(CuptiDecoder, EventSyncsJoinTheirEventRecordBySyncIdNotByEventId) {
  // CUDA reuses event handles: event id 5 is recorded twice, on stream 3 then on stream 4.
  // Each synchronization names the record it waits for through cudaEventSyncId.
  Buffer b;
  auto rec = [&](std::uint32_t corr, std::uint32_t stream, std::uint64_t sync_id) {
    auto e = record<CudaEventRecordT>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    e.correlationId = corr;
    e.contextId = 1;
    e.deviceId = 2;
    e.streamId = stream;
    e.eventId = 5;
    e.cudaEventSyncId = sync_id;
    b.add(e);
  };
  rec(40, 3, 1001);
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 40, 1'000, 1'010));
  rec(41, 4, 1002);
  b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, 41, 2'000, 2'010));
  auto wait_first = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE, 42, 3'000, 3'500);
  wait_first.cudaEventId = 5;
  wait_first.cudaEventSyncId = 1001;
  b.add(wait_first);
  auto wait_second = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 43, 3'600, 3'610);
  wait_second.streamId = 8;
  wait_second.cudaEventId = 5;
  wait_second.cudaEventSyncId = 1002;
  b.add(wait_second);
  Trace t = decode(b);
  ASSERT_EQ(t.cuda_events.size(), 2u);
  EXPECT_EQ(t.cuda_events[0].timestamp, 1'000) << "no device timestamp: the cudaEventRecord call's start";
  EXPECT_EQ(t.cuda_events[0].device, 2);
  EXPECT_EQ(t.cuda_events[0].stream, 3);
  EXPECT_EQ(t.cuda_events[0].event_id, 5u);
  EXPECT_EQ(t.cuda_events[0].event_sync_id, 1001u);
  EXPECT_EQ(t.cuda_events[0].correlation, 40u);
  ASSERT_EQ(t.syncs.size(), 2u);
  EXPECT_EQ(t.syncs[0].wait_on_stream, 3);
  EXPECT_EQ(t.syncs[0].wait_on_event_record_correlation, 40);
  EXPECT_EQ(t.syncs[0].device, 2);
  EXPECT_EQ(t.syncs[1].wait_on_stream, 4);
  EXPECT_EQ(t.syncs[1].wait_on_event_record_correlation, 41);
  EXPECT_EQ(t.syncs[1].stream, 8);
}

TEST(CuptiDecoder, NvtxMarkersPairedByIdAcrossBuffers) {
  TraceBuilder builder;
  Buffer first;
  first.add(marker(1, CUPTI_ACTIVITY_FLAG_MARKER_START, 100, "step_0"));
  first.add(marker(2, CUPTI_ACTIVITY_FLAG_MARKER_START, 150, "layer_00"));
  first.add(marker(3, CUPTI_ACTIVITY_FLAG_MARKER_START, 160, "load", CUPTI_ACTIVITY_OBJECT_PROCESS, "io"));
  first.add(marker(9, CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 170, "tick"));
  first.add(marker(7, CUPTI_ACTIVITY_FLAG_MARKER_START, 180, "never closed"));
  Buffer second;
  second.add(marker(2, CUPTI_ACTIVITY_FLAG_MARKER_END, 250, nullptr));
  second.add(marker(1, CUPTI_ACTIVITY_FLAG_MARKER_END, 400, nullptr));
  second.add(marker(3, CUPTI_ACTIVITY_FLAG_MARKER_END, 500, nullptr, CUPTI_ACTIVITY_OBJECT_PROCESS));
  // An end that arrives before its start (records of different threads' buffers).
  second.add(marker(4, CUPTI_ACTIVITY_FLAG_MARKER_END, 900, nullptr));
  Buffer third;
  third.add(marker(4, CUPTI_ACTIVITY_FLAG_MARKER_START, 800, "late"));
  EXPECT_EQ(decode_activity_buffer(first.data(), first.size(), builder), 5u);
  EXPECT_EQ(decode_activity_buffer(second.data(), second.size(), builder), 4u);
  EXPECT_EQ(decode_activity_buffer(third.data(), third.size(), builder), 1u);
  Trace t = builder.finish();
  ASSERT_EQ(t.ranges.size(), 4u);
  const Range& step = t.ranges[0];
  EXPECT_EQ(t.str(step.name), "step_0");
  EXPECT_EQ(step.kind, RangeKind::NvtxPushPop);
  EXPECT_EQ(step.start, 100);
  EXPECT_EQ(step.end, 400);
  EXPECT_EQ(step.pid, 1000);
  EXPECT_EQ(step.tid, 42);
  EXPECT_EQ(step.depth, 0);
  const Range& layer = t.ranges[1];
  EXPECT_EQ(t.str(layer.name), "layer_00");
  EXPECT_EQ(layer.start, 150);
  EXPECT_EQ(layer.end, 250);
  EXPECT_EQ(layer.depth, 1);
  const Range& load = t.ranges[2];
  EXPECT_EQ(t.str(load.name), "load");
  EXPECT_EQ(load.kind, RangeKind::NvtxStartEnd);
  EXPECT_EQ(t.str(load.domain), "io");
  EXPECT_EQ(load.tid, -1);
  EXPECT_EQ(load.start, 160);
  EXPECT_EQ(load.end, 500);
  EXPECT_EQ(t.str(t.ranges[3].name), "late");
  EXPECT_EQ(t.ranges[3].start, 800);
  EXPECT_EQ(t.ranges[3].end, 900);
  EXPECT_EQ(t.meta.extra.at("nvtx_unpaired_markers"), "1");
  EXPECT_EQ(t.meta.extra.at("nvtx_instant_markers"), "1");
}

TEST(CuptiDecoder, Overhead) {
  Buffer b;
  auto o = record<OverheadRecordT>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  o.objectId.pt.processId = 1000;
  o.objectId.pt.threadId = 43;
  o.start = 10;
  o.end = 70;
  b.add(o);
  auto p = o;
  p.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
  p.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  p.start = 80;
  p.end = 90;
  b.add(p);
  Trace t = decode(b);
  ASSERT_EQ(t.overheads.size(), 2u);
  EXPECT_EQ(t.str(t.overheads[0].name), "CUPTI buffer flush");
  EXPECT_EQ(t.overheads[0].pid, 1000);
  EXPECT_EQ(t.overheads[0].tid, 43);
  EXPECT_EQ(t.overheads[0].start, 10);
  EXPECT_EQ(t.overheads[0].end, 70);
  EXPECT_EQ(t.str(t.overheads[1].name), "Activity buffer request");
  EXPECT_EQ(t.overheads[1].tid, -1);
}

TEST(CuptiDecoder, DeviceAndContextRecords) {
  Buffer b;
  auto d = record<DeviceRecord>(CUPTI_ACTIVITY_KIND_DEVICE);
  d.id = 0;
  d.name = "NVIDIA H200";
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.globalMemorySize = 143ull << 30;
  d.numMultiprocessors = 132;
  d.numThreadsPerWarp = 32;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxThreadsPerBlock = 1024;
  b.add(d);
  b.add(d);  // the same device twice: kept once
  auto c = record<ContextRecord>(CUPTI_ACTIVITY_KIND_CONTEXT);
  c.contextId = 5;
  c.deviceId = 1;
  b.add(c);
  auto s = sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 1, 10, 20);
  s.contextId = 5;
  b.add(s);
  Trace t = decode(b);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].compute_major, 9);
  EXPECT_EQ(t.devices[0].sm_count, 132);
  EXPECT_EQ(t.devices[0].max_threads_per_sm, 2048);
  EXPECT_EQ(t.devices[0].total_memory_bytes, 143ull << 30);
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs[0].device, 1);
}

TEST(CuptiDecoder, KindsNotModelledAreCountedAndDecodingGoesOn) {
  Buffer b;
  b.add(kernel("before", 1, 10, 20));
  auto st = record<CUpti_ActivityStream>(CUPTI_ACTIVITY_KIND_STREAM);
  st.contextId = 1;
  st.streamId = 7;
  b.add(st);
  b.add(st);
  b.add(kernel("after", 2, 30, 40));
  std::uint64_t n = 0;
  Trace t = decode(b, &n);
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(t.kernels.size(), 2u);
  const std::string key = "cupti:kind_" + std::to_string(static_cast<int>(CUPTI_ACTIVITY_KIND_STREAM));
  ASSERT_TRUE(t.meta.unknown_categories.count(key));
  EXPECT_EQ(t.meta.unknown_categories.at(key), 2u);
  EXPECT_EQ(t.meta.extra.at("unknown_records"), "2");
}

TEST(CuptiDecoder, MalformedBufferStopsThatBufferOnly) {
  TraceBuilder builder;
  Buffer bad;
  bad.add(kernel("kept", 1, 10, 20));
  auto junk = record<KernelRecord>(static_cast<CUpti_ActivityKind>(999));
  bad.add(junk);
  bad.add(kernel("unreachable", 2, 30, 40));
  EXPECT_EQ(decode_activity_buffer(bad.data(), bad.size(), builder), 1u);
  EXPECT_EQ(builder.stats().malformed_buffers, 1u);
  Buffer good;
  good.add(kernel("next buffer", 3, 50, 60));
  EXPECT_EQ(decode_activity_buffer(good.data(), good.size(), builder), 1u);
  // A record cut short by the valid size ends the buffer cleanly.
  EXPECT_EQ(decode_activity_buffer(good.data(), good.size() - 8, builder), 0u);
  Trace t = builder.finish();
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.str(t.kernels[0].name), "kept");
  EXPECT_EQ(t.str(t.kernels[1].name), "next buffer");
  EXPECT_EQ(t.meta.extra.at("malformed_buffers"), "1");
}

TEST(CuptiDecoder, DroppedRecordsReachTheMetadata) {
  TraceBuilder builder;
  builder.add_dropped_by_cupti(5);
  builder.add_dropped_by_cupti(2);
  builder.add_lost_to_cap(11);
  Trace t = builder.finish();
  EXPECT_EQ(t.meta.dropped_records, 18u);
  EXPECT_EQ(t.meta.extra.at("cupti_dropped_records"), "7");
  EXPECT_EQ(t.meta.extra.at("records_lost_to_buffer_cap"), "11");
  // finish() starts the builder over.
  Trace again = builder.finish();
  EXPECT_EQ(again.meta.dropped_records, 0u);
}

TEST(CuptiDecoder, CountMatchesDecode) {
  Buffer b;
  for (int i = 0; i < 50; ++i) {
    b.add(kernel("k", static_cast<std::uint32_t>(i), 10 + i, 20 + i));
    b.add(api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
              static_cast<std::uint32_t>(i), 5 + i, 6 + i));
  }
  TraceBuilder builder;
  EXPECT_EQ(count_activity_records(b.data(), b.size()), 100u);
  EXPECT_EQ(decode_activity_buffer(b.data(), b.size(), builder), 100u);
  EXPECT_EQ(builder.stats().by_kind.at("kernel"), 50u);
  EXPECT_EQ(builder.stats().by_kind.at("runtime"), 50u);
}

TEST(CuptiNames, RuntimeSuffixRemovedDriverKept) {
  EXPECT_EQ(runtime_api_display_name("cudaStreamSynchronize_v3020"), "cudaStreamSynchronize");
  EXPECT_EQ(runtime_api_display_name("cudaStreamSynchronize_ptsz_v7000"), "cudaStreamSynchronize_ptsz");
  EXPECT_EQ(runtime_api_display_name("cudaStreamGetCaptureInfo_v2_v11030"), "cudaStreamGetCaptureInfo_v2");
  EXPECT_EQ(runtime_api_display_name("cudaFoo_vX"), "cudaFoo_vX");
  EXPECT_EQ(runtime_api_display_name(nullptr), "");
  EXPECT_EQ(demangle("_ZN2at6native3fooIiEEvT_"), "void at::native::foo<int>(int)");  // as c++filt
  EXPECT_EQ(demangle("_Znot a name"), "_Znot a name");
  EXPECT_EQ(demangle("plain"), "plain");
}

TEST(TracerClock, UnixEpochNanoseconds) {
  const std::uint64_t a = now_unix_ns();
  const std::uint64_t b = now_unix_ns();
  EXPECT_LE(a, b);
  EXPECT_GT(a, 1'700'000'000ull * 1'000'000'000ull);  // after Nov 2023: epoch-based, in ns
}

TEST(TracerActivities, ParseAndPrint) {
  EXPECT_EQ(parse_activities("all"), kAllActivities);
  EXPECT_EQ(parse_activities("default"), kDefaultActivities);
  EXPECT_EQ(parse_activities("kernel, memcpy,sync"), kActivityKernel | kActivityMemcpy | kActivitySync);
  EXPECT_EQ(parse_activities("all,-overhead,-nvtx"), kAllActivities & ~(kActivityOverhead | kActivityNvtx));
  EXPECT_EQ(activities_to_string(kAllActivities), "all");
  EXPECT_EQ(activities_to_string(kActivityKernel | kActivityRuntime), "kernel,runtime");
  EXPECT_EQ(parse_activities(activities_to_string(kActivitySync | kActivityEvent)), kActivitySync | kActivityEvent);
  EXPECT_THROW(parse_activities("kernels"), InputError);
  EXPECT_THROW(parse_activities(""), InputError);
  EXPECT_THROW(parse_activities("kernel,-kernel"), InputError);
  try {
    parse_activities("kernel,bogus");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'bogus'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("memset"), std::string::npos);
  }
}

}  // namespace
}  // namespace syncscope::cupti_detail
