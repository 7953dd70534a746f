"""The short per-step text report (what syncscope.torch.trace_handler prints): syncs per step
by cause, blocked and bubble time, the top causes. Formatting only: every number is a field
of the CLI's analysis JSON."""

from typing import TYPE_CHECKING, Dict

from ._results import _removal_text, format_ns
from ._text import printable

if TYPE_CHECKING:
    from ._results import AnalysisResult

# Beyond this many steps the report shows the first and last few and says how many it left out.
_MAX_STEP_ROWS = 12


def _causes(by_cause: Dict[str, int]) -> str:
    items = sorted(by_cause.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{printable(c)} x{n}" for c, n in items) if items else "-"


def format_report(result: "AnalysisResult", top: int = 3) -> str:
    doc = result.json
    counts = result.record_counts
    t = doc["totals"]
    lines = []
    # Every name below is the trace's (or its file's): escaped as the CLI prints names.
    who = printable(doc["source"])
    if counts.get("rank") is not None:
        who += f" (rank {counts['rank']})"
    lines.append(f"syncscope: {who}")
    if not result.has_gpu_activity:
        lines.append("  no GPU in this trace: no kernels, copies or memsets were recorded (a CPU-only run, or "
                     "ProfilerActivity.CUDA not enabled); GPU busy time and bubbles are 0")
    lines.append(f"  whole trace: {t['syncs']['total']} sync points, blocked {format_ns(t['sync_blocked_ns'])}, "
                 f"bubble {format_ns(t['sync_bubble_ns'])}, GPU busy {format_ns(t['gpu_busy_ns'])} "
                 f"of {format_ns(t['duration_ns'])}")
    steps = doc["steps"]
    if steps:
        shown = steps if len(steps) <= _MAX_STEP_ROWS else steps[:6] + steps[-6:]
        names = [printable(s["name"]) for s in shown]
        width = max(len(n) for n in names)
        lines.append(f"  {'step':<{width}}  {'duration':>10}  {'syncs':>5}  {'blocked':>10}  {'bubble':>10}  by cause")
        for i, s in enumerate(shown):
            if len(steps) > _MAX_STEP_ROWS and i == 6:
                lines.append(f"  ... {len(steps) - 12} steps left out")
            lines.append(f"  {names[i]:<{width}}  {format_ns(s['duration_ns']):>10}  {s['syncs']['total']:>5}  "
                         f"{format_ns(s['sync_blocked_ns']):>10}  {format_ns(s['sync_bubble_ns']):>10}  "
                         f"{_causes(s['syncs']['by_cause'])}")
    else:
        lines.append(f"  no steps: no host range matches '{printable(doc['options']['step_range'])}'")
    worst = doc["worst"][:top]
    if worst:
        lines.append(f"  top {len(worst)} causes (host blocked + GPU bubble over the trace; if removed: the step "
                     "time saved, the trace replayed without that cause's syncs):")
        for i, w in enumerate(worst, 1):
            lines.append(f"    {i}. {printable(w['cause'])}: {w['count']} syncs, blocked {format_ns(w['blocked_ns'])}, "
                         f"bubble {format_ns(w['bubble_ns'])}; {_removal_text(w)}")
    for w in doc["warnings"]:
        lines.append(f"  warning: {printable(w)}")
    return "\n".join(lines)
