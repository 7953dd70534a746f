"""syncscope.analyze and syncscope.predict on the H200 torch.profiler fixture, checked against
the CLI run on the same file: the whole JSON, and the DataFrames against the CLI's JSON and
its CSV (the same metric names)."""

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import syncscope
from syncscope import _results
from support import CLI, H200_ITEM_LOOP, run_cli

STEPS = "train_step#*"
LAYERS = "layer_*"


def cli_json(*args):
    rc, out, err = run_cli(*args)
    if rc != 0:
        raise AssertionError(f"CLI exit {rc}: {err}")
    return json.loads(out)


class H200Fixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cli = cli_json("analyze", H200_ITEM_LOOP, "--step-range", STEPS, "--layer-range", LAYERS, "--format", "json")
        cls.result = syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, layer_range=LAYERS)

    def test_json_is_the_clis(self):
        self.assertEqual(self.result.json, self.cli)
        self.assertEqual(self.result.json["kind"], "syncscope.analysis")

    def test_fixture_content(self):
        # tests/fixtures/torch/README.md: 3 steps, 8 layers each, one .item() per layer and a
        # cudaDeviceSynchronize per step. Not a model check: the fixture's recorded shape.
        self.assertEqual(len(self.cli["steps"]), 3)
        self.assertEqual(len(self.cli["layers"]), 24)
        self.assertGreater(self.cli["totals"]["syncs"]["total"], 0)
        self.assertEqual(self.result.record_counts["kernels"] > 0, True)
        self.assertGreater(self.result.record_counts["sync_records"], 0)  # enable_cuda_sync_events=True

    def test_steps_dataframe_matches_json_and_csv(self):
        steps = self.result.steps
        if _results.have_pandas():
            records = steps.to_dict("records")
            self.assertEqual(list(steps["name"]), [s["name"] for s in self.cli["steps"]])
        else:
            records = steps
        self.assertEqual(len(records), len(self.cli["steps"]))
        for row, s in zip(records, self.cli["steps"]):
            self.assertEqual(row["syncs.total"], s["syncs"]["total"])
            self.assertEqual(row["sync_blocked_ns"], s["sync_blocked_ns"])
            self.assertEqual(row["sync_bubble_ns"], s["sync_bubble_ns"])
            self.assertEqual(row["overlap.d2h.fraction"], s["overlap"]["d2h"]["fraction"])
            for cause, n in s["syncs"]["by_cause"].items():
                self.assertEqual(row["syncs.by_cause." + cause], n)
        # The CLI's CSV: one row per (step, metric); the DataFrame's columns are those metric names.
        rc, out, err = run_cli("analyze", H200_ITEM_LOOP, "--step-range", STEPS, "--layer-range", LAYERS,
                               "--format", "csv")
        self.assertEqual(rc, 0, err)
        checked = 0
        for r in csv.DictReader(io.StringIO(out)):
            if r["window_kind"] != "step":
                continue
            (row,) = [x for x in records if x["index"] == int(r["window_index"])]
            self.assertEqual(row["name"], r["window_name"])
            self.assertIn(r["metric"], row, f"CSV metric {r['metric']} has no DataFrame column")
            try:
                want = float(r["value"])
            except ValueError:  # a word, not a number (the step's idle verdict)
                self.assertEqual(row[r["metric"]], r["value"], f"step {r['window_index']} {r['metric']}")
            else:
                self.assertAlmostEqual(float(row[r["metric"]]), want, delta=abs(want) * 1e-9,
                                       msg=f"step {r['window_index']} {r['metric']}")
            checked += 1
        self.assertGreater(checked, 3 * 20)

    def test_sync_points_and_worst(self):
        sp, worst = self.result.sync_points, self.result.worst
        if _results.have_pandas():
            sp, worst = sp.to_dict("records"), worst.to_dict("records")
        self.assertEqual(sp, self.cli["sync_points"])
        self.assertEqual(len(sp), self.cli["sync_points_total"])
        self.assertEqual(worst, self.cli["worst"])
        self.assertEqual(worst[0]["cost_ns"], worst[0]["blocked_ns"] + worst[0]["bubble_ns"])

    def test_layers_and_max_sync_points(self):
        r = syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, layer_range=LAYERS, max_sync_points=2)
        cli = cli_json("analyze", H200_ITEM_LOOP, "--step-range", STEPS, "--layer-range", LAYERS, "--format", "json",
                       "--max-sync-points", "2")
        self.assertEqual(r.json, cli)
        self.assertTrue(r.json["sync_points_truncated"])
        self.assertEqual(len(r.sync_points), 2)
        self.assertEqual(len(r.layers), 24)

    def test_dict_and_bytes_input(self):
        import gzip

        with gzip.open(H200_ITEM_LOOP, "rt") as f:
            doc = json.load(f)
        from_dict = syncscope.analyze(doc, step_range=STEPS, layer_range=LAYERS)
        from_bytes = syncscope.analyze(json.dumps(doc).encode(), step_range=STEPS, layer_range=LAYERS)
        expected = dict(self.cli)
        for r, name in ((from_dict, "<dict>"), (from_bytes, "<bytes>")):
            got = dict(r.json)
            self.assertEqual(got.pop("source"), name)
            self.assertEqual(got, {k: v for k, v in expected.items() if k != "source"})

    def test_critical_path_per_step(self):
        r = syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, critical_path=True)
        cli = cli_json("analyze", H200_ITEM_LOOP, "--step-range", STEPS, "--format", "json", "--critical-path")
        self.assertEqual(r.json, cli)
        rows, runs = r.critical_path, r.critical_path_runs
        if _results.have_pandas():
            rows, runs = rows.to_dict("records"), runs.to_dict("records")
        self.assertEqual([x["name"] for x in rows], [s["name"] for s in cli["steps"]])
        for row, s in zip(rows, cli["steps"]):
            c = s["critical_path"]
            self.assertEqual(row["length_ns"], c["length_ns"])
            self.assertEqual(row["sync_edges"], c["sync_edges"])
            # The shares sum exactly to the length (integer ns).
            self.assertEqual(sum(row[k] for k in ("host_ns", "gpu_ns", "launch_ns", "sync_wait_ns", "other_ns")),
                             row["length_ns"])
            mine = [x for x in runs if x["step"] == s["name"]]
            self.assertEqual([x["duration_ns"] for x in mine], [t["duration_ns"] for t in c["top"]])
            self.assertEqual([x["rank"] for x in mine], list(range(1, len(c["top"]) + 1)))
        self.assertGreater(len(runs), 0)
        page = r._repr_html_()
        self.assertIn("critical path per step", page)
        # Without the option: no path, empty tables with the same columns.
        self.assertNotIn("critical_path", self.cli["steps"][0])
        self.assertEqual(len(self.result.critical_path), 0)
        self.assertNotIn("critical path per step", self.result._repr_html_())
        with self.assertRaises(TypeError):
            syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, critical_path="yes")

    def test_repr_and_html(self):
        text = repr(self.result)
        self.assertIn(f"{self.cli['totals']['syncs']['total']} sync points", text)
        page = self.result._repr_html_()
        for s in self.cli["steps"]:
            self.assertIn(s["name"], page)
        self.assertIn(self.cli["worst"][0]["cause"], page)
        self.assertIn("/step if removed", page)
        report = self.result.report()
        self.assertIn("train_step#0", report)
        # What removing the worst cause saves, by replay: the CLI's number, in the handler's text.
        self.assertGreater(self.cli["worst"][0]["removal_saving_ns"], 0)
        self.assertIn(f"{self.cli['worst'][0]['syncs_per_step']:.0f} x per step: ", report)
        none = syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, replay_causes=0)
        self.assertNotIn("removal_saving_ns", none.json["worst"][0])
        with self.assertRaises(syncscope.InputError):
            syncscope.analyze(H200_ITEM_LOOP, step_range=STEPS, replay_causes=-1)
        self.assertNotIn("no GPU in this trace", report)

    def test_without_pandas_tables_are_lists(self):
        # A fresh interpreter where `import pandas` fails: the same rows as plain dicts.
        code = ("import sys, json; sys.modules['pandas'] = None\n"
                "import syncscope\n"
                f"r = syncscope.analyze({H200_ITEM_LOOP!r}, step_range={STEPS!r}, layer_range={LAYERS!r})\n"
                "assert isinstance(r.steps, list) and isinstance(r.sync_points, list) and isinstance(r.worst, list)\n"
                "print(json.dumps({'steps': r.steps, 'worst': r.worst, 'n': len(r.sync_points)}))\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        self.assertEqual(got["worst"], self.cli["worst"])
        self.assertEqual(got["n"], len(self.cli["sync_points"]))
        self.assertEqual([s["syncs.total"] for s in got["steps"]], [s["syncs"]["total"] for s in self.cli["steps"]])


class Ranks(unittest.TestCase):
    def test_directory_and_list_are_the_clis(self):
        d = os.path.join(os.path.dirname(H200_ITEM_LOOP), "..", "ranks", "nccl4")
        d = os.path.normpath(d)
        cli = cli_json("analyze", d, "--format", "json")
        r = syncscope.analyze(d)
        self.assertIsInstance(r, syncscope.RankAnalysisResult)
        self.assertEqual(r.json, cli)
        self.assertEqual(cli["kind"], "syncscope.rank_analysis")
        files = sorted(os.path.join(d, f) for f in os.listdir(d))
        cli_files = cli_json("analyze", *files, "--format", "json", "--jobs", "1")
        self.assertEqual(syncscope.analyze_ranks(files, jobs=1).json, cli_files)
        ranks = r.ranks
        rows = ranks.to_dict("records") if _results.have_pandas() else ranks
        self.assertEqual([x["rank"] for x in rows], [x["rank"] for x in cli["ranks"]])
        self.assertEqual([x["trace.sync_points"] for x in rows], [x["trace"]["sync_points"] for x in cli["ranks"]])
        self.assertIn("rank", r._repr_html_())
        with self.assertRaisesRegex(syncscope.InputError, "--pid picks one process"):
            syncscope.analyze(d, pid=1)

    def test_stragglers_and_jobs(self):
        # make_nccl4.py: rank 2 spends 300 us per step in the all-reduce, the others 550 us.
        d = os.path.normpath(os.path.join(os.path.dirname(H200_ITEM_LOOP), "..", "ranks", "nccl4"))
        r = syncscope.analyze(d)
        s = r.stragglers
        rows = s.to_dict("records") if _results.have_pandas() else s
        self.assertEqual([(x["rank"], x["late_ns"], x["late_fraction"]) for x in rows], [(2, 250000, 0.25)])
        self.assertEqual(r.jobs, [])
        with tempfile.TemporaryDirectory() as t:
            for f in os.listdir(d):
                shutil.copy(os.path.join(d, f), t)
            hta_job = os.path.join(os.path.dirname(d), "hta_job")
            for f in ("sampled_rank-0.json.gz", "sampled_rank-1.json.gz"):
                shutil.copy(os.path.join(hta_job, f), t)
            two = syncscope.analyze(t)
        self.assertEqual([j.json["world_size"] for j in two.jobs], [0, 4, 128])
        self.assertEqual(len(two.json["ranks"]), 0)
        jr = two.jobs[2].ranks
        self.assertEqual(len(jr), 2)


class Predict(unittest.TestCase):
    def test_predict_is_the_clis(self):
        for extra in ([], ["--gpu", "H200", "--step-ms", "12.5"]):
            cli = cli_json("predict", "--trace", H200_ITEM_LOOP, "--step-range", STEPS, "--layer-range", LAYERS,
                           "--format", "json", *extra)
            kw = {"gpu": "H200", "step_ms": 12.5} if extra else {}
            r = syncscope.predict(H200_ITEM_LOOP, step_range=STEPS, layer_range=LAYERS, **kw)
            self.assertEqual(r.json, cli)
            self.assertEqual(r.json["kind"], "syncscope.prediction")
            fixes = r.fixes
            n = len(fixes)
            self.assertEqual(n, len(cli["fixes"]))
            rows = fixes.to_dict("records") if _results.have_pandas() else fixes
            for row, f in zip(rows, cli["fixes"]):
                self.assertEqual((row["fix"], row["variant"], row["applicable"]), (f["fix"], f["variant"], f["applicable"]))
                self.assertEqual(row["predicted_saving_ns"], f["predicted_saving_ns"])
            self.assertIn("prediction", r._repr_html_())


    def test_what_if_is_the_clis(self):
        edit = "remove-syncs:cause=aten::item"
        cli = cli_json("predict", "--trace", H200_ITEM_LOOP, "--step-range", STEPS, "--layer-range", LAYERS,
                       "--format", "json", "--what-if", edit)
        r = syncscope.predict(H200_ITEM_LOOP, step_range=STEPS, layer_range=LAYERS, what_if=[edit])
        self.assertEqual(r.json, cli)
        self.assertEqual([w["edit"] for w in r["what_if"]], [edit])
        with self.assertRaises(TypeError):
            syncscope.predict(H200_ITEM_LOOP, what_if=edit)  # a str, not a sequence of edits


class Diff(unittest.TestCase):
    def test_diff_is_the_clis(self):
        for extra in ([], ["--what-if", "remove-syncs:cause=aten::item"]):
            cli = cli_json("diff", H200_ITEM_LOOP, H200_ITEM_LOOP, "--step-range", STEPS, "--format", "json", *extra)
            r = syncscope.diff(H200_ITEM_LOOP, H200_ITEM_LOOP, step_range=STEPS, what_if=extra[1:])
            self.assertEqual(r.json, cli)

    def test_bad_edit_is_an_input_error_with_the_clis_message(self):
        rc, _, err = run_cli("diff", H200_ITEM_LOOP, H200_ITEM_LOOP, "--step-range", STEPS, "--what-if", "no-such-edit")
        self.assertEqual(rc, 2)
        with self.assertRaises(syncscope.InputError) as e:
            syncscope.diff(H200_ITEM_LOOP, H200_ITEM_LOOP, step_range=STEPS, what_if=["no-such-edit"])
        self.assertIn(str(e.exception).splitlines()[0][:40], err)


if __name__ == "__main__":
    unittest.main()
