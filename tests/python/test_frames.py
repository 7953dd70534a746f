"""The DataFrames' dtypes, shapes and indexes (docs/python.md, "DataFrames"): int64 ns and
counts, nullable Int64 for removal_saving_ns, categories for names, empty frames with their
columns and index; steps indexed by their number, sync points and layers by (step, ordinal),
kernels by name, idle by (device, stream); steps found in a legacy (no Kineto) CPU-only
torch.profiler trace; py.typed shipped."""

import json
import os
import tempfile
import unittest

import syncscope
from syncscope import _results
from support import H200_ITEM_LOOP

LEGACY = [  # the layout Debian 12's torch 1.13 (no Kineto) writes: no "cat", pid "CPU functions"
    {"name": f"ProfilerStep#{i}", "ph": "X", "ts": 100 * i, "dur": 50 + i, "tid": 1, "pid": "CPU functions",
     "args": {}} for i in (1, 2, 3)
] + [{"name": "aten::mm", "ph": "X", "ts": 100 * i + 5, "dur": 20, "tid": 1, "pid": "CPU functions", "args": {}}
     for i in (1, 2, 3)]


@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class Frames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = syncscope.analyze(H200_ITEM_LOOP, step_range="train_step#*", layer_range="layer_*")

    def test_kernels(self):
        k = self.r.kernels
        self.assertEqual(list(k.columns), ["class", "count", "total_ns", "median_ns", "p90_ns", "max_ns",
                                           "min_ns", "mean_ns", "std_ns"])
        self.assertEqual(k.index.name, "name")
        self.assertEqual(len(k), len(self.r.json["gpu"]["kernels_by_name"]))
        self.assertGreater(len(k), 0)
        self.assertEqual(str(k.index.dtype), "category")
        first = self.r.json["gpu"]["kernels_by_name"][0]
        self.assertEqual(int(k.loc[first["name"], "total_ns"]), first["total_ns"])
        for c in ("count", "total_ns", "max_ns"):
            self.assertEqual(str(k[c].dtype), "int64", c)
        self.assertEqual(int(k["total_ns"].sum()), sum(x["total_ns"] for x in self.r.json["gpu"]["kernels_by_name"]))

    def test_idle_by_stream_sums_to_each_window(self):
        i = self.r.idle_by_stream
        self.assertEqual(len(i), len(self.r.json["idle_by_stream"]))
        self.assertEqual(list(i.index.names), ["device", "stream"])
        s = self.r.json["idle_by_stream"][0]
        self.assertEqual(int(i.loc[(s["device"], s["stream"]), "window_ns"]), s["idle"]["window_ns"])
        for c in ("window_ns", "busy_ns", "sync_bubble_ns", "host_wait_ns", "dependency_wait_ns", "other_ns"):
            self.assertEqual(str(i[c].dtype), "int64", c)
        parts = i[["busy_ns", "sync_bubble_ns", "host_wait_ns", "dependency_wait_ns", "other_ns"]].sum(axis=1)
        self.assertTrue((parts == i["window_ns"]).all())
        dev = self.r.json["idle_by_device"][0]["idle"]["sync_bubble_ns"]
        self.assertTrue((i["sync_bubble_ns"] <= dev).all(), "a stream's sync bubble never exceeds its device's")

    def test_worst_removal_saving_is_int64(self):
        w = self.r.worst
        self.assertIn("removal_saving_ns", w.columns)
        self.assertEqual(str(w["removal_saving_ns"].dtype), "Int64")
        self.assertEqual(str(w["cause"].dtype), "category")

    def test_sync_points_and_steps_dtypes(self):
        sp = self.r.sync_points
        for c in ("start_ns", "end_ns", "blocked_ns", "bubble_ns"):
            self.assertEqual(str(sp[c].dtype), "int64", c)
        self.assertEqual(str(self.r.steps["duration_ns"].dtype), "int64")

    def test_steps_indexed_by_number_syncs_and_layers_by_step_and_ordinal(self):
        s, sp, lay = self.r.steps, self.r.sync_points, self.r.layers
        self.assertEqual(s.index.name, "step")
        self.assertEqual(list(s.index), [0, 1, 2])  # train_step#0..2
        self.assertEqual(list(sp.index.names), ["step", "sync"])
        self.assertEqual(str(sp.index.get_level_values("step").dtype), "int64")
        step1 = s.loc[1]
        mine = sp.loc[1]
        self.assertEqual(len(mine), int(step1["syncs.total"]))
        self.assertEqual(list(mine.index), list(range(len(mine))))
        self.assertTrue(((mine["start_ns"] >= step1["start_ns"]) & (mine["start_ns"] < step1["end_ns"])).all())
        # the syncs outside every step (the trace's cudaDeviceSynchronize calls) are step -1
        outside = sp.loc[-1] if -1 in sp.index.get_level_values("step") else sp.iloc[:0]
        self.assertEqual(len(outside) + sum(int(x) for x in s["syncs.total"]), len(sp))
        self.assertEqual(list(lay.index.names), ["step", "layer"])
        self.assertEqual(list(lay.loc[2].index), list(range(8)))
        self.assertEqual(list(lay.loc[2]["name"].astype(str)), [f"layer_{i:02d}" for i in range(8)])

    def test_step_labels_fall_back_to_positions(self):
        steps = [{"name": n, "index": i, "start_ns": 10 * i, "end_ns": 10 * i + 5} for i, n in enumerate(
            ["step#7", "step#7", "step#9"])]
        self.assertEqual(_results.step_labels(steps), [0, 1, 2], "a shared number: positions")
        steps[1]["name"] = "step"
        self.assertEqual(_results.step_labels(steps), [0, 1, 2], "a name without a number: positions")
        steps[1]["name"] = "step#8"
        self.assertEqual(_results.step_labels(steps), [7, 8, 9])
        self.assertEqual(_results.step_keys(steps, [0, 4, 5, 12, 31, 40]),
                         [(7, 0), (7, 1), (-1, 0), (8, 0), (-1, 1), (-1, 2)])

    def test_no_steps_keeps_the_columns(self):
        r = syncscope.analyze(H200_ITEM_LOOP, step_range="no_such_step#*")
        s = r.steps
        self.assertEqual(len(s), 0)
        self.assertIn("duration_ns", s.columns)
        self.assertEqual(str(s["duration_ns"].dtype), "int64")
        self.assertEqual((s.index.name, str(s.index.dtype)), ("step", "int64"))
        self.assertEqual(set(r.sync_points.index.get_level_values("step")), {-1}, "no step holds a sync")
        self.assertEqual(list(r.worst.columns)[:5], ["cause", "count", "blocked_ns", "bubble_ns", "cost_ns"])

    def test_legacy_cpu_only_trace_has_its_profiler_steps(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "legacy.json")
            with open(path, "w") as f:
                json.dump(LEGACY, f)
            r = syncscope.analyze(path)
        self.assertEqual(list(r.steps["name"].astype(str)), ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"])
        self.assertEqual(list(r.steps["duration_ns"]), [51000, 52000, 53000])
        self.assertEqual(list(r.steps.index), [1, 2, 3], "indexed by the profiler's step numbers")
        self.assertEqual(int(r.steps.loc[2, "duration_ns"]), 52000)

    def test_warnings_at_the_callers_line_with_python_names(self):
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = syncscope.analyze(H200_ITEM_LOOP, step_range="no_such_step#*")  # this line
        line = __import__("inspect").currentframe().f_lineno - 1
        mine = [w for w in caught if issubclass(w.category, syncscope.AnalysisWarning)]
        self.assertEqual(len(mine), len(r.warnings))
        step = [w for w in mine if "no_such_step" in str(w.message)]
        self.assertEqual(len(step), 1, [str(w.message) for w in mine])
        self.assertIn("step_range 'no_such_step#*'", str(step[0].message))
        self.assertNotIn("--step-range", str(step[0].message))
        self.assertEqual(os.path.abspath(step[0].filename), os.path.abspath(__file__))
        self.assertEqual(step[0].lineno, line)
        self.assertIn("--step-range", " ".join(r.warnings), "the JSON keeps the CLI's own text")

    def test_py_typed_is_shipped(self):
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(syncscope.__file__), "py.typed")))



@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class HtaFrames(unittest.TestCase):
    """Per-kernel min/mean/std, GPU user annotations, frequent kernel sequences (issue 38; HTA's
    figures for the same trace: scripts/hta_compare/)."""

    @classmethod
    def setUpClass(cls):
        cls.r = syncscope.analyze(H200_ITEM_LOOP, step_range="train_step#*")

    def test_kernel_min_mean_std(self):
        k = self.r.kernels
        self.assertEqual(str(k["min_ns"].dtype), "int64")
        self.assertEqual(str(k["std_ns"].dtype), "float64")
        self.assertTrue((k["min_ns"] <= k["mean_ns"]).all() and (k["mean_ns"] <= k["max_ns"]).all())
        # mean = total / count exactly, as the CLI's JSON says
        self.assertTrue(((k["mean_ns"] * k["count"] - k["total_ns"]).abs() < 1e-6 * k["total_ns"]).all())

    def test_gpu_annotations(self):
        g = self.r.gpu_annotations
        self.assertEqual(list(g.columns), ["name", "streams", "count", "total_ns", "min_ns", "max_ns", "mean_ns",
                                           "std_ns", "median_ns", "p90_ns"])
        # the H200 fixture: layer_00..07, 3 steps each, on one stream
        self.assertEqual(len(g), 8)
        self.assertEqual(str(g["name"].dtype), "category")
        self.assertEqual(int(g["count"].sum()), 24)
        self.assertEqual(str(g["total_ns"].dtype), "int64")
        self.assertEqual(g.iloc[0]["name"], "layer_00")
        self.assertEqual(int(g.iloc[0]["total_ns"]), 719305)

    def test_kernel_sequences_and_empty_frames(self):
        s = self.r.kernel_sequences  # default: top-level cpu_ops with >= 3 kernels: none here
        self.assertEqual(list(s.columns), ["op", "kernels", "length", "count", "gpu_ns", "host_ns"])
        self.assertEqual(len(s), 0)
        self.assertEqual(str(s["op"].dtype), "category")
        self.assertEqual(str(s["kernels"].dtype), "object")
        self.assertEqual(str(s["gpu_ns"].dtype), "int64")
        doc = json.loads(json.dumps(self.r.json))
        doc["gpu"]["kernel_sequences"]["top"] = [{"op": "aten::matmul", "kernels": ["gemm", "splitK"], "length": 2,
                                                  "count": 24, "gpu_ns": 220797, "host_ns": 4578000}]
        s = _results.AnalysisResult(doc, {}).kernel_sequences
        self.assertEqual(s.iloc[0]["kernels"], "gemm|splitK")
        self.assertEqual(str(s["count"].dtype), "int64")
        doc["gpu"]["gpu_annotations"] = []
        self.assertEqual(list(_results.AnalysisResult(doc, {}).gpu_annotations.columns)[:3],
                         ["name", "streams", "count"])


if __name__ == "__main__":
    unittest.main()
