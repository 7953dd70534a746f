"""The two documented installs work here: `cmake --install BUILD --component python` (staged
with DESTDIR, then imported from there) and `pip install --no-build-isolation ./python` into
a virtual environment made with --system-site-packages (so Debian's pandas and torch stay
visible), with SYNCSCOPE_BUILD_DIR pointing at this build (and SYNCSCOPE_SKIP_BUILD=1: a test
does not rebuild the tree the other tests use); in both the installed package,
not the build tree's, analyzes the H200 fixture."""

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest

from support import BUILD_DIR, H200_ITEM_LOOP, SOURCE_DIR

CHECK = ("import sys, syncscope; r = syncscope.analyze(sys.argv[1], step_range='train_step#*'); "
         "print(syncscope.__file__); print(r.totals['syncs']['total'])")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


class Install(unittest.TestCase):
    def setUp(self):
        if not BUILD_DIR:
            self.skipTest("SYNCSCOPE_BUILD_DIR is not set: run through ctest")
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def expected_syncs(self):
        env = os.environ.copy()
        p = subprocess.run([sys.executable, "-c", CHECK, H200_ITEM_LOOP], capture_output=True, text=True, env=env,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.splitlines()[1]

    def test_cmake_install_component(self):
        cmake = os.environ.get("SYNCSCOPE_CMAKE", "cmake")
        stage = os.path.join(self.tmp.name, "stage")
        p = subprocess.run([cmake, "--install", BUILD_DIR, "--component", "python"], capture_output=True, text=True,
                           env=clean_env(DESTDIR=stage), timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # The install directory is the interpreter's platlib (python/module.cmake), under DESTDIR.
        platlib = sysconfig.get_path("platlib")
        pkg = os.path.join(stage + platlib, "syncscope")
        files = sorted(os.listdir(pkg))
        self.assertIn("__init__.py", files)
        self.assertIn("torch.py", files)
        self.assertIn("py.typed", files)
        self.assertIn("_core.pyi", files)  # the extension's type stub
        self.assertTrue(any(f.startswith("_core") and f.endswith(".so") for f in files), files)
        p = subprocess.run([sys.executable, "-c", CHECK, H200_ITEM_LOOP], capture_output=True, text=True,
                           env=clean_env(PYTHONPATH=stage + platlib), cwd=self.tmp.name, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        where, syncs = p.stdout.splitlines()
        self.assertTrue(where.startswith(pkg), where)
        self.assertEqual(syncs, self.expected_syncs())

    def test_pip_install_into_venv(self):
        venv = os.path.join(self.tmp.name, "venv")
        p = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv], capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0:
            self.skipTest(f"cannot make a venv here (apt-get install python3-venv): {p.stderr.strip()[-300:]}")
        py = os.path.join(venv, "bin", "python")
        # A copy of python/: pip builds in the tree it is given (build/, *.egg-info), and a
        # test writes nothing into the checkout. With SYNCSCOPE_BUILD_DIR set, setup.py needs
        # nothing else of the repository.
        src = os.path.join(self.tmp.name, "python")
        shutil.copytree(os.path.join(SOURCE_DIR, "python"), src,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        # SYNCSCOPE_BUILD_DIR relative to the directory pip is started in (as the documented
        # `SYNCSCOPE_BUILD_DIR=build/ci pip install ... ./python` from the repository root):
        # setup.py runs with python/ as its working directory and resolves it from $PWD.
        rel = os.path.relpath(BUILD_DIR, self.tmp.name)
        p = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--no-deps",
                            "./python"], capture_output=True, text=True,
                           env=clean_env(SYNCSCOPE_BUILD_DIR=rel, PWD=self.tmp.name, SYNCSCOPE_SKIP_BUILD="1",
                                         PIP_DISABLE_PIP_VERSION_CHECK="1",
                                         CMAKE=os.environ.get("SYNCSCOPE_CMAKE", "cmake")),
                           cwd=self.tmp.name, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout[-3000:] + p.stderr[-3000:])
        p = subprocess.run([py, "-c", CHECK, H200_ITEM_LOOP], capture_output=True, text=True, env=clean_env(),
                           cwd=self.tmp.name, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        where, syncs = p.stdout.splitlines()
        self.assertTrue(where.startswith(venv), where)
        self.assertEqual(syncs, self.expected_syncs())
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(where), "py.typed")), "PEP 561 marker installed")
        self.assertTrue(os.path.isfile(os.path.join(os.path.dirname(where), "_core.pyi")), "the extension's stub")


if __name__ == "__main__":
    unittest.main()
