"""Names shown to people, escaped as the CLI escapes them (core's printable(), core/text.hpp):
every control character (C0, DEL, C1) and every byte that is not valid UTF-8 as \\xNN, every
Unicode format character (bidi overrides, zero-width characters) as \\u{XXXX}. Used for every
message this package builds from a trace, step, kernel or file name (exceptions, warnings, the
text report), so that no escape sequence reaches the terminal and no bidi control reorders it."""

from typing import Any

from . import _core


def printable(text: Any) -> str:
    """``text`` (str, or anything str() takes) with what a terminal would act on escaped."""
    s = text if isinstance(text, str) else str(text)
    try:
        # A path from os.fsdecode keeps its non-UTF-8 bytes as surrogate escapes: give the C++
        # side those bytes, which it shows as \xNN (as the CLI shows the same file name).
        raw = s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = s.encode("utf-8", "surrogatepass")  # a lone surrogate: its bytes, shown as \xNN
    return _core.printable(raw)


def printable_lines(text: Any) -> str:
    """printable() of each line: a message's own line breaks stay, anything else is escaped."""
    return "\n".join(printable(line) for line in str(text).split("\n"))
