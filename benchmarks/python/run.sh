#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Python benchmark module (Release, no sanitizers) in build/bench-python and prints
# the table README.md quotes. PYTHON picks the interpreter (default: /usr/bin/python3 where it
# exists, as the tests do), e.g. PYTHON=build/python-venv/bin/python for NumPy 2.x; BUILD_DIR
# the build folder (default build/bench-python, suffixed with the venv's name under PYTHON).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build/bench-python}
args=(-DCMAKE_BUILD_TYPE=Release)
if [ -n "${PYTHON:-}" ]; then
  args+=("-DPython3_EXECUTABLE=$PYTHON")
  [ -n "${BUILD_DIR:-}" ] || build="$build-$(basename "$(dirname "$(dirname "$PYTHON")")")"
fi
cmake -S benchmarks/python -B "$build" "${args[@]}" > /dev/null
cmake --build "$build" --target dlpackpp_bench_run
