// libFuzzer target for the files a sweep or rank analysis reads back from its directory,
// which anyone sharing the file system may have written: sweep.json, a task's
// status/NAME.json, slurm/jobs.json and a rank part's parts/part-00000.json. The first byte
// picks the file, the rest is its content; the other files are valid. Properties checked on
// every input: nothing crashes or trips ASan/UBSan, only InputError is thrown, and what is
// read prints (status table) without an error.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "syncscope/cluster/rank_jobs.hpp"
#include "syncscope/cluster/sweep.hpp"
#include "syncscope/core/error.hpp"

namespace {

namespace fs = std::filesystem;

[[noreturn]] void die(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_sweep_files: %s: %s\n", what, detail.c_str());
  std::abort();
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

const char* kPlan = R"({"schema_version": 1, "kind": "syncscope.sweep", "id": "0123456789abcdef", "device": "sim",
 "syncscope": "/usr/bin/syncscope", "created_utc": "2026-01-01T00:00:00Z",
 "tasks": [{"index": 0, "name": "s--default", "scenario": "/s.yaml", "scenario_hash": "00",
            "target": {"label": "default", "constraint": "", "gpu_profile": ""}}]})";

const char* kRankJob = R"({"schema_version": 1, "kind": "syncscope.rank_job", "id": "0123456789abcdef",
 "source": "r", "step_range": "ProfilerStep#*", "layer_range": "", "ranks_per_task": 1, "tasks": 1,
 "syncscope": "/usr/bin/syncscope", "files": [{"path": "r/rank0.json", "absolute": "/r/rank0.json"}]})";

fs::path work_dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "fuzz-sweep-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) die("mkdtemp", tmpl);
    return fs::path(tmpl);
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace syncscope;
  if (size == 0) return 0;
  const int kind = data[0] % 4;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const fs::path dir = work_dir() / "d";
  std::error_code ec;
  fs::remove_all(dir, ec);
  try {
    switch (kind) {
      case 0:  // sweep.json
      case 1:  // status/s--default.json
      case 2:  // slurm/jobs.json
        put(dir / "sweep.json", kind == 0 ? text : std::string(kPlan));
        if (kind == 1) put(dir / "status" / "s--default.json", text);
        if (kind == 2) put(dir / "slurm" / "jobs.json", text);
        {
          const auto plan = cluster::read_plan(dir);
          const auto st = cluster::sweep_status(dir, {});
          (void)cluster::status_table(plan, st);
        }
        break;
      case 3:  // parts/part-00000.json
        put(dir / "rank_job.json", kRankJob);
        put(dir / "parts" / "part-00000.json", text);
        (void)cluster::merge_rank_parts(dir);
        break;
    }
  } catch (const InputError&) {
    return 0;
  } catch (const std::exception& e) {
    die("not an InputError", e.what());
  }
  return 0;
}
