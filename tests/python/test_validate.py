"""syncscope.validate (issue 40: one library under the CLI and Python): the CLI's
`validate RESULTS` through syncscope/api/results.hpp, so the document, the verdict and the
refusals are the CLI's own."""

import json
import os
import tempfile
import unittest

import syncscope
from syncscope import _results
from support import SOURCE_DIR, cli_error, run_cli

SEEDS = os.path.join(SOURCE_DIR, "fuzz", "seeds", "results")
PASSING = os.path.join(SEEDS, "qwen3-0.6b-schema2.json")  # every variant within its tolerance
FAILING = os.path.join(SEEDS, "tiny-packing-offload.json")  # two variants outside it


class SameAsCli(unittest.TestCase):
    def check(self, path):
        rc, out, err = run_cli("validate", path, "--format", "json")
        r = syncscope.validate(path)
        self.assertEqual(r.json, json.loads(out))
        self.assertEqual(r.exit_code, rc, err)
        self.assertEqual(r.passed, rc == 0)
        return r

    def test_passing_run(self):
        r = self.check(PASSING)
        self.assertTrue(r.passed)
        self.assertIsNone(r.nothing_compared)
        self.assertGreater(r.summary["compared"], 0)
        self.assertEqual(r.summary["failures"], 0)

    def test_failing_run(self):
        r = self.check(FAILING)
        self.assertFalse(r.passed)
        self.assertEqual(r.summary["failures"], 2)
        self.assertIn("failed", repr(r))

    def test_run_directory(self):
        with tempfile.TemporaryDirectory() as d:
            with open(PASSING, encoding="utf-8") as src, open(os.path.join(d, "results.json"), "w") as dst:
                dst.write(src.read())
            self.assertEqual(syncscope.validate(d).json["summary"], syncscope.validate(PASSING).json["summary"])

    def test_only_baselines_compares_nothing_and_does_not_pass(self):
        with open(PASSING, encoding="utf-8") as f:
            doc = json.load(f)
        doc["variants"] = [v for v in doc["variants"] if v.get("baseline")]
        self.assertTrue(doc["variants"])
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "results.json")
            with open(p, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            rc, _, err = run_cli("validate", p)
            r = syncscope.validate(p)
        self.assertEqual(rc, 1)
        self.assertIn("it holds only baselines", err)
        self.assertEqual(r.nothing_compared, "it holds only baselines")
        self.assertFalse(r.passed)

    def test_bad_input_raises_the_cli_message(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "results.json")
            with open(p, "w", encoding="utf-8") as f:
                f.write('{"schema_version": 2, "schema_version": 2}\n')
            rc, _, err = run_cli("validate", p)
            with self.assertRaises(syncscope.InputError) as cm:
                syncscope.validate(p)
        self.assertEqual(rc, 2)
        self.assertEqual(str(cm.exception), cli_error(err))
        self.assertIn("results.json:1:", str(cm.exception))

    def test_type_errors(self):
        with self.assertRaises(TypeError):
            syncscope.validate(3)  # type: ignore[arg-type]


@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class Frames(unittest.TestCase):
    def test_variants_and_rankings(self):
        r = syncscope.validate(FAILING)
        v = r.variants
        self.assertEqual(len(v), len(r.json["variants"]))
        for c in ("scenario", "fix", "variant", "predicted_speedup.value", "observed_speedup.value", "error",
                  "within_tolerance"):
            self.assertIn(c, v.columns)
        self.assertEqual(int((~v["within_tolerance"]).sum()), 2)
        self.assertEqual(len(r.rankings), len(r.json["rankings"]))


if __name__ == "__main__":
    unittest.main()
