// Loading the measured backend: every failure names the file and why; a loaded backend's
// calls and failures come back as values and syncscope errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "syncscope/core/error.hpp"
#include "syncscope/pipeline/backend.hpp"
#include "test_paths.hpp"

namespace syncscope::pipeline {
namespace {

namespace fs = std::filesystem;

bool has_part(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(BackendLoader, MissingFileIsNamedWithTheSearch) {
  const fs::path missing = "/nonexistent-syncscope/libsyncscope_backend.so";
  const BackendLoad searched = load_measured_backend(missing);
  EXPECT_FALSE(searched.backend);
  EXPECT_TRUE(has_part(searched.error, "was not found (looked for " + missing.string())) << searched.error;
  const BackendLoad direct = load_backend_file(missing);
  EXPECT_FALSE(direct.backend);
  EXPECT_TRUE(has_part(direct.error, "cannot load the measured backend " + missing.string() + ": ")) << direct.error;
  EXPECT_TRUE(has_part(direct.error, "No such file")) << direct.error;  // dlerror's words
}

TEST(BackendLoader, NotALibraryGivesDlerror) {
  test::TempDir dir;
  const fs::path text = dir / "libsyncscope_backend.so";
  std::ofstream(text) << "not an ELF file\n";
  const BackendLoad r = load_measured_backend(text);
  EXPECT_FALSE(r.backend);
  EXPECT_TRUE(has_part(r.error, "cannot load the measured backend " + text.string() + ": ")) << r.error;
  EXPECT_TRUE(has_part(r.error, text.string() + ": ")) << r.error;
}

TEST(BackendLoader, LibraryWithoutTheEntryPointIsRefused) {
  const BackendLoad r = load_backend_file(SYNCSCOPE_TEST_NO_ENTRY_BACKEND);
  EXPECT_FALSE(r.backend);
  EXPECT_TRUE(has_part(r.error, SYNCSCOPE_TEST_NO_ENTRY_BACKEND)) << r.error;
  EXPECT_TRUE(has_part(r.error, "no entry point syncscope_backend_v3")) << r.error;
}

TEST(BackendLoader, OtherAbiVersionIsRefused) {
  const BackendLoad r = load_backend_file(SYNCSCOPE_TEST_ABI_MISMATCH_BACKEND);
  EXPECT_FALSE(r.backend);
  EXPECT_TRUE(has_part(r.error, "returned ABI version " + std::to_string(kBackendAbiVersion + 100))) << r.error;
  EXPECT_TRUE(has_part(r.error, "rebuild the backend")) << r.error;
}

TEST(BackendLoader, OtherBuildKeyIsRefused) {
  const BackendLoad r = load_backend_file(SYNCSCOPE_TEST_KEY_MISMATCH_BACKEND);
  EXPECT_FALSE(r.backend);
  EXPECT_TRUE(has_part(r.error, "was built differently from this syncscope (backend: another build")) << r.error;
}

TEST(BackendLoader, CallsAndFailuresCrossAsValuesAndErrors) {
  const BackendLoad r = load_measured_backend(SYNCSCOPE_TEST_FAKE_BACKEND);
  ASSERT_TRUE(r.backend) << r.error;
  EXPECT_EQ(load_measured_backend(SYNCSCOPE_TEST_FAKE_BACKEND).backend, r.backend);  // loaded once
  const MeasuredBackend& b = *r.backend;
  EXPECT_EQ(b.file(), fs::path(SYNCSCOPE_TEST_FAKE_BACKEND));
  EXPECT_TRUE(b.can_measure());
  EXPECT_FALSE(b.can_calibrate());
  EXPECT_EQ(b.description(), "fake backend (tests/pipeline)");
  std::string why;
  EXPECT_TRUE(b.device_available(&why));
  ::setenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE", "1", 1);
  EXPECT_FALSE(b.device_available(&why));
  ::unsetenv("SYNCSCOPE_FAKE_BACKEND_NO_DEVICE");
  EXPECT_EQ(why, "fake backend: no device (SYNCSCOPE_FAKE_BACKEND_NO_DEVICE=1)");
  EXPECT_EQ(b.runtime_versions().libtorch, "fake-torch");
  program::StepOptions o;
  EXPECT_EQ(b.fix_device_choice(o, static_cast<fixes::Fix>(2), &why), "padded");
  EXPECT_EQ(why, "fake backend pads (fix 2)");  // the fix's id crossed the ABI

  MeasureRequest m;
  m.options.model.name = "fail-input";
  m.trace_name = "x";
  try {
    b.measure(m);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "fake backend: bad input for x");
  }
  try {
    b.calibrate(model::CalibrationOptions{});
    FAIL() << "no Error";
  } catch (const InputError&) {
    FAIL() << "an Error came back as an InputError";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "fake backend: calibrate is not faked");
  }
}

TEST(BackendLoader, EnvironmentVariableReplacesTheSearch) {
  ::setenv("SYNCSCOPE_BACKEND_LIBRARY", "/elsewhere/libx.so", 1);
  const auto only = backend_candidates();
  ::unsetenv("SYNCSCOPE_BACKEND_LIBRARY");
  ASSERT_EQ(only.size(), 1u);
  EXPECT_EQ(only[0], fs::path("/elsewhere/libx.so"));
  const auto searched = backend_candidates();
  ASSERT_GE(searched.size(), 3u);
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  EXPECT_EQ(searched[0], self.parent_path() / kBackendFileName);
  EXPECT_EQ(searched[1], self.parent_path().parent_path() / "lib" / "syncscope" / kBackendFileName);
}

#ifdef SYNCSCOPE_TEST_REAL_BACKEND
// The backend this build made: it loads in this process (the build key matches), and
// without a CUDA device it says why instead of measuring.
TEST(BackendLoader, RealBackendLoadsAndSaysWhyItCannotMeasureWithoutADevice) {
  const BackendLoad r = load_measured_backend(SYNCSCOPE_TEST_REAL_BACKEND);
  ASSERT_TRUE(r.backend) << r.error;
  const MeasuredBackend& b = *r.backend;
  EXPECT_FALSE(b.description().empty());
  std::string why;
  if (b.device_available(&why)) GTEST_SKIP() << "a CUDA device is present: see the device tests";
  EXPECT_FALSE(why.empty());
  std::cout << "real backend: " << b.description() << "; no device: " << why << "\n";
  if (b.can_measure()) {
    MeasureRequest m;
    EXPECT_THROW(b.measure(m), Error);  // no device: a syncscope error, not a crash
  }
}
#endif

}  // namespace
}  // namespace syncscope::pipeline
