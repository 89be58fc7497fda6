#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer leg: builds the handle stress tests (tests/test_managed_stress.cpp) with
# clang++ -fsanitize=thread and runs them at full size: handles made on one thread, moved
# through queues, converted (to_versioned/to_legacy) and destroyed on others, deleters and
# owners running on foreign threads, shared_ptr owners copied across threads; 4 threads x
# 100,000 cycles by default. Any data race report fails the leg (halt_on_error).
#
# Environment: TSAN_BUILD (default build/tsan), DLPACKPP_STRESS_THREADS (4),
# DLPACKPP_STRESS_CYCLES (100000 per thread).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build=${TSAN_BUILD:-build/tsan}
mkdir -p "$(dirname "$build")"
export DLPACKPP_STRESS_THREADS=${DLPACKPP_STRESS_THREADS:-4}
export DLPACKPP_STRESS_CYCLES=${DLPACKPP_STRESS_CYCLES:-100000}
# A full path: the top-level CMakeLists compares $CXX on every re-configure.
export CXX=$(command -v clang++)

echo "=== tsan: building the stress tests with $CXX -fsanitize=thread in $build ==="
# The same cache variables as the `tsan` configure preset.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DDLPACKPP_SANITIZE=OFF -DDLPACKPP_BUILD_EXAMPLES=OFF -DDLPACKPP_INSTALL=OFF \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j2 --target test_managed_stress
echo "=== tsan: built in $((SECONDS - start)) s ==="

run_start=$SECONDS
log="$build/tsan-stress.log"
status=0
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/test_managed_stress" > "$log" 2>&1 || status=$?
races=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
tail -n 5 "$log"
echo "tsan: $DLPACKPP_STRESS_THREADS threads x $DLPACKPP_STRESS_CYCLES cycles, exit $status," \
     "$races ThreadSanitizer reports, $((SECONDS - run_start)) s"
echo "=== tsan: $((SECONDS - start)) s ==="
if [ "$status" -ne 0 ] || [ "$races" -ne 0 ]; then
  grep -A 40 'WARNING: ThreadSanitizer' "$log" | head -n 80 || tail -n 40 "$log"
  echo "error: the stress tests failed or ThreadSanitizer reported a race (log: $log)" >&2
  exit 1
fi
