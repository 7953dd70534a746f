"""Memory DataFrames (issue 38; docs/analysis.md, "Memory"): result.memory, memory_owners and
memory_timeline over the CLI's gpu.memory, with int64 bytes and ns, categories for names, and
their columns kept when a trace has no profile_memory events."""

import os
import unittest

import syncscope
from syncscope import _results
from support import FIXTURES, H200_ITEM_LOOP

MEMORY_TRACE = os.path.join(FIXTURES, "memory", "hta_df_index_resolver_rank1.json.gz")


@unittest.skipUnless(_results.have_pandas(), "pandas not installed (apt-get install python3-pandas)")
class Memory(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.r = syncscope.analyze(MEMORY_TRACE)

    def test_per_device(self):
        m = self.r.memory
        self.assertEqual(list(m["name"]), ["cpu", "cuda:1"])
        self.assertEqual(str(m["name"].dtype), "category")
        for c in ("events", "peak_allocated_bytes", "peak_allocated_ns", "peak_reserved_bytes", "live_at_peak_bytes"):
            self.assertEqual(str(m[c].dtype), "int64", c)
        gpu = m[m["name"] == "cuda:1"].iloc[0]
        # tests/analysis/memory_fixture_expectations.py, from the file with the json module alone
        self.assertEqual(int(gpu["peak_allocated_bytes"]), 6629508096)
        self.assertEqual(int(gpu["peak_reserved_bytes"]), 12782141440)

    def test_owners_and_timeline(self):
        o = self.r.memory_owners
        self.assertEqual(list(o.columns), ["name", "rank", "op", "allocations", "bytes"])
        self.assertEqual(str(o["op"].dtype), "category")
        self.assertEqual(str(o["bytes"].dtype), "int64")
        top = o[o["name"] == "cuda:1"].iloc[0]
        self.assertEqual((top["op"], int(top["bytes"])), ("aten::mm", 1037459456))
        t = self.r.memory_timeline
        self.assertEqual(list(t.columns), ["name", "time_ns", "allocated_bytes", "reserved_bytes"])
        for c in ("time_ns", "allocated_bytes", "reserved_bytes"):
            self.assertEqual(str(t[c].dtype), "int64", c)
        g = t[t["name"] == "cuda:1"]
        self.assertLessEqual(len(g), 512)
        self.assertEqual(int(g["allocated_bytes"].max()), 6629508096)

    def test_no_memory_events_keep_columns(self):
        r = syncscope.analyze(H200_ITEM_LOOP)
        for frame, cols in ((r.memory, 17), (r.memory_owners, 5), (r.memory_timeline, 4)):
            self.assertEqual(len(frame), 0)
            self.assertEqual(len(frame.columns), cols)
        self.assertEqual(str(r.memory_timeline["allocated_bytes"].dtype), "int64")


if __name__ == "__main__":
    unittest.main()
