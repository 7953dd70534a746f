// calibrate --from-trace on a hand-built trace whose every host and GPU interval is known,
// on bad input, and on every trace fixture of the repository.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "syncscope/calibrate/trace_calibration.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "test_paths.hpp"

using namespace syncscope;

namespace {

constexpr Ns us = 1000;

// One host thread; per step three layers, each (times in us from the layer's push at t):
//   [t+10, t+40] aten::mm: cudaLaunchKernel [t+25, t+30] -> kernel "k_mm" [t+33, t+43]
//   [t+43, t+48] aten::empty (launches nothing)
//   [t+50, t+67] aten::item: cudaMemcpyAsync [t+52, t+56] -> 4-byte D2H copy [t+58, t+60],
//                cudaStreamSynchronize [t+56, t+65] (returns 5 us after the copy ends)
//   the layer range ends at t+70; the next pushes at t+72; the step ends 4 us after the last.
// So: mm costs 10 (gap) + 15 before its launch and 10 after; empty 3 + 5; item 2 + 2 before,
// 2 after (67 - 52 - 4 - 9); pushes 0 (first) or 2, pops 3 and the step's own 4; the launch
// calls 5 and 4 us; kernel latency 8 us, copy latency 6 us; round trip 5 us.
struct Builder {
  Trace t;
  std::uint64_t corr = 1;
  Range& range(RangeKind k, const std::string& name, Ns a, Ns b) {
    Range r;
    r.kind = k;
    r.name = t.intern(name);
    r.pid = 10;
    r.tid = 11;
    r.start = a;
    r.end = b;
    t.ranges.push_back(r);
    return t.ranges.back();
  }
  void api(const std::string& name, Ns a, Ns b, std::uint64_t c) {
    ApiCall x;
    x.name = t.intern(name);
    x.pid = 10;
    x.tid = 11;
    x.start = a;
    x.end = b;
    x.correlation = c;
    x.device = 0;
    t.api_calls.push_back(x);
  }
};

Trace hand_trace(int steps, bool with_gpu = true, bool with_syncs = true) {
  Builder b;
  Ns t = 1000 * us;
  for (int s = 0; s < steps; ++s) {
    const Ns step_start = t;
    for (int l = 0; l < 3; ++l) {
      b.range(RangeKind::UserAnnotation, "layer_" + std::to_string(l), t, t + 70 * us);
      b.range(RangeKind::CpuOp, "aten::mm", t + 10 * us, t + 40 * us);
      const std::uint64_t ck = b.corr++;
      b.api("cudaLaunchKernel", t + 25 * us, t + 30 * us, ck);
      if (with_gpu) {
        Kernel k;
        k.name = b.t.intern("void k_mm<float>(float*, int)");
        k.device = 0;
        k.stream = 7;
        k.start = t + 33 * us;
        k.end = t + 43 * us;
        k.correlation = ck;
        b.t.kernels.push_back(k);
      }
      b.range(RangeKind::CpuOp, "aten::empty", t + 43 * us, t + 48 * us);
      b.range(RangeKind::CpuOp, "aten::item", t + 50 * us, t + 67 * us);
      const std::uint64_t cc = b.corr++;
      b.api("cudaMemcpyAsync", t + 52 * us, t + 56 * us, cc);
      if (with_gpu) {
        Memcpy m;
        m.kind = CopyKind::DtoH;
        m.src_kind = MemoryKind::Device;
        m.dst_kind = MemoryKind::Pinned;
        m.async = true;
        m.bytes = 4;
        m.device = 0;
        m.stream = 7;
        m.start = t + 58 * us;
        m.end = t + 60 * us;
        m.correlation = cc;
        b.t.memcpys.push_back(m);
      }
      if (with_syncs) {
        const std::uint64_t cs = b.corr++;
        b.api("cudaStreamSynchronize", t + 56 * us, t + 65 * us, cs);
        SyncRecord r;
        r.type = SyncType::StreamSync;
        r.device = 0;
        r.stream = 7;
        r.start = t + 56 * us;
        r.end = t + 65 * us;
        r.correlation = cs;
        b.t.syncs.push_back(r);
      }
      t += 72 * us;
    }
    b.range(RangeKind::UserAnnotation, "ProfilerStep#" + std::to_string(s), step_start, t - 2 * us + 4 * us);
    t += 100 * us;
  }
  DeviceProperties d;
  d.id = 0;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.total_memory_bytes = 150109880320ULL;
  b.t.devices.push_back(d);
  b.t.track_names.push_back({"10", "", "train"});
  b.t.meta.source_tool = "test";
  b.t.finalize();
  return std::move(b.t);
}

calibrate::TraceCalibration fit(const Trace& t, bool base, int max_steps = 0) {
  calibrate::TraceCalibrationOptions o;
  o.max_steps = max_steps;
  if (base) {
    o.base = model::load_gpu_profile("H200");
    o.base_label = "H200";
  }
  o.date_utc = "2026-12-01T00:00:00Z";
  return calibrate::calibrate_from_traces({{"hand.json", "abc123", &t}}, o);
}

double value(const calibrate::TraceCalibration& c, const std::string& f) {
  const calibrate::FittedEstimate* e = c.find(f);
  if (!e) throw std::runtime_error("no estimate of " + f);
  return e->value.value;
}

std::string input_error(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TraceCalibration, Sha256MatchesTheStandardsVectors) {
  // FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional.pdf").
  EXPECT_EQ(calibrate::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(calibrate::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(calibrate::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1000000, 'a');
  EXPECT_EQ(calibrate::sha256_hex(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  test::TempDir dir;
  { std::ofstream(dir / "a.txt", std::ios::binary) << million; }
  EXPECT_EQ(calibrate::sha256_file((dir / "a.txt").string()), calibrate::sha256_hex(million));
  EXPECT_NE(input_error([&] { calibrate::sha256_file((dir / "missing").string()); }).find("missing"),
            std::string::npos);
}

TEST(TraceCalibration, EveryEstimateFromAHandBuiltTrace) {
  const Trace t = hand_trace(3);
  const calibrate::TraceCalibration c = fit(t, true);
  EXPECT_DOUBLE_EQ(value(c, "host_launch_op_ns"), (25.0 + 4.0) / 2 * us);  // mm and item, per-name medians
  EXPECT_DOUBLE_EQ(value(c, "host_after_launch_ns"), (10.0 + 2.0) / 2 * us);
  EXPECT_DOUBLE_EQ(value(c, "host_op_ns"), 8.0 * us);
  EXPECT_DOUBLE_EQ(value(c, "plain_ops_per_launch_op"), 0.5);
  EXPECT_DOUBLE_EQ(value(c, "launches_per_op"), 1.0);
  // Range boundaries: pushes 0, 2, 2 (median 2, 9 of them), pops 3, 3, 3 and the step's 4
  // (median 3, 12 of them).
  EXPECT_NEAR(value(c, "host_range_ns"), (2.0 * 9 + 3.0 * 12) / 21 * us, 1e-6);
  EXPECT_EQ(c.find("host_range_ns")->events, 21);
  EXPECT_DOUBLE_EQ(value(c, "launch_overhead_ns"), 4.5 * us);
  EXPECT_DOUBLE_EQ(value(c, "launch_latency_ns"), 8.0 * us);
  EXPECT_DOUBLE_EQ(value(c, "copy_latency_ns"), 6.0 * us);
  EXPECT_DOUBLE_EQ(value(c, "sync_round_trip_ns"), 5.0 * us);
  EXPECT_EQ(c.find("sync_round_trip_ns")->events, 9);
  EXPECT_DOUBLE_EQ(value(c, "kernel_floor_ns"), 10.0 * us);
  EXPECT_DOUBLE_EQ(value(c, "copy_floor_ns"), 2.0 * us);
  EXPECT_DOUBLE_EQ(value(c, "sm_count"), 132);
  // Every interval holds its value; identical events give exact intervals.
  for (const auto& e : c.estimates) {
    EXPECT_LE(e.value.lo, e.value.value) << e.field;
    EXPECT_GE(e.value.hi, e.value.value) << e.field;
  }
  // The kernel table: k_mm with its op's host time around the launch.
  ASSERT_EQ(c.profile.kernels.size(), 1u);
  EXPECT_EQ(c.profile.kernels[0].name, "k_mm<float>");
  EXPECT_EQ(c.profile.kernels[0].kernel_class, "other");
  EXPECT_DOUBLE_EQ(c.profile.kernels[0].median_ns, 10.0 * us);
  EXPECT_DOUBLE_EQ(c.profile.kernels[0].host_before_ns, 25.0 * us);
  EXPECT_DOUBLE_EQ(c.profile.kernels[0].host_after_ns, 10.0 * us);
  EXPECT_EQ(c.profile.kernels[0].host_events, 9);
  // What the trace cannot show came from the base, marked, and warned about.
  EXPECT_EQ(c.profile.bf16_flops_per_s, model::load_gpu_profile("H200").bf16_flops_per_s);
  EXPECT_NE(c.profile.sources.at("bf16_flops_per_s").find("from base profile H200"), std::string::npos);
  EXPECT_NE(c.profile.sources.at("sync_round_trip_ns").find("fitted from trace"), std::string::npos);
  bool warned = false;
  for (const auto& w : c.warnings) warned = warned || w.find("h2d_pinned_bytes_per_s") != std::string::npos;
  EXPECT_TRUE(warned);
  // Provenance.
  EXPECT_EQ(c.profile.provenance.at("trace_sha256"), "abc123");
  EXPECT_EQ(c.profile.provenance.at("gpu"), "NVIDIA H200");
  EXPECT_EQ(c.profile.provenance.at("base"), "H200");
  EXPECT_NE(c.profile.provenance.at("host_costs").find("C++"), std::string::npos);
  EXPECT_TRUE(c.profile.measured);
  EXPECT_EQ(c.profile.name, "nvidia-h200-fitted");
}

TEST(TraceCalibration, FirstStepsOnlyAndWarmUpSkipped) {
  Trace t = hand_trace(4);
  // Stretch step 0 to 3x: a warm-up step.
  for (auto& r : t.ranges)
    if (t.str(r.name) == "ProfilerStep#0") r.end = r.start + 3 * (r.end - r.start);
  const calibrate::TraceCalibration c = fit(t, true, 2);
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("2 of 4 'ProfilerStep#*' step ranges (ProfilerStep#0 skipped"), std::string::npos)
      << c.notes[0];
  EXPECT_EQ(c.find("sync_round_trip_ns")->events, 6);  // two steps of three layers
}

TEST(TraceCalibration, WithoutBaseTheMissingFieldsAreNamedWithTheirEvents) {
  const Trace t = hand_trace(2);
  const std::string e = input_error([&] { fit(t, false); });
  ASSERT_FALSE(e.empty());
  for (const char* f : {"h2d_pinned_bytes_per_s", "d2h_pinned_bytes_per_s", "dram_bytes_per_s", "bf16_flops_per_s"})
    EXPECT_NE(e.find(f), std::string::npos) << f << "\n" << e;
  EXPECT_NE(e.find("copies of >= 256 KiB"), std::string::npos) << e;
  EXPECT_NE(e.find("--base"), std::string::npos) << e;
  EXPECT_NE(e.find("NVIDIA H200"), std::string::npos) << e;
  EXPECT_EQ(e.find("sync_round_trip_ns"), std::string::npos) << e;  // that one the trace gives
}

TEST(TraceCalibration, NoGpuRecordsOrNoSyncsTakeThoseFieldsFromTheBase) {
  const Trace no_gpu = hand_trace(2, false, true);
  const calibrate::TraceCalibration a = fit(no_gpu, true);
  for (const char* f : {"launch_overhead_ns", "launch_latency_ns", "sync_round_trip_ns", "kernel_floor_ns"}) {
    EXPECT_EQ(a.find(f), nullptr) << f;
    bool warned = false;
    for (const auto& w : a.warnings) warned = warned || w.rfind(std::string(f) + ":", 0) == 0;
    EXPECT_TRUE(warned || std::string(f) == "kernel_floor_ns") << f;
  }
  EXPECT_EQ(a.profile.sync_round_trip_ns, model::load_gpu_profile("H200").sync_round_trip_ns);
  const std::string e = input_error([&] { fit(no_gpu, false); });
  EXPECT_NE(e.find("launch_overhead_ns: needs launch calls"), std::string::npos) << e;
  EXPECT_NE(e.find("sync_round_trip_ns: needs sync points"), std::string::npos) << e;

  const Trace no_syncs = hand_trace(2, true, false);
  const calibrate::TraceCalibration b = fit(no_syncs, true);
  EXPECT_EQ(b.find("sync_round_trip_ns"), nullptr);
  EXPECT_NE(b.find("launch_overhead_ns"), nullptr);
  EXPECT_NE(b.profile.sources.at("sync_round_trip_ns").find("from base profile H200"), std::string::npos);
}

TEST(TraceCalibration, EmptyTraceAndMixedGpusAreInputErrors) {
  Trace empty;
  empty.finalize();
  EXPECT_NE(input_error([&] { fit(empty, true); }).find("nothing to calibrate from"), std::string::npos);
  Trace a = hand_trace(1), b = hand_trace(1);
  b.devices[0].name = "NVIDIA B200";
  calibrate::TraceCalibrationOptions o;
  o.base = model::load_gpu_profile("H200");
  o.base_label = "H200";
  const std::string e = input_error([&] {
    calibrate::calibrate_from_traces({{"a.json", "", &a}, {"b.json", "", &b}}, o);
  });
  EXPECT_NE(e.find("one profile describes one GPU"), std::string::npos) << e;
}

TEST(TraceCalibration, FittedProfileRoundTripsThroughTheLoader) {
  const Trace t = hand_trace(2);
  const calibrate::TraceCalibration c = fit(t, true);
  test::TempDir dir;
  const auto path = dir / "fitted.yaml";
  write_file_atomic(path, model::gpu_profile_to_yaml(c.profile));
  const model::GpuProfile p = model::load_gpu_profile(path.string());
  EXPECT_EQ(p.name, c.profile.name);
  EXPECT_TRUE(p.measured);
  // The writer keeps 6 significant digits.
  auto same = [](double a, double b) { return std::abs(a - b) <= 1e-5 * std::abs(b); };
  EXPECT_TRUE(same(p.host_launch_op_ns, c.profile.host_launch_op_ns));
  EXPECT_TRUE(same(p.host_after_launch_ns, c.profile.host_after_launch_ns));
  EXPECT_TRUE(same(p.host_range_ns, c.profile.host_range_ns)) << p.host_range_ns;
  EXPECT_TRUE(same(p.copy_latency_ns, c.profile.copy_latency_ns));
  EXPECT_TRUE(same(p.plain_ops_per_launch_op, c.profile.plain_ops_per_launch_op));
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].name, "k_mm<float>");
  EXPECT_DOUBLE_EQ(p.kernels[0].host_before_ns, 25.0 * us);
  EXPECT_EQ(p.provenance, c.profile.provenance);
  EXPECT_EQ(p.sources, c.profile.sources);
  EXPECT_EQ(p.bf16_flops_per_s, c.profile.bf16_flops_per_s);
}

TEST(TraceCalibration, KernelKeysAndClasses) {
  EXPECT_EQ(calibrate::kernel_key(
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >(at::native::ReduceOp<"
                "float>)"),
            "at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >");
  EXPECT_EQ(calibrate::kernel_key("void f<(anon)::g(int)>(int, float)"), "f<(anon)::g(int)>");
  EXPECT_EQ(calibrate::kernel_key("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"),
            "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT");
  EXPECT_EQ(calibrate::kernel_class_of("cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>"), "gemm");
  EXPECT_EQ(calibrate::kernel_class_of("cublasLt::splitKreduce_kernel<32, 16>"), "reduce");
  EXPECT_EQ(calibrate::kernel_class_of("flash_fwd_kernel<Flash_fwd_kernel_traits>"), "attention");
  EXPECT_EQ(calibrate::kernel_class_of("at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float> >"),
            "elementwise");
  EXPECT_EQ(calibrate::kernel_class_of("my_custom_thing"), "other");
}

// Every trace fixture in the repository: calibrating either succeeds with values in physical
// ranges, or says what it lacks (an InputError naming fields and events). Files that are no
// readable trace (corrupt-on-purpose fixtures) are not calibrate's input.
TEST(TraceCalibration, EveryTraceFixtureSucceedsOrSaysWhatItLacks) {
  int fitted = 0, lacking = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(test::fixture(""))) {
    const std::string p = e.path().string();
    if (!e.is_regular_file() || !(p.ends_with(".json") || p.ends_with(".json.gz"))) continue;
    SCOPED_TRACE(p);
    Trace t;
    try {
      t = read_trace(p);
    } catch (const Error&) {
      continue;
    }
    calibrate::TraceCalibrationOptions o;
    o.date_utc = "test";
    const calibrate::TraceInput in{p, calibrate::sha256_file(p), &t};
    try {
      calibrate::calibrate_from_traces({in}, o);  // no base: succeeds only when the trace has it all
    } catch (const InputError& err) {
      const std::string what = err.what();
      const bool says =
          what.find("needs") != std::string::npos || what.find("nothing to calibrate from") != std::string::npos;
      EXPECT_TRUE(says) << what;
      ++lacking;
    }
    o.base = model::load_gpu_profile("H200");
    o.base_label = "H200";
    try {
      const calibrate::TraceCalibration c = calibrate::calibrate_from_traces({in}, o);
      ++fitted;
      auto within = [&](const char* f, double lo, double hi) {
        if (const auto* x = c.find(f)) {
          EXPECT_GE(x->value.value, lo) << f;
          EXPECT_LE(x->value.value, hi) << f;
          EXPECT_GE(x->events, 1) << f;
        }
      };
      within("sync_round_trip_ns", 100, 1e6);  // 0.1 us .. 1 ms
      within("launch_overhead_ns", 100, 1e6);
      within("launch_latency_ns", 0, 1e6);
      within("copy_latency_ns", 0, 1e6);
      within("host_launch_op_ns", 0, 1e7);  // up to 10 ms per op
      within("host_op_ns", 0, 1e7);
      within("host_range_ns", 0, 1e7);
      within("kernel_floor_ns", 100, 1e9);
      within("copy_floor_ns", 100, 1e8);
      within("h2d_pinned_bytes_per_s", 1e8, 1e12);  // 0.1 GB/s .. 1 TB/s
      within("d2h_pinned_bytes_per_s", 1e8, 1e12);
      within("sm_count", 1, 1000);
      EXPECT_FALSE(c.profile.provenance.at("trace_sha256").empty());
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find("nothing to calibrate from"), std::string::npos) << err.what();
    }
  }
  EXPECT_GE(fitted, 2);  // the H200 torch.profiler trace and the Kineto category fixture at least
  std::printf("fixtures: %d fitted with --base, %d lacking fields without it\n", fitted, lacking);
}

TEST(TraceCalibration, TheH200TraceGivesItsMeasuredFigures) {
  const std::string p = test::fixture("torch/item_loop_l8_h200.json.gz").string();
  const Trace t = read_trace(p);
  calibrate::TraceCalibrationOptions o;
  o.step_glob = "train_step#*";
  o.base = model::load_gpu_profile("H200");
  o.base_label = "H200";
  const calibrate::TraceCalibration c = calibrate::calibrate_from_traces({{p, calibrate::sha256_file(p), &t}}, o);
  // train_step#0 (5.8 ms, the profiler's start-up inside) is skipped as warm-up; steps 1-2.
  EXPECT_NE(c.notes[0].find("2 of 3"), std::string::npos) << c.notes[0];
  // Read off the trace by hand (tests/fixtures/torch/README.md): .item()'s sync returns
  // 4.2-4.9 us after its copy ends; launch calls take 6-10 us under the profiler; kernels
  // start ~9-11 us after their call; the 4-byte copy takes 1.41 us; the shortest kernels ~1 us.
  EXPECT_NEAR(value(c, "sync_round_trip_ns"), 4.5 * us, 0.4 * us);
  EXPECT_NEAR(value(c, "launch_overhead_ns"), 8.0 * us, 1.0 * us);
  EXPECT_NEAR(value(c, "launch_latency_ns"), 9.9 * us, 1.0 * us);
  EXPECT_NEAR(value(c, "copy_floor_ns"), 1.41 * us, 0.05 * us);
  EXPECT_NEAR(value(c, "kernel_floor_ns"), 1.0 * us, 0.1 * us);
  EXPECT_EQ(c.profile.sm_count, 132);
  EXPECT_EQ(c.profile.provenance.at("trace_sha256").size(), 64u);
  EXPECT_NE(c.profile.provenance.at("host_costs").find("eager Python"), std::string::npos);
}
