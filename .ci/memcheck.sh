#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# valgrind memcheck leg: the GoogleTest unit tests (every dlpackpp_add_gtest target in
# tests/CMakeLists.txt, plus the fuzz corpus replays) built with GCC and no sanitizers, Debug
# with DWARF 4 (valgrind 3.19 cannot read DWARF 5), each binary run once under memcheck.
# Passes only with 0 errors and 0 bytes definitely or indirectly lost in every binary.
# Tests that count allocations skip themselves under valgrind (it replaces operator new).
#
# Environment: MEMCHECK_BUILD (build tree, default build/memcheck), MEMCHECK_CXX (default g++).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build=${MEMCHECK_BUILD:-build/memcheck}
mkdir -p "$(dirname "$build")"
# A full path: the top-level CMakeLists compares $CXX on every re-configure.
export CXX=$(command -v "${MEMCHECK_CXX:-g++}")
command -v valgrind > /dev/null || { echo "error: valgrind not found (apt-get install valgrind)" >&2; exit 1; }

targets=$(sed -nE 's/^ *dlpackpp_add_gtest\(([A-Za-z0-9_]+) .*/\1/p' tests/CMakeLists.txt | sort -u)
targets="$targets fuzz_import_replay fuzz_parse_replay fuzz_produce_replay"
echo "=== memcheck: building $(echo $targets | wc -w) test binaries with $CXX in $build ==="
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS="-gdwarf-4" \
  -DDLPACKPP_SANITIZE=OFF -DDLPACKPP_BUILD_EXAMPLES=OFF -DDLPACKPP_INSTALL=OFF \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $targets
echo "=== memcheck: built in $((SECONDS - start)) s ==="

logs="$build/memcheck-logs"
rm -rf "$logs"
mkdir -p "$logs"
corpus="$PWD/tests/fuzz"
# run_one <target>: one binary under memcheck; writes <target>.summary.
run_one() {
  local target=$1 t0=$SECONDS status=0 binary args=()
  binary=$(find "$build/tests" -type f -name "$target" -perm -u+x | head -n 1)
  if [ -z "$binary" ]; then
    echo "$target: binary not found" > "$logs/$target.summary"
    return
  fi
  case $target in
    fuzz_*_replay)
      local harness=${target%_replay}
      args=("$corpus/corpus/$harness" "$corpus/regressions/$harness") ;;
    *) args=(--gtest_brief=1) ;;
  esac
  # nouserintercepts: the allocation-counting tests keep their own operator new (which calls
  # malloc, still checked by memcheck) and count as usual instead of skipping.
  valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --soname-synonyms=somalloc=nouserintercepts \
    --show-leak-kinds=definite,indirect --track-origins=yes --log-file="$logs/$target.valgrind" \
    "$binary" "${args[@]}" > "$logs/$target.out" 2>&1 || status=$?
  local errors definite indirect
  errors=$(sed -nE 's/.*ERROR SUMMARY: ([0-9,]+) errors.*/\1/p' "$logs/$target.valgrind" | tr -d , | sort -n | tail -n 1)
  definite=$(sed -nE 's/.*definitely lost: ([0-9,]+) bytes.*/\1/p' "$logs/$target.valgrind" | tr -d , | sort -n | tail -n 1)
  indirect=$(sed -nE 's/.*indirectly lost: ([0-9,]+) bytes.*/\1/p' "$logs/$target.valgrind" | tr -d , | sort -n | tail -n 1)
  echo "$target: exit $status, ${errors:-?} errors, ${definite:-0} bytes definitely lost," \
       "${indirect:-0} indirectly lost, $((SECONDS - t0)) s" > "$logs/$target.summary"
}
export -f run_one
export build logs corpus
echo "=== memcheck: running (two binaries at a time) ==="
# shellcheck disable=SC2086
printf '%s\n' $targets | xargs -P 2 -I{} bash -c 'run_one "$@"' _ {}

failed=0
for target in $targets; do
  line=$(cat "$logs/$target.summary")
  echo "$line"
  if ! echo "$line" | grep -qE ': exit 0, 0 errors, 0 bytes definitely lost, 0 indirectly lost'; then
    failed=1
    echo "--- $target: program output (tail) ---"; tail -n 30 "$logs/$target.out"
    echo "--- $target: valgrind log (tail) ---"; tail -n 40 "$logs/$target.valgrind"
  fi
done
echo "=== memcheck: $((SECONDS - start)) s ==="
if [ "$failed" -ne 0 ]; then
  echo "error: memcheck found errors or leaks (logs in $logs)" >&2
  exit 1
fi
