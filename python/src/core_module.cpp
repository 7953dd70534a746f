// syncscope._core: the C++ libraries behind the Python module (pybind11). Every function
// returns what the CLI's serializer prints (analysis_to_json, prediction_to_json) as text;
// the Python side only parses it. No analysis happens here: this file reads a trace, calls
// the same library functions as cli/cmd_analyze.cpp and cli/cmd_predict.cpp, and turns the
// CLI's error classes into the Python exceptions syncscope/__init__.py registers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "syncscope/analysis/analysis.hpp"
#include "syncscope/analysis/process_check.hpp"
#include "syncscope/cluster/rank_traces.hpp"
#include "syncscope/core/bounds.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"
#include "syncscope/model/critical_path.hpp"
#include "syncscope/model/gpu_profile.hpp"
#include "syncscope/model/predict.hpp"
#include "syncscope/model/predict_inputs.hpp"
#include "syncscope/model/replay.hpp"
#include "syncscope/model/replay_diff.hpp"
#include "syncscope/model/trace_predict.hpp"
#include "syncscope/reports/analysis_printers.hpp"
#include "syncscope/reports/rank_printers.hpp"

namespace py = pybind11;

namespace {

// The Python classes for the CLI's exit-2 (InputError) and exit-1 (Error, and anything else
// the CLI reports as "internal error") refusals; set once by syncscope/__init__.py. Owned
// references kept for the life of the process: the module is never unloaded by CPython.
PyObject* g_input_error = nullptr;
PyObject* g_runtime_error = nullptr;

// Each line of `message` through printable() (core/text.hpp), the escaping of the CLI's
// names: a message that quotes a trace's or a file's name raises with \xNN in place of an
// escape sequence. The message's own line breaks stay; printable() is idempotent, so what
// the C++ side escaped already reads as the CLI prints it.
std::string printable_lines(const std::string& message) {
  std::string out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t nl = message.find('\n', from);
    out += syncscope::printable(std::string_view(message).substr(from, nl == std::string::npos ? nl : nl - from));
    if (nl == std::string::npos) return out;
    out += '\n';
    from = nl + 1;
  }
}

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type != nullptr ? type : PyExc_RuntimeError, printable_lines(message).c_str());
  throw py::error_already_set();
}

// Runs `work` without the GIL (the training loop's other threads keep running while a trace
// is read) and maps the CLI's error classes to Python exceptions with the CLI's message
// (cli/main.cpp: InputError -> exit 2; Error -> exit 1; other std::exception -> exit 1 as
// "internal error: ...").
template <class F>
auto guarded(F&& work) -> decltype(work()) {
  std::string message;
  PyObject* type = nullptr;
  try {
    py::gil_scoped_release release;
    return work();
  } catch (const syncscope::InputError& e) {
    type = g_input_error;
    message = e.what();
  } catch (const syncscope::Error& e) {
    type = g_runtime_error;
    message = e.what();
  } catch (const std::bad_alloc&) {
    type = PyExc_MemoryError;
    message = "out of memory while reading or analyzing the trace";
  } catch (const std::exception& e) {
    type = g_runtime_error;
    message = std::string("internal error: ") + e.what();
  }
  raise(type, message);
}

struct AnalyzeArgs {
  std::string step_range;
  std::string layer_range;
  std::optional<std::int64_t> pid;
  std::size_t max_sync_points = 10000;
  std::size_t replay_causes = 6;  // cli/cmd_analyze.cpp's --replay-causes default
  bool critical_path = false;     // cli/cmd_analyze.cpp's --critical-path
  std::uint64_t queue_full = 1024;  // cli/cmd_analyze.cpp's --queue-full (HTA's max_queue_length)
};

// What the trace holds, by record kind: lets the torch handler say "no GPU in this trace" or
// "no sync records" without parsing the file again. Counts, not analysis.
struct RecordCounts {
  std::size_t api_calls = 0, kernels = 0, memcpys = 0, memsets = 0, sync_records = 0, ranges = 0;
  std::optional<std::int64_t> rank;
  std::string source_tool, source_version;
};

std::pair<std::string, RecordCounts> analyze_trace(syncscope::Trace trace, const std::string& source,
                                                   const AnalyzeArgs& a) {
  if (a.pid) syncscope::require_process(trace, *a.pid, source);
  syncscope::AnalysisOptions opts;
  opts.step_glob = a.step_range;
  opts.layer_glob = a.layer_range;
  opts.pid = a.pid;
  opts.queue_full = a.queue_full;
  syncscope::AnalysisResult result = syncscope::analyze(trace, opts);
  result.source = source;
  // As cli/cmd_analyze.cpp with --critical-path: each step's path over the replay graph.
  if (a.critical_path) syncscope::model::add_critical_paths(trace, result);
  // As cli/cmd_analyze.cpp: what removing each of the worst causes saves, by replay.
  const syncscope::CauseRemovals removals = syncscope::model::removal_savings(result, trace, a.replay_causes);
  syncscope::AnalysisJsonOptions jo;
  jo.max_sync_points = a.max_sync_points;
  jo.removals = &removals;
  RecordCounts n;
  n.api_calls = trace.api_calls.size();
  n.kernels = trace.kernels.size();
  n.memcpys = trace.memcpys.size();
  n.memsets = trace.memsets.size();
  n.sync_records = trace.syncs.size();
  n.ranges = trace.ranges.size();
  n.rank = trace.meta.rank;
  n.source_tool = trace.meta.source_tool;
  n.source_version = trace.meta.source_version;
  return {syncscope::analysis_to_json(result, jo), std::move(n)};
}

py::tuple to_python(std::pair<std::string, RecordCounts> r) {
  py::dict counts;
  counts["api_calls"] = r.second.api_calls;
  counts["kernels"] = r.second.kernels;
  counts["memcpys"] = r.second.memcpys;
  counts["memsets"] = r.second.memsets;
  counts["sync_records"] = r.second.sync_records;
  counts["ranges"] = r.second.ranges;
  counts["rank"] = r.second.rank ? py::object(py::int_(*r.second.rank)) : py::object(py::none());
  counts["source_tool"] = r.second.source_tool;
  counts["source_version"] = r.second.source_version;
  return py::make_tuple(py::str(r.first), counts);
}

struct PredictArgs {
  std::string step_range;
  std::string layer_range;
  std::string gpu;
  int prefetch_depth = 2;
  std::optional<int> top_k;
  std::optional<double> step_ms;
  int samples = 4000;
  std::uint64_t seed = 0x5eed'5c09eULL;  // the CLI's --seed default
  std::vector<std::string> what_if;      // --what-if edits, replayed on the trace
};

// The CLI's bounds for these options (cli/cmd_predict.cpp), with the argument's Python name.
void check_predict_args(const PredictArgs& a) {
  SYNCSCOPE_INPUT_ERROR_IF(a.prefetch_depth < 2 || a.prefetch_depth > 1024,
                           "prefetch_depth " + std::to_string(a.prefetch_depth) +
                               ": expected 2..1024 (the prefetch variant looks k >= 2 layers ahead; 1 is double "
                               "buffering)");
  SYNCSCOPE_INPUT_ERROR_IF(a.top_k && (*a.top_k < 1 || *a.top_k > 1024),
                           "top_k " + std::to_string(*a.top_k) + ": expected 1..1024 experts per token");
  SYNCSCOPE_INPUT_ERROR_IF(!syncscope::bounds::kSamples.contains(a.samples),
                           "samples " + std::to_string(a.samples) + ": expected " +
                               syncscope::bounds::describe_int(syncscope::bounds::kSamples));
  SYNCSCOPE_INPUT_ERROR_IF(a.step_ms && !(*a.step_ms > 0 && *a.step_ms * 1e6 <= syncscope::bounds::kOptionTimeNs.hi),
                           "step_ms: expected a step time above 0 and at most one hour (in ms)");
}

std::string predict_trace(const syncscope::Trace& trace, const std::string& source, const PredictArgs& a) {
  namespace m = syncscope::model;
  m::PropagationOptions prop;
  prop.samples = a.samples;
  prop.seed = a.seed;
  m::TracePredictOptions to;
  to.step_glob = a.step_range;
  to.layer_glob = a.layer_range;
  if (!a.gpu.empty()) to.profile = syncscope::model::load_gpu_profile(a.gpu);
  to.prefetch_depth = a.prefetch_depth;
  to.moe_top_k = a.top_k;
  to.seed = a.seed;
  to.propagation = prop;
  // cli/cmd_predict.cpp's call: the trace replayed with each edit (the fixes' edits when none).
  std::optional<m::Interval> step;
  if (a.step_ms) step = m::Interval::exact(*a.step_ms * 1e6);
  const m::TracePredictionWithReplay r = m::predict_with_replay(trace, to, source, a.what_if, step);
  return m::prediction_with_replay_to_json(r.prediction, r.replay);
}

// Bytes of Chrome trace JSON in memory (a dict dumped by the Python side).
syncscope::Trace parse_text(const std::string& text, const std::string& source) {
  return syncscope::parse_chrome_json(text, source);
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "syncscope's C++ libraries; use the syncscope package, not this module";
  syncscope::fixes::register_shipped_fixes();  // the fixes with folders of their own (fixes/<name>/)
  m.def(
      "_set_exception_types",
      [](py::object input_error, py::object runtime_error) {
        Py_XDECREF(g_input_error);
        Py_XDECREF(g_runtime_error);
        g_input_error = input_error.release().ptr();
        g_runtime_error = runtime_error.release().ptr();
      },
      py::arg("input_error"), py::arg("runtime_error"));
  // For tests/python: each C++ error class through the same mapping as the real entry points
  // (an exit-1 Error is hard to provoke from a trace on purpose).
  m.def(
      "_raise_for_test",
      [](const std::string& kind, const std::string& message) {
        guarded([&]() -> int {
          if (kind == "input") throw syncscope::InputError(message);
          if (kind == "error") throw syncscope::Error(message);
          if (kind == "std") throw std::out_of_range(message);
          if (kind == "bad_alloc") throw std::bad_alloc();
          return 0;
        });
      },
      py::arg("kind"), py::arg("message"));
  // syncscope._text.printable: the CLI's escaping of names (bytes: a file name need not be UTF-8).
  m.def(
      "printable", [](const py::bytes& text) { return syncscope::printable(std::string(text)); }, py::arg("text"));
  m.def("version", [] { return std::string(syncscope::version()); });
  m.def("build_commit", [] { return std::string(syncscope::build_commit()); });

  m.def(
      "analyze_path",
      [](const std::string& path, const std::string& step_range, const std::string& layer_range,
         std::optional<std::int64_t> pid, std::size_t max_sync_points, std::size_t replay_causes, bool critical_path,
         std::uint64_t queue_full) {
        AnalyzeArgs a{step_range, layer_range, pid, max_sync_points, replay_causes, critical_path, queue_full};
        return to_python(guarded([&] { return analyze_trace(syncscope::read_trace(path), path, a); }));
      },
      py::arg("path"), py::arg("step_range"), py::arg("layer_range"), py::arg("pid"), py::arg("max_sync_points"),
      py::arg("replay_causes"), py::arg("critical_path") = false, py::arg("queue_full") = 1024,
      "analysis_to_json of the trace at path (Kineto/syncscope JSON, .json.gz, Nsight Systems SQLite) and its "
      "record counts");
  m.def(
      "analyze_text",
      [](const std::string& text, const std::string& source, const std::string& step_range,
         const std::string& layer_range, std::optional<std::int64_t> pid, std::size_t max_sync_points,
         std::size_t replay_causes, bool critical_path, std::uint64_t queue_full) {
        AnalyzeArgs a{step_range, layer_range, pid, max_sync_points, replay_causes, critical_path, queue_full};
        return to_python(guarded([&] { return analyze_trace(parse_text(text, source), source, a); }));
      },
      py::arg("text"), py::arg("source"), py::arg("step_range"), py::arg("layer_range"), py::arg("pid"),
      py::arg("max_sync_points"), py::arg("replay_causes"), py::arg("critical_path") = false,
      py::arg("queue_full") = 1024, "analysis_to_json of Chrome trace JSON text and its record counts");

  m.def(
      "analyze_ranks",
      [](const std::vector<std::string>& inputs, const std::string& step_range, const std::string& layer_range,
         std::size_t jobs) {
        return guarded([&] {
          // cli/cmd_analyze.cpp's analyze_ranks_here: one trace per rank, read in parallel.
          syncscope::AnalysisOptions opts;
          opts.step_glob = step_range;
          opts.layer_glob = layer_range;
          SYNCSCOPE_INPUT_ERROR_IF(jobs > 4096,
                                   "jobs " + std::to_string(jobs) + ": expected 1..4096 (0: one per core)");
          return syncscope::rank_analysis_to_json(syncscope::cluster::analyze_ranks(inputs, opts, jobs));
        });
      },
      py::arg("inputs"), py::arg("step_range"), py::arg("layer_range"), py::arg("jobs"),
      "rank_analysis_to_json over several traces or directories of them (one trace per rank)");

  auto predict_binding = [](bool from_path) {
    return [from_path](const std::string& path_or_text, const std::string& source, const std::string& step_range,
                       const std::string& layer_range, const std::string& gpu, int prefetch_depth,
                       std::optional<int> top_k, std::optional<double> step_ms, int samples, std::uint64_t seed,
                       const std::vector<std::string>& what_if) {
      PredictArgs a{step_range, layer_range, gpu, prefetch_depth, top_k, step_ms, samples, seed, what_if};
      return guarded([&] {
        check_predict_args(a);
        const syncscope::Trace trace =
            from_path ? syncscope::read_trace(path_or_text) : parse_text(path_or_text, source);
        return predict_trace(trace, source, a);
      });
    };
  };
  m.def("predict_path", predict_binding(true), py::arg("path"), py::arg("source"), py::arg("step_range"),
        py::arg("layer_range"), py::arg("gpu"), py::arg("prefetch_depth"), py::arg("top_k"), py::arg("step_ms"),
        py::arg("samples"), py::arg("seed"), py::arg("what_if"),
        "prediction_with_replay_to_json of predict_from_trace and replay_what_if on the trace at path");
  m.def("predict_text", predict_binding(false), py::arg("text"), py::arg("source"), py::arg("step_range"),
        py::arg("layer_range"), py::arg("gpu"), py::arg("prefetch_depth"), py::arg("top_k"), py::arg("step_ms"),
        py::arg("samples"), py::arg("seed"), py::arg("what_if"),
        "prediction_with_replay_to_json of predict_from_trace and replay_what_if on Chrome trace JSON text");

  m.def(
      "diff_paths",
      [](const std::string& before, const std::string& after, const std::vector<std::string>& what_if,
         const std::string& step_range, const std::string& layer_range) {
        return guarded([&] {
          // cli/cmd_diff.cpp: the same library call and serializer.
          syncscope::model::TracePredictOptions to;
          to.step_glob = step_range;
          to.layer_glob = layer_range;
          const syncscope::Trace b = syncscope::read_trace(before);
          const syncscope::Trace a = syncscope::read_trace(after);
          return syncscope::model::diff_to_json(syncscope::model::diff_traces(b, a, what_if, to, before, after));
        });
      },
      py::arg("before"), py::arg("after"), py::arg("what_if"), py::arg("step_range"), py::arg("layer_range"),
      "diff_to_json of diff_traces on two traces (syncscope diff --format json)");
}
