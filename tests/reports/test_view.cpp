// `syncscope view`'s page (reports/view.hpp) from hand-built traces: the structure a reader
// relies on (sync markers with their cause, a lane per host thread, stream and copy engine,
// the critical path, idle ours beside HTA's, no external URL, names escaped), the step
// chosen, HTA's idle rule worked out by hand, the level of detail on a big trace (bounded
// page, the busy time kept exactly, the sampling said), and jobs named, not merged.
#include <gtest/gtest.h>

#include <regex>

#include "../analysis/trace_builder.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/reports/view.hpp"

namespace syncscope {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

// Steps of `step_ns[i]` ns, each: a kernel launched at +1000 (runs +2000..+12000 on stream
// 7), a D2H copy launched at +13000 (runs +14000..+15000), then aten::item's
// cudaStreamSynchronize from +13500 to +15500, then a kernel launched at +20000 (+21000 ..).
Trace steps_trace(const std::vector<Ns>& step_ns, const std::string& kernel_name = "gemm_kernel") {
  test::TraceBuilder b;
  Ns t0 = 0;
  std::uint64_t corr = 1;
  for (std::size_t i = 0; i < step_ns.size(); ++i) {
    b.annotation("ProfilerStep#" + std::to_string(i), t0, t0 + step_ns[i]);
    b.api("cudaLaunchKernel", t0 + 1000, t0 + 1500, corr);
    b.kernel(0, 7, t0 + 2000, t0 + 12000, corr++).name = b.t.intern(kernel_name);
    b.cpu_op("aten::item", t0 + 12900, t0 + 15600);
    b.api("cudaMemcpyAsync", t0 + 13000, t0 + 13400, corr).copy_kind = CopyKind::DtoH;
    b.copy(CopyKind::DtoH, 0, 7, t0 + 14000, t0 + 15000, corr++);
    b.api("cudaStreamSynchronize", t0 + 13500, t0 + 15500);
    b.api("cudaLaunchKernel", t0 + 20000, t0 + 20500, corr);
    b.kernel(0, 7, t0 + 21000, t0 + 25000, corr++);
    t0 += step_ns[i];
  }
  return b.done();
}

TEST(View, PageHoldsSyncMarkersLanesCriticalPathAndNoExternalUrl) {
  ViewPage page;
  page.traces.push_back(build_view_trace(steps_trace({30000, 40000, 50000}, "k<&>\"kernel"), "a<b>.json"));
  const ViewTrace& v = page.traces.front();
  ASSERT_TRUE(v.has_step);
  ASSERT_EQ(v.syncs.size(), 1u);
  EXPECT_EQ(v.syncs.front().cause, "aten::item");
  const std::string html = render_view_html(page);
  // One marker per sync point of the step, naming its cause, blocked time and bubble.
  EXPECT_EQ(count(html, "<g class=\"sync-marker\""), 1u);
  EXPECT_NE(html.find("data-cause=\"aten::item\""), std::string::npos);
  EXPECT_NE(html.find("data-blocked-ns=\"" + std::to_string(v.syncs.front().blocked_ns) + "\""), std::string::npos);
  EXPECT_NE(html.find("class=\"sync-bubble\""), std::string::npos);  // the kernel after it came 5.5 us later
  // A lane per host thread, stream and copy engine.
  EXPECT_NE(html.find("class=\"lane lane-host\""), std::string::npos);
  EXPECT_NE(html.find(">GPU 0 stream 7<"), std::string::npos);
  EXPECT_NE(html.find(">GPU 0 copies DtoH<"), std::string::npos);
  // The step's critical path on the timeline, idle ours beside HTA's, the tables.
  EXPECT_NE(html.find("<g class=\"critical-path\">"), std::string::npos);
  EXPECT_NE(html.find("class=\"cp-run kind-"), std::string::npos);
  EXPECT_NE(html.find("class=\"idle-part hta-host-wait\""), std::string::npos);
  for (const char* table : {"class=\"syncs\"", "class=\"causes\"", "class=\"kernels\"", "class=\"launch-delay\"",
                            "class=\"idle\"", "class=\"critical-runs\""})
    EXPECT_NE(html.find(table), std::string::npos) << table;
  // Self-contained: nothing fetched from elsewhere.
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  // Every name escaped: the kernel's and the file's.
  EXPECT_EQ(html.find("k<&>"), std::string::npos);
  EXPECT_NE(html.find("k&lt;&amp;&gt;&quot;kernel"), std::string::npos);
  EXPECT_EQ(html.find("a<b>"), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&gt;.json"), std::string::npos);
  // Every run of the step's path is drawn: together they cover its length, in time order.
  ASSERT_TRUE(v.critical.has_value());
  ASSERT_FALSE(v.critical_runs.empty());
  Ns covered = 0;
  for (std::size_t i = 0; i < v.critical_runs.size(); ++i) {
    covered += v.critical_runs[i].duration_ns;
    if (i > 0) {
      EXPECT_GE(v.critical_runs[i].start_ns, v.critical_runs[i - 1].start_ns);
    }
  }
  EXPECT_EQ(covered, v.critical->length_ns);
  EXPECT_EQ(count(html, "class=\"cp-run kind-"), v.critical_runs.size());
  EXPECT_TRUE(v.sampling_notes.empty());  // a small trace is drawn event by event
  EXPECT_EQ(html.find("Sampled:"), std::string::npos);
}

// A long name is cut for the page, never inside a UTF-8 sequence (the page stays valid UTF-8).
TEST(View, LongNamesAreCutOnCharacterBoundaries) {
  std::string name(116, 'k');
  for (int i = 0; i < 10; ++i) name += "\u00b5";  // 2 bytes each, from byte 116 on
  ViewPage page;
  page.traces.push_back(build_view_trace(steps_trace({30000}, name), "t.json"));
  const std::string html = render_view_html(page);
  // 117 bytes fit before "...": the sequence at 116..117 does not, so it goes whole.
  EXPECT_NE(html.find(std::string(116, 'k') + "..."), std::string::npos);
  EXPECT_EQ(html.find(std::string(116, 'k') + "\xc2..."), std::string::npos);
}

TEST(View, DrawsTheMedianStepOrTheOneAsked) {
  // Durations 50, 30, 40 us: the median is step 2 (40 us).
  const ViewTrace median = build_view_trace(steps_trace({50000, 30000, 40000}), "t.json");
  EXPECT_EQ(median.step_index, 2u);
  EXPECT_EQ(median.window_start, 80000);
  ViewOptions o;
  o.step = 0;
  const ViewTrace first = build_view_trace(steps_trace({50000, 30000, 40000}), "t.json", o);
  EXPECT_EQ(first.step_index, 0u);
  EXPECT_EQ(first.window_start, 0);
  o.step = 3;
  try {
    (void)build_view_trace(steps_trace({50000, 30000, 40000}), "my/trace.json", o);
    FAIL() << "no InputError for --step 3 of 3 steps";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("my/trace.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0 to 2"), std::string::npos) << e.what();
  }
}

// HTA's rule, by hand: kernels on stream 7 at [0,10), [15,20) us launched at 12 us (after the
// previous end: host wait 5 us), [30,40) launched at 1 us (gap 10 us < 30 us: kernel wait),
// [100,110) launched at 2 us (gap 60 us: other).
TEST(View, HtaIdleRuleByHand) {
  test::TraceBuilder b;
  b.api("cudaLaunchKernel", 0, 100, 1);
  b.api("cudaLaunchKernel", 1000, 1100, 3);
  b.api("cudaLaunchKernel", 2000, 2100, 4);
  b.api("cudaLaunchKernel", 12000, 12100, 2);
  b.kernel(0, 7, 500, 10000, 1);
  b.kernel(0, 7, 15000, 20000, 2);
  b.kernel(0, 7, 30000, 40000, 3);
  b.kernel(0, 7, 100000, 110000, 4);
  const ViewTrace v = build_view_trace(b.done(), "hta.json");
  ASSERT_EQ(v.stream_idle.size(), 1u);
  EXPECT_EQ(v.stream_idle[0].hta.host_wait_ns, 5000);
  EXPECT_EQ(v.stream_idle[0].hta.kernel_wait_ns, 10000);
  EXPECT_EQ(v.stream_idle[0].hta.other_ns, 60000);
  // Ours over the same window: the same 75 us idle, split into our four classes.
  EXPECT_EQ(v.stream_idle[0].ours.idle.idle_ns(), 75000);
  EXPECT_FALSE(v.has_step);  // no ProfilerStep range: the whole trace
}

// 200,000 kernels in one step: drawn as at most `buckets` bars per lane, the page stays
// small, the busy time of the aggregated bars is the kernels' union exactly, and the page
// says what was aggregated and how.
TEST(View, BigTraceIsAggregatedWithABoundedPageAndSaysSo) {
  test::TraceBuilder b;
  constexpr int kKernels = 200000;
  b.annotation("ProfilerStep#0", 0, Ns{kKernels} * 150 + 1000);
  for (int i = 0; i < kKernels; ++i) {
    const Ns t = Ns{i} * 150;
    b.api("cudaLaunchKernel", t, t + 50, static_cast<std::uint64_t>(i + 1));
    b.kernel(0, 7, t + 60, t + 160, static_cast<std::uint64_t>(i + 1));  // 100 ns each, 50 ns apart
  }
  ViewPage page;
  page.traces.push_back(build_view_trace(b.done(), "big.json"));
  const ViewTrace& v = page.traces.front();
  ViewOptions defaults;
  Ns busy = 0;
  for (const auto& lane : v.lanes) {
    EXPECT_TRUE(lane.aggregated) << lane.name;
    EXPECT_LE(lane.bars.size(), defaults.buckets) << lane.name;
    if (lane.kind == ViewLane::Kind::Stream)
      for (const auto& bar : lane.bars) busy += bar.busy_ns;
  }
  EXPECT_EQ(busy, Ns{kKernels} * 100);
  EXPECT_EQ(v.events_in_window, 2u * kKernels + 1);  // kernels, launches and the step range
  const std::string html = render_view_html(page);
  EXPECT_LT(html.size(), 1'500'000u) << "the page grows with the events";
  EXPECT_NE(html.find("class=\"sampling-note\">Sampled: 2 lane(s) with more than 400 events"), std::string::npos);
  EXPECT_NE(html.find("500 equal time buckets"), std::string::npos);
  EXPECT_LT(count(html, "<rect"), 3000u);
}

// Three ranks of one job, rank 2 with a 5x longer step: named as analyze's rule names it.
TEST(View, OneJobsStandoutRankIsNamed) {
  std::vector<ViewTrace> ts;
  for (int rank = 0; rank < 3; ++rank) {
    Trace t = steps_trace({rank == 2 ? Ns{150000} : Ns{30000}});
    t.meta.rank = rank;
    ts.push_back(build_view_trace(std::move(t), "rank" + std::to_string(rank) + ".json"));
  }
  const auto notes = view_set_notes(ts);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("Rank 2 stands out: step time 150.0 µs per step", 0), 0u) << notes[0];
}

TEST(View, TracesOfDifferentJobsAreNamedNotMerged) {
  std::vector<ViewTrace> ts;
  for (auto [rank, world] : {std::pair{3, 8}, std::pair{0, 16}}) {
    Trace t = steps_trace({30000});
    t.meta.rank = rank;
    t.meta.extra["distributedInfo"] = "{\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
                                      ", \"world_size\": " + std::to_string(world) + "}";
    ts.push_back(build_view_trace(std::move(t), "r" + std::to_string(rank) + ".json"));
  }
  EXPECT_EQ(ts[0].label, "rank 3 of 8 (r3.json)");
  const auto notes = view_set_notes(ts);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("2 different jobs"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("world size 8: rank 3 of 8 (r3.json)"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("world size 16: rank 0 of 16 (r0.json)"), std::string::npos) << notes[0];
  ViewPage page;
  page.traces = std::move(ts);
  page.notes = notes;
  const std::string html = render_view_html(page);
  EXPECT_EQ(count(html, "<section class=\"trace\""), 2u);  // each on its own, not merged
  EXPECT_NE(html.find("<table class=\"ranks\">"), std::string::npos);
  EXPECT_NE(html.find("set-note"), std::string::npos);
  // Past max_sections, the rest are in the table only, and the page says so.
  page.max_sections = 1;
  const std::string one_drawn = render_view_html(page);
  EXPECT_EQ(count(one_drawn, "<section class=\"trace\""), 1u);
  EXPECT_NE(one_drawn.find("Sampled: the first 1 of 2 traces are drawn"), std::string::npos);
  EXPECT_NE(one_drawn.find("<td class=\"l\">rank 0 of 16 (r0.json)</td>"), std::string::npos);  // listed, no link
  // One job: no note.
  std::vector<ViewTrace> one;
  one.push_back(build_view_trace(steps_trace({30000}), "x.json"));
  EXPECT_TRUE(view_set_notes(one).empty());
}

}  // namespace
}  // namespace syncscope
