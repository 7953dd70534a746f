#!/usr/bin/env bash
# Every tracer check that needs the GPU, in one go (about 60-90 s on an H200). Run from any
# directory, after building BUILD_DIR (the `gpu` preset):
#
#   tests/device/run-tracer-checks.sh BUILD_DIR OUT_DIR
#
#   1 inprocess   syncscope::Tracer around tests/device/sync_counts.cu (gtest test_tracer_device):
#                 exactly N+M+K+1 sync points, by_api counts, pinned H2D overlap >= 0.9,
#                 start/stop twice (cuptiFinalize in between), a second tracer refused
#   2 inject      `syncscope trace` around the same workload as a plain CUDA program: 13 sync
#                 points (5 stream, 4 event, 3 pageable copies, 1 device), H2D overlap >= 0.9
#   3 item_loop   `syncscope trace -- python3 item_loop.py --layers 8 --steps 3`: 8 sync points
#                 in each of the 3 NVTX "step_N" ranges (PyTorch, NVTX through the injection)
#   4 window      --start-on-range step_1 --steps 2 on a 5-step item_loop: 16 sync points
#   5 overhead    tracer_overhead.py: step-time inflation, syncscope vs torch.profiler
#                 (reported, never a failure: timings are noisy)
#
# Writes traces, analyses and logs under OUT_DIR; exits non-zero when a correctness check
# fails; prints a summary table last.
set -uo pipefail
build=$(cd "${1:?usage: run-tracer-checks.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: run-tracer-checks.sh BUILD_DIR OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
syncscope=$build/cli/syncscope
export PYTHONUNBUFFERED=1
t0=$(date +%s)
declare -a rows=()
failed=0
row() { rows+=("$(printf '%-10s %-6s %4ss  %s' "$1" "$2" "$3" "$4")"); [[ $2 == FAIL ]] && failed=1; return 0; }

# check NAME COMMAND...: runs with its output in OUT/NAME.log; the last line of the log that
# starts with "RESULT:" (if any) becomes the note.
check() {
  local name=$1; shift
  local s; s=$(date +%s)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local note; note=$(grep '^RESULT:' "$out/$name.log" | tail -1 | cut -c9-)
  [[ -z $note ]] && note=$(tail -1 "$out/$name.log" | cut -c1-100)
  if (( rc == 0 )); then row "$name" OK $(( $(date +%s) - s )) "$note"
  else row "$name" FAIL $(( $(date +%s) - s )) "exit $rc: $note (see $name.log)"; fi
  tail -n 15 "$out/$name.log"
}

# analyze_json TRACE OUTPUT [STEP_GLOB]: syncscope analyze --format json.
analyze_json() {
  "$syncscope" analyze "$1" --format json --output "$2" --force ${3:+--step-range "$3"}
}

inprocess() {
  local exe=$build/tests/cupti/test_tracer_device
  [[ -x $exe ]] || { echo "RESULT: $exe not built"; return 1; }
  "$exe" --gtest_color=no
  local rc=$?
  # Skipped is a failure here: this script exists to run on a GPU.
  if grep -q 'skipped: no CUDA device' "$out/inprocess.log"; then echo "RESULT: skipped: no CUDA device"; return 1; fi
  echo "RESULT: gtest exit $rc"
  return $rc
}

inject() {
  local trace=$out/sync_counts.json.gz
  "$syncscope" trace --force --output "$trace" -- "$build/tests/cupti/syncscope_sync_counts" 5 4 3 || return 1
  analyze_json "$trace" "$out/sync_counts_analysis.json" || return 1
  python3 - "$out/sync_counts_analysis.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["totals"]["syncs"]
by = s.get("by_api", {})
h2d = r["totals"]["overlap"]["h2d"]["fraction"]
want = {"cudaStreamSynchronize": 5, "cudaEventSynchronize": 4, "cudaMemcpyAsync": 3, "cudaDeviceSynchronize": 1}
ok = s["total"] == 13 and all(by.get(k, 0) == v for k, v in want.items()) and h2d >= 0.9
print(f"RESULT: {s['total']} sync points (want 13), by_api {by}, h2d overlap {h2d:.3f}")
sys.exit(0 if ok else 1)
PY
}

item_loop() {
  "$here/check_trace_item_loop.sh" "$build" "$out" 8 3 | tee /dev/stderr | sed -n 's/^item_loop: /RESULT: /p'
  return "${PIPESTATUS[0]}"
}

window() {
  local trace=$out/item_loop_window.json.gz
  "$syncscope" trace --force --output "$trace" --start-on-range 'step_1' --steps 2 --step-range 'step_[0-9]*' \
    -- python3 "$here/item_loop.py" --layers 8 --steps 5 || return 1
  analyze_json "$trace" "$out/item_loop_window_analysis.json" 'step_[0-9]*' || return 1
  python3 - "$out/item_loop_window_analysis.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
total = r["totals"]["syncs"]["total"]
steps = [s["syncs"]["total"] for s in r.get("steps", [])]
print(f"RESULT: {total} sync points in the window (want 16 = 2 steps x 8), steps seen {steps}")
sys.exit(0 if total == 16 else 1)
PY
}

overhead() {
  python3 "$here/tracer_overhead.py" --syncscope "$syncscope" --out "$out" --steps 40
}

[[ -x $syncscope ]] || { echo "run-tracer-checks: $syncscope not built"; exit 2; }
check inprocess inprocess
check inject inject
check item_loop item_loop
check window window
check overhead overhead

echo
echo "syncscope tracer checks  $(date -u +%Y-%m-%dT%H:%M:%SZ)  total $(( $(date +%s) - t0 ))s  out $out"
printf '%-10s %-6s %5s  %s\n' check status time note
printf '%s\n' "${rows[@]}"
exit $failed
