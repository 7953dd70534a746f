"""The whole-job replay in Python: ``syncscope.predict`` on a directory of one job's rank traces,
and ``syncscope.predict_job`` (a directory, or one file holding several ranks' processes, with
``what_if`` and ``what_if_rank``), each the CLI's ``predict --trace DIR|FILE`` JSON, and refused
as the CLI refuses (exit 2, the message with this module's argument names)."""

import json
import lzma
import os
import shutil
import tempfile
import unittest

import syncscope
from support import FIXTURES, SOURCE_DIR, cli_error, run_cli, sqlite_from_sql

HTA_JOB = os.path.join(FIXTURES, "ranks", "hta_job")
ONE_PROCESS = os.path.join(FIXTURES, "torch", "item_loop_l8_h200.json.gz")
TWO_PROCESSES_SQL = os.path.join(FIXTURES, "nsys", "nsys_multi_process.sql")
REAL_PAIR = os.path.join(SOURCE_DIR, "bench", "replay", "pairs", "mfu_2gpu_before.sqlite.xz")


def cli_json(*args):
    rc, out, err = run_cli("predict", "--format", "json", *args)
    if rc != 0:
        raise AssertionError(f"the CLI refused {args}: {err}")
    return json.loads(out)


def cli_refusal(*args):
    rc, _, err = run_cli("predict", "--format", "json", *args)
    return rc, cli_error(err) if rc != 0 else ""


class Directory(unittest.TestCase):
    def test_predict_takes_a_directory_as_the_cli_does(self):
        got = syncscope.predict(HTA_JOB)
        self.assertIsInstance(got, syncscope.JobReplayResult)
        want = cli_json("--trace", HTA_JOB)
        self.assertEqual(got.json, want)
        self.assertEqual(want["kind"], "job_replay")
        self.assertEqual(len(want["ranks"]), 2)
        self.assertGreater(want["collectives"], 0)

    def test_predict_job_of_a_directory_is_predict_of_it(self):
        self.assertEqual(syncscope.predict_job(HTA_JOB).json, syncscope.predict(HTA_JOB).json)

    def test_edits_on_the_rank_named(self):
        for rank in (0, 1):
            with self.subTest(rank=rank):
                got = syncscope.predict_job(HTA_JOB, what_if=["remove-syncs:all"], what_if_rank=rank)
                want = cli_json("--trace", HTA_JOB, "--what-if", "remove-syncs:all", "--what-if-rank", str(rank))
                self.assertEqual(got.json, want)
                self.assertEqual([w["rank"] for w in got.json["what_if"]], [rank])
        # No rank named: the straggler's, as the CLI picks it.
        got = syncscope.predict_job(HTA_JOB, what_if=["remove-syncs:all"])
        self.assertEqual(got.json, cli_json("--trace", HTA_JOB, "--what-if", "remove-syncs:all"))
        self.assertEqual(got.json["what_if"][0]["rank"], got.json["straggler"])

    def test_a_path_like_and_options_reach_the_replay(self):
        import pathlib

        got = syncscope.predict_job(pathlib.Path(HTA_JOB), step_range="no-such-range*")
        self.assertEqual(got.json, cli_json("--trace", HTA_JOB, "--step-range", "no-such-range*"))
        self.assertEqual(got.json["step_glob"], "no-such-range*")


class OneFileOfSeveralRanks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.two = os.path.join(cls.tmp, "two.sqlite")
        sqlite_from_sql(TWO_PROCESSES_SQL, cls.two)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_what_if_rank_on_a_file_of_two_processes(self):
        got = syncscope.predict_job(self.two, what_if=["remove-syncs:all"], what_if_rank=1)
        want = cli_json("--trace", self.two, "--what-if", "remove-syncs:all", "--what-if-rank", "1")
        self.assertEqual(got.json, want)
        self.assertEqual(len(got.json["ranks"]), 2)
        self.assertEqual(got.json["what_if"][0]["rank"], 1)

    def test_the_real_two_rank_report(self):
        path = os.path.join(self.tmp, "mfu_2gpu_before.sqlite")
        with lzma.open(REAL_PAIR) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        got = syncscope.predict_job(path, what_if=["remove-syncs:all"], what_if_rank=0)
        self.assertEqual(got.json, cli_json("--trace", path, "--what-if", "remove-syncs:all", "--what-if-rank", "0"))
        self.assertEqual(got.json["collectives"], 33)  # docs/replay.md, "One report holding several ranks"
        self.assertEqual([r["unmatched"] for r in got.json["ranks"]], [0, 0])


class Refusals(unittest.TestCase):
    def refused_as_the_cli(self, call, cli_args, python_text):
        with self.assertRaises(syncscope.InputError) as e:
            call()
        self.assertEqual(e.exception.exit_code, 2)
        rc, message = cli_refusal(*cli_args)
        self.assertEqual(rc, 2)
        self.assertIn(python_text, str(e.exception))
        # The same message but for the options' names.
        self.assertEqual(str(e.exception), message.replace("--what-if-rank", "what_if_rank"))

    def test_a_rank_not_given(self):
        self.refused_as_the_cli(
            lambda: syncscope.predict_job(HTA_JOB, what_if=["remove-syncs:all"], what_if_rank=7),
            ["--trace", HTA_JOB, "--what-if", "remove-syncs:all", "--what-if-rank", "7"], "what_if_rank 7")

    def test_one_process_is_not_a_job(self):
        with self.assertRaises(syncscope.InputError) as e:
            syncscope.predict_job(ONE_PROCESS)
        self.assertIn(ONE_PROCESS, str(e.exception))
        self.assertIn("not a job", str(e.exception))
        # The CLI refuses --what-if-rank on it too (it replays one trace without it).
        rc, message = cli_refusal("--trace", ONE_PROCESS, "--what-if-rank", "0")
        self.assertEqual(rc, 2)
        self.assertIn("--what-if-rank needs", message)

    def test_a_missing_directory_names_it(self):
        missing = os.path.join(tempfile.gettempdir(), "syncscope-no-such-dir", "ranks")
        with self.assertRaises(syncscope.InputError) as e:
            syncscope.predict_job(missing)
        self.assertIn(missing, str(e.exception))

    def test_types(self):
        with self.assertRaises(TypeError):
            syncscope.predict_job([HTA_JOB])
        with self.assertRaises(TypeError):
            syncscope.predict_job(HTA_JOB, what_if="remove-syncs:all")
        with self.assertRaises(TypeError):
            syncscope.predict_job(HTA_JOB, what_if_rank=True)
        with self.assertRaises(TypeError):
            syncscope.predict_job(HTA_JOB, what_if_rank="1")


if __name__ == "__main__":
    unittest.main()
