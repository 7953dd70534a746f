"""``syncscope.predict_job``: the whole-job replay of one job's ranks (``syncscope predict
--trace DIR [--what-if EDIT --what-if-rank R]``), from a directory of rank traces or from one
file holding several ranks' processes (an Nsight Systems report of a torchrun job)."""

import json as _json
import os as _os
from typing import Any, Dict, Optional, Sequence, Union

from . import _core
from ._options import FIX_TRACE_OPTIONS, fix_option_texts
from ._results import JobReplayResult

_DEFAULTS: Dict[str, Any] = _core.defaults()  # the CLI's (api/include/syncscope/api/defaults.hpp)


def _int_arg(value: Any, name: str) -> Optional[int]:
    """`value` as an int (None kept); a bool or another type is a TypeError (the CLI's options
    take integers only)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"predict_job: {name} is an int, not {type(value).__name__}")
    return value


def predict_job(traces: Union[str, "_os.PathLike[str]"], step_range: str = _DEFAULTS["step_range"],
                layer_range: str = "", *, what_if: Sequence[str] = (), what_if_rank: Optional[int] = None,
                **fix_options: Union[int, float, None]) -> JobReplayResult:
    """The whole-job replay of one job's ranks (``syncscope predict --trace DIR``).

    ``traces``: a directory of one job's rank traces (one file per rank, the rank from the file
    name, as the CLI reads it) or one file holding several ranks' processes (an Nsight Systems
    report of ``torchrun``; docs/replay.md, "One report holding several ranks"). ``what_if``:
    edits replayed (``--what-if``), on the rank ``what_if_rank`` (``--what-if-rank``; None: the
    straggler, the rank that started the most collectives last), every rank replayed again.
    The fixes' options (``prefetch_depth``, ``top_k``, ...) as :func:`syncscope.predict`'s. Returns a
    :class:`JobReplayResult` holding exactly the CLI's JSON. A replay of the recorded run, not a
    measurement. A file of one process raises :class:`syncscope.InputError` (use ``predict``).
    """
    from . import InputError  # the package's class (this module is imported while it loads)

    if not isinstance(traces, (str, _os.PathLike)):
        raise TypeError(f"predict_job: traces is a path (a directory of rank traces or one file), not "
                        f"{type(traces).__name__}")
    path = _os.fsdecode(_os.fspath(traces))
    if not isinstance(step_range, str) or not isinstance(layer_range, str):
        raise TypeError("predict_job: step_range and layer_range are str")
    if isinstance(what_if, str) or not all(isinstance(e, str) for e in what_if):
        raise TypeError("predict_job: what_if is a sequence of str edits")
    options = fix_option_texts(fix_options, "predict_job")
    rank = _int_arg(what_if_rank, "what_if_rank")
    if rank is not None and not -(2**63) <= rank < 2**63:
        raise InputError(f"what_if_rank {rank}: out of range")
    try:
        text = _core.predict_job_path(path, step_range, layer_range, options, list(what_if), rank)
    except InputError as e:  # the job replay's own refusals name the CLI's options
        raise InputError(_python_spelling(str(e))) from None
    return JobReplayResult(_json.loads(text))


def _python_spelling(message: str) -> str:
    """The CLI's option names in `message` as this function's arguments."""
    names = [("--what-if-rank", "what_if_rank"), ("--what-if", "what_if"), ("--step-range", "step_range"),
             ("--layer-range", "layer_range")]
    names += [("--" + o["flag"], name) for name, o in FIX_TRACE_OPTIONS.items()]
    for cli, name in names:
        message = message.replace(cli, name)
    return message
