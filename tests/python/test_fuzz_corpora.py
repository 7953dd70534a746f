"""The fuzz seed corpora (the trace reader's seeds: tests/fixtures trace files, the
torch.profiler trace, the Nsight Systems exports; fuzz/seeds/) and deterministic mutations of
them (truncations, byte overwrites, also of the inflated .gz seeds) through the module in a
child interpreter: it must not crash, every refusal is a syncscope.Error, and for each input
the module and the CLI give the same exit class and message."""

import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import unittest

from support import cli_error, fuzz_seed_files, run_cli, sqlite_from_sql

HERE = os.path.dirname(os.path.abspath(__file__))


def mutations(data, rng):
    """Truncations at eighths of the length, then eight single-byte overwrites."""
    out = []
    n = len(data)
    for k in range(1, 8):
        out.append(("cut%d" % k, data[: n * k // 8]))
    for i in range(8):
        if n == 0:
            break
        b = bytearray(data)
        pos = rng.randrange(n)
        b[pos] = rng.choice(b'{}[]",:0123456789-.eE \x00\xff')
        out.append(("flip%d" % i, bytes(b)))
    return out


class FuzzCorpora(unittest.TestCase):
    def test_corpora_through_module(self):
        rng = random.Random(26)  # the number: the same mutations every run
        seeds = fuzz_seed_files()
        self.assertGreater(len(seeds), 15)
        with tempfile.TemporaryDirectory() as tmp:
            inputs = []
            for i, seed in enumerate(seeds):
                with open(seed, "rb") as f:
                    data = f.read()
                base = os.path.join(tmp, "%03d_%s" % (i, os.path.basename(seed)))
                variants = [("seed", data)]
                if seed.endswith(".sql"):
                    db = base[:-4] + ".sqlite"
                    try:
                        sqlite_from_sql(seed, db)
                        with open(db, "rb") as f:
                            variants.append(("db", f.read()))
                    except Exception:
                        pass
                    os.remove(db) if os.path.exists(db) else None
                if seed.endswith(".gz"):
                    try:
                        variants.append(("inflated", gzip.decompress(data)))
                    except Exception:  # the corrupt-gzip seed
                        pass
                for vname, vdata in list(variants):
                    if vname != "seed" or not seed.endswith(".sql"):
                        variants += [(vname + "-" + m, d) for m, d in mutations(vdata, rng)]
                for vname, vdata in variants:
                    p = f"{base}.{vname}"
                    with open(p, "wb") as f:
                        f.write(vdata)
                    inputs.append(p)
            listing = os.path.join(tmp, "inputs.txt")
            with open(listing, "w", encoding="utf-8") as f:
                f.write("\n".join(inputs) + "\n")
            p = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_child.py"), listing], capture_output=True,
                               text=True, env=os.environ, timeout=540)
            lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
            last = [x["begin"] for x in lines if "begin" in x]
            self.assertEqual(p.returncode, 0, f"the interpreter died (status {p.returncode}) on "
                                              f"{last[-1] if last else '?'}: {p.stderr[-2000:]}")
            self.assertEqual(lines[-1], {"done": len(inputs)})
            records = [x for x in lines if "path" in x]
            self.assertEqual(len(records), len(inputs))
            counts = {0: 0, 1: 0, 2: 0}
            for rec in records:
                for key in ("analyze", "predict", "analyze_bytes"):
                    if key in rec:
                        self.assertIn(rec[key][0], (0, 1, 2), f"{rec['path']} {key}: {rec[key][1]}")
                counts[rec["analyze"][0]] += 1
                # The CLI on the same file: the same exit class and message.
                rc, _, err = run_cli("analyze", rec["path"], "--format", "json")
                want = [rc, "" if rc == 0 else cli_error(err)]
                self.assertEqual(rec["analyze"], want, rec["path"])
            # Both kinds of outcome occur, so the comparison above compared something.
            self.assertGreater(counts[0], 10)
            self.assertGreater(counts[2], 10)
            print(f"{len(inputs)} inputs: {counts[0]} analyzed, {counts[2]} refused (InputError), "
                  f"{counts[1]} RuntimeError")


if __name__ == "__main__":
    unittest.main()
