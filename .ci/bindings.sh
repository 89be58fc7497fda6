#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The binding-library leg: <dlpackpp/pybind11.hpp> and <dlpackpp/nanobind.hpp> against Debian's
# pybind11 2.10 and PyPI's pybind11 3.x and nanobind 3.x, under the venv (NumPy 2.x, JAX, and
# PyTorch 2.x where tests/python/requirements.txt pins it) and the system python3 (Debian's
# NumPy 1.24 and PyTorch 1.13); then the pybind11, nanobind and PyTorch C++ extension examples.
# Shares build/python-venv with .ci/python-venv.sh (made here if missing). Needs python3-dev,
# python3-venv, pybind11-dev (and python3-numpy python3-torch ninja-build for the system and
# extension runs) and PyPI access.
# Environment: PYTHON (the interpreter to make the venv from; default /usr/bin/python3 where it
# exists, else python3), CXX (the compiler), DLPACKPP_BINDINGS_SANITIZE (default ON).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

source .ci/venv.sh
build=build/bindings-venv

echo "=== bindings leg: $("$python" --version) from $python ==="
test_venv tests/python/requirements.txt tests/bindings/requirements.txt

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DDLPACKPP_BUILD_EXAMPLES=ON \
  -DDLPACKPP_SANITIZE="${DLPACKPP_BINDINGS_SANITIZE:-ON}" \
  -DPython3_EXECUTABLE="$PWD/$venv/bin/python"
cmake --build "$build" -j"$(nproc)" --target dlpackpp_bindings_tests dlpackpp_bindings_examples
# The "bindings" label: casters, compile-fail cases, examples, the PyTorch C++ extension.
ctest --test-dir "$build" -L bindings --output-on-failure
echo "=== bindings leg: done in $((SECONDS - start)) s ==="
