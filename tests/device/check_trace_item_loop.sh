#!/usr/bin/env bash
# On a GPU: `syncscope trace -- python3 tests/device/item_loop.py --layers 8 --steps 3` must
# show 8 sync points in each of the 3 steps (one .item() per layer). Steps are the NVTX
# ranges "step_0".."step_2" (the warm-up step is "step_-1" and is not matched).
#
# Usage: tests/device/check_trace_item_loop.sh BUILD_DIR OUT_DIR [LAYERS STEPS]
# Exit 0 when every step has LAYERS sync points; prints one line per step.
set -uo pipefail
build=${1:?usage: check_trace_item_loop.sh BUILD_DIR OUT_DIR [LAYERS STEPS]}
out=${2:?usage: check_trace_item_loop.sh BUILD_DIR OUT_DIR [LAYERS STEPS]}
layers=${3:-8}
steps=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
syncscope=$build/cli/syncscope
mkdir -p "$out"
trace=$out/item_loop_l${layers}.json.gz
"$syncscope" trace --force --output "$trace" -- python3 "$here/item_loop.py" --layers "$layers" --steps "$steps" \
  || { echo "check_trace_item_loop: traced program failed"; exit 1; }
"$syncscope" analyze "$trace" --step-range 'step_[0-9]*' --format json --output "$out/item_loop_analysis.json" --force \
  || { echo "check_trace_item_loop: analyze failed"; exit 1; }
python3 - "$out/item_loop_analysis.json" "$layers" "$steps" <<'PY'
import json, sys
path, layers, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(path))
got = [s["syncs"]["total"] for s in r.get("steps", [])]
print(f"item_loop: {len(got)} steps, sync points per step {got} (expected {steps} x {layers}); "
      f"total {r['totals']['syncs']['total']}, by api {r['totals']['syncs'].get('by_api')}")
ok = len(got) == steps and all(g == layers for g in got)
sys.exit(0 if ok else 1)
PY
