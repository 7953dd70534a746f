"""Shared by tests/python: where the sources, the CLI and the fixtures are (CTest sets the
environment: tests/python/CMakeLists.txt), and running the CLI."""

import glob
import os
import subprocess

SOURCE_DIR = os.environ.get("SYNCSCOPE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD_DIR = os.environ.get("SYNCSCOPE_BUILD_DIR", "")
CLI = os.environ.get("SYNCSCOPE_CLI", "")
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")
H200_ITEM_LOOP = os.path.join(FIXTURES, "torch", "item_loop_l8_h200.json.gz")

# The CLI prints refusals as "syncscope: error: MESSAGE" (cli/main.cpp).
ERROR_PREFIX = "syncscope: error: "


def run_cli(*args):
    """(exit status, stdout, stderr) of the syncscope executable."""
    if not CLI:
        raise RuntimeError("SYNCSCOPE_CLI is not set: run these tests through ctest")
    p = subprocess.run([CLI, *args], capture_output=True, text=True, errors="replace", timeout=300)
    return p.returncode, p.stdout, p.stderr


def cli_error(stderr):
    """The message of the CLI's error line."""
    for line in stderr.splitlines():
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX):]
    raise AssertionError(f"no '{ERROR_PREFIX}' line in the CLI's stderr: {stderr!r}")


def trace_fixtures():
    """Every trace the repository ships as a fixture or fuzz seed that read_trace takes as a
    file (Chrome JSON, .json.gz), sorted."""
    pats = ["traces/*.json", "traces/families/*.json", "traces/fuzz/*", "torch/*.json.gz", "ranks/nccl4/*.json",
            "ranks/nccl4/*.json.gz"]
    out = []
    for p in pats:
        out += glob.glob(os.path.join(FIXTURES, p))
    return sorted(set(out))


def nsys_sql_fixtures():
    return sorted(glob.glob(os.path.join(FIXTURES, "nsys", "*.sql")))


def fuzz_seed_files():
    """The fuzz targets' seed corpora in the repository: the trace reader's (scripts/fuzz takes
    the trace fixtures and the torch.profiler trace) and fuzz/seeds/ (config and results JSON:
    not traces, so the analysis must refuse them cleanly)."""
    seeds = trace_fixtures() + nsys_sql_fixtures()
    seeds += sorted(glob.glob(os.path.join(SOURCE_DIR, "fuzz", "seeds", "**", "*"), recursive=True))
    return [s for s in seeds if os.path.isfile(s)]


def sqlite_from_sql(sql_path, out_path):
    """An Nsight Systems export fixture (SQL text) as the SQLite file nsys writes."""
    import sqlite3

    with open(sql_path, encoding="utf-8") as f:
        script = f.read()
    con = sqlite3.connect(out_path)
    try:
        con.executescript(script)
        con.commit()
    finally:
        con.close()
