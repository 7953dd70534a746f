"""Runs one test file of tests/python with unittest for CTest: exit 0 when its tests pass,
1 when one fails, 77 (CTest: skipped) when every test in it was skipped, naming why."""

import importlib.util
import os
import sys
import unittest


def main():
    path = sys.argv[1]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # support.py beside the tests
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except unittest.SkipTest as e:
        print(f"skipped: {e}")
        return 77
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if not result.wasSuccessful():
        return 1
    if result.testsRun == 0:
        print("no tests ran")
        return 1
    if len(result.skipped) == result.testsRun:
        print("skipped: " + "; ".join(sorted({reason for _, reason in result.skipped})))
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
