"""Errors as Python exceptions: what the CLI refuses with exit 2 raises syncscope.InputError,
exit 1 syncscope.RuntimeError, each with the CLI's message; wrong argument types are
TypeErrors; nothing reaches the interpreter as a crash."""

import json
import os
import tempfile
import unittest

import syncscope
from syncscope import _core
from support import H200_ITEM_LOOP, cli_error, run_cli


class ErrorClasses(unittest.TestCase):
    def test_hierarchy(self):
        self.assertTrue(issubclass(syncscope.InputError, syncscope.Error))
        self.assertTrue(issubclass(syncscope.InputError, ValueError))
        self.assertTrue(issubclass(syncscope.RuntimeError, syncscope.Error))
        self.assertTrue(issubclass(syncscope.RuntimeError, RuntimeError))
        self.assertEqual((syncscope.InputError.exit_code, syncscope.RuntimeError.exit_code), (2, 1))

    def test_each_cpp_class_maps(self):
        with self.assertRaisesRegex(syncscope.InputError, "^bad input x$"):
            _core._raise_for_test("input", "bad input x")
        with self.assertRaisesRegex(syncscope.RuntimeError, "^failed y$"):
            _core._raise_for_test("error", "failed y")
        # cli/main.cpp reports other exceptions as "internal error: ..." with exit 1.
        with self.assertRaisesRegex(syncscope.RuntimeError, "^internal error: z$"):
            _core._raise_for_test("std", "z")
        with self.assertRaises(MemoryError):
            _core._raise_for_test("bad_alloc", "")


class SameMessageAsCli(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        p = os.path.join(self.tmp.name, name)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return p

    def check(self, cli_args, call, exc=syncscope.InputError):
        rc, _, err = run_cli(*cli_args)
        with self.assertRaises(exc) as cm:
            call()
        self.assertEqual(rc, cm.exception.exit_code, err)
        self.assertEqual(str(cm.exception), cli_error(err))

    def test_missing_file(self):
        p = os.path.join(self.tmp.name, "nope.json")
        self.check(["analyze", p], lambda: syncscope.analyze(p))
        self.check(["predict", "--trace", p], lambda: syncscope.predict(p))

    def test_malformed_json(self):
        p = self.write("bad.json", '{"traceEvents": [ {"ph": "X", "ts": }')
        self.check(["analyze", p], lambda: syncscope.analyze(p))

    def test_not_a_trace(self):
        p = self.write("cfg.json", json.dumps({"hidden_size": 4096}))
        rc, out, _ = run_cli("analyze", p, "--format", "json")
        if rc == 0:  # accepted as an empty trace: then the module agrees
            self.assertEqual(syncscope.analyze(p).json, json.loads(out))
        else:
            self.check(["analyze", p], lambda: syncscope.analyze(p))

    def test_wrong_pid(self):
        self.check(["analyze", H200_ITEM_LOOP, "--pid", "424242"], lambda: syncscope.analyze(H200_ITEM_LOOP, pid=424242))

    def test_unknown_gpu_profile(self):
        self.check(["predict", "--trace", H200_ITEM_LOOP, "--gpu", "NoSuchGPU"],
                   lambda: syncscope.predict(H200_ITEM_LOOP, gpu="NoSuchGPU"))

    def test_fix_options_come_from_the_registry(self):
        # Each fix's trace option, as the library's registry declares it (FIX_TRACE_OPTIONS).
        opts = syncscope.FIX_TRACE_OPTIONS
        self.assertEqual(opts["prefetch_depth"]["fix"], "offload")
        self.assertEqual(opts["prefetch_depth"]["flag"], "prefetch-depth")
        self.assertEqual(opts["prefetch_depth"]["default"], "2")
        self.assertEqual(opts["top_k"]["fix"], "moe_routing")
        self.assertIsNone(opts["top_k"]["default"])
        self.assertEqual(opts["logging_steps"]["fix"], "logging")
        # A keyword no fix declares, and a wrong type: TypeError before any work.
        with self.assertRaisesRegex(TypeError, "per_layer_ms.*prefetch_depth"):
            syncscope.predict(H200_ITEM_LOOP, per_layer_ms=13.7)
        with self.assertRaisesRegex(TypeError, "top_k"):
            syncscope.predict(H200_ITEM_LOOP, top_k=2.5)
        # The keyword is the CLI's option: the same predictions (TracePredict.OffloadReloadCopiesInBackward
        # checks that the look-ahead reaches offload's detector).
        status, out, err = run_cli("predict", "--trace", H200_ITEM_LOOP, "--prefetch-depth", "3", "--top-k", "2",
                                   "--format", "json", "--samples", "200")
        self.assertEqual(status, 0, err)
        py = syncscope.predict(H200_ITEM_LOOP, prefetch_depth=3, top_k=2, samples=200).json
        self.assertEqual(json.loads(out)["fixes"], py["fixes"])

    def test_dict_with_bad_events(self):
        with self.assertRaises(syncscope.InputError) as cm:
            syncscope.analyze({"traceEvents": [{"ph": "X", "ts": "soon", "dur": 1, "name": "x", "pid": 1, "tid": 1}]})
        self.assertIn("<dict>", str(cm.exception))

    def test_options_out_of_range(self):
        with self.assertRaisesRegex(syncscope.InputError, "prefetch_depth 1"):
            syncscope.predict(H200_ITEM_LOOP, prefetch_depth=1)
        with self.assertRaisesRegex(syncscope.InputError, "samples 5"):
            syncscope.predict(H200_ITEM_LOOP, samples=5)
        with self.assertRaises(syncscope.InputError):
            syncscope.analyze(H200_ITEM_LOOP, max_sync_points=-1)
        with self.assertRaises(syncscope.InputError):
            syncscope.analyze(H200_ITEM_LOOP, pid=2**70)
        with self.assertRaises(syncscope.InputError):
            syncscope.analyze({"x": float("nan")})

    def test_wrong_types(self):
        for bad in (42, None, 3.5, object()):
            with self.assertRaises(TypeError):
                syncscope.analyze(bad)
        with self.assertRaises(TypeError):
            syncscope.analyze(H200_ITEM_LOOP, step_range=None)
        with self.assertRaises(TypeError):
            syncscope.analyze(H200_ITEM_LOOP, pid="12")

    def test_non_utf8_bytes(self):
        with self.assertRaisesRegex(syncscope.InputError, "not UTF-8"):
            syncscope.analyze(b"\xff\xfe{}")


if __name__ == "__main__":
    unittest.main()
