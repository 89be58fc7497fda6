#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python tests against modern peers from PyPI: creates a venv under build/, installs the
# pinned tests/python/requirements.txt (NumPy 2.x, ml_dtypes, JAX on CPU, PyTorch 2.x: the
# PyPI wheel runs on a CPU-only machine, about 5.5 GB with its CUDA libraries, some 4 minutes
# to install), configures a build whose Python tests use that venv's interpreter, builds the
# test modules and runs ctest on the "python" label (under ASan + UBSan, as the main suite).
# test_torch.py proves there that PyTorch's exchange table is the path imports take. Needs a
# Python >= 3.11 with venv and headers (Debian: python3-venv python3-dev) and PyPI access.
# Environment: PYTHON (the interpreter to make the venv from; default /usr/bin/python3 where
# it exists, else python3), CXX (the compiler), DLPACKPP_VENV_SANITIZE (default ON).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

source .ci/venv.sh
build=build/python-venv-tests

echo "=== python venv leg: $("$python" --version) from $python ==="
test_venv tests/python/requirements.txt

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDLPACKPP_BUILD_EXAMPLES=OFF \
  -DDLPACKPP_SANITIZE="${DLPACKPP_VENV_SANITIZE:-ON}" \
  -DPython3_EXECUTABLE="$PWD/$venv/bin/python"
# Also the ABI check against the DLPack 1.3 header inside the torch wheel (a real reference
# the README legs do not have) and the matrix entry built against that header.
cmake --build "$build" -j"$(nproc)" --target dlpackpp_python_tests test_abi dlpackpp_compat_python-torch
ctest --test-dir "$build" -L python --output-on-failure
ctest --test-dir "$build" -R '^(test_abi[.]|compat[.]python-torch$)' --output-on-failure
echo "=== python venv leg: done in $((SECONDS - start)) s ==="
