"""Idle time per stream (HTA: hta/analyzers/breakdown_analysis.py, get_idle_time_breakdown,
_analyze_idle_time_for_stream; ours: idle_by_stream, docs/analysis.md "Idle classes" and "Side
by side with HTA"). Moved here from scripts/hta-check, which printed these figures unasserted.

HTA splits a stream's idle time (the gaps between its consecutive GPU events) into host wait
(the next event's runtime call started after the previous event ended), kernel wait (a
shorter gap than consecutive_kernel_delay) and other; ours into sync bubble, host wait,
dependency wait and other. Both cover the same gaps, and ours takes its sync bubble and host
wait out of what HTA calls host wait (a gap a sync left, or the launch late by HTA's rule),
while a gap HTA calls host wait can be ours dependency wait on a stream (another stream of the
device ran, or a stream-wait-event held it: docs/analysis.md "Idle classes"). So, on the same
events:
  HTA host_wait + kernel_wait + other == ours sync_bubble + host_wait + dependency_wait + other
  ours sync_bubble + host_wait        <= HTA host_wait
(equal on the shipped four-rank fixture, printed everywhere).
The one named difference in the events: HTA's default drops the last ProfilerStep's GPU
events (hta/common/trace.py, _filter_irrelevant_gpu_kernels), so HTA is loaded here with
include_last_profiler_step=True. Bound: equal to 1e-6 µs on whole-µs traces; where HTA
rounds fractional-µs times (ts up, end down: trace_parser.py), each gap's two ends may move
by under 1 µs, so 2 µs per gap (ours counts the gaps)."""

import os

NAME = "idle"
# Not hta-negative-queue-length (rank 0 of 16): HTA drops its 872 GPU records that have no host
# call (comm_overlap.py counts them), so its gaps are not ours there; docs/analysis.md says so.
TRACES = ["torch-item-loop-h200", "ranks-nccl4", "hta-trace-diff-control", "multirank-rank3of8"]


def hta(ta, ranks):
    from hta.trace_analysis import TraceAnalysis
    whole = TraceAnalysis(trace_dir=ta.t.trace_path, include_last_profiler_step=True)
    rk = sorted(whole.t.traces.keys())
    df = whole.get_idle_time_breakdown(ranks=rk, visualize=False)[0]
    out = {"files": {str(int(r)): os.path.basename(f) for r, f in whole.t.trace_files.items()}, "idle": {}}
    for row in df.itertuples():
        d = out["idle"].setdefault(str(int(row.rank)), {}).setdefault(str(int(row.stream)), {})
        d[str(row.idle_category)] = float(row.idle_time)
    return out


def compare(h, ours):
    lines, bad = [], []
    for r, d in sorted(ours.items()):
        mine_file = os.path.basename(d["source"])
        hr = next((k for k, f in h["files"].items() if f == mine_file), None)
        if hr is None:
            lines.append(f"rank {r}: HTA did not read {mine_file} (a trace without distributedInfo.rank is rank 0 "
                         "to HTA, one file per rank): not compared")
            continue
        hta_streams = h["idle"].get(hr, {})
        for s in d.get("idle_by_stream", []):
            i = s["idle"]
            hs = hta_streams.get(str(s["stream"]))
            if hs is None:
                bad.append(f"rank {r} stream {s['stream']}: no HTA idle row")
                continue
            host_h = hs.get("host_wait", 0.0)
            rest_h = hs.get("kernel_wait", 0.0) + hs.get("other", 0.0)
            host_o = (i["sync_bubble_ns"] + i["host_wait_ns"]) / 1e3
            rest_o = (i["dependency_wait_ns"] + i["other_ns"]) / 1e3
            bound = max(1e-6, 2.0 * s["gaps"]) if _fractional(h, d) else 1e-6
            lines.append(f"rank {r} stream {s['stream']}: host wait HTA {host_h:.3f} / ours bubble+host {host_o:.3f} "
                         f"us; kernel wait+other HTA {rest_h:.3f} / ours dependency+other {rest_o:.3f} us")
            if abs((host_h + rest_h) - (host_o + rest_o)) > bound:
                bad.append(f"rank {r} stream {s['stream']}: idle HTA {host_h + rest_h} us != ours {host_o + rest_o} us "
                           f"(bound {bound} us)")
            if host_o > host_h + bound:
                bad.append(f"rank {r} stream {s['stream']}: ours sync bubble + host wait {host_o} us exceeds HTA's host "
                           f"wait {host_h} us (bound {bound} us)")
    return lines, bad


def _fractional(h, d):
    """Whether HTA had to round this trace's times: ours keeps ns; a stream's first/last time
    off whole microseconds says the trace has fractional-µs times."""
    return any(s["first_ns"] % 1000 or s["last_ns"] % 1000 for s in d.get("idle_by_stream", []))
