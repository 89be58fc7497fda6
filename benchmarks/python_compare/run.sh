#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds bench_dlpackpp, bench_nanobind, bench_torch2 and the binding-caster modules the same
# way against one Python and times them side by side (see README.md). Usage: benchmarks/python_compare/run.sh [bench.py options]
#   PYTHON     the interpreter to build and run with (default: the system python3 in
#              /usr/bin where it exists, else python3 on PATH); it needs its development
#              headers (python3-dev) and the venv module (python3-venv).
#   BUILD_DIR  where the venv and the build go (default: build/python_compare in the checkout)
#   CXX        the compiler, as CMake reads it
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$root/build/python_compare}
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

if [ ! -x "$build/venv/bin/python" ]; then
  "$PYTHON" -m venv "$build/venv"
fi
venv_python="$build/venv/bin/python"
"$venv_python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"

cmake -S "$here" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release \
  -DPython3_EXECUTABLE="$venv_python" -DPython_EXECUTABLE="$venv_python" \
  -Dnanobind_DIR="$("$venv_python" -m nanobind --cmake_dir)" >/dev/null
cmake --build "$build/cmake" -j"${JOBS:-2}"
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/cmake/CMakeCache.txt")
compiler="$("$compiler" --version | head -n 1), -O2"
nb_version=$("$venv_python" -c 'from importlib.metadata import version; print(version("nanobind"))')
export PYTHONPATH="$build/cmake/modules"
# The venv (NumPy 2.x) first; then the same modules under the venv's base interpreter itself
# where it has PyTorch (Debian's python3-torch 1.13 and python3-numpy 1.24: legacy protocol).
# Each suite is timed, then its heap allocations are counted in a second process.
suites="pypi:$venv_python"
if "$PYTHON" -c 'import numpy, torch' 2>/dev/null; then
  suites="$suites debian:$PYTHON"
else
  echo "debian suite skipped: $PYTHON cannot import numpy and torch (apt-get install python3-numpy python3-torch)"
fi
preload=""
if [ -f "$build/cmake/libcount_malloc.so" ]; then preload="$build/cmake/libcount_malloc.so"; fi
# The binding-library rows (dlpackpp's pybind11 and nanobind casters) in the venv; PyTorch 2.x
# rows where the venv has it (pip install torch there to get them).
if ls "$build/cmake/modules"/bench_pybind11.* >/dev/null 2>&1; then
  echo
  "$venv_python" "$here/bench.py" --suite bindings --compiler "$compiler" --nanobind-version "$nb_version" "$@"
fi
# The PyTorch 2.x rows (dlpackpp against the raw exchange-table calls by hand) in the venv, where
# it has a PyTorch whose tensors carry the exchange table (bench.py says why it skips otherwise).
echo
"$venv_python" "$here/bench.py" --suite torch2 --compiler "$compiler" "$@"
if [ -n "$preload" ] && "$venv_python" -c 'import torch; torch.Tensor.__dlpack_c_exchange_api__' 2>/dev/null; then
  echo
  LD_PRELOAD="$preload" "$venv_python" "$here/bench.py" --suite torch2 --count-mallocs
fi
for entry in $suites; do
  suite=${entry%%:*}
  python=${entry#*:}
  echo
  "$python" "$here/bench.py" --suite "$suite" --compiler "$compiler" --nanobind-version "$nb_version" "$@"
  if [ -n "$preload" ]; then
    echo
    LD_PRELOAD="$preload" "$python" "$here/bench.py" --suite "$suite" --count-mallocs
  fi
done
