// The injection library's logic (inject_control.cpp) on a fake CUPTI: stopping after N step
// ranges, and the stop path's promise that an application thread inside a CUPTI callback
// (API exit, NVTX, a log line) never waits for the flush and decode of the stop.
#include <gtest/gtest.h>

#include <future>

#include "fake_cupti.hpp"
#include "inject_control.hpp"
#include "syncscope/io/trace_io.hpp"
#include "test_paths.hpp"

namespace syncscope::cupti_detail {
namespace {

using test::FakeCupti;
using namespace std::chrono_literals;

void CUPTIAPI no_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

InjectConfig config_in(const syncscope::test::TempDir& dir, long steps) {
  InjectConfig c;
  c.output = (dir / "trace.json").string();
  c.stop_after_steps = steps;
  c.quiet = true;
  return c;
}

TEST(InjectControl, StopsAfterTheConfiguredStepsAndWritesTheTraceAtExit) {
  syncscope::test::TempDir dir;
  FakeCupti fake;
  Session session(fake);
  Injection inj(session, fake);
  inj.stop_wait = 5s;
  inj.initialize(config_in(dir, 2), &no_callback);
  ASSERT_EQ(inj.phase(), InjectPhase::Tracing);
  inj.on_range_open("ProfilerStep#1", true, 0);
  inj.on_push_pop_close();
  EXPECT_EQ(inj.phase(), InjectPhase::Tracing);
  inj.on_range_open("not a step", false, 42);
  inj.on_start_end_close(42);
  inj.on_range_open("ProfilerStep#2", false, 43);
  inj.on_start_end_close(43);
  EXPECT_EQ(inj.phase(), InjectPhase::Stopping);
  inj.on_api_exit(/*is_sync=*/true);  // the program's next synchronization
  inj.write_trace_at_exit();
  EXPECT_EQ(inj.phase(), InjectPhase::Stopped);
  EXPECT_EQ(fake.flushes, 1);
  Trace t = read_trace(dir / "trace.json");
  EXPECT_EQ(t.meta.extra.at("note"), "stopped after 2 step ranges (SYNCSCOPE_TRACE_STOP_AFTER_STEPS)");
  EXPECT_EQ(t.meta.extra.at("injection"), "libsyncscope_inject.so");
  // cuptiFinalize is asked for, and done at the next API exit callback.
  inj.on_api_exit(false);
  EXPECT_EQ(fake.finalizes, 1);
}

TEST(InjectControl, CallbacksNeverWaitForTheStopFlush) {
  syncscope::test::TempDir dir;
  FakeCupti fake;
  Session session(fake);
  Injection inj(session, fake);
  inj.stop_wait = 5s;
  inj.initialize(config_in(dir, 1), &no_callback);
  ASSERT_EQ(inj.phase(), InjectPhase::Tracing);
  fake.hold_flushes();
  inj.on_range_open("step 1", true, 0);
  inj.on_push_pop_close();  // stop: recording off, the worker waits for a sync
  inj.on_api_exit(true);    // the sync: the worker closes the session and flushes
  ASSERT_TRUE(fake.wait_until_flush_entered(5s));
  // The flush is held. Application threads keep calling into the injection's callbacks.
  auto meanwhile = std::async(std::launch::async, [&] {
    inj.log_once("test-key", "a message logged during the stop flush");
    inj.on_range_open("a range", false, 7);
    inj.on_start_end_close(7);
    inj.on_range_open("pushed", true, 0);
    inj.on_push_pop_close();
    inj.on_api_exit(true);
    inj.on_context_created(reinterpret_cast<CUcontext>(0x99));
    return true;
  });
  const bool returned = meanwhile.wait_for(3s) == std::future_status::ready;
  fake.release_flushes();
  EXPECT_TRUE(returned) << "a CUPTI callback waited for the stop path's flush (lock held across it)";
  EXPECT_TRUE(meanwhile.get());
  inj.write_trace_at_exit();
  Trace t = read_trace(dir / "trace.json");
  bool logged = false;
  for (const auto& [k, v] : t.meta.extra)
    if (k.rfind("syncscope_inject_message_", 0) == 0 && v == "a message logged during the stop flush") logged = true;
  EXPECT_TRUE(logged);
}

TEST(InjectControl, ExitDoesNotWaitForASyncThatNeverComes) {
  syncscope::test::TempDir dir;
  FakeCupti fake;
  Session session(fake);
  Injection inj(session, fake);
  inj.stop_wait = 50ms;
  inj.initialize(config_in(dir, 1), &no_callback);
  inj.on_range_open("step", true, 0);
  inj.on_push_pop_close();
  const auto t0 = std::chrono::steady_clock::now();
  inj.write_trace_at_exit();  // joins the worker without waiting for a sync
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(std::filesystem::exists(dir / "trace.json"));
}

TEST(InjectControl, OutputPathOfOtherProcesses) {
  InjectConfig c;
  c.output = "/tmp/run/trace.json.gz";
  c.root_pid = 100;
  EXPECT_EQ(Injection::output_path(c, 100), "/tmp/run/trace.json.gz");
  EXPECT_EQ(Injection::output_path(c, 7), "/tmp/run/trace-pid7.json.gz");
  c.root_pid = 0;
  EXPECT_EQ(Injection::output_path(c, 7), "/tmp/run/trace.json.gz");
}

}  // namespace
}  // namespace syncscope::cupti_detail
