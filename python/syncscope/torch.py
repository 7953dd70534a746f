"""torch.profiler integration: an ``on_trace_ready`` handler that writes the trace exactly
where ``torch.profiler.tensorboard_trace_handler`` would, analyzes it in-process and prints a
short per-step report.

    import torch, syncscope.torch
    handler = syncscope.torch.trace_handler("./log")
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
            on_trace_ready=handler) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    handler.results[-1].steps    # the last cycle's steps as a DataFrame

Each ``schedule(wait, warmup, active)`` cycle ends in one call of the handler: one trace file
and one report per cycle. Sync points are counted from the CUDA API calls in the trace;
torch's ``cuda_sync`` records (``_ExperimentalConfig(enable_cuda_sync_events=True)``, see
``sync_events_config``) add each sync's stream and device, which the bubble needs in a
multi-stream trace. The handler warns when a trace has none.
"""

import sys
import time
import warnings
from typing import IO, Any, Dict, List, Optional, cast

import torch.profiler as _tp

from . import DEFAULT_STEP_RANGE, AnalysisResult, Error, analyze
from ._text import printable


class SyncscopeWarning(UserWarning):
    """A trace the handler wrote lacks what the analysis needs, or the analysis refused it."""


def sync_events_config() -> Any:
    """``torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)`` when the installed
    torch accepts it, else None. torch 2.11 accepts it (tests/fixtures/torch was recorded with
    it); torch 1.13 (Debian 12's python3-torch) does not (TypeError: unknown argument).
    Pass it as ``torch.profiler.profile(experimental_config=...)``."""
    try:
        return _tp._ExperimentalConfig(enable_cuda_sync_events=True)  # type: ignore[call-arg] # (torch 1.13: no)
    except (TypeError, AttributeError):
        return None


class _ExportCapture:
    """Stands in for the profiler when torch's own tensorboard_trace_handler runs, to learn the
    file name it chose (its naming differs across torch versions: hostname_pid, then a
    millisecond or nanosecond time) while torch itself writes the file."""

    def __init__(self, prof: Any) -> None:
        self._prof = prof
        self.path: Optional[str] = None

    def export_chrome_trace(self, path: str) -> Any:
        self.path = path
        return self._prof.export_chrome_trace(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._prof, name)


class TraceHandler:
    """The callable ``trace_handler`` returns. ``results``: one AnalysisResult per cycle (None
    where the analysis refused the trace: ``errors`` has the message); ``paths``: the trace
    files written; ``timings``: per cycle, seconds spent writing and analyzing (wall clock)."""

    def __init__(self, dir_name: str, worker_name: Optional[str], use_gzip: bool, print_report: bool,
                 step_range: str, layer_range: str, top: int, file: Optional[IO[str]]) -> None:
        self._write = _tp.tensorboard_trace_handler(dir_name, worker_name=worker_name, use_gzip=use_gzip)
        self.print_report = print_report
        self.step_range = step_range
        self.layer_range = layer_range
        self.top = top
        self.file = file
        self.results: List[Optional[AnalysisResult]] = []
        self.paths: List[str] = []
        self.errors: List[Optional[str]] = []
        self.timings: List[Dict[str, float]] = []
        self._told_no_kineto = False

    def _check_kineto(self, result: AnalysisResult) -> None:
        # Without Kineto (Debian 12's python3-torch 1.13 is built without it) torch.profiler
        # falls back to the legacy profiler, whose export_chrome_trace writes CPU ops and
        # ProfilerStep#N without categories and no CUDA records: steps (from those uncategorized
        # events, profiler/analysis/src/legacy_ranges.hpp) but no sync points.
        # Said once, for a trace in which the analysis found nothing.
        n = result.record_counts
        if self._told_no_kineto or n.get("ranges", 0) + n.get("api_calls", 0) > 0:
            return
        import torch.autograd

        if not torch.autograd.kineto_available():
            self._told_no_kineto = True
            warnings.warn(f"this torch ({_torch_version()}) is built without Kineto "
                          "(torch.autograd.kineto_available() is False): its traces hold CPU ops without categories "
                          "and no CUDA records, so syncscope finds steps (ProfilerStep#N) but no sync points in "
                          "them; use a torch with Kineto (the PyTorch wheels have it)", SyncscopeWarning, stacklevel=3)

    def __call__(self, prof: Any) -> None:
        capture = _ExportCapture(prof)
        t0 = time.perf_counter()
        self._write(capture)
        t1 = time.perf_counter()
        path = cast(str, capture.path)  # tensorboard_trace_handler always exports, to one file
        self.paths.append(path)
        try:
            # One file: an AnalysisResult (a directory or a list would be a rank analysis).
            result = cast(AnalysisResult, analyze(path, step_range=self.step_range, layer_range=self.layer_range))
        except Error as e:
            # The training run goes on: a trace the analysis refuses is reported, not raised.
            self.results.append(None)
            self.errors.append(str(e))
            self.timings.append({"write_s": t1 - t0, "analyze_s": time.perf_counter() - t1})
            warnings.warn(f"syncscope could not analyze {printable(path)}: {printable(e)}", SyncscopeWarning,
                          stacklevel=2)
            return
        self.timings.append({"write_s": t1 - t0, "analyze_s": time.perf_counter() - t1})
        self.results.append(result)
        self.errors.append(None)
        self._check_kineto(result)
        if result.record_counts.get("sync_records", 0) == 0:
            hint = ("torch >= 2.x: torch.profiler.profile(experimental_config=syncscope.torch.sync_events_config()), "
                    "i.e. _ExperimentalConfig(enable_cuda_sync_events=True)" if sync_events_config() is not None else
                    f"this torch ({_torch_version()}) has no _ExperimentalConfig(enable_cuda_sync_events=...); "
                    "torch 2.11 has")
            warnings.warn(f"{printable(path)}: the trace has no cuda_sync records; sync points are counted from "
                          f"the CUDA API calls, the records add each sync's stream and device ({hint})",
                          SyncscopeWarning, stacklevel=2)
        if self.print_report:
            print(result.report(top=self.top), file=self.file or sys.stdout, flush=True)


def _torch_version() -> str:
    import torch

    return torch.__version__


def trace_handler(dir_name: str, worker_name: Optional[str] = None, use_gzip: bool = False, *,
                  print_report: bool = True, step_range: str = DEFAULT_STEP_RANGE, layer_range: str = "", top: int = 3,
                  file: Optional[IO[str]] = None) -> TraceHandler:
    """An ``on_trace_ready`` callable for ``torch.profiler.profile``.

    ``dir_name``, ``worker_name``, ``use_gzip``: as ``tensorboard_trace_handler``'s (the file is
    written by it: ``<worker_name>.<time>.pt.trace.json[.gz]``, worker_name defaulting to
    ``<hostname>_<pid>``; in a distributed job give each rank its own, e.g.
    ``worker_name=f"rank{rank}"``, which ``syncscope analyze DIR`` reads the rank from).
    ``step_range`` / ``layer_range``: as ``syncscope.analyze`` (torch.profiler's steps are
    ``ProfilerStep#N``). ``print_report``: print the per-step report to ``file`` (stdout).
    ``top``: causes listed. The analysis runs in this thread with the GIL released.
    """
    return TraceHandler(dir_name, worker_name, use_gzip, print_report, step_range, layer_range, top, file)
