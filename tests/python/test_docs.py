"""docs/python.md's examples, run: each ```python block that the doc follows at once with a
plain ``` block (its output, as it ran) is run in a fresh interpreter from the repository
root, and what it prints must equal that block, line for line.

What may differ between two runs, replaced by a placeholder on both sides before comparing
(the rule docs/python.md states under "Example, as it ran"):
- a temporary directory, `/tmp/tmp<random>/` (tempfile.mkdtemp);
- the time torch.profiler's tensorboard_trace_handler puts in a file name,
  `<worker>.<digits>.pt.trace.json`;
- in an output block the doc marks with `<!-- doc-test: times vary -->` on the line before
  it (a run timed on this machine, not a fixture): every time with its unit (`1.234 ms`,
  `96 us`, `0 ns`, `1.2 s`), and runs of blanks compare as one (a time's width moves the
  columns after it).

SYNCSCOPE_UPDATE_DOCS=1 writes what the examples print into the doc's output blocks instead
(the doc is written to a temporary file beside it and renamed), for a change that alters
them on purpose; review the diff.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from support import BUILD_DIR, SOURCE_DIR

DOC = os.path.join(SOURCE_DIR, "docs", "python.md")
TIMES_VARY = "<!-- doc-test: times vary -->"
FENCE = re.compile(r"^```(\w*)\s*$")


def examples(text):
    """[(code, output lines, times vary, (first, last) line index of the output block)]."""
    lines = text.split("\n")
    blocks = []  # (language, first content line, end fence line)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        blocks.append((m.group(1), i + 1, j))
        i = j + 1
    out = []
    for (lang, start, end), (nlang, nstart, nend) in zip(blocks, blocks[1:]):
        between = [ln.strip() for ln in lines[end + 1:nstart - 1]]
        if lang != "python" or nlang != "" or any(ln and ln != TIMES_VARY for ln in between):
            continue
        out.append(("\n".join(lines[start:end]) + "\n", lines[nstart:nend], TIMES_VARY in between, (nstart, nend)))
    return out


def normalize(line, times_vary):
    line = re.sub(r"/tmp/tmp[\w-]+/", "/tmp/<TMP>/", line)
    line = re.sub(r"\.\d+\.pt\.trace\.json", ".<TIME>.pt.trace.json", line)
    if times_vary:
        # A time's width moves the columns after it: runs of blanks compare as one.
        line = re.sub(r"\s+", " ", re.sub(r"\d+(\.\d+)? ?(ns|us|ms|s)\b", "<T>", line))
    return line.rstrip()


def python_path():
    """The build tree's package (CTest sets PYTHONPATH), else build/ci/python."""
    return os.environ.get("PYTHONPATH") or os.path.join(BUILD_DIR or os.path.join(SOURCE_DIR, "build", "ci"), "python")


def run_example(code):
    env = dict(os.environ, PYTHONPATH=python_path(), PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-c", code], cwd=SOURCE_DIR, capture_output=True, text=True, env=env,
                       timeout=600)
    return p.returncode, p.stdout, p.stderr


def needs(code):
    """A module the example imports that this interpreter lacks (the example is skipped), or None."""
    for mod in ("pandas", "torch"):
        if re.search(rf"^\s*import .*\b{mod}\b|^\s*from {mod}\b", code, re.M):
            try:
                __import__(mod)
            except ImportError:
                return mod
    return None


class DocExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            import syncscope  # noqa: F401
        except ImportError as e:
            raise unittest.SkipTest(f"the syncscope module does not import ({e})")
        with open(DOC, encoding="utf-8") as f:
            cls.text = f.read()
        cls.examples = examples(cls.text)

    def test_the_doc_has_examples_with_output(self):
        # Four: the frames' indexes ("DataFrames"), the analysis of the H200 fixture, the handler
        # on it, a real CPU-only torch run.
        self.assertEqual(len(self.examples), 4, [code.split("\n")[0] for code, *_ in self.examples])

    def test_each_example_prints_what_the_doc_shows(self):
        update = os.environ.get("SYNCSCOPE_UPDATE_DOCS") == "1"
        lines = self.text.split("\n")
        replaced = []  # ((first, last), new lines), applied from the end
        for n, (code, shown, times_vary, span) in enumerate(self.examples):
            with self.subTest(example=n, first_line=code.split("\n")[0]):
                missing = needs(code)
                if missing:
                    self.skipTest(f"example {n} imports {missing}, which this interpreter lacks")
                rc, out, err = run_example(code)
                self.assertEqual(rc, 0, f"example {n} failed:\n{err[-3000:]}")
                printed = out.rstrip("\n").split("\n")
                if update:
                    replaced.append((span, printed))
                    continue
                self.assertEqual([normalize(x, times_vary) for x in printed],
                                 [normalize(x, times_vary) for x in shown],
                                 f"example {n} (docs/python.md line {span[0]}) printed:\n{out}")
        if update and replaced:
            for (first, last), new in sorted(replaced, reverse=True):
                lines[first:last] = new
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(DOC), prefix=".python.md.")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write("\n".join(lines))
            os.replace(tmp, DOC)
            print(f"wrote {len(replaced)} output block(s) into {DOC}")


class Normalization(unittest.TestCase):
    """The rule that lets a run differ from the doc must not let anything else differ."""

    def test_placeholders(self):
        self.assertEqual(normalize("syncscope: /tmp/tmp64ikzcu7/rank0.1796143528810.pt.trace.json", False),
                         "syncscope: /tmp/<TMP>/rank0.<TIME>.pt.trace.json")
        self.assertEqual(normalize("  ProfilerStep#2   1.234 ms  0  96 us  0 ns", True),
                         " ProfilerStep#2 <T> 0 <T> <T>")

    def test_counts_and_times_of_a_fixture_still_compare(self):
        self.assertNotEqual(normalize("26 sync points, blocked 193.9 us", False),
                            normalize("27 sync points, blocked 193.9 us", False))
        self.assertNotEqual(normalize("blocked 193.9 us", False), normalize("blocked 193.8 us", False))
        self.assertNotEqual(normalize("26 sync points", True), normalize("27 sync points", True))

    def test_examples_found(self):
        doc = "\n".join(["```python", "print(1)", "```", "", "```", "1", "```", "text", "```python", "x = 1",
                         "```", "prose between", "```", "not output", "```"])
        found = examples(doc)
        self.assertEqual([(c, o) for c, o, _, _ in found], [("print(1)\n", ["1"])])


if __name__ == "__main__":
    unittest.main()
