"""Module and CLI agree on every trace fixture in the repository: the same JSON when the CLI
accepts the trace, the same error class (exit status) and message when it refuses it; for
analyze and for predict --trace, with the CLI's default options."""

import json
import os
import tempfile
import unittest

import syncscope
from support import FIXTURES, cli_error, nsys_sql_fixtures, run_cli, sqlite_from_sql, trace_fixtures


def module_outcome(fn, path):
    """(exit status the CLI would give, JSON or error message)."""
    try:
        return 0, fn(path).json
    except syncscope.Error as e:
        return e.exit_code, str(e)


def cli_outcome(args):
    rc, out, err = run_cli(*args)
    if rc == 0:
        return 0, json.loads(out)
    return rc, cli_error(err)


class AgreeOnFixtures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.paths = list(trace_fixtures())
        for sql in nsys_sql_fixtures():
            out = os.path.join(cls.tmp.name, os.path.basename(sql)[:-4] + ".sqlite")
            try:
                sqlite_from_sql(sql, out)
            except Exception:  # a fixture meant to fail as SQL (not_nsys.sql): the CLI gets it too
                continue
            cls.paths.append(out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_fixture_set_is_not_empty(self):
        names = {os.path.basename(p) for p in self.paths}
        self.assertIn("item_loop_l8_h200.json.gz", names)
        self.assertGreaterEqual(len(self.paths), 15)
        self.assertTrue(any(p.endswith(".sqlite") for p in self.paths))

    def test_analyze(self):
        accepted = refused = 0
        for path in self.paths:
            with self.subTest(path=os.path.relpath(path, FIXTURES)):
                want = cli_outcome(["analyze", path, "--format", "json"])
                got = module_outcome(syncscope.analyze, path)
                self.assertEqual(got, want)
                accepted += want[0] == 0
                refused += want[0] != 0
        self.assertGreater(accepted, 10)
        self.assertGreater(refused, 0)  # traces/fuzz/corrupt-gzip-crc.json.gz at least

    def test_predict(self):
        for path in self.paths:
            with self.subTest(path=os.path.relpath(path, FIXTURES)):
                want = cli_outcome(["predict", "--trace", path, "--format", "json"])
                got = module_outcome(syncscope.predict, path)
                self.assertEqual(got, want)


if __name__ == "__main__":
    unittest.main()
