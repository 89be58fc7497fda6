#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 32-bit leg: the GoogleTest unit tests (every dlpackpp_add_gtest target in
# tests/CMakeLists.txt, plus the fuzz corpus replays) built with g++ -m32 and run, so sizes
# and offsets that fit int64_t but not a 32-bit size_t/uintptr_t are seen refused, not
# wrapped (tests/test_32bit.cpp). Debian's libgtest-dev is 64-bit only, so GoogleTest is built
# first from Debian's googletest sources (/usr/src/googletest) for -m32.
#
# Needs: g++-multilib, googletest. Environment: M32_BUILD (default build/m32).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
build=${M32_BUILD:-build/m32}
mkdir -p "$(dirname "$build")"
gtest_src=${M32_GTEST_SOURCE:-/usr/src/googletest}
# A full path: the top-level CMakeLists compares $CXX on every re-configure.
export CXX=$(command -v g++)
export CC=$(command -v gcc)
export CFLAGS="-m32"
export CXXFLAGS="-m32 ${M32_EXTRA_CXXFLAGS:-}"
export LDFLAGS="-m32"

if ! echo 'int main() {}' | "$CXX" -m32 -x c++ - -o /dev/null 2> /dev/null; then
  echo "error: $CXX -m32 cannot link (apt-get install g++-multilib)" >&2
  exit 1
fi
[ -f "$gtest_src/CMakeLists.txt" ] || { echo "error: no $gtest_src (apt-get install googletest)" >&2; exit 1; }

gtest_prefix="$build-gtest/install"
if [ ! -f "$gtest_prefix/lib/cmake/GTest/GTestConfig.cmake" ]; then
  echo "=== m32: building GoogleTest for -m32 from $gtest_src ==="
  cmake -S "$gtest_src" -B "$build-gtest/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$gtest_prefix" -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_GMOCK=OFF \
    > "$build-gtest.log" 2>&1 || { cat "$build-gtest.log"; exit 1; }
  cmake --build "$build-gtest/build" -j2 >> "$build-gtest.log" 2>&1 || { cat "$build-gtest.log"; exit 1; }
  cmake --install "$build-gtest/build" >> "$build-gtest.log" 2>&1
fi
echo "=== m32: GoogleTest ready in $((SECONDS - start)) s ==="

targets=$(sed -nE 's/^ *dlpackpp_add_gtest\(([A-Za-z0-9_]+) .*/\1/p' tests/CMakeLists.txt | sort -u)
targets="$targets fuzz_import_replay fuzz_parse_replay fuzz_produce_replay"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DGTest_ROOT="$PWD/$gtest_prefix" \
  -DDLPACKPP_BUILD_EXAMPLES=OFF -DDLPACKPP_INSTALL=OFF > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$build" -j2 --target $targets
file "$build/tests/test_32bit" | grep -q 'ELF 32-bit' || { echo "error: not a 32-bit build" >&2; exit 1; }
echo "=== m32: built in $((SECONDS - start)) s ==="

# Only the targets built above: a regex of their test names (gtest tests are "<target>.*").
regex="^($(echo $targets | sed -E 's/fuzz_([a-z]+)_replay/fuzz.fuzz_\1.replay/g; s/ /|/g'))(\\.|$)"
status=0
ctest --test-dir "$build" -R "$regex" -j2 --output-on-failure --no-tests=error \
  > "$build.ctest.log" 2>&1 || status=$?
# ctest's own summary, and on failure what failed.
sed -n '/tests passed/,$p' "$build.ctest.log"
if [ "$status" -ne 0 ]; then
  grep -B2 -A25 -E 'Failure|\*\*\*Failed|Exception' "$build.ctest.log" | head -n 150
fi
echo "=== m32: $((SECONDS - start)) s ==="
exit "$status"
