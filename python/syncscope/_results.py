"""Result objects over the CLI's JSON: tables as pandas DataFrames (lists of dicts without
pandas) and an HTML view for notebooks. They reshape what the C++ serializer produced and
compute nothing of their own."""

import html

try:  # pandas is optional: without it the tables are lists of dicts with the same columns.
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised by the no-pandas test
    _pd = None


def have_pandas():
    return _pd is not None


from typing import Any, Dict, List, Optional, Sequence

from ._text import printable  # names in HTML as in the CLI's text: no bidi control reorders a table

# Columns that hold names: pandas "category" (few distinct values, cheap to group by).
_NAME_COLUMNS = frozenset({"name", "cause", "api", "kernel", "class", "category", "kind", "where", "verdict",
                           "top_cause"})
# Integer columns that may be absent in a row (None): pandas' nullable "Int64", never object.
_NULLABLE_INT = frozenset({"removal_saving_ns"})
# Interpolated statistics stay float64 even when named *_ns (a median of two values can be x.5).
_FLOAT_PARTS = ("median", "p10", "p90", "mean", "std", "fraction", "per_step")


def _is_int_column(name: str) -> bool:
    """Times in ns and counts: int64 whatever the rows hold (an empty frame too)."""
    last = name.rsplit(".", 1)[-1]
    if any(p in last for p in _FLOAT_PARTS):
        return False
    return (last.endswith("_ns") or last in ("count", "gaps", "syncs", "kernels", "memcpys", "memcpy_bytes",
                                             "total", "device", "stream", "pid", "tid", "correlation", "index",
                                             "rank", "max", "polls", "sync_edges", "start", "end")
            or name.startswith(("syncs.by_cause.", "syncs.by_api.", "gpu_busy_by_device.")))


def _table(rows: List[Dict[str, Any]], columns: Optional[Sequence[str]] = None):
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


def _flatten(obj, prefix=""):
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


def window_rows(windows):
    """One flat dict per window (step or layer), every row with the same keys."""
    rows = [_flatten(w) for w in windows]
    sparse = sorted({k for r in rows for k in r if k.startswith(_SPARSE_PREFIXES)})
    for r in rows:
        for k in sparse:
            r.setdefault(k, 0)
    return rows


def format_ns(ns):
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


def _removal_text(w):
    """What removing a worst-offender cause saves, as the CLI's table says it."""
    if "removal_saving_ns" not in w:
        return "not replayed"
    n = w["syncs_per_step"]
    count = f"{n:.0f}" if abs(n - round(n)) < 1e-9 else f"{n:.1f}"
    if w["removal_saving_ns"] is None:
        return f"{count} x per step: not claimed"
    return f"{count} x per step: {format_ns(w['removal_saving_ns'])}/step if removed"


def _html_table(header, rows):
    h = "".join(f"<th>{html.escape(printable(c))}</th>" for c in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(printable(v))}</td>" for v in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


class AnalysisResult:
    """``syncscope analyze --format json``, parsed. ``json`` is the whole document (the same
    keys as the CLI's: schema_version, kind, source, options, meta, totals, steps, layers,
    step_summary, layer_summary, worst, warnings, sync_points, sync_points_total,
    sync_points_truncated); ``record_counts`` says what the trace held (api_calls, kernels,
    memcpys, memsets, sync_records, ranges, rank, source_tool, source_version)."""

    def __init__(self, document, record_counts):
        self.json = document
        self.record_counts = dict(record_counts)

    def __getitem__(self, key):
        return self.json[key]

    @property
    def source(self):
        return self.json["source"]

    @property
    def totals(self):
        """The whole-trace window (a dict, as in the JSON)."""
        return self.json["totals"]

    @property
    def warnings(self):
        return list(self.json["warnings"])

    def _window_columns(self) -> List[str]:
        # A window's columns without rows: the whole-trace window's, less the sparse maps.
        return [k for k in _flatten(self.json["totals"]) if not k.startswith(_SPARSE_PREFIXES)]

    @property
    def steps(self):
        """One row per step: the window's JSON flattened to CSV metric names
        (``syncs.total``, ``syncs.by_cause.aten::item``, ``overlap.d2h.fraction``, ...).
        Without steps: no rows, the same columns."""
        rows = window_rows(self.json["steps"])
        return _table(rows, None if rows else self._window_columns())

    @property
    def layers(self):
        rows = window_rows(self.json["layers"])
        return _table(rows, None if rows else self._window_columns())

    @property
    def kernels(self):
        """One row per kernel name (the CLI's ``gpu.kernels_by_name``, largest total first, at
        most 50): name, class, count, total_ns, median_ns, p90_ns, max_ns, min_ns, mean_ns and
        std_ns (the sample standard deviation, ddof 1, as pandas' ``.std()`` and HTA's
        get_gpu_kernel_breakdown; 0 for one kernel)."""
        cols = ["name", "class", "count", "total_ns", "median_ns", "p90_ns", "max_ns", "min_ns", "mean_ns", "std_ns"]
        rows = []
        for k in self.json.get("gpu", {}).get("kernels_by_name", []):
            st = k.get("stats", k)
            rows.append({"name": k["name"], "class": k.get("class", ""), **{c: st[c] for c in cols[2:]}})
        return _table(rows, cols)

    @property
    def gpu_annotations(self):
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
    def kernel_sequences(self):
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
    def idle_by_stream(self):
        """Idle time per (device, stream) in our four classes (docs/analysis.md): window_ns,
        busy_ns, sync_bubble_ns, host_wait_ns, dependency_wait_ns, other_ns, gaps, verdict."""
        cols = ["device", "stream", "window_ns", "busy_ns", "sync_bubble_ns", "host_wait_ns", "dependency_wait_ns",
                "other_ns", "gaps", "verdict"]
        rows = []
        for s in self.json.get("idle_by_stream", []):
            i = s["idle"]
            rows.append({"device": s["device"], "stream": s["stream"], **{c: i[c] for c in cols[2:8]},
                         "gaps": s["gaps"], "verdict": s["verdict"]})
        return _table(rows, cols)

    @property
    def sync_points(self):
        """One row per listed sync point, in time order (at most max_sync_points of
        ``sync_points_total``; ``sync_points_truncated`` says when some were left out)."""
        rows = [dict(p) for p in self.json["sync_points"]]
        # The CLI's own fields, in its order (a field the CLI adds appears here without a change).
        cols = list(rows[0]) if rows else ["start_ns", "end_ns", "blocked_ns", "bubble_ns", "api", "cause",
                                           "merged_copy", "polling", "pid", "tid", "device", "stream", "correlation"]
        return _table(rows, cols)

    @property
    def worst(self):
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
    def critical_path(self):
        """One row per step with a critical path (``analyze(..., critical_path=True)``; the
        CLI's ``--critical-path``): name, length_ns and its shares host_ns, gpu_ns, launch_ns,
        sync_wait_ns, other_ns (summing exactly to length_ns, docs/analysis.md "Critical
        path"), sync_edges. Times are the identity replay's, not the recorded ones. Empty
        without the option."""
        rows = []
        for s in self.json["steps"]:
            c = s.get("critical_path")
            if c is None:
                continue
            row = {"name": s["name"]}
            row.update({k: c[k] for k in _CRITICAL_COLUMNS[1:]})
            rows.append(row)
        return _table(rows, list(_CRITICAL_COLUMNS))

    @property
    def critical_path_runs(self):
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

    @property
    def has_gpu_activity(self):
        n = self.record_counts
        return n.get("kernels", 0) + n.get("memcpys", 0) + n.get("memsets", 0) > 0

    def report(self, top=3):
        """The short per-step text the torch handler prints."""
        from ._report import format_report

        return format_report(self, top=top)

    def __repr__(self):
        t = self.totals
        return (f"<syncscope.AnalysisResult {self.source!r}: {t['syncs']['total']} sync points, "
                f"{len(self.json['steps'])} steps, blocked {format_ns(t['sync_blocked_ns'])}, "
                f"bubble {format_ns(t['sync_bubble_ns'])}>")

    def _repr_html_(self):
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


class PredictionResult:
    """``syncscope predict --trace T --format json``, parsed (``json``). Model predictions
    with 90% intervals, not measurements."""

    def __init__(self, document):
        self.json = document

    def __getitem__(self, key):
        return self.json[key]

    @property
    def source(self):
        return self.json["source"]

    @property
    def notes(self):
        return list(self.json["notes"])

    @property
    def fixes(self):
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

    def __repr__(self):
        n = sum(1 for f in self.json["fixes"] if f["applicable"])
        return f"<syncscope.PredictionResult {self.source!r}: {n} of {len(self.json['fixes'])} fix variants applicable>"

    def _repr_html_(self):
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


class RankAnalysisResult:
    """``syncscope analyze DIR --format json`` (one trace per rank), parsed (``json``):
    ``ranks`` one row per rank (the JSON row flattened: ``per_step.syncs``,
    ``trace.sync_points``, ...), ``across_ranks`` min/median/max per metric, ``standout`` the
    rank that stands out (or None)."""

    def __init__(self, document):
        self.json = document

    def __getitem__(self, key):
        return self.json[key]

    @property
    def source(self):
        return self.json["source"]

    @property
    def warnings(self):
        return list(self.json["warnings"])

    @property
    def ranks(self):
        rows = []
        for r in self.json["ranks"]:
            row = _flatten({k: v for k, v in r.items() if k != "warnings"})
            row["warnings"] = list(r.get("warnings", []))
            rows.append(row)
        return _table(rows)

    @property
    def across_ranks(self):
        return self.json["across_ranks"]

    @property
    def standout(self):
        return self.json["standout"]

    def __repr__(self):
        return f"<syncscope.RankAnalysisResult {self.source!r}: {len(self.json['ranks'])} ranks>"

    def _repr_html_(self):
        head = ["rank", "steps", "sync points", "top cause"]
        rows = [[r["rank"], r["steps"], r["trace"]["sync_points"], r["top_cause"]] for r in self.json["ranks"]]
        parts = [f"<h4>syncscope rank analysis: {html.escape(printable(self.source))}</h4>", _html_table(head, rows)]
        s = self.json["standout"]
        if s:
            parts.append(f"<p>stands out: rank {html.escape(printable(s['rank']))} "
                         f"({html.escape(printable(s['metric']))})</p>")
        parts += [f"<p>warning: {html.escape(printable(w))}</p>" for w in self.json["warnings"]]
        return "\n".join(parts)
