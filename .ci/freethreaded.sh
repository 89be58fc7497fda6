#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Free-threaded CPython leg (issue 27): builds CPython 3.13 with the GIL disabled from Debian's
# python3.13 source package (the orig tarball on the mirror apt uses, sha256-checked), once plain
# and once with ThreadSanitizer; makes a venv on the plain one with the cp313t wheels pinned in
# tests/freethreaded/requirements.txt (NumPy, PyTorch, pybind11, nanobind, pytest); runs the
# Python and binding suites there with the GIL off (each module they import is checked to keep
# it off by itself), the free-threaded stress test (tests/freethreaded), and the stress test
# again under TSan: any ThreadSanitizer report fails the leg.
# The two interpreters and their venvs are cached outside the clone, keyed by version and
# configure flags (requirements for a venv), under $DLPACKPP_CPYTHON_CACHE (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/dlpackpp-cpython); a fresh machine builds them (no PGO, no
# test modules: 4 to 9 minutes each on 2 cores, the TSan one overlapping the venv's downloads).
# Needs: curl, wget or python3; xz-utils; gcc and clang (the TSan build and its extensions);
# libssl-dev zlib1g-dev liblzma-dev libffi-dev (CPython's ssl, zlib, lzma, ctypes); PyPI access.
# Environment: DLPACKPP_CPYTHON_CACHE; DLPACKPP_FT_ITERATIONS (stress rounds per thread, 3000),
# DLPACKPP_FT_TSAN_ITERATIONS (under TSan, 1000); DLPACKPP_FT_SANITIZE (ASan + UBSan for the
# suites and the stress test, ON); FT_ONLY=cpython (stop after the two interpreter builds).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
jobs=$(nproc)

version=3.13.5
tarball=python3.13_$version.orig.tar.xz
sha256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
cache=${DLPACKPP_CPYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dlpackpp-cpython}
mkdir -p "$cache" build

# The Debian mirror apt is configured with (deb822 or one-line sources), else deb.debian.org.
debian_mirror() {
  local uri
  uri=$(grep -hsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
          /etc/apt/sources.list.d/*.list 2>/dev/null |
        grep -oE 'https?://[^ ]*/debian/?( |$)' | grep -v security | head -n 1 | tr -d ' ')
  echo "${uri:-http://deb.debian.org/debian/}"
}

fetch_source() {
  local file=$cache/$tarball
  if [ ! -f "$file" ] || ! echo "$sha256  $file" | sha256sum -c --quiet - 2>/dev/null; then
    local url mirror
    mirror=$(debian_mirror)
    url="${mirror%/}/pool/main/p/python3.13/$tarball"
    echo "=== freethreaded: fetching $url ==="
    if command -v curl > /dev/null; then curl -sSfL -o "$file.part" "$url"
    elif command -v wget > /dev/null; then wget -q -O "$file.part" "$url"
    else python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
           "$url" "$file.part"; fi
    echo "$sha256  $file.part" | sha256sum -c --quiet -
    mv "$file.part" "$file"
  fi
}

# build_cpython <CC> <configure flags...>: installs into $cache/<key> (the version, compiler and
# flags) unless a complete install is already there (the stamp is written last); sets `prefix`.
# No PGO, no test modules: what the leg needs is the interpreter, built fast.
build_cpython() {
  local cc=$1 key
  shift
  key=$(echo "cpython-$version-$cc $*" | sed -E 's/--//g; s/[^A-Za-z0-9.]+/-/g')
  prefix=$cache/$key
  if [ -f "$prefix/.complete" ] && [ -x "$prefix/bin/python3.13t" ]; then
    echo "=== freethreaded: $key cached in $prefix ==="
    return
  fi
  fetch_source
  local work t0=$SECONDS
  work=$(mktemp -d "$cache/build-$key.XXXXXX")
  rm -rf "$prefix"
  tar -xJf "$cache/$tarball" -C "$work" --strip-components=1
  echo "=== freethreaded: building $key ==="
  (cd "$work" && CC=$cc ./configure --prefix="$prefix" --without-ensurepip "$@" \
     > configure.log 2>&1 || { tail -n 40 configure.log; exit 1; })
  make -C "$work" -j"$jobs" > "$work/make.log" 2>&1 || { tail -n 60 "$work/make.log"; exit 1; }
  make -C "$work" install > "$work/install.log" 2>&1 || { tail -n 40 "$work/install.log"; exit 1; }
  # pip needs ssl (PyPI is https) and zlib (wheels); configure skips a module whose headers
  # are missing without failing.
  "$prefix/bin/python3.13t" -c 'import ssl, zlib, lzma, ctypes' || {
    echo "error: CPython built without ssl, zlib, lzma or ctypes:" \
         "apt-get install libssl-dev zlib1g-dev liblzma-dev libffi-dev" >&2
    exit 1; }
  # CPython's own TSan suppressions for races inside the interpreter, kept with the build.
  cp "$work/Tools/tsan/suppressions_free_threading.txt" "$prefix/"
  rm -rf "$work"
  touch "$prefix/.complete"
  echo "=== freethreaded: $key built in $((SECONDS - t0)) s ==="
}

# venv_in <interpreter> <key> <requirement lines...>: a venv under the cache keyed by the
# requirements it holds ($cache/venv-<key>-<hash>), made and filled unless complete already;
# sets `venv`. On a fresh machine pip fetches the wheels (PyTorch's with its CUDA libraries is
# the bulk of the leg's downloads).
venv_in() {
  local interpreter=$1 key=$2 hash
  shift 2
  hash=$(printf '%s\n' "$@" | sha256sum | cut -c1-12)
  venv=$cache/venv-$key-$hash
  if [ -f "$venv/.complete" ]; then
    echo "=== freethreaded: venv $venv cached ==="
    return
  fi
  rm -rf "$venv"
  "$interpreter" -m venv --without-pip "$venv"
  "$venv/bin/python" -m ensurepip --default-pip > /dev/null
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet --no-compile "$@"
  touch "$venv/.complete"
}

plain_flags=(gcc --disable-gil --disable-test-modules)
tsan_flags=(clang --disable-gil --with-thread-sanitizer --disable-test-modules)
build_cpython "${plain_flags[@]}"
plain=$prefix
# The TSan interpreter builds while pip downloads and the suites build (CPU beside network).
build_cpython "${tsan_flags[@]}" > build/freethreaded-tsan-cpython.log 2>&1 &
tsan_build=$!
if [ "${FT_ONLY:-}" = cpython ]; then
  wait "$tsan_build" || { cat build/freethreaded-tsan-cpython.log; exit 1; }
  cat build/freethreaded-tsan-cpython.log
  exit 0
fi

mapfile -t requirements < <(grep -vE '^[[:space:]]*(#|$)' tests/freethreaded/requirements.txt)
venv_in "$plain/bin/python3.13t" plain "${requirements[@]}"
python=$venv/bin/python
echo "=== freethreaded: $("$python" -VV) in $venv ==="
"$python" -c 'import sys; assert not sys._is_gil_enabled(), "the GIL is on"; print("GIL disabled")'
"$python" -m pip list --disable-pip-version-check 2>/dev/null |
  grep -iE '^(numpy|torch|pybind11|nanobind|pytest) ' || true

# The Python and binding suites and the stress test, under ASan + UBSan as the other legs. The
# limited-API variant is not built (the free-threaded build has no limited API: Python.h says
# so at compile time), nor Debian's pybind11 2.10 (it predates free-threading).
build=build/freethreaded
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDLPACKPP_BUILD_EXAMPLES=ON \
  -DDLPACKPP_SANITIZE="${DLPACKPP_FT_SANITIZE:-ON}" -DPython3_EXECUTABLE="$python" \
  > "$build.configure.log" 2>&1 || { tail -n 60 "$build.configure.log"; exit 1; }
targets=(dlpackpp_test dlpackpp_streams_test dlpackpp_bind_pybind11_pypi dlpackpp_bind_nanobind
         dlpackpp_example dlpackpp_pybind11_example dlpackpp_nanobind_example
         dlpackpp_freethreaded_tests)
if grep -q '^DLPACKPP_LEGACY_DLPACK_DIR:PATH=/' "$build/CMakeCache.txt"; then
  targets+=(dlpackpp_test_legacy)
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"

# Every module the suites import must leave the GIL off by itself (it declares Py_mod_gil);
# an ASan-built module needs the runtimes preloaded, as tests/python/test_env.cmake does.
preload=
if [ "${DLPACKPP_FT_SANITIZE:-ON}" = ON ]; then
  preload=$(g++ -print-file-name=libasan.so):$(realpath "$(g++ -print-file-name=libstdc++.so)")
fi
# Each step that fails is named here and the leg goes on, so that one run shows every failure;
# the leg fails at the end.
failed=()
gil_check() {
  PYTHONPATH=$build/$1 LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 "$python" -c "
import importlib, sys
importlib.import_module('$2')
assert not sys._is_gil_enabled(), 'importing $2 turned the GIL on: it does not declare Py_mod_gil'
print('$2: the GIL stays off')" || failed+=("the GIL check of $2")
}
gil_check tests/python/modules dlpackpp_test
gil_check tests/cuda_streams/modules dlpackpp_streams_test
gil_check tests/bindings/modules dlpackpp_bind_pybind11_pypi
gil_check tests/bindings/modules dlpackpp_bind_nanobind
gil_check examples/python/module dlpackpp_example
gil_check examples/pybind11/module dlpackpp_pybind11_example
gil_check examples/nanobind/module dlpackpp_nanobind_example

# PYTHON_GIL=0 keeps the suites GIL-free whatever they import (the check above is the one
# that proves the declarations).
PYTHON_GIL=0 ctest --test-dir "$build" --output-on-failure \
  -R '^(python[.]|bindings[.](pybind11_pypi|nanobind)[.]|example_(python|pybind11|nanobind)_)' \
  -E '_limited$' || failed+=("the Python and binding suites")

# run_stress <label> <log> <command...>: the stress test, its summary lines shown; fails the
# leg on a failed check or (under TSan) any ThreadSanitizer report.
run_stress() {
  local label=$1 log=$2 status=0 t0=$SECONDS reports
  shift 2
  "$@" > "$log" 2>&1 || status=$?
  reports=$(grep -c 'WARNING: ThreadSanitizer' "$log" || true)
  grep -E '(^|: )(python 3|[0-9]+ checks passed|ok$|DLPACKPP_TEST_SKIPPED)' "$log" || true
  echo "=== freethreaded: $label: exit $status, $reports ThreadSanitizer reports, $((SECONDS - t0)) s ==="
  if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    grep -A 40 -m 3 'WARNING: ThreadSanitizer' "$log" | head -n 120 || true
    tail -n 40 "$log"
    failed+=("the stress test ($label; log: $log)")
  fi
}
run_stress "stress, ASan" "$build/stress.log" \
  ctest --test-dir "$build" -L freethreaded --output-on-failure -V

# The stress test again under ThreadSanitizer: the interpreter, the modules and both binding
# libraries instrumented; no NumPy or PyTorch (uninstrumented wheels), fewer rounds (TSan is
# some ten times slower). CPython's own suppressions cover races inside the interpreter.
wait "$tsan_build" || { cat build/freethreaded-tsan-cpython.log; exit 1; }
cat build/freethreaded-tsan-cpython.log
build_cpython "${tsan_flags[@]}"  # sets prefix (cached now)
tsan=$prefix
mapfile -t binding_requirements < <(grep -iE '^(pybind11|nanobind)==' tests/freethreaded/requirements.txt)
venv_in "$tsan/bin/python3.13t" tsan "${binding_requirements[@]}"
tsan_python=$venv/bin/python
tsan_build_dir=build/freethreaded-tsan
cmake -S . -B "$tsan_build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER="$(command -v clang++)" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DDLPACKPP_SANITIZE=OFF -DDLPACKPP_BUILD_EXAMPLES=OFF -DDLPACKPP_INSTALL=OFF \
  -DPython3_EXECUTABLE="$tsan_python" \
  > "$tsan_build_dir.configure.log" 2>&1 || { tail -n 60 "$tsan_build_dir.configure.log"; exit 1; }
cmake --build "$tsan_build_dir" -j"$jobs" --target dlpackpp_freethreaded_tests
modules=$(sed -nE 's/.*DLPACKPP_FT_MODULES=([a-z_0-9,]+).*/\1/p' \
            "$tsan_build_dir/tests/freethreaded/CTestTestfile.cmake" | head -n 1)
run_stress "stress, ThreadSanitizer" "$tsan_build_dir/stress.log" \
  env PYTHONPATH="$tsan_build_dir/tests/freethreaded/modules" DLPACKPP_FT_MODULES="$modules" \
  DLPACKPP_FT_PEERS=none DLPACKPP_FT_ITERATIONS="${DLPACKPP_FT_TSAN_ITERATIONS:-1000}" \
  TSAN_OPTIONS="suppressions=$tsan/suppressions_free_threading.txt halt_on_error=0 ${TSAN_OPTIONS:-}" \
  "$tsan_python" tests/freethreaded/stress.py
echo "=== freethreaded: done in $((SECONDS - start)) s ==="
if [ "${#failed[@]}" -ne 0 ]; then
  printf 'error: failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
