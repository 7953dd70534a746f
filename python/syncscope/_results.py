"""Result objects over the CLI's JSON: tables as pandas DataFrames (lists of dicts without
pandas) and an HTML view for notebooks. They reshape what the C++ serializer produced and
compute nothing of their own."""

import bisect
import html
import re
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

try:  # pandas is optional: without it the tables are lists of dicts with the same columns.
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the no-pandas test
    _pd = None


def have_pandas() -> bool:
    return _pd is not None


# The tables' type, named in the annotations: pandas' DataFrame (a list of dicts without pandas).
if TYPE_CHECKING:
    from pandas import DataFrame
elif _pd is not None:
    DataFrame = _pd.DataFrame
else:
    DataFrame = list

from ._text import printable  # names in HTML as in the CLI's text: no bidi control reorders a table

# Columns that hold names: pandas "category" (few distinct values, cheap to group by).
_NAME_COLUMNS = frozenset({"name", "cause", "api", "kernel", "class", "category", "kind", "where", "verdict",
                           "top_cause", "op"})
# Integer columns that may be absent in a row (None): pandas' nullable "Int64", never object.
_NULLABLE_INT = frozenset({"removal_saving_ns"})
# Interpolated statistics stay float64 even when named *_ns (a median of two values can be x.5).
_FLOAT_PARTS = ("median", "p10", "p90", "mean", "std", "fraction", "per_step")


def _is_int_column(name: str) -> bool:
    """Times in ns and counts: int64 whatever the rows hold (an empty frame too)."""
    last = name.rsplit(".", 1)[-1]
    if any(p in last for p in _FLOAT_PARTS):
        return False
    return (last.endswith(("_ns", "_bytes")) or last in ("events", "allocations", "frees", "device_type",
                                                        "unmatched_frees", "owner_ops", "bytes") or last in ("count", "gaps", "syncs", "kernels", "memcpys", "memcpy_bytes",
                                             "total", "device", "stream", "pid", "tid", "correlation", "index",
                                             "rank", "max", "polls", "sync_edges", "start", "end")
            or name.startswith(("syncs.by_cause.", "syncs.by_api.", "gpu_busy_by_device.")))


def _table(rows: List[Dict[str, Any]], columns: Optional[Sequence[str]] = None) -> Any:
    """A DataFrame of `rows` with stable dtypes: int64 for ns and counts (nullable Int64 where a
    value may be missing), category for names, the columns kept when there are no rows. A
    list of dicts without pandas."""
    if _pd is None:
        return rows
    df = _pd.DataFrame(rows, columns=columns)
    for c in df.columns:
        col = df[c]
        if c in _NULLABLE_INT:
            df[c] = _pd.array([None if v is None or v != v else int(v) for v in col], dtype="Int64")
        elif _is_int_column(c) and (col.dtype.kind in "iub" or len(col) == 0 or
                                    (col.dtype.kind == "f" and bool((col.dropna() % 1 == 0).all()))):
            # (a model's prediction in ns can be fractional: such a column stays float64)
            if col.isna().any():
                df[c] = col.astype("Int64")
            else:
                df[c] = col.astype("int64")
        elif c in _NAME_COLUMNS and col.dtype == object:
            df[c] = col.astype("category")
        elif len(col) == 0 and col.dtype == object:
            df[c] = col.astype("float64")  # fractions and interpolated statistics
    return df


def _flatten(obj: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """{"syncs": {"total": 3}} -> {"syncs.total": 3}: the CLI's CSV metric names (JSON paths
    joined with '.', reports/include/syncscope/reports/analysis_printers.hpp)."""
    out = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


# Maps keyed by cause, API or device: a key one window lacks is a count (or time) of 0 there.
_SPARSE_PREFIXES = ("syncs.by_cause.", "syncs.by_api.", "gpu_busy_by_device.")


# The critical path's per-step columns (reports/src/analysis_critical_path.cpp's JSON names).
_CRITICAL_COLUMNS = ("name", "length_ns", "host_ns", "gpu_ns", "launch_ns", "sync_wait_ns", "other_ns", "sync_edges")


# Columns of the HTA-analysis frames (AnalysisResult.aten_op_kernels, queue_length_series,
# queue_blocked): every column int64 but the names (category) and the fractions (float64),
# whatever the rows hold, an empty frame too.
_ATEN_COLUMNS = ["op", "kernels", "kernels_per_op", "count", "op_delay_mean_ns", "op_delay_max_ns",
                 "launch_delay_mean_ns", "launch_delay_max_ns", "kernel_ns"]
_QUEUE_POINT_COLUMNS = ["device", "stream", "t_ns", "depth", "pending"]
_QUEUE_BLOCKED_COLUMNS = ["device", "stream", "threshold", "max_pending", "blocked_ns", "blocked_fraction",
                          "change_points", "bucket_ns"]


def _typed_frame(rows: List[Dict[str, Any]], columns: List[str], names: Sequence[str],
                 index: Union[str, List[str]]) -> Any:
    """`rows` as a DataFrame of `columns`: `names` category, *_fraction float64, the rest int64;
    indexed by `index`. A list of dicts without pandas."""
    if _pd is None:
        return rows
    df = _pd.DataFrame(rows, columns=columns)
    for c in columns:
        if c in names:
            df[c] = df[c].astype("category")
        elif c.endswith("fraction"):
            df[c] = df[c].astype("float64")
        else:
            df[c] = df[c].astype("int64")
    return df.set_index(index)


def window_rows(windows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One flat dict per window (step or layer), every row with the same keys."""
    rows = [_flatten(w) for w in windows]
    sparse = sorted({k for r in rows for k in r if k.startswith(_SPARSE_PREFIXES)})
    for r in rows:
        for k in sparse:
            r.setdefault(k, 0)
    return rows


# ---- Indexes (docs/python.md "DataFrames"): what a row is looked up by -----------------------
# A step is labelled by the number its name ends in (torch.profiler's ProfilerStep#3 -> 3,
# train_step#0 -> 0), so r.steps.loc[3] is the step the profiler called 3; when some name has
# no number or two share one, by its position (the JSON's "index"). Sync points and layers are
# keyed by (step, ordinal within that step), the step being the one whose [start_ns, end_ns)
# holds their start (-1: outside every step), so r.sync_points.loc[3] is step 3's syncs.
_TRAILING_NUMBER = re.compile(r"(\d+)$")
OUTSIDE_STEPS = -1


def step_labels(steps: List[Dict[str, Any]]) -> List[int]:
    """Each step's index label, as the comment above says."""
    numbers = []
    for s in steps:
        m = _TRAILING_NUMBER.search(s["name"])
        numbers.append(int(m.group(1)) if m else None)
    if None not in numbers and len(set(numbers)) == len(numbers):
        return [int(n) for n in numbers if n is not None]
    return [int(s.get("index", i)) for i, s in enumerate(steps)]


def step_keys(steps: List[Dict[str, Any]], starts: Sequence[int]) -> List[Tuple[int, int]]:
    """(step label, ordinal) for records starting at `starts` (in time order): the step holding
    each start (the latest-starting one when steps overlap), OUTSIDE_STEPS outside all."""
    labels = step_labels(steps)
    order = sorted(range(len(steps)), key=lambda i: steps[i]["start_ns"])
    begins = [steps[i]["start_ns"] for i in order]
    seen: Dict[int, int] = {}
    keys = []
    for t in starts:
        j = bisect.bisect_right(begins, t) - 1
        label = labels[order[j]] if j >= 0 and t < steps[order[j]]["end_ns"] else OUTSIDE_STEPS
        keys.append((label, seen.get(label, 0)))
        seen[label] = seen.get(label, 0) + 1
    return keys


def _with_index(df: Any, names: Sequence[str], keys: Sequence[Any]) -> Any:
    """`df` indexed by `keys` (one label, or one tuple per row, named `names`): int64 levels
    whatever the rows (an empty frame too). A list of dicts (no pandas) is returned as it is."""
    if _pd is None:
        return df
    if len(names) == 1:
        df.index = _pd.Index(_pd.array(list(keys), dtype="int64"), name=names[0])
    else:
        levels = [_pd.array([k[i] for k in keys], dtype="int64") for i in range(len(names))]
        df.index = _pd.MultiIndex.from_arrays(levels, names=list(names))
    return df


def _key_columns_as_index(df: Any, columns: List[str]) -> Any:
    """`df` indexed by its own key columns (moved into the index, as DataFrame.set_index)."""
    return df if _pd is None else df.set_index(columns)


def format_ns(ns: float) -> str:
    """A duration in the unit people read: "890 ns", "56.7 us", "1.234 ms", "2.50 s"."""
    ns = float(ns)
    a = abs(ns)
    if a < 1e3:
        return f"{ns:.0f} ns"
    if a < 1e6:
        return f"{ns / 1e3:.1f} us"
    if a < 1e9:
        return f"{ns / 1e6:.3f} ms"
    return f"{ns / 1e9:.2f} s"


def _removal_text(w: Dict[str, Any]) -> str:
    """What removing a worst-offender cause saves, as the CLI's table says it."""
    if "removal_saving_ns" not in w:
        return "not replayed"
    n = w["syncs_per_step"]
    count = f"{n:.0f}" if abs(n - round(n)) < 1e-9 else f"{n:.1f}"
    if w["removal_saving_ns"] is None:
        return f"{count} x per step: not claimed"
    return f"{count} x per step: {format_ns(w['removal_saving_ns'])}/step if removed"


def _html_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    h = "".join(f"<th>{html.escape(printable(c))}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(printable(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


class _Document:
    """A parsed JSON document of the CLI's (``json``, the whole of it): indexing reads its keys,
    ``source`` the trace or results it describes. The result classes below add their views."""

    def __init__(self, document: Dict[str, Any]) -> None:
        self.json: Dict[str, Any] = document

    def __getitem__(self, key: str) -> Any:
        return self.json[key]

    @property
    def source(self) -> str:
        return self.json["source"]


class AnalysisResult(_Document):
    """``syncscope analyze --format json``, parsed. ``json`` is the whole document (the same
    keys as the CLI's: schema_version, kind, source, options, meta, totals, steps, layers,
    step_summary, layer_summary, worst, warnings, sync_points, sync_points_total,
    sync_points_truncated); ``record_counts`` says what the trace held (api_calls, kernels,
    memcpys, memsets, sync_records, ranges, rank, source_tool, source_version)."""

    def __init__(self, document: Dict[str, Any], record_counts: Dict[str, Any]) -> None:
        super().__init__(document)
        self.record_counts: Dict[str, Any] = dict(record_counts)

    @property
    def totals(self) -> Dict[str, Any]:
        """The whole-trace window (a dict, as in the JSON)."""
        return self.json["totals"]

    @property
    def warnings(self) -> List[str]:
        return list(self.json["warnings"])

    def _window_columns(self) -> List[str]:
        # A window's columns without rows: the whole-trace window's, less the sparse maps.
        return [k for k in _flatten(self.json["totals"]) if not k.startswith(_SPARSE_PREFIXES)]

    @property
    def steps(self) -> "DataFrame":
        """One row per step: the window's JSON flattened to CSV metric names
        (``syncs.total``, ``syncs.by_cause.aten::item``, ``overlap.d2h.fraction``, ...).
        Without steps: no rows, the same columns. Index ``step``: the number the step's name
        ends in (``ProfilerStep#3`` -> 3), else its position (``step_labels``)."""
        rows = window_rows(self.json["steps"])
        return _with_index(_table(rows, None if rows else self._window_columns()), ["step"],
                           step_labels(self.json["steps"]))

    @property
    def layers(self) -> "DataFrame":
        """One row per layer window, as ``steps``; index (``step``, ``layer``): the step holding
        the layer's start (-1 outside every step) and the layer's ordinal in it."""
        rows = window_rows(self.json["layers"])
        keys = step_keys(self.json["steps"], [w["start_ns"] for w in self.json["layers"]])
        return _with_index(_table(rows, None if rows else self._window_columns()), ["step", "layer"], keys)

    @property
    def kernels(self) -> "DataFrame":
        """One row per kernel name (the CLI's ``gpu.kernels_by_name``, largest total first, at
        most 50), indexed by ``name``: class, count, total_ns, median_ns, p90_ns, max_ns, min_ns,
        mean_ns and std_ns (the sample standard deviation, ddof 1, as pandas' ``.std()`` and HTA's
        get_gpu_kernel_breakdown; 0 for one kernel)."""
        cols = ["name", "class", "count", "total_ns", "median_ns", "p90_ns", "max_ns", "min_ns", "mean_ns", "std_ns"]
        rows = []
        for k in self.json.get("gpu", {}).get("kernels_by_name", []):
            st = k.get("stats", k)
            rows.append({"name": k["name"], "class": k.get("class", ""), **{c: st[c] for c in cols[2:]}})
        return _key_columns_as_index(_table(rows, cols), ["name"])

    @property
    def gpu_annotations(self) -> "DataFrame":
        """GPU user annotations per name (Kineto's ``gpu_user_annotation`` events: each
        record_function range as the GPU ran it; the CLI's ``gpu.gpu_annotations``, largest total
        first, at most 50 of ``gpu.gpu_annotation_names``; HTA's get_gpu_user_annotation_breakdown
        without its "others" row): name, streams, count, total_ns, min_ns, max_ns, mean_ns,
        std_ns (sample, ddof 1), median_ns, p90_ns. No rows when the trace has none."""
        cols = ["name", "streams", "count", "total_ns", "min_ns", "max_ns", "mean_ns", "std_ns", "median_ns",
                "p90_ns"]
        rows = [{c: a[c] for c in cols} for a in self.json.get("gpu", {}).get("gpu_annotations", [])]
        df = _table(rows, cols)
        if _pd is not None:
            df["streams"] = df["streams"].astype("int64")
        return df

    @property
    def kernel_sequences(self) -> "DataFrame":
        """Frequent kernel sequences (the CLI's ``gpu.kernel_sequences.top``, HTA's
        get_frequent_cuda_kernel_sequences, docs/analysis.md): one row per pattern, most
        frequent first (index 0 = most frequent): op (the root op's name), kernels (the kernel
        names in GPU order, '|'-joined as HTA's "pattern"), length, count, gpu_ns (summed kernel
        time, a fusion's upper bound of saving is part of it), host_ns (summed op time). The
        rule and totals are in ``result.json["gpu"]["kernel_sequences"]`` (roots, patterns)."""
        cols = ["op", "kernels", "length", "count", "gpu_ns", "host_ns"]
        rows = [{"op": q["op"], "kernels": "|".join(q["kernels"]), "length": q["length"], "count": q["count"],
                 "gpu_ns": q["gpu_ns"], "host_ns": q["host_ns"]}
                for q in self.json.get("gpu", {}).get("kernel_sequences", {}).get("top", [])]
        df = _table(rows, cols)
        if _pd is not None:
            df["op"] = df["op"].astype("category")
            df["kernels"] = df["kernels"].astype(object)  # text; an empty frame would say int64
            df["length"] = df["length"].astype("int64")
        return df

    @property
    def idle_by_stream(self) -> "DataFrame":
        """Idle time per stream in our four classes (docs/analysis.md), indexed by (device,
        stream): window_ns, busy_ns, sync_bubble_ns, host_wait_ns, dependency_wait_ns,
        other_ns, gaps, verdict."""
        cols = ["device", "stream", "window_ns", "busy_ns", "sync_bubble_ns", "host_wait_ns", "dependency_wait_ns",
                "other_ns", "gaps", "verdict"]
        rows = []
        for s in self.json.get("idle_by_stream", []):
            i = s["idle"]
            rows.append({"device": s["device"], "stream": s["stream"], **{c: i[c] for c in cols[2:8]},
                         "gaps": s["gaps"], "verdict": s["verdict"]})
        return _key_columns_as_index(_table(rows, cols), ["device", "stream"])

    @property
    def sync_points(self) -> "DataFrame":
        """One row per listed sync point, in time order (at most max_sync_points of
        ``sync_points_total``; ``sync_points_truncated`` says when some were left out). Index
        (``step``, ``sync``): the step holding its start (-1 outside every step; labels as
        ``steps``) and its ordinal in that step."""
        rows = [dict(p) for p in self.json["sync_points"]]
        # The CLI's own fields, in its order (a field the CLI adds appears here without a change).
        cols = list(rows[0]) if rows else ["start_ns", "end_ns", "blocked_ns", "bubble_ns", "api", "cause",
                                           "merged_copy", "polling", "pid", "tid", "device", "stream", "correlation"]
        keys = step_keys(self.json["steps"], [p["start_ns"] for p in rows])
        return _with_index(_table(rows, cols), ["step", "sync"], keys)

    @property
    def worst(self) -> "DataFrame":
        """Causes ranked by blocked + bubble time (cost_ns), largest first; for the replayed ones
        (``replay_causes``) also syncs_per_step and removal_saving_ns: the step time saved per
        step by replaying the trace without that cause's syncs (None: not claimed)."""
        rows = [dict(w) for w in self.json["worst"]]
        cols = ["cause", "count", "blocked_ns", "bubble_ns", "cost_ns"]
        if any("removal_saving_ns" in w for w in rows):
            # Nullable Int64 in pandas: an integer column whether or not some cause is unclaimed.
            cols += ["syncs_per_step", "removal_saving_ns"]
        return _table(rows, cols)

    @property
    def critical_path(self) -> "DataFrame":
        """One row per step with a critical path (``analyze(..., critical_path=True)``; the
        CLI's ``--critical-path``): name, length_ns and its shares host_ns, gpu_ns, launch_ns,
        sync_wait_ns, other_ns (summing exactly to length_ns, docs/analysis.md "Critical
        path"), sync_edges. Times are the identity replay's, not the recorded ones. Empty
        without the option. Index ``step``, as ``steps``'."""
        rows, labels = [], []
        for s, label in zip(self.json["steps"], step_labels(self.json["steps"])):
            c = s.get("critical_path")
            if c is None:
                continue
            row = {"name": s["name"]}
            row.update({k: c[k] for k in _CRITICAL_COLUMNS[1:]})
            rows.append(row)
            labels.append(label)
        return _with_index(_table(rows, list(_CRITICAL_COLUMNS)), ["step"], labels)

    @property
    def critical_path_runs(self) -> "DataFrame":
        """The longest runs on each step's critical path (at most 5 a step, longest first): step,
        rank (1 = longest), kind (host, gpu, launch, sync_wait, other), where, what (first ..
        last record), start_ns (offset from the step's replayed start), duration_ns."""
        rows = []
        for s in self.json["steps"]:
            c = s.get("critical_path")
            for i, r in enumerate(c["top"] if c else [], start=1):
                rows.append({"step": s["name"], "rank": i, "kind": r["kind"], "where": r["where"], "what": r["what"],
                             "start_ns": r["start_ns"], "duration_ns": r["duration_ns"]})
        return _table(rows, ["step", "rank", "kind", "where", "what", "start_ns", "duration_ns"])

    # Memory (issue 38): the CLI's gpu.memory (docs/analysis.md, "Memory").
    _MEMORY_COLUMNS = ("name", "device_type", "device", "events", "allocations", "frees", "allocated_bytes",
                       "freed_bytes", "totals_from_trace", "peak_allocated_bytes", "peak_allocated_ns",
                       "peak_reserved_bytes", "peak_reserved_ns", "live_at_peak_bytes", "unattributed_bytes",
                       "unmatched_frees", "owner_ops")

    def _memory_devices(self) -> List[Dict[str, Any]]:
        return self.json.get("gpu", {}).get("memory", {}).get("devices", [])

    @property
    def memory(self) -> "DataFrame":
        """One row per device with profile_memory events (torch.profiler's ``profile_memory=True``):
        counts, peak allocated/reserved bytes and when (ns), the bytes live at the allocated peak
        that were allocated in the trace and those from before it (unattributed_bytes). Reserved
        is -1 where the trace never said."""
        rows = [{c: d[c] for c in self._MEMORY_COLUMNS} for d in self._memory_devices()]
        return _table(rows, list(self._MEMORY_COLUMNS))

    @property
    def memory_owners(self) -> "DataFrame":
        """Who holds the allocated peak: per device, the CPU ops (outermost aten:: op enclosing the
        allocation, else the innermost op; "(no op)") of the allocations live at the peak, largest
        first (at most 20 per device): device, rank (1 = largest), op, allocations, bytes."""
        rows = [{"name": d["name"], "rank": i, "op": o["op"], "allocations": o["allocations"], "bytes": o["bytes"]}
                for d in self._memory_devices() for i, o in enumerate(d["owners"], start=1)]
        return _table(rows, ["name", "rank", "op", "allocations", "bytes"])

    @property
    def memory_timeline(self) -> "DataFrame":
        """Allocated and reserved bytes over time per device (at most 512 points a device; with
        more events, the largest values per time bucket): name, time_ns, allocated_bytes,
        reserved_bytes (-1: not known yet)."""
        rows: List[Dict[str, Any]] = []
        for d in self._memory_devices():
            s = d["series"]
            rows += [{"name": d["name"], "time_ns": t, "allocated_bytes": a, "reserved_bytes": r}
                     for t, a, r in zip(s["time_ns"], s["allocated_bytes"], s["reserved_bytes"])]
        return _table(rows, ["name", "time_ns", "allocated_bytes", "reserved_bytes"])

    # --- HTA's analyses we lacked: kernels per ATen op, queue length over time (docs/analysis.md) ---
    @property
    def aten_op_kernels(self) -> "DataFrame":
        """Kernels and launch delay per ATen op (HTA's get_aten_op_kernels_and_delay; the CLI's
        ``gpu.aten_op_kernels``): one row per (op, kernel sequence), indexed by both, most
        frequent first (at most 50; ``json["gpu"]["aten_op_kernels"]["groups_total"]`` counts
        all): kernels_per_op, count, op_delay_mean_ns / op_delay_max_ns (op start -> first
        launch call), launch_delay_mean_ns / launch_delay_max_ns (that call -> its kernel's
        start), kernel_ns. Times int64 ns."""
        groups = self.json.get("gpu", {}).get("aten_op_kernels", {}).get("groups", [])
        return _typed_frame([dict(g) for g in groups], _ATEN_COLUMNS, ("op", "kernels"), ["op", "kernels"])

    @property
    def queue_length_series(self) -> "DataFrame":
        """Queue length over time per stream (HTA's get_queue_length_time_series; the CLI's
        ``gpu.queue_series``): one row per change point, indexed by (device, stream, t_ns):
        depth (ours: launched, not finished) and pending (HTA's: launched, not started); each
        value holds until the next row. A stream with more than 1000 change points is given as
        1000 equal buckets holding each count's maximum (``queue_blocked``'s bucket_ns)."""
        rows = []
        for st in self.json.get("gpu", {}).get("queue_series", {}).get("streams", []):
            rows += [{"device": st["device"], "stream": st["stream"], "t_ns": t, "depth": dep, "pending": pen}
                     for t, dep, pen in st["points"]]
        return _typed_frame(rows, _QUEUE_POINT_COLUMNS, (), ["device", "stream", "t_ns"])

    @property
    def queue_blocked(self) -> "DataFrame":
        """Time blocked on a full launch queue per stream (HTA's
        get_time_spent_blocked_on_full_queue), indexed by (device, stream): threshold (HTA's
        max_queue_length; ``analyze(..., queue_full=)``, the CLI's ``--queue-full``),
        max_pending, blocked_ns (pending >= threshold), blocked_fraction (of the trace's
        span), change_points, bucket_ns (0: the series is every change point)."""
        q = self.json.get("gpu", {}).get("queue_series", {})
        rows = [{"device": st["device"], "stream": st["stream"], "threshold": q["threshold"],
                 "max_pending": st["max_pending"], "blocked_ns": st["blocked_ns"],
                 "blocked_fraction": st["blocked_fraction"], "change_points": st["change_points"],
                 "bucket_ns": st["bucket_ns"]} for st in q.get("streams", [])]
        return _typed_frame(rows, _QUEUE_BLOCKED_COLUMNS, (), ["device", "stream"])

    @property
    def has_gpu_activity(self) -> bool:
        n = self.record_counts
        return n.get("kernels", 0) + n.get("memcpys", 0) + n.get("memsets", 0) > 0

    def report(self, top: int = 3) -> str:
        """The short per-step text the torch handler prints."""
        from ._report import format_report

        return format_report(self, top=top)

    def __repr__(self) -> str:
        t = self.totals
        return (f"<syncscope.AnalysisResult {self.source!r}: {t['syncs']['total']} sync points, "
                f"{len(self.json['steps'])} steps, blocked {format_ns(t['sync_blocked_ns'])}, "
                f"bubble {format_ns(t['sync_bubble_ns'])}>")

    def _repr_html_(self) -> str:
        t = self.totals
        parts = [f"<h4>syncscope analysis: {html.escape(printable(self.source))}</h4>",
                 _html_table(["", "sync points", "blocked", "bubble", "GPU busy", "duration"],
                             [["whole trace", t["syncs"]["total"], format_ns(t["sync_blocked_ns"]),
                               format_ns(t["sync_bubble_ns"]), format_ns(t["gpu_busy_ns"]),
                               format_ns(t["duration_ns"])]])]
        steps = self.json["steps"]
        if steps:
            rows = [[s["name"], s["syncs"]["total"], format_ns(s["sync_blocked_ns"]), format_ns(s["sync_bubble_ns"]),
                     format_ns(s["gpu_busy_ns"]), format_ns(s["duration_ns"])] for s in steps[:50]]
            parts.append(_html_table(["step", "sync points", "blocked", "bubble", "GPU busy", "duration"], rows))
            if len(steps) > 50:
                parts.append(f"<p>... {len(steps) - 50} more steps (result.steps has them all)</p>")
        paths = [s for s in steps[:50] if s.get("critical_path")]
        if paths:
            parts.append("<h4>critical path per step (replayed; shares of its length)</h4>")
            rows = []
            for s in paths:
                c = s["critical_path"]
                share = [f"{100.0 * c[k] / c['length_ns']:.1f}%" if c["length_ns"] else "-"
                         for k in _CRITICAL_COLUMNS[2:7]]
                top = "; ".join(f"{r['kind']} {r['where']} {format_ns(r['duration_ns'])}" for r in c["top"][:3])
                rows.append([s["name"], format_ns(c["length_ns"])] + share + [c["sync_edges"], top])
            parts.append(_html_table(["step", "length", "host", "GPU", "launch", "sync wait", "other", "sync edges",
                                      "longest runs"], rows))
        worst = self.json["worst"][:10]
        if worst:
            parts.append(_html_table(["cause", "count", "blocked", "bubble", "blocked + bubble",
                                      "if removed (replayed, per step)"],
                                     [[w["cause"], w["count"], format_ns(w["blocked_ns"]), format_ns(w["bubble_ns"]),
                                       format_ns(w["cost_ns"]), _removal_text(w)] for w in worst]))
        if self.json["warnings"]:
            parts.append("<ul>" + "".join(f"<li>warning: {html.escape(printable(w))}</li>"
                                          for w in self.json["warnings"]) + "</ul>")
        return "\n".join(parts)


class PredictionResult(_Document):
    """``syncscope predict --trace T --format json``, parsed (``json``). Model predictions
    with 90% intervals, not measurements."""

    @property
    def notes(self) -> List[str]:
        return list(self.json["notes"])

    @property
    def fixes(self) -> "DataFrame":
        """One row per fix and variant: saving (ns) with its interval, speedup when a step
        time is known, applicability and reason; evidence and notes as lists."""
        rows = []
        for f in self.json["fixes"]:
            lo, hi = f["predicted_saving_interval_ns"]
            sp = f["predicted_speedup_interval"] or [None, None]
            rows.append({"fix": f["fix"], "variant": f["variant"], "applicable": f["applicable"],
                         "predicted_saving_ns": f["predicted_saving_ns"], "saving_lo_ns": lo, "saving_hi_ns": hi,
                         "predicted_speedup": f["predicted_speedup"], "speedup_lo": sp[0], "speedup_hi": sp[1],
                         "regime": f["regime"], "formula": f["formula"], "reason": f["reason"],
                         "evidence": list(f["evidence"]), "notes": list(f["notes"])})
        return _table(rows)

    def __repr__(self) -> str:
        n = sum(1 for f in self.json["fixes"] if f["applicable"])
        return f"<syncscope.PredictionResult {self.source!r}: {n} of {len(self.json['fixes'])} fix variants applicable>"

    def _repr_html_(self) -> str:
        rows = []
        for f in self.json["fixes"]:
            if f["applicable"]:
                lo, hi = f["predicted_saving_interval_ns"]
                saving = f"{format_ns(f['predicted_saving_ns'])} ({format_ns(lo)} .. {format_ns(hi)})"
                sp = "" if f["predicted_speedup"] is None else f"{f['predicted_speedup']:.4f}x"
            else:
                saving, sp = "not applicable: " + f["reason"], ""
            rows.append([f["fix"], f["variant"], saving, sp])
        return (f"<h4>syncscope prediction (model, not measured): {html.escape(printable(self.source))}</h4>"
                + _html_table(["fix", "variant", "saving per step (90% interval)", "speedup"], rows))


class JobReplayResult(_Document):
    """``syncscope predict --trace T --format json`` where T holds several ranks' processes (one
    Nsight Systems report of a torchrun job; docs/replay.md, "One report holding several
    ranks"), parsed (``json``): the whole-job replay, each rank's identity error and
    collectives. A replay of the recorded run, not a measurement."""

    @property
    def warnings(self) -> List[str]:
        return list(self.json["warnings"])

    @property
    def ranks(self) -> "DataFrame":
        """One row per rank: its source, clock offset, collectives matched and anchored, error."""
        rows = [{k: v for k, v in r.items() if k not in ("steps", "warnings")} for r in self.json["ranks"]]
        return _table(rows)

    def __repr__(self) -> str:
        return (f"<syncscope.JobReplayResult {self.source!r}: {len(self.json['ranks'])} ranks, "
                f"{self.json['collectives']} collectives matched>")


class RankAnalysisResult(_Document):
    """``syncscope analyze DIR --format json`` (one trace per rank), parsed (``json``):
    ``ranks`` one row per rank (the JSON row flattened: ``per_step.syncs``,
    ``trace.sync_points``, ...), ``across_ranks`` min/median/max per metric, ``standout`` the
    rank that stands out (or None)."""

    @property
    def warnings(self) -> List[str]:
        return list(self.json["warnings"])

    @property
    def ranks(self) -> "DataFrame":
        rows = []
        for r in self.json["ranks"]:
            row = _flatten({k: v for k, v in r.items() if k != "warnings"})
            row["warnings"] = list(r.get("warnings", []))
            rows.append(row)
        return _table(rows)

    @property
    def across_ranks(self) -> Dict[str, Any]:
        return self.json["across_ranks"]

    @property
    def standout(self) -> Optional[Dict[str, Any]]:
        return self.json["standout"]

    # Potential stragglers and jobs (analysis/ranks.hpp, docs/analysis.md "Many ranks: jobs and
    # stragglers").
    @property
    def stragglers(self) -> "DataFrame":
        """The ranks that reach their collectives last (least communication time per step):
        rank, communication_ns, late_ns (per step), late_fraction (of the median step); latest
        first, at most 2."""
        return _table([dict(s) for s in self.json.get("stragglers", [])],
                      ["rank", "communication_ns", "late_ns", "late_fraction"])

    @property
    def jobs(self) -> List["RankAnalysisResult"]:
        """Traces of several jobs (their distributedInfo.world_size differs): one
        RankAnalysisResult per job, by world size; [] for one job (then ``ranks`` holds it)."""
        return [RankAnalysisResult(dict(j, source=self.json["source"], kind=self.json["kind"]))
                for j in self.json.get("jobs", [])]

    def __repr__(self) -> str:
        return f"<syncscope.RankAnalysisResult {self.source!r}: {len(self.json['ranks'])} ranks>"

    def _repr_html_(self) -> str:
        head = ["rank", "steps", "sync points", "top cause"]
        rows = [[r["rank"], r["steps"], r["trace"]["sync_points"], r["top_cause"]] for r in self.json["ranks"]]
        parts = [f"<h4>syncscope rank analysis: {html.escape(printable(self.source))}</h4>", _html_table(head, rows)]
        s = self.json["standout"]
        if s:
            parts.append(f"<p>stands out: rank {html.escape(printable(s['rank']))} "
                         f"({html.escape(printable(s['metric']))})</p>")
        parts += [f"<p>warning: {html.escape(printable(w))}</p>" for w in self.json["warnings"]]
        return "\n".join(parts)


class ValidationResult(_Document):
    """``syncscope validate RESULTS --format json``, parsed (``json``): predicted against observed
    speedups per scenario, fix and variant, the rankings and the summary. ``passed`` is the
    CLI's exit status 0: every compared variant within its tolerance and something compared
    (``nothing_compared`` says why not, else None). In a simulated run the observed speedups
    are our simulator's: agreement is consistency with our own assumptions, not accuracy
    (``observed_by``)."""

    def __init__(self, document: Dict[str, Any], nothing_compared: str, exit_code: int) -> None:
        super().__init__(document)
        self.nothing_compared: Optional[str] = nothing_compared or None
        self.exit_code: int = exit_code

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def summary(self) -> Dict[str, Any]:
        """compared, mape and max_abs_error (fractions), ranking_matches, failures."""
        return dict(self.json["summary"])

    @property
    def observed_by(self) -> str:
        return self.json["observed_by"]

    @property
    def variants(self) -> "DataFrame":
        """One row per scenario, fix and variant: baseline, has_prediction, predicted_speedup.* and
        observed_speedup.* (value, lo, hi, n), error and tolerance (fractions), within_tolerance."""
        return _table([_flatten(v) for v in self.json["variants"]])

    @property
    def rankings(self) -> "DataFrame":
        """One row per scenario, fix and depth: observed_order and predicted_order (fastest first),
        matches, discordant pairs."""
        return _table([dict(r) for r in self.json["rankings"]],
                      ["scenario", "fix", "layers", "observed_order", "predicted_order", "matches", "discordant"])

    def __repr__(self) -> str:
        s = self.json["summary"]
        verdict = "passed" if self.passed else ("nothing compared" if self.nothing_compared else "failed")
        return (f"<syncscope.ValidationResult {self.source!r}: {verdict}, {s['compared']} compared, "
                f"MAPE {s['mape'] * 100:.2f}%, {s['failures']} outside tolerance>")
