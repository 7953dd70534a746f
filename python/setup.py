"""pip install --no-build-isolation ./python

Builds the extension syncscope._core with the repository's CMake build (the C++ libraries
it links are the project's) and installs the package with it. Which build:
- SYNCSCOPE_BUILD_DIR=<an already configured build directory> (e.g. build/ci): builds the
  target syncscope_python there (nothing when it is up to date) and takes its _core; with
  SYNCSCOPE_SKIP_BUILD=1 too, takes the _core already built there as it is;
- otherwise configures <repo>/build/python-pip for this interpreter (Release, no tests,
  benchmarks, CUDA or LibTorch: the module needs none of them) and builds it there.
--no-build-isolation: pip then uses the installed setuptools and wheel (Debian's
python3-setuptools, python3-wheel) instead of downloading them.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def resolve_build_dir(value):
    """SYNCSCOPE_BUILD_DIR as the user meant it: pip runs this file with python/ (or a copy of
    it) as the working directory, so a relative path is taken from the directory pip was
    started in (the shell's $PWD), else from the repository root; it must be a configured
    build (its CMakeCache.txt)."""
    if os.path.isabs(value):
        candidates = [value]
    else:
        candidates = [os.path.join(base, value) for base in (os.environ.get("PWD"), REPO) if base]
    for c in candidates:
        if os.path.isfile(os.path.join(c, "CMakeCache.txt")):
            return os.path.abspath(c)
    raise RuntimeError(f"SYNCSCOPE_BUILD_DIR={value}: no configured build (CMakeCache.txt) at "
                       f"{' or '.join(candidates)}; configure one (cmake --preset ci) or give an absolute path")


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake = os.environ.get("CMAKE", "cmake")
        build_dir = os.environ.get("SYNCSCOPE_BUILD_DIR")
        if build_dir:
            build_dir = resolve_build_dir(build_dir)
        else:
            build_dir = os.path.join(REPO, "build", "python-pip")
            subprocess.check_call([cmake, "-S", REPO, "-B", build_dir, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                                   "-DSYNCSCOPE_ENABLE_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
                                   "-DSYNCSCOPE_ENABLE_TESTS=OFF", "-DSYNCSCOPE_ENABLE_BENCH=OFF",
                                   "-DSYNCSCOPE_ENABLE_CUDA=OFF", "-DSYNCSCOPE_ENABLE_TORCH=OFF"])
        if not (os.environ.get("SYNCSCOPE_BUILD_DIR") and os.environ.get("SYNCSCOPE_SKIP_BUILD") == "1"):
            jobs = os.environ.get("SYNCSCOPE_JOBS", str(os.cpu_count() or 1))
            subprocess.check_call([cmake, "--build", build_dir, "--target", "syncscope_python", "-j", jobs])
        built = glob.glob(os.path.join(build_dir, "python", "syncscope", "_core*.so"))
        if len(built) != 1:
            raise RuntimeError(f"expected one syncscope/_core*.so under {build_dir}/python, found {built}; "
                               "was that build configured for this Python?")
        target = self.get_ext_fullpath(ext.name)
        if os.path.basename(built[0]) != os.path.basename(target):
            raise RuntimeError(f"{built[0]} was built for another Python than {sys.executable} "
                               f"(expected {os.path.basename(target)}): configure the build with "
                               f"-DPython3_EXECUTABLE={sys.executable}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    name="syncscope",
    version="0.1.0",
    description="Find hidden host-device sync points in PyTorch traces (Python module of syncscope)",
    packages=["syncscope"],
    package_data={"syncscope": ["py.typed", "_core.pyi"]},  # PEP 561: the package carries its type hints
    ext_modules=[Extension("syncscope._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.8",
    extras_require={"pandas": ["pandas"], "torch": ["torch"]},
    zip_safe=False,
)
