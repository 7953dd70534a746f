"""Queue length over time and time blocked on a full launch queue (HTA:
hta/analyzers/trace_counters.py, get_queue_length_time_series and
get_time_spent_blocked_on_full_queue; ours: gpu.queue_series, docs/analysis.md "Queue length
over time").

HTA's queue length is launched-and-not-started (+1 at the runtime call, -1 at the GPU row's
start); ours carries it as `pending` beside our own `depth` (launched, not finished). Run on
HTA with the last ProfilerStep kept (_common.all_steps) and a threshold of 2 on both sides
(HTA's default, 1024, is never reached on these traces: both would say 0). Asserted per rank
and stream: HTA's maximum equals our max_pending (within 1 where HTA rounds, below; ours may
be higher by the activities on that stream launched by calls HTA's count leaves out, such as
cudaGraphLaunch: hta/common/trace_symbol_table.py, get_runtime_launch_events_mask, counted in
HTA's own frame by _common.unmasked_per_stream); HTA's series, collapsed to one value per
timestamp and to changes, equals our `pending` change points (times in µs from each side's
first point: HTA shifts its times to the trace's start); and HTA's blocked time equals ours
for the one stream HTA reports per rank (its result dict is keyed by rank and overwritten in
the loop over streams: the last stream with blocked rows wins). Where HTA rounds the trace's
fractional-µs times (_common.rounded_by_hta) the series is not compared point by point and
the blocked times may differ by under 2 µs per blocked interval (each of its two ends moves
by under 1 µs): |ours - HTA| < 2 µs x our points with pending >= the threshold. A bucketed
series (bucket_ns > 0), or one with such launches, compares maxima and blocked time only."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import all_steps, rounded_by_hta, unmasked_per_stream  # noqa: E402

NAME = "queue_length"
THRESHOLD = 2
ANALYZE_ARGS = ["--queue-full", str(THRESHOLD)]


def hta(ta, ranks):
    t = all_steps(ta)
    series = t.get_queue_length_time_series(ranks=ranks)
    blocked = t.get_time_spent_blocked_on_full_queue(series, max_queue_length=THRESHOLD)
    out = {}
    for r in ranks:
        df = series.get(r)
        streams = {}
        if df is not None:
            for stream, g in df.groupby("stream"):
                last = g.groupby("ts", sort=True)["queue_length"].last()  # one value per timestamp
                pts = []
                for ts, q in last.items():
                    if not pts or pts[-1][1] != int(q):
                        pts.append([float(ts), int(q)])
                streams[str(int(stream))] = {"max": int(g["queue_length"].max()), "points": pts}
        b = blocked[blocked["rank"] == r] if blocked is not None and len(blocked) else None
        out[str(int(r))] = {"streams": streams, "rounded": rounded_by_hta(ta, r),
                            "unmasked": unmasked_per_stream(t, r),
                            "blocked": None if b is None or b.empty else
                            {"stream": str(int(b.iloc[0]["stream"])),
                             "us": float(b.iloc[0]["duration_at_max_queue_length"])}}
    return out


def _changes(points):
    out = []
    for t, _depth, pending in points:
        if not out and pending == 0:
            continue  # a GPU record without a launch call: in our depth only, as in neither series
        if not out or out[-1][1] != pending:
            out.append([t / 1000, pending])
    return _relative(out)


def _relative(points):
    return [[round(t - points[0][0], 3), v] for t, v in points] if points else []


def compare(h, ours):
    lines, bad = [], []
    for r, d in sorted(ours.items()):
        q = d.get("gpu", {}).get("queue_series")
        row = h.get(str(r))
        if q is None or row is None:
            bad.append(f"rank {r}: " + ("no gpu.queue_series in our JSON" if q is None else "HTA gave no series"))
            continue
        mine = {str(s["stream"]): s for s in q["streams"]}
        for stream, x in sorted(row["streams"].items()):
            s = mine.get(stream)
            if s is None:
                bad.append(f"rank {r} stream {stream}: in HTA's series, not ours")
                continue
            extra = row["unmasked"].get(stream, 0)  # launched by calls HTA's count leaves out
            compared = not (s["bucket_ns"] > 0 or row["rounded"] or extra)
            same = not compared or _changes(s["points"]) == _relative(x["points"])
            why = ("HTA rounds this trace" if row["rounded"] else f"{extra} launched by calls HTA does not count"
                   if extra else f"bucketed to {s['bucket_ns']} ns" if s["bucket_ns"] else "")
            lines.append(f"rank {r} stream {stream}: max HTA {x['max']} / ours pending {s['max_pending']} "
                         f"(depth, ours, counts the running one); {len(x['points'])} changes, "
                         + (f"not compared point by point ({why})" if not compared else
                            "equal" if same else "differ"))
            slack = extra + (1 if row["rounded"] else 0)
            if not x["max"] - (1 if row["rounded"] else 0) <= s["max_pending"] <= x["max"] + slack:
                bad.append(f"rank {r} stream {stream}: HTA's max queue length {x['max']}, our pending "
                           f"{s['max_pending']} (allowed up to {slack} more)")
            if not same:
                bad.append(f"rank {r} stream {stream}: series differ: HTA {_relative(x['points'])[:6]}..., "
                           f"ours {_changes(s['points'])[:6]}...")
        b = row["blocked"]
        if b is not None:
            s = mine.get(b["stream"])
            ours_us = s["blocked_ns"] / 1000 if s else None
            lines.append(f"rank {r}: blocked (pending >= {THRESHOLD}) on stream {b['stream']}: HTA {b['us']} us / "
                         f"ours {ours_us} us")
            n = sum(1 for p in s["points"] if p[2] >= THRESHOLD) if s else 0
            bound = 2.0 * n if row["rounded"] else 1e-9
            if row["unmasked"].get(b["stream"], 0):
                lines.append(f"  not asserted: {row['unmasked'][b['stream']]} activities on that stream were launched "
                             "by calls HTA's count leaves out")
            elif ours_us is None or not abs(ours_us - b["us"]) <= bound:
                bad.append(f"rank {r}: blocked on stream {b['stream']}: HTA {b['us']} us, ours {ours_us}")
    return lines, bad
