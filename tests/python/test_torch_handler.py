"""syncscope.torch.trace_handler in a real torch.profiler run of a small CPU model (Debian's
python3-torch 1.13: no GPU, so the trace has none and the report says so): the files are
named as tensorboard_trace_handler names them, one report per schedule cycle, the warning
about missing sync records, and export_chrome_trace output analyzed the same as by the CLI."""

import gzip
import io
import json
import os
import re
import shutil
import socket
import tempfile
import unittest
import warnings

try:
    import torch
    import torch.profiler as tp
except ImportError as e:
    raise unittest.SkipTest(f"no torch for {__import__('sys').executable} ({e}): apt-get install python3-torch")

import syncscope
import syncscope.torch as st
from support import H200_ITEM_LOOP, run_cli

KINETO = torch.autograd.kineto_available()


def train(prof, steps):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 32), torch.randn(16, 1)
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss.item()  # a host read: a sync point on a GPU, a plain read on the CPU
        prof.step()


class Handler(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "log")

    def tearDown(self):
        self.tmp.cleanup()

    def run_profiler(self, handler, wait=1, warmup=1, active=2, repeat=2, steps=10):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with tp.profile(activities=[tp.ProfilerActivity.CPU],
                            schedule=tp.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
                            on_trace_ready=handler) as prof:
                train(prof, steps)
        return [w for w in caught if issubclass(w.category, st.SyncscopeWarning)]

    def test_one_report_per_cycle(self):
        out = io.StringIO()
        handler = st.trace_handler(self.dir, file=out)
        warned = self.run_profiler(handler)
        self.assertEqual(len(handler.results), 2)  # repeat=2: two cycles
        self.assertEqual(handler.errors, [None, None])
        self.assertEqual(len(handler.paths), 2)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(os.path.basename(p) for p in handler.paths))
        text = out.getvalue()
        self.assertEqual(text.count("syncscope: "), 2, text)
        self.assertIn("no GPU in this trace", text)
        for r in handler.results:
            self.assertFalse(r.has_gpu_activity)
            self.assertEqual(r.totals["syncs"]["total"], 0)  # no CUDA calls on a CPU-only run
        messages = [str(w.message) for w in warned]
        self.assertEqual(sum("no cuda_sync records" in m for m in messages), 2, messages)
        if KINETO:
            for r in handler.results:
                self.assertEqual(len(r.json["steps"]), 2, r.json["warnings"])  # active=2 steps per cycle
                for s in r.json["steps"]:
                    self.assertTrue(s["name"].startswith("ProfilerStep#"))
                    self.assertIn(s["name"], text)
            names = [s["name"] for r in handler.results for s in r.json["steps"]]
            self.assertEqual(len(set(names)), 4, names)  # the two cycles' steps are different steps
        else:
            # Debian's torch 1.13 has no Kineto: the legacy trace's ProfilerStep#N events have no
            # category; the steps come from them (legacy_ranges.hpp), the handler says why there
            # are no sync points.
            self.assertEqual(sum("built without Kineto" in m for m in messages), 1, messages)
            for r in handler.results:
                self.assertGreater(len(r.json["steps"]), 0, r.json["warnings"])
                for s in r.json["steps"]:
                    self.assertTrue(s["name"].startswith("ProfilerStep#"), s["name"])
            self.assertEqual(text.count("no steps: no host range matches"), 0, text)
        self.assertTrue(all(t["write_s"] >= 0 and t["analyze_s"] >= 0 for t in handler.timings))
        print(text)
        print("timings (s):", handler.timings)

    def test_report_of_a_gpu_trace(self):
        # What the handler prints for a Kineto trace with GPU syncs: torch's handler "writes"
        # the H200 fixture (a stand-in profiler; no GPU here), the handler analyzes and prints.
        class Recorded:
            def export_chrome_trace(self, path):
                with gzip.open(H200_ITEM_LOOP, "rb") as src, open(path, "wb") as dst:
                    shutil.copyfileobj(src, dst)

        out = io.StringIO()
        handler = st.trace_handler(self.dir, worker_name="h200", file=out, step_range="train_step#*")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handler(Recorded())
        r = handler.results[0]
        text = out.getvalue()
        rc, cli, err = run_cli("analyze", handler.paths[0], "--step-range", "train_step#*", "--format", "json")
        self.assertEqual(rc, 0, err)
        cli = json.loads(cli)
        self.assertEqual(r.json, cli)
        self.assertNotIn("no GPU in this trace", text)
        self.assertFalse(any("no cuda_sync records" in str(w.message) for w in caught))
        self.assertFalse(any("without Kineto" in str(w.message) for w in caught))  # the trace has what it needs
        for s in cli["steps"]:
            line = [x for x in text.splitlines() if x.strip().startswith(s["name"] + " ")]
            self.assertEqual(len(line), 1, text)
            self.assertIn(f" {s['syncs']['total']} ", line[0])
            for cause, n in s["syncs"]["by_cause"].items():
                self.assertIn(f"{cause} x{n}", line[0])
        self.assertIn(f"1. {cli['worst'][0]['cause']}: {cli['worst'][0]['count']} syncs", text)
        print(text)

    def test_names_as_tensorboard_trace_handler(self):
        handler = st.trace_handler(self.dir, file=io.StringIO())
        self.run_profiler(handler, repeat=1, steps=5)
        theirs = os.path.join(self.tmp.name, "theirs")
        self.run_profiler(tp.tensorboard_trace_handler(theirs), repeat=1, steps=5)
        ours = sorted(os.listdir(self.dir))
        (their_name,) = os.listdir(theirs)
        self.assertEqual(len(ours), 1)
        self.assertEqual(handler.paths, [os.path.join(self.dir, ours[0])])
        pattern = r"^(.+)\.(\d+)\.pt\.trace\.json$"
        mine, theirs_m = re.match(pattern, ours[0]), re.match(pattern, their_name)
        self.assertIsNotNone(mine, ours[0])
        self.assertIsNotNone(theirs_m, their_name)
        self.assertEqual(mine.group(1), f"{socket.gethostname()}_{os.getpid()}")
        self.assertEqual(mine.group(1), theirs_m.group(1))
        self.assertEqual(len(mine.group(2)), len(theirs_m.group(2)))  # same clock unit (ms or ns)

    def test_worker_name_and_gzip(self):
        handler = st.trace_handler(self.dir, worker_name="rank3", use_gzip=True, print_report=False)
        self.run_profiler(handler, repeat=1, steps=5)
        (name,) = os.listdir(self.dir)
        self.assertRegex(name, r"^rank3\.\d+\.pt\.trace\.json\.gz$")
        r = handler.results[0]
        rc, out, err = run_cli("analyze", handler.paths[0], "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(r.json, json.loads(out))

    def test_export_chrome_trace_output(self):
        path = os.path.join(self.tmp.name, "exported.json")
        with tp.profile(activities=[tp.ProfilerActivity.CPU]) as prof:
            train(prof, 3)
        prof.export_chrome_trace(path)
        r = syncscope.analyze(path)
        rc, out, err = run_cli("analyze", path, "--format", "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(r.json, json.loads(out))
        self.assertIn("no GPU in this trace", r.report())
        if KINETO:
            self.assertGreater(r.record_counts["ranges"], 0)
            self.assertEqual(len(r.json["steps"]), 3)
        else:  # the legacy exporter's events have no category: none is read
            self.assertEqual(r.record_counts["ranges"], 0)

    def test_sync_events_config(self):
        cfg = st.sync_events_config()
        if torch.__version__.startswith("1."):
            self.assertIsNone(cfg)  # torch 1.13's _ExperimentalConfig has no enable_cuda_sync_events
        else:
            self.assertIsNotNone(cfg)

    def test_refused_trace_warns_and_training_goes_on(self):
        class Broken:
            def export_chrome_trace(self, path):
                with open(path, "w") as f:
                    f.write('{"traceEvents": [')

        handler = st.trace_handler(self.dir, worker_name="w", print_report=False)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            handler(Broken())
        self.assertEqual(handler.results, [None])
        self.assertIn(handler.paths[0], handler.errors[0])
        self.assertTrue(any("could not analyze" in str(w.message) for w in caught))


if __name__ == "__main__":
    unittest.main()
