"""Names in the Python module's messages are escaped as the CLI escapes them (core's
printable(), core/text.hpp; issue 39): a trace whose kernel and step names hold a terminal
escape (set the window title, clear the screen) and a bidi override, or a file name holding
them, raises and warns with \\xNN and \\u{XXXX} in their place, never the raw bytes."""

import json
import os
import tempfile
import unittest
import warnings

import syncscope
from syncscope import _core
from syncscope._text import printable
from support import FIXTURES, cli_error, run_cli

# ESC ] 0 ; x BEL ESC [ 2 J: sets the terminal's title and clears its screen; U+202E: the
# right-to-left override, which reverses what follows on screen.
EVIL = "\x1b]0;x\x07\x1b[2J\u202e"
SHOWN = "\\x1B]0;x\\x07\\x1B[2J\\u{202E}"  # the CLI's escaping of EVIL


def raw_controls(text):
    """The characters of `text` a terminal acts on (C0 but newline, DEL, C1, U+202E)."""
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


def evil_trace():
    """kineto_all_categories.json with a kernel and the step named with EVIL in them."""
    with open(os.path.join(FIXTURES, "traces", "kineto_all_categories.json"), encoding="utf-8") as f:
        t = json.load(f)
    for e in t["traceEvents"]:
        if e.get("name") == "triton_poi_fused_0":
            e["name"] = "k" + EVIL
        elif e.get("name") == "ProfilerStep#0":
            e["name"] = "ProfilerStep#0" + EVIL
    return t


class Printable(unittest.TestCase):
    def test_same_as_the_cli(self):
        self.assertEqual(printable("k" + EVIL), "k" + SHOWN)
        self.assertEqual(printable(printable(EVIL)), SHOWN)  # idempotent: escaped text stays
        self.assertEqual(printable("plain name é"), "plain name é")
        # A file name that is not UTF-8 (os.fsdecode keeps its bytes as surrogate escapes).
        self.assertEqual(printable(os.fsdecode(b"a\xffb")), "a\\xFFb")


class Messages(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def assert_escaped(self, text, what):
        self.assertEqual(raw_controls(text), [], f"{what}: {text!r}")
        self.assertIn("\\x1B]0;x\\x07", text, what)
        self.assertIn("\\u{202E}", text, what)

    def test_exception_naming_a_file(self):
        p = os.path.join(self.tmp.name, "t" + EVIL + ".json")
        with self.assertRaises(syncscope.InputError) as cm:
            syncscope.analyze(p)
        self.assert_escaped(str(cm.exception), "analyze of a missing file")
        # The CLI refuses the same file with the same message, escaped the same way.
        rc, _, err = run_cli("analyze", p)
        self.assertEqual(rc, 2)
        self.assertEqual(raw_controls(err), [], err)
        self.assertEqual(str(cm.exception), cli_error(err))

    def test_exception_quoting_a_trace_field(self):
        # An event of a kernel named EVIL whose "ts" is EVIL text: the reader quotes the value.
        t = {"traceEvents": [{"name": "k" + EVIL, "ph": "X", "ts": "k" + EVIL, "dur": 1, "pid": 1, "tid": 1,
                              "cat": "kernel"}]}
        p = os.path.join(self.tmp.name, "t.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(t, f)
        for trace in (t, p):
            with self.assertRaises(syncscope.InputError) as cm:
                syncscope.analyze(trace)
            self.assert_escaped(str(cm.exception), f"analyze of {type(trace).__name__}")
        rc, _, err = run_cli("analyze", p)
        self.assertEqual(rc, 2)
        # The CLI's message, escaped line by line as the module's (cli/main.cpp, printable_message).
        self.assertEqual(raw_controls(err), [], err)
        self.assertEqual(str(cm.exception), cli_error(err))

    def test_exception_from_cpp_is_escaped_by_the_glue(self):
        # A message the C++ side did not escape (here: on purpose) is escaped on its way to
        # Python, line by line: the message's own line break stays.
        with self.assertRaises(syncscope.InputError) as cm:
            _core._raise_for_test("input", "bad " + EVIL + "\nsecond line")
        self.assertEqual(str(cm.exception), "bad " + SHOWN + "\nsecond line")

    def test_type_error_naming_a_class(self):
        evil_class = type("T" + EVIL, (), {})
        with self.assertRaises(TypeError) as cm:
            syncscope.analyze(evil_class())
        self.assert_escaped(str(cm.exception), "analyze of an object of an evil class")

    def test_what_if_edit_quoted_in_an_exception(self):
        p = os.path.join(self.tmp.name, "t.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump(evil_trace(), f)
        with self.assertRaises(syncscope.InputError) as cm:
            syncscope.predict(p, what_if=["remove-sync:" + EVIL])
        self.assertEqual(raw_controls(str(cm.exception)), [], str(cm.exception))

    def test_trace_names_in_warnings_and_the_report(self):
        for trace in (evil_trace(), None):
            if trace is None:  # the same trace as a file
                trace = os.path.join(self.tmp.name, "t.json")
                with open(trace, "w", encoding="utf-8") as f:
                    json.dump(evil_trace(), f)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                r = syncscope.analyze(trace, step_range="ProfilerStep#0" + EVIL)
                syncscope.analyze(trace, step_range="nothing " + EVIL)  # warns: no step matches
            self.assertTrue(caught, "a step range that matches nothing is warned about")
            for w in caught:
                self.assertEqual(raw_controls(str(w.message)), [], str(w.message))
            self.assertTrue(any("\\u{202E}" in str(w.message) for w in caught), [str(w.message) for w in caught])
            report = r.report()
            self.assert_escaped(report, "the text report")
            self.assertIn("ProfilerStep#0" + SHOWN, report)
            self.assertEqual(raw_controls(r._repr_html_()), [], "the HTML")


if __name__ == "__main__":
    unittest.main()
