"""The public API's type hints (docs/python.md, "Types"): every public function, method and
property of syncscope and syncscope.torch is annotated (its return type and every argument),
typing.get_type_hints resolves each of them, py.typed and the extension's stub ship, and mypy,
where it is installed (Debian: python3-mypy), finds no error in the package with untyped
definitions disallowed."""

import inspect
import os
import shutil
import subprocess
import sys
import typing
import unittest

import syncscope
from syncscope import _results


def public_callables(module, names):
    """(qualified name, function) of each public function, and of each public method and
    property of each public class, among `names` of `module`."""
    out = []
    for name in names:
        obj = getattr(module, name)
        if inspect.isfunction(obj):
            out.append((f"{module.__name__}.{name}", obj))
        elif inspect.isclass(obj) and obj.__module__.startswith("syncscope") and not issubclass(obj, BaseException):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__", "__getitem__", "__call__"):
                    continue
                if isinstance(member, property):
                    out.append((f"{obj.__name__}.{attr}", member.fget))
                elif inspect.isfunction(member):
                    out.append((f"{obj.__name__}.{attr}", member))
    return out


class Hints(unittest.TestCase):
    def check(self, module, names, at_least):
        found = public_callables(module, names)
        self.assertGreaterEqual(len(found), at_least)
        for qual, fn in found:
            with self.subTest(qual):
                hints = typing.get_type_hints(fn)  # raises if an annotation does not resolve
                self.assertIn("return", hints, f"{qual}: no return annotation")
                params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
                missing = [p.name for p in params if p.name not in hints]
                self.assertEqual(missing, [], f"{qual}: arguments without annotations")
        return dict(found)

    def test_package(self):
        found = self.check(syncscope, syncscope.__all__, 30)
        self.assertIn("AnalysisResult.steps", found)
        hints = typing.get_type_hints(syncscope.analyze_ranks)
        self.assertIs(hints["return"], syncscope.RankAnalysisResult)
        self.assertEqual(typing.get_type_hints(syncscope.predict)["return"],
                         typing.Union[syncscope.PredictionResult, syncscope.JobReplayResult])
        self.assertEqual(typing.get_type_hints(_results.step_labels)["return"], typing.List[int])

    def test_torch_module(self):
        try:
            import syncscope.torch as st
        except ImportError as e:
            raise unittest.SkipTest(f"torch not installed ({e})")
        found = self.check(st, ["trace_handler", "sync_events_config", "TraceHandler"], 4)
        self.assertIs(typing.get_type_hints(found["syncscope.torch.trace_handler"])["return"], st.TraceHandler)

    def test_typed_package_files(self):
        here = os.path.dirname(syncscope.__file__)
        for f in ("py.typed", "_core.pyi"):
            self.assertTrue(os.path.isfile(os.path.join(here, f)), f)

    def test_mypy(self):
        try:
            import mypy  # noqa: F401
        except ImportError:
            raise unittest.SkipTest("mypy not installed (apt-get install python3-mypy)")
        package = os.path.dirname(syncscope.__file__)
        cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"syncscope-mypy-cache-{os.getuid()}")
        # pandas 1.5 ships no stubs (its names are Any); torch's own hints are not followed (analyzing
        # all of torch takes minutes here): this checks syncscope's code against its own annotations.
        config = os.path.join(cache + ".ini")
        with open(config, "w") as f:
            f.write("[mypy]\nignore_missing_imports = True\ndisallow_untyped_defs = True\n"
                    "[mypy-torch.*]\nfollow_imports = skip\n")
        p = subprocess.run([sys.executable, "-m", "mypy", "--config-file", config, "--cache-dir", cache,
                            "-p", "syncscope"], capture_output=True, text=True, timeout=300,
                           cwd=os.path.dirname(package))
        os.unlink(config)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Success", p.stdout)
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
