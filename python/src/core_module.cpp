// syncscope._core: the C++ libraries behind the Python module (pybind11). Every function
// returns what the CLI prints with --format json, as text; the Python side only parses it.
// No sequence of library calls is written here: analyze, predict and diff are the calls the
// CLI makes (syncscope/api/, one library under both), with the options' defaults from
// syncscope/api/defaults.hpp; this file reads a trace and turns the CLI's error classes into
// the Python exceptions syncscope/__init__.py registers.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "syncscope/api/analyze.hpp"
#include "syncscope/api/defaults.hpp"
#include "syncscope/api/predict.hpp"
#include "syncscope/api/results.hpp"
#include "syncscope/core/error.hpp"
#include "syncscope/core/text.hpp"
#include "syncscope/core/version.hpp"
#include "syncscope/fixes/shipped.hpp"
#include "syncscope/io/trace_io.hpp"

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
  syncscope::api::AnalyzeRequest request;
  std::size_t max_sync_points = syncscope::api::kDefaultMaxSyncPoints;
};

// syncscope::api::analyze_trace, as the CLI's analyze calls it, and the record counts. A file
// (`ranks_of_file`) of several ranks' processes gives the per-rank JSON (kind
// syncscope.rank_analysis) and no counts, as the CLI's analyze does without --pid and
// --critical-path; a trace given as text stays one trace (analyze on a dict is typed so).
std::pair<std::string, syncscope::api::RecordCounts> analyze_trace(syncscope::Trace trace, const std::string& source,
                                                                   const AnalyzeArgs& a, bool ranks_of_file = false) {
  if (ranks_of_file && !a.request.pid && !a.request.critical_path && syncscope::api::holds_several_ranks(trace))
    return {syncscope::api::render_rank_analysis(syncscope::api::analyze_processes(trace, source, a.request), "json"),
            {}};
  syncscope::api::AnalyzeOutcome out = syncscope::api::analyze_trace(std::move(trace), source, a.request);
  return {syncscope::api::render_analysis(out, "json", a.max_sync_points), std::move(out.counts)};
}

py::tuple to_python(std::pair<std::string, syncscope::api::RecordCounts> r) {
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

AnalyzeArgs analyze_args(const std::string& step_range, const std::string& layer_range, std::optional<std::int64_t> pid,
                         std::size_t max_sync_points, std::size_t replay_causes, bool critical_path,
                         std::uint64_t queue_full, const std::string& sequence_op, std::size_t sequence_min_len,
                         std::size_t sequence_top) {
  AnalyzeArgs a;
  a.request.step_range = step_range;
  a.request.layer_range = layer_range;
  a.request.pid = pid;
  a.request.replay_causes = replay_causes;
  a.request.critical_path = critical_path;
  a.request.queue_full = queue_full;
  a.request.sequences.op = sequence_op;
  a.request.sequences.min_pattern_len = sequence_min_len;
  a.request.sequences.top_k = sequence_top;
  a.max_sync_points = max_sync_points;
  return a;
}

// Bytes of Chrome trace JSON in memory (a dict dumped by the Python side).
syncscope::Trace parse_text(const std::string& text, const std::string& source) {
  return syncscope::parse_chrome_json(text, source);
}

// A directory of one job's rank traces (`predict --trace DIR`): the whole-job replay's JSON.
bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

std::string job_json(const std::string& dir, const syncscope::api::PredictTraceRequest& r,
                     std::optional<std::int64_t> what_if_rank) {
  return syncscope::api::render_job(syncscope::api::predict_job(dir, r, what_if_rank), "json");
}

}  // namespace

// predict_job_path: the whole-job replay of a directory of rank traces or of one file holding
// several ranks' processes, with the edits on one rank (predict --trace DIR --what-if-rank R).
void def_predict_job(py::module_& m) {
  m.def(
      "predict_job_path",
      [](const std::string& path, const std::string& step_range, const std::string& layer_range,
         const std::map<std::string, std::string>& fix_options, const std::vector<std::string>& what_if,
         std::optional<std::int64_t> what_if_rank) {
        syncscope::api::PredictTraceRequest r;
        r.step_range = step_range;
        r.layer_range = layer_range;
        r.fix_options = fix_options;
        r.what_if = what_if;
        return guarded([&] {
          syncscope::api::check(r, syncscope::api::Spelling::Python);  // before reading the traces
          if (is_directory(path)) return job_json(path, r, what_if_rank);
          const syncscope::Trace trace = syncscope::read_trace(path);
          if (!syncscope::api::holds_several_ranks(trace))
            throw syncscope::InputError(path +
                                        ": one process's trace, not a job: predict_job takes a directory of one "
                                        "job's rank traces or a file holding several ranks' processes (predict "
                                        "replays one trace)");
          return syncscope::api::render_job(syncscope::api::predict_job(trace, path, r, what_if_rank), "json");
        });
      },
      py::arg("path"), py::arg("step_range"), py::arg("layer_range"), py::arg("fix_options"), py::arg("what_if"),
      py::arg("what_if_rank"),
      "job_replay_to_json of predict_job on a directory of rank traces or a file of several ranks' processes");
}

// predict_path/predict_text and diff_paths: the CLI's predict --trace and diff (syncscope/api/predict.hpp).
void def_predict_and_diff(py::module_& m) {
  auto predict_binding = [](bool from_path) {
    return [from_path](const std::string& path_or_text, const std::string& source, const std::string& step_range,
                       const std::string& layer_range, const std::string& gpu,
                       const std::map<std::string, std::string>& fix_options, std::optional<double> step_ms,
                       int samples, std::uint64_t seed, const std::vector<std::string>& what_if) {
      syncscope::api::PredictTraceRequest r;
      r.step_range = step_range;
      r.layer_range = layer_range;
      r.gpu = gpu;
      r.fix_options = fix_options;
      if (step_ms) r.step_time_ns = syncscope::model::Interval::exact(*step_ms * 1e6);
      r.samples = samples;
      r.seed = seed;
      r.what_if = what_if;
      return guarded([&] {
        syncscope::api::check(r, syncscope::api::Spelling::Python);  // before reading the trace
        if (from_path && is_directory(path_or_text)) return job_json(path_or_text, r, std::nullopt);
        const syncscope::Trace trace =
            from_path ? syncscope::read_trace(path_or_text) : parse_text(path_or_text, source);
        // One file of several ranks' processes: the job replay, as the CLI's predict --trace gives.
        if (syncscope::api::holds_several_ranks(trace))
          return syncscope::api::render_job(syncscope::api::predict_job(trace, source, r, std::nullopt), "json");
        const auto both = syncscope::api::predict_trace(trace, source, r, syncscope::api::Spelling::Python);
        return syncscope::api::render_prediction(both.prediction, &both.replay, "json");
      });
    };
  };
  m.def("predict_path", predict_binding(true), py::arg("path"), py::arg("source"), py::arg("step_range"),
        py::arg("layer_range"), py::arg("gpu"), py::arg("fix_options"), py::arg("step_ms"), py::arg("samples"),
        py::arg("seed"), py::arg("what_if"),
        "prediction_with_replay_to_json of predict_from_trace and replay_what_if on the trace at path");
  m.def("predict_text", predict_binding(false), py::arg("text"), py::arg("source"), py::arg("step_range"),
        py::arg("layer_range"), py::arg("gpu"), py::arg("fix_options"), py::arg("step_ms"), py::arg("samples"),
        py::arg("seed"), py::arg("what_if"),
        "prediction_with_replay_to_json of predict_from_trace and replay_what_if on Chrome trace JSON text");

  m.def(
      "diff_paths",
      [](const std::string& before, const std::string& after, const std::vector<std::string>& what_if,
         const std::string& step_range, const std::string& layer_range, const std::string& gpu) {
        return guarded([&] {
          syncscope::api::DiffRequest req;
          req.what_if = what_if;
          req.step_range = step_range;
          req.layer_range = layer_range;
          req.gpu = gpu;
          const syncscope::Trace b = syncscope::read_trace(before);
          const syncscope::Trace a = syncscope::read_trace(after);
          return syncscope::api::render_diff(syncscope::api::diff_traces(b, a, req, before, after), "json");
        });
      },
      py::arg("before"), py::arg("after"), py::arg("what_if"), py::arg("step_range"), py::arg("layer_range"),
      py::arg("gpu") = "", "diff_to_json of diff_traces on two traces (syncscope diff --format json)");
  // validate_path: the CLI's validate RESULTS (syncscope/api/results.hpp): its JSON, why nothing
  // was compared ("" when something was) and its exit status.
  m.def(
      "validate_path",
      [](const std::string& path) {
        return guarded([&] {
          const syncscope::api::Validation v = syncscope::api::validate_run(path);
          return std::make_tuple(syncscope::model::validation_to_json(v.report), v.nothing_compared, v.exit_code());
        });
      },
      py::arg("path"), "(validation_to_json, nothing_compared, exit status) of syncscope validate RESULTS");
}

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
  // The CLI's option defaults and bounds (syncscope/api/defaults.hpp), for the Python
  // module's keyword defaults: one definition for both.
  m.def("defaults", [] {
    namespace api = syncscope::api;
    py::dict d;
    d["step_range"] = std::string(api::kDefaultStepRange);
    d["max_sync_points"] = api::kDefaultMaxSyncPoints;
    d["replay_causes"] = api::kDefaultReplayCauses;
    d["samples"] = api::kDefaultSamples;
    d["seed"] = api::kDefaultSeed;
    d["queue_full"] = api::kDefaultQueueFull;
    d["sequence_min_len"] = api::kDefaultSequenceMinLen;
    d["sequence_top"] = api::kDefaultSequenceTop;
    d["jobs_max"] = static_cast<std::int64_t>(api::kJobs.hi);
    return d;
  });
  m.def("build_commit", [] { return std::string(syncscope::build_commit()); });
  // The options registered fixes take with predict --trace (FixSpec::PredictOption's
  // trace_key), for predict()'s keyword arguments: Python name, fix, kind, default (None when the
  // fix declares none) and help; the values are checked by api::check as the CLI's are.
  m.def("fix_trace_options", [] {
    namespace api = syncscope::api;
    py::list out;
    for (const api::FixTraceOption& d : api::trace_options()) {
      py::dict o;
      o["name"] = api::python_name(d.option->flag);
      o["flag"] = d.option->flag;
      o["fix"] = d.fix;
      o["integer"] = d.option->kind == syncscope::fixes::PredictOption::Kind::Integer;
      if (d.option->default_value.empty()) o["default"] = py::none();
      else o["default"] = d.option->default_value;
      o["help"] = d.option->help;
      out.append(o);
    }
    return out;
  });

  m.def(
      "analyze_path",
      [](const std::string& path, const std::string& step_range, const std::string& layer_range,
         std::optional<std::int64_t> pid, std::size_t max_sync_points, std::size_t replay_causes, bool critical_path,
         std::uint64_t queue_full, const std::string& sequence_op, std::size_t sequence_min_len,
         std::size_t sequence_top) {
        const AnalyzeArgs a = analyze_args(step_range, layer_range, pid, max_sync_points, replay_causes, critical_path,
                                           queue_full, sequence_op, sequence_min_len, sequence_top);
        return to_python(guarded([&] {
          syncscope::api::check(a.request, syncscope::api::Spelling::Python);  // before reading the trace
          return analyze_trace(syncscope::read_trace(path), path, a, true);
        }));
      },
      py::arg("path"), py::arg("step_range"), py::arg("layer_range"), py::arg("pid"), py::arg("max_sync_points"),
      py::arg("replay_causes"), py::arg("critical_path") = false,
      py::arg("queue_full") = syncscope::api::kDefaultQueueFull, py::arg("sequence_op") = "",
      py::arg("sequence_min_len") = syncscope::api::kDefaultSequenceMinLen,
      py::arg("sequence_top") = syncscope::api::kDefaultSequenceTop,
      "analysis_to_json of the trace at path (Kineto/syncscope JSON, .json.gz, Nsight Systems SQLite) and its "
      "record counts");
  m.def(
      "analyze_text",
      [](const std::string& text, const std::string& source, const std::string& step_range,
         const std::string& layer_range, std::optional<std::int64_t> pid, std::size_t max_sync_points,
         std::size_t replay_causes, bool critical_path, std::uint64_t queue_full, const std::string& sequence_op,
         std::size_t sequence_min_len, std::size_t sequence_top) {
        const AnalyzeArgs a = analyze_args(step_range, layer_range, pid, max_sync_points, replay_causes, critical_path,
                                           queue_full, sequence_op, sequence_min_len, sequence_top);
        return to_python(guarded([&] {
          syncscope::api::check(a.request, syncscope::api::Spelling::Python);
          return analyze_trace(parse_text(text, source), source, a);
        }));
      },
      py::arg("text"), py::arg("source"), py::arg("step_range"), py::arg("layer_range"), py::arg("pid"),
      py::arg("max_sync_points"), py::arg("replay_causes"), py::arg("critical_path") = false,
      py::arg("queue_full") = syncscope::api::kDefaultQueueFull, py::arg("sequence_op") = "",
      py::arg("sequence_min_len") = syncscope::api::kDefaultSequenceMinLen,
      py::arg("sequence_top") = syncscope::api::kDefaultSequenceTop,
      "analysis_to_json of Chrome trace JSON text and its record counts");

  m.def(
      "analyze_ranks",
      [](const std::vector<std::string>& inputs, const std::string& step_range, const std::string& layer_range,
         std::size_t jobs) {
        return guarded([&] {
          syncscope::api::AnalyzeRequest req;
          req.step_range = step_range;
          req.layer_range = layer_range;
          return syncscope::api::render_rank_analysis(
              syncscope::api::analyze_rank_traces(inputs, req, jobs, syncscope::api::Spelling::Python), "json");
        });
      },
      py::arg("inputs"), py::arg("step_range"), py::arg("layer_range"), py::arg("jobs"),
      "rank_analysis_to_json over several traces or directories of them (one trace per rank)");

  def_predict_and_diff(m);
  def_predict_job(m);
}
