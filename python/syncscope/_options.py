"""The registered fixes' own options for ``predict`` and ``predict_job`` on a trace
(``--prefetch-depth``, ``--top-k``, ...): declared by each fix in the library's registry
(FixSpec's predict options with a trace key), read here, never written out."""

from typing import Any, Dict

from . import _core

# By keyword (the CLI's option with "_" for "-"): its flag, fix, whether it is an integer, its
# default (None: none) and help.
FIX_TRACE_OPTIONS: Dict[str, Dict[str, Any]] = {o["name"]: o for o in _core.fix_trace_options()}


def fix_option_texts(fix_options: Dict[str, Any], what: str) -> Dict[str, str]:
    """The fix keywords as the library takes them: text by the CLI's flag (None: the fix's
    default). A keyword no fix declares is a TypeError naming those that are; a value of the
    wrong type a TypeError; a value out of range is refused by the library (InputError)."""
    texts: Dict[str, str] = {}
    for name, value in fix_options.items():
        decl = FIX_TRACE_OPTIONS.get(name)
        if decl is None:
            raise TypeError(f"{what}: unexpected keyword argument {name!r} (the fixes' options: "
                            f"{', '.join(sorted(FIX_TRACE_OPTIONS))})")
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (decl["integer"]
                                                                               and not isinstance(value, int)):
            kind = "an int" if decl["integer"] else "a number"
            raise TypeError(f"{name}: expected {kind} or None, not {type(value).__name__}")
        texts[decl["flag"]] = repr(value)
    return texts
