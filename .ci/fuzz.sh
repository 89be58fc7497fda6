#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzz leg: builds the libFuzzer harnesses of tests/fuzz with clang++ (ASan + UBSan, no
# recovery) and runs each for a fixed number of inputs, starting from its checked-in seed
# corpus: at least 1,000,000 executions in total. Prints executions and crashes per harness
# and fails on any crash, leak, timeout or out-of-memory, naming the reproducer. Once the
# bug is fixed, the reproducer goes into tests/fuzz/regressions/<harness>/, which every build
# replays as an ordinary test (fuzz.<harness>.replay).
#
# Environment: FUZZ_RUNS_IMPORT, FUZZ_RUNS_PARSE, FUZZ_RUNS_PRODUCE, FUZZ_RUNS_CAPSULE (inputs
# per harness; the capsule harness runs where Python's embedding library was found),
# FUZZ_BUILD (build tree, default build/fuzz). Two harnesses run at a time (2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build=${FUZZ_BUILD:-build/fuzz}
mkdir -p "$(dirname "$build")"
runs_import=${FUZZ_RUNS_IMPORT:-400000}
runs_parse=${FUZZ_RUNS_PARSE:-350000}
runs_produce=${FUZZ_RUNS_PRODUCE:-250000}
runs_capsule=${FUZZ_RUNS_CAPSULE:-100000}

# A full path: the top-level CMakeLists compares $CXX on every re-configure.
export CXX=$(command -v clang++)
echo "=== fuzz: building the harnesses with $CXX in $build ==="
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDLPACKPP_BUILD_FUZZERS=ON \
  -DDLPACKPP_BUILD_EXAMPLES=OFF \
  -DDLPACKPP_INSTALL=OFF > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
if ! grep -q 'DLPACKPP_HAVE_LIBFUZZER:INTERNAL=1' "$build/CMakeCache.txt"; then
  echo "error: -fsanitize=fuzzer does not link with $CXX (install libclang-rt-14-dev)" >&2
  exit 1
fi
harnesses="fuzz_import fuzz_parse fuzz_produce"
targets_known=$(cmake --build "$build" --target help 2> /dev/null || true)
if echo "$targets_known" | grep -qx '\.\.\. fuzz_capsule'; then
  harnesses="$harnesses fuzz_capsule"
fi
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $harnesses
echo "=== fuzz: built in $((SECONDS - start)) s ==="

# fuzz_one <harness> <runs>: one bounded libFuzzer run; its summary line goes to <harness>.summary.
fuzz_one() {
  local harness=$1 runs=$2 t0=$SECONDS
  local work="$build/fuzz-work/$harness" log="$build/fuzz-work/$harness.log"
  local artifacts="$build/fuzz-work/$harness-artifacts"
  rm -rf "$work" "$artifacts"
  mkdir -p "$work" "$artifacts"
  local status=0
  # New inputs go to the scratch folder (the first one); the checked-in corpus stays as is.
  # The embedded interpreter of the capsule harness keeps its own allocations until exit.
  LSAN_OPTIONS="suppressions=$PWD/tests/fuzz/lsan.supp ${LSAN_OPTIONS:-}" \
  "$build/tests/fuzz/$harness" -runs="$runs" -max_len=256 -timeout=10 -rss_limit_mb=2048 \
    -entropic=0 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$work" "tests/fuzz/corpus/$harness" > "$log" 2>&1 || status=$?
  local done_runs crashes
  done_runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -n 1)
  crashes=$(find "$artifacts" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  echo "$harness: ${done_runs:-0} executions, $crashes crashes, $((SECONDS - t0)) s (seed $(sed -nE 's/.*Seed: ([0-9]+).*/\1/p' "$log" | head -n 1))" \
    > "$build/fuzz-work/$harness.summary"
  if [ "$crashes" -ne 0 ]; then
    tail -n 60 "$log"
    find "$artifacts" -type f -exec echo "reproducer: {}" \;
  fi
}

mkdir -p "$build/fuzz-work"
echo "=== fuzz: running (import alongside parse, produce, capsule) ==="
fuzz_one fuzz_import "$runs_import" &
import_pid=$!
fuzz_one fuzz_parse "$runs_parse"
fuzz_one fuzz_produce "$runs_produce"
case " $harnesses " in *" fuzz_capsule "*) fuzz_one fuzz_capsule "$runs_capsule" ;; esac
wait "$import_pid"

total=0 failed=0
for harness in $harnesses; do
  line=$(cat "$build/fuzz-work/$harness.summary")
  echo "$line"
  executions=$(echo "$line" | sed -nE 's/^[a-z_]+: ([0-9]+) executions.*/\1/p')
  crashes=$(echo "$line" | sed -nE 's/.* ([0-9]+) crashes.*/\1/p')
  total=$((total + executions))
  [ "$crashes" -eq 0 ] || failed=1
done
echo "=== fuzz: $total executions in total, $((SECONDS - start)) s ==="
if [ "$failed" -ne 0 ]; then
  echo "error: a fuzz harness crashed; fix the bug, then add the reproducer to" \
       "tests/fuzz/regressions/<harness>/" >&2
  exit 1
fi
if [ "$total" -lt 1000000 ]; then
  echo "error: only $total executions (want >= 1,000,000)" >&2
  exit 1
fi
