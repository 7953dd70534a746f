"""syncscope in Python: host-device sync points in a trace, as the ``syncscope`` CLI finds them.

Every figure comes from the C++ libraries the CLI uses (the extension ``syncscope._core``):
``analyze`` returns what ``syncscope analyze --format json`` prints, ``predict`` what
``syncscope predict --trace T --format json`` prints, parsed into Python objects, with
pandas DataFrames over the tables when pandas is installed. Nothing is recomputed here.

    import syncscope
    r = syncscope.analyze("trace.json.gz", step_range="train_step#*")
    r.steps          # one row per step (a DataFrame, or a list of dicts without pandas)
    r.sync_points    # one row per sync point
    r.worst          # causes ranked by blocked + bubble time

Errors: what the CLI refuses with exit status 2 raises ``syncscope.InputError``; what it
reports with exit status 1 raises ``syncscope.RuntimeError``; the message is the CLI's.
``syncscope.torch.trace_handler`` analyzes torch.profiler traces as they are written.
"""

import builtins as _builtins
import json as _json
import os as _os
import re as _re
import warnings as _warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union, overload


from ._results import AnalysisResult, JobReplayResult, PredictionResult, RankAnalysisResult, ValidationResult
from ._text import printable as _printable


class Error(Exception):
    """A refusal of syncscope's; ``exit_code`` is the CLI's exit status for it."""

    exit_code = 1


class InputError(Error, ValueError):
    """Bad input (a malformed trace, an option out of range): the CLI exits 2 with this message."""

    exit_code = 2


class RuntimeError(Error, _builtins.RuntimeError):  # noqa: A001 (the CLI's exit-1 class, by name)
    """A failure that is not the input's fault: the CLI exits 1 with this message."""

    exit_code = 1


# What ``analyze`` and ``predict`` take as a trace: a path, a parsed trace (json.load's dict,
# or its list form), or the JSON's bytes. Public names, for annotating code that calls them.
TracePath = Union[str, "_os.PathLike[str]"]
Trace = Union[str, "_os.PathLike[str]", bytes, bytearray, Dict[str, Any], List[Any]]


class AnalysisWarning(UserWarning):
    """What the analysis warns about a trace (``AnalysisResult.warnings``, the CLI's
    ``warnings``), raised through :mod:`warnings` at the caller's line, with the option
    names spelled as this module's arguments (``step_range``, not ``--step-range``)."""


# The CLI's option names in its warnings -> this module's argument names.
_CLI_OPTIONS = {"--step-range": "step_range", "--layer-range": "layer_range", "--pid": "pid",
                "--max-sync-points": "max_sync_points", "--replay-causes": "replay_causes",
                "--critical-path": "critical_path", "--jobs": "jobs", "--queue-full": "queue_full",
                "--sequence-op": "sequence_op", "--sequence-min-len": "sequence_min_len",
                "--sequence-top": "sequence_top"}


def _python_names(message: str) -> str:
    return _re.sub(r"--[a-z][a-z-]*", lambda m: _CLI_OPTIONS.get(m.group(0), m.group(0)), message)


def _warn_all(messages: Iterable[str], stacklevel: int) -> None:
    for m in messages:
        # A warning quotes the trace's names as its JSON holds them: escaped as the CLI prints them.
        _warnings.warn(_printable(_python_names(m)), AnalysisWarning, stacklevel=stacklevel + 1)


from . import _core  # noqa: E402 (the exception classes above are handed to it)

_core._set_exception_types(InputError, RuntimeError)

__version__: str = _core.version()
build_commit: str = _core.build_commit()

# The CLI's defaults, from the library both use (api/include/syncscope/api/defaults.hpp):
# defined once, read here.
_DEFAULTS: Dict[str, Any] = _core.defaults()
DEFAULT_STEP_RANGE: str = _DEFAULTS["step_range"]
DEFAULT_MAX_SYNC_POINTS: int = _DEFAULTS["max_sync_points"]
DEFAULT_REPLAY_CAUSES: int = _DEFAULTS["replay_causes"]
DEFAULT_QUEUE_FULL: int = _DEFAULTS["queue_full"]
DEFAULT_SEQUENCE_MIN_LEN: int = _DEFAULTS["sequence_min_len"]
DEFAULT_SEQUENCE_TOP: int = _DEFAULTS["sequence_top"]
DEFAULT_SAMPLES: int = _DEFAULTS["samples"]
_PREDICT_SEED: int = _DEFAULTS["seed"]
_JOBS_MAX: int = _DEFAULTS["jobs_max"]
# The registered fixes' own options for predict() on a trace, by keyword (_options.py).
from ._options import FIX_TRACE_OPTIONS, fix_option_texts as _fix_option_texts  # noqa: E402

from ._job import predict_job  # noqa: E402 (a directory of rank traces, with what_if_rank)

__all__ = [
    "analyze",
    "analyze_ranks",
    "predict",
    "predict_job",
    "diff",
    "validate",
    "AnalysisResult",
    "DiffResult",
    "JobReplayResult",
    "PredictionResult",
    "RankAnalysisResult",
    "ValidationResult",
    "AnalysisWarning",
    "Error",
    "InputError",
    "RuntimeError",
    "DEFAULT_STEP_RANGE",
    "FIX_TRACE_OPTIONS",
    "Trace",
    "TracePath",
]


def _trace_source(trace: Any, what: str) -> Tuple[str, str, str]:
    """(kind, value, name): a path to read, or Chrome trace JSON text from a dict/str/bytes."""
    if isinstance(trace, dict) or isinstance(trace, list):
        # A trace already in memory (e.g. json.load of a torch.profiler file): the C++ reader
        # parses its JSON text, so the same rules and messages apply as for a file.
        try:
            text = _json.dumps(trace, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InputError(_printable(f"{what}: the trace object is not JSON ({e}); pass a path or a dict from "
                                        "json.load")) from None
        return "text", text, "<dict>"
    if isinstance(trace, (bytes, bytearray)):
        try:
            return "text", bytes(trace).decode("utf-8"), "<bytes>"
        except UnicodeDecodeError as e:
            raise InputError(f"<bytes>: not UTF-8 text at byte {e.start}; pass a path for a .json.gz file") from None
    if isinstance(trace, _os.PathLike) or isinstance(trace, str):
        path = _os.fspath(trace)
        if isinstance(path, bytes):
            path = _os.fsdecode(path)
        return "path", path, path
    raise TypeError(_printable(f"{what}: expected a path, a dict (a parsed trace) or bytes, not "
                               f"{type(trace).__name__}"))


def _rank_inputs(trace: Any) -> Optional[List[str]]:
    """The paths when `trace` names several traces (a list of paths, or a directory), as the
    CLI's `analyze TRACE... | DIR` decides: more than one, or a directory; else None."""
    if isinstance(trace, (list, tuple)) and trace and all(isinstance(t, (str, _os.PathLike)) for t in trace):
        paths = [_os.fsdecode(_os.fspath(t)) for t in trace]
    elif isinstance(trace, (str, _os.PathLike)):
        paths = [_os.fsdecode(_os.fspath(trace))]
    else:
        return None
    if len(paths) > 1 or _os.path.isdir(paths[0]):
        return paths
    return None


def _int_or_none(value: Any, name: str) -> Any:  # an int or None: the caller checks which it allows
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int or None, not {type(value).__name__}")
    return value


@overload
def analyze(trace: Union[bytes, bytearray, Dict[str, Any]], step_range: str = ..., layer_range: str = ..., *,
            pid: Optional[int] = ..., max_sync_points: int = ..., jobs: int = ..., replay_causes: int = ...,
            critical_path: bool = ..., queue_full: int = ..., sequence_op: str = ..., sequence_min_len: int = ...,
            sequence_top: int = ...) -> AnalysisResult: ...


@overload
def analyze(trace: Union[TracePath, Sequence[TracePath], List[Any]], step_range: str = ..., layer_range: str = ...,
            *, pid: Optional[int] = ..., max_sync_points: int = ..., jobs: int = ..., replay_causes: int = ...,
            critical_path: bool = ..., queue_full: int = ..., sequence_op: str = ..., sequence_min_len: int = ...,
            sequence_top: int = ...) -> Union[AnalysisResult, RankAnalysisResult]: ...


def analyze(trace: Union[Trace, Sequence[TracePath]], step_range: str = DEFAULT_STEP_RANGE, layer_range: str = "", *,
            pid: Optional[int] = None, max_sync_points: int = DEFAULT_MAX_SYNC_POINTS, jobs: int = 0,
            replay_causes: int = DEFAULT_REPLAY_CAUSES, critical_path: bool = False,
            queue_full: int = DEFAULT_QUEUE_FULL, sequence_op: str = "",
            sequence_min_len: int = DEFAULT_SEQUENCE_MIN_LEN,
            sequence_top: int = DEFAULT_SEQUENCE_TOP) -> Union[AnalysisResult, RankAnalysisResult]:
    """Sync points, bubbles, copy/compute overlap and GPU busy time of one trace.

    ``trace``: a path (Kineto/torch.profiler or syncscope Chrome JSON, ``.json`` or ``.json.gz``,
    or an Nsight Systems SQLite export), a dict (a parsed trace), or JSON bytes.
    ``step_range`` / ``layer_range``: globs over host range names that delimit steps and layers
    ('' for none), as the CLI's ``--step-range`` / ``--layer-range``. ``pid``: only this
    process's host threads (``--pid``). ``max_sync_points``: at most this many individual sync
    points listed (``--max-sync-points``). ``replay_causes``: the worst causes whose removal is
    replayed (``--replay-causes``; ``result.worst``'s ``removal_saving_ns``, 0 for none).
    ``critical_path``: each step's critical path through host and GPU (``--critical-path``; the
    trace replayed as a dependency graph, docs/analysis.md): ``result.critical_path`` and
    ``result.critical_path_runs``, and ``critical_path`` in the JSON's totals and steps.
    ``queue_full``: a stream's launch queue counts as full while at least this many launched
    activities have not started (``--queue-full``; HTA's max_queue_length, default 1024):
    ``result.queue_blocked``. ``sequence_op``, ``sequence_min_len``, ``sequence_top``: frequent
    kernel sequences under host ops whose name contains ``sequence_op`` ('' for every top-level
    op), of at least ``sequence_min_len`` kernels, the ``sequence_top`` most frequent
    (``--sequence-op`` etc.; HTA's operator_name, min_pattern_len, top_k):
    ``result.kernel_sequences``.

    Returns an :class:`AnalysisResult` holding exactly the CLI's JSON (``result.json``).
    Several traces (a list of paths) or a directory of them: one trace per rank, as the CLI's
    ``analyze TRACE... | DIR``; returns a :class:`RankAnalysisResult` (``jobs``: traces read at
    once, 0 one per core). For a type checker a path may be either (a directory is known only
    when it is read); ``analyze_ranks`` is typed as the rank result alone. One file holding
    several ranks' processes (an Nsight Systems report of a torchrun job) gives the per-rank
    result too, each process a rank, unless ``pid`` or ``critical_path`` asks for one trace.
    """
    ranks = _rank_inputs(trace)
    if ranks is not None:
        if critical_path:
            raise InputError("analyze: --critical-path follows the steps of one trace: leave it out with several traces")
        if pid is not None:
            raise InputError("analyze: --pid picks one process of one trace; ranks are different processes: leave it "
                             "out with several traces")
        return analyze_ranks(ranks, step_range=step_range, layer_range=layer_range, jobs=jobs)
    if isinstance(trace, (list, tuple)) and len(trace) == 1 and isinstance(trace[0], (str, _os.PathLike)):
        trace = trace[0]
    kind, value, name = _trace_source(trace, "analyze")
    if not isinstance(step_range, str) or not isinstance(layer_range, str):
        raise TypeError("analyze: step_range and layer_range are globs (str); '' for none")
    pid = _int_or_none(pid, "pid")
    max_sync_points = _int_or_none(max_sync_points, "max_sync_points")
    if max_sync_points is None or max_sync_points < 0:
        raise InputError(f"max_sync_points {max_sync_points}: expected 0 or more (0 lists none)")
    if pid is not None and not -(2**63) <= pid < 2**63:
        raise InputError(f"--pid {pid}: not a process id (outside 64-bit integers)")
    max_sync_points = min(max_sync_points, 2**63 - 1)
    replay_causes = _int_or_none(replay_causes, "replay_causes")
    if not isinstance(critical_path, bool):
        raise TypeError(f"analyze: critical_path is a bool, not {type(critical_path).__name__}")
    queue_full = _int_or_none(queue_full, "queue_full")
    if not isinstance(sequence_op, str):
        raise TypeError(f"analyze: sequence_op is a str, not {type(sequence_op).__name__}")
    sequence_min_len = _int_or_none(sequence_min_len, "sequence_min_len")
    sequence_top = _int_or_none(sequence_top, "sequence_top")
    # The bounds are the library's (api::check, syncscope/api/defaults.hpp), refused there with
    # these names; here only what the C++ types cannot hold (pybind would raise TypeError).
    for n, v in (("replay_causes", replay_causes), ("queue_full", queue_full), ("sequence_min_len", sequence_min_len),
                 ("sequence_top", sequence_top)):
        if v is None or not 0 <= v < 2**63:
            raise InputError(f"{n} {v}: expected a non-negative integer")
    seq = (sequence_op, sequence_min_len, sequence_top)
    if kind == "path":
        text, counts = _core.analyze_path(value, step_range, layer_range, pid, max_sync_points, replay_causes,
                                          critical_path, queue_full, *seq)
    else:
        text, counts = _core.analyze_text(value, name, step_range, layer_range, pid, max_sync_points, replay_causes,
                                          critical_path, queue_full, *seq)
    document = _json.loads(text)
    if document.get("kind") == "syncscope.rank_analysis":  # one file of several ranks' processes
        return RankAnalysisResult(document)
    result = AnalysisResult(document, counts)
    _warn_all(result.json["warnings"], stacklevel=2)  # at the caller's line
    return result


def analyze_ranks(traces: Union[TracePath, Sequence[TracePath]], step_range: str = DEFAULT_STEP_RANGE,
                  layer_range: str = "", *, jobs: int = 0) -> RankAnalysisResult:
    """One trace per rank of a distributed job (paths, or directories of *.json/*.json.gz):
    the CLI's per-rank table and cross-rank summary (``syncscope analyze DIR --format json``).
    The rank of each trace: distributedInfo.rank, else 'rank<N>' in its file name."""
    if isinstance(traces, (str, _os.PathLike)):
        traces = [traces]
    if not isinstance(traces, (list, tuple)) or not traces or \
            not all(isinstance(t, (str, _os.PathLike)) for t in traces):
        raise TypeError("analyze_ranks: expected a path or a non-empty list of paths")
    if not isinstance(step_range, str) or not isinstance(layer_range, str):
        raise TypeError("analyze_ranks: step_range and layer_range are globs (str); '' for none")
    jobs = _int_or_none(jobs, "jobs")
    if jobs is None or not 0 <= jobs <= _JOBS_MAX:
        raise InputError(f"jobs {jobs}: expected 0..{_JOBS_MAX} (0: one per core)")
    paths = [_os.fsdecode(_os.fspath(t)) for t in traces]
    return RankAnalysisResult(_json.loads(_core.analyze_ranks(paths, step_range, layer_range, jobs)))


def predict(trace: Trace, step_range: str = DEFAULT_STEP_RANGE, layer_range: str = "", *, gpu: str = "",
            step_ms: Optional[float] = None, samples: int = DEFAULT_SAMPLES, seed: int = _PREDICT_SEED,
            what_if: Sequence[str] = (), **fix_options: Union[int, float, None]) -> Union[PredictionResult,
                                                                                          JobReplayResult]:
    """What each fix would save in the run a trace recorded (``syncscope predict --trace``).

    Arguments as the CLI's options of the same names: ``gpu`` a shipped profile name (H100,
    H200, B200, RTX5090, GB10) or a profile file; ``step_ms`` replaces the trace's step time;
    ``what_if`` edits replayed on the trace (``--what-if``: e.g.
    "remove-syncs:cause=aten::item"; none: every fix variant's edit). The fixes' own options
    are keywords named as their CLI options with ``_`` for ``-`` (``FIX_TRACE_OPTIONS`` lists
    them with their defaults: e.g. ``prefetch_depth`` k >= 2, ``top_k`` experts per token);
    None or absent is the fix's default.
    Returns a :class:`PredictionResult` holding exactly the CLI's JSON (with its "replay" and
    "what_if" blocks). These are model predictions, not measurements. A trace holding several
    ranks' processes (one Nsight Systems report of a torchrun job) gives the whole-job replay of
    its processes as ranks instead, a :class:`JobReplayResult` (the CLI's JSON for it); so does a
    directory of one job's rank traces (:func:`predict_job` also takes ``what_if_rank``).
    """
    if isinstance(what_if, str) or not all(isinstance(e, str) for e in what_if):
        raise TypeError("predict: what_if is a sequence of str edits")
    what_if = list(what_if)
    kind, value, name = _trace_source(trace, "predict")
    if not all(isinstance(s, str) for s in (step_range, layer_range, gpu)):
        raise TypeError("predict: step_range, layer_range and gpu are str")
    options = _fix_option_texts(fix_options, "predict")
    samples = _int_or_none(samples, "samples")
    seed = _int_or_none(seed, "seed")
    if samples is not None and not -(2**31) <= samples < 2**31:
        raise InputError(f"samples {samples}: out of range")
    if seed is None or not 0 <= seed < 2**64:
        raise InputError(f"seed {seed}: expected 0 .. 2**64-1")
    if step_ms is not None:
        step_ms = float(step_ms)
    if kind == "path":
        text = _core.predict_path(value, name, step_range, layer_range, gpu, options, step_ms, samples, seed,
                                  what_if)
    else:
        text = _core.predict_text(value, name, step_range, layer_range, gpu, options, step_ms, samples, seed,
                                  what_if)
    document = _json.loads(text)
    if document.get("kind") == "job_replay":
        return JobReplayResult(document)
    return PredictionResult(document)


class DiffResult:
    """``syncscope diff BEFORE AFTER --format json``, parsed (``json``): what changed between
    two traces and, with ``what_if``, BEFORE replayed with the edits against the real AFTER."""

    def __init__(self, document: Dict[str, Any]) -> None:
        self.json: Dict[str, Any] = document

    def __getitem__(self, key: str) -> Any:
        return self.json[key]

    def __repr__(self) -> str:
        return f"<syncscope.DiffResult {self.json.get('before', '?')} -> {self.json.get('after', '?')}>"


def diff(before: TracePath, after: TracePath, step_range: str = DEFAULT_STEP_RANGE, layer_range: str = "", *,
         what_if: Sequence[str] = (), gpu: str = "") -> DiffResult:
    """``syncscope diff BEFORE AFTER``: two trace files (paths), the CLI's JSON as a DiffResult.
    ``gpu``: a GPU profile (a shipped name or a file) for edits that need a rate the trace does
    not show, as the CLI's ``--gpu``."""
    import os as _os

    for t in (before, after):
        if not isinstance(t, (str, _os.PathLike)):
            raise TypeError("diff: before and after are paths of trace files")
    if not all(isinstance(s, str) for s in (step_range, layer_range, gpu)):
        raise TypeError("diff: step_range, layer_range and gpu are str")
    if isinstance(what_if, str) or not all(isinstance(e, str) for e in what_if):
        raise TypeError("diff: what_if is a sequence of str edits")
    text = _core.diff_paths(_os.fspath(before), _os.fspath(after), list(what_if), step_range, layer_range,
                          gpu)
    return DiffResult(_json.loads(text))


def validate(results: TracePath) -> ValidationResult:
    """``syncscope validate RESULTS``: a run's results.json (or the run directory holding it), read
    strictly (bad input raises InputError naming the file, line and column), predicted against
    observed speedups per variant, as a ValidationResult. ``passed`` is False where the CLI exits
    1: a variant outside its tolerance, or nothing compared (``nothing_compared`` says why)."""
    if not isinstance(results, (str, _os.PathLike)):
        raise TypeError("validate: results is the path of a results.json or of a run directory")
    text, nothing, code = _core.validate_path(_os.fspath(results))
    return ValidationResult(_json.loads(text), nothing, code)
