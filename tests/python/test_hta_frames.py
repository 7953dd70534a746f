"""The frames of HTA's analyses we added (docs/analysis.md, "HTA's analyses: kernels per ATen
op, queue length over time"): aten_op_kernels, queue_length_series, queue_blocked: the CLI's
JSON reshaped, int64 ns and counts, categories for names, a useful index, empty frames with
their columns; queue_full reaches the C++ analysis."""

import json
import unittest
import warnings

import syncscope
from syncscope import _results
from support import H200_ITEM_LOOP

# One aten::mm on thread 1 launching a kernel on stream 7; no ProfilerStep.
TINY = {"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 20, "args": {}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 13, "dur": 4,
     "args": {"correlation": 5}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40, "dur": 10,
     "args": {"device": 0, "stream": 7, "correlation": 5}},
]}


@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class HtaFrames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = syncscope.analyze(H200_ITEM_LOOP, queue_full=2)

    def test_aten_op_kernels(self):
        a = self.r.aten_op_kernels
        groups = self.r.json["gpu"]["aten_op_kernels"]["groups"]
        self.assertEqual(len(a), len(groups))
        self.assertGreater(len(a), 0)
        self.assertEqual(list(a.index.names), ["op", "kernels"])
        for c in ("count", "op_delay_mean_ns", "launch_delay_mean_ns", "kernel_ns", "kernels_per_op"):
            self.assertEqual(str(a[c].dtype), "int64", c)
        self.assertEqual(int(a["count"].sum()), sum(g["count"] for g in groups))
        mm = next(g for g in groups if g["op"] == "aten::mm")
        self.assertEqual(int(a.loc[("aten::mm", mm["kernels"]), "count"]), mm["count"])
        self.assertEqual(int(a.loc[("aten::mm", mm["kernels"]), "kernels_per_op"]), 2)  # gemm -> split-K reduce

    def test_queue_series_and_blocked(self):
        s, b = self.r.queue_length_series, self.r.queue_blocked
        streams = self.r.json["gpu"]["queue_series"]["streams"]
        self.assertEqual(list(s.index.names), ["device", "stream", "t_ns"])
        self.assertEqual(len(s), sum(len(x["points"]) for x in streams))
        self.assertEqual(list(s.columns), ["depth", "pending"])
        self.assertTrue(all(str(t) == "int64" for t in s.dtypes))
        self.assertEqual(list(b.index.names), ["device", "stream"])
        self.assertEqual(int(b["threshold"].iloc[0]), 2)  # queue_full reached the analysis
        self.assertEqual(str(b["blocked_fraction"].dtype), "float64")
        self.assertEqual(int(b["blocked_ns"].sum()), sum(x["blocked_ns"] for x in streams))
        # pending (HTA's count) never exceeds depth (ours: the running activity counts too).
        self.assertTrue(bool((s["pending"] <= s["depth"]).all()))

    def test_values_of_a_tiny_trace(self):
        r = syncscope.analyze(json.dumps(TINY).encode(), step_range="", queue_full=1)
        a = r.aten_op_kernels
        self.assertEqual(len(a), 1)
        row = a.loc[("aten::mm", "gemm")]
        self.assertEqual(int(row["op_delay_mean_ns"]), 3000)      # 13 - 10 us
        self.assertEqual(int(row["launch_delay_mean_ns"]), 27000)  # 40 - 13 us
        s = r.queue_length_series.loc[(0, 7)]
        self.assertEqual(list(s.index), [13000, 40000, 50000])
        self.assertEqual(list(s["pending"]), [1, 0, 0])
        self.assertEqual(int(r.queue_blocked.loc[(0, 7)]["blocked_ns"]), 27000)  # pending >= 1 from 13 to 40 us

    def test_empty_frames_keep_columns_and_dtypes(self):
        with warnings.catch_warnings():  # "no GPU activity": expected here
            warnings.simplefilter("ignore")
            r = syncscope.analyze(json.dumps({"traceEvents": TINY["traceEvents"][:1]}).encode(), step_range="")
        a, s, b = r.aten_op_kernels, r.queue_length_series, r.queue_blocked
        self.assertEqual((len(a), len(s), len(b)), (0, 0, 0))
        self.assertEqual(list(a.index.names), ["op", "kernels"])
        self.assertEqual(str(a["count"].dtype), "int64")
        self.assertEqual(list(s.columns), ["depth", "pending"])
        self.assertEqual(str(b["blocked_fraction"].dtype), "float64")
        self.assertEqual(str(b["blocked_ns"].dtype), "int64")

    def test_queue_full_is_checked(self):
        with self.assertRaises(syncscope.InputError):
            syncscope.analyze(H200_ITEM_LOOP, queue_full=0)


@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class SequenceOptions(unittest.TestCase):
    """analyze(sequence_op=, sequence_min_len=, sequence_top=) reach the C++ analysis as the
    CLI's --sequence-* do; out-of-bound values are refused with the Python names."""

    def test_options_reach_the_analysis(self):
        default = syncscope.analyze(H200_ITEM_LOOP).json["gpu"]["kernel_sequences"]
        one = syncscope.analyze(H200_ITEM_LOOP, sequence_min_len=1, sequence_top=2)
        seq = one.json["gpu"]["kernel_sequences"]
        self.assertEqual(seq["options"]["min_pattern_len"] if "options" in seq else 1, 1)
        self.assertLessEqual(len(seq["top"]), 2)
        # Ops of one or two kernels count with min 1, not with HTA's default of 3.
        self.assertGreater(len(seq["top"]), len(default["top"]))
        self.assertEqual(len(one.kernel_sequences), len(seq["top"]))

    def test_bounds_speak_python(self):
        with self.assertRaisesRegex(syncscope.InputError, "^sequence_top 100000: expected"):
            syncscope.analyze(H200_ITEM_LOOP, sequence_top=100000)
        with self.assertRaisesRegex(syncscope.InputError, "sequence_min_len 0"):
            syncscope.analyze(H200_ITEM_LOOP, sequence_min_len=0)
        with self.assertRaises(TypeError):
            syncscope.analyze(H200_ITEM_LOOP, sequence_op=3)


if __name__ == "__main__":
    unittest.main()
