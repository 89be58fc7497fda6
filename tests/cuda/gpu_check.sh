#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything CUDA that needs a GPU, in one run (a machine with an NVIDIA device, nvcc, and a
# Python with NumPy and a CUDA build of PyTorch; CuPy where present):
#   bash tests/cuda/gpu_check.sh [build-dir] [python]
# It configures a Release build, builds only what these tests load, and runs:
#   cuda.*                    nvcc compiles python/cuda.hpp and the CUDA examples; the
#                             streams example runs with PyTorch (no host synchronization)
#   python.cuda_streams*      python/cuda.hpp's events against the real runtime
#   python.cuda               CUDA tensors through the Python layer (PyTorch, CuPy, JAX)
#   test_cuda_allocate        allocate_cuda, every memory kind
#   conformance.cuda_hooks*   the kit's P9 and X4 for dlpackpp (and torch, cupy) on the GPU,
#                             and the broken dlpackpp adapter failing P9
#   bindings.*                the casters with PyTorch's CUDA tensors (class Cuda: device
#                             views, OnStream on PyTorch's current stream)
# A test that prints DLPACKPP_TEST_SKIPPED was not run: on a GPU machine none should be.
# Where no GoogleTest is installed, DLPACKPP_GTEST_SOURCE names its sources, built with the tests.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:-${root}/build/gpu}"
python="${2:-$(command -v python3)}"
mkdir -p "$(dirname "${build}")"
nvidia-smi -L || echo "nvidia-smi not found: is there a GPU here?"
export CUDA_MODULE_LOADING="${CUDA_MODULE_LOADING:-EAGER}"
cmake -S "${root}" -B "${build}" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLPACKPP_SANITIZE=OFF \
  -DPython3_EXECUTABLE="${python}" -DDLPACKPP_GTEST_SOURCE="${DLPACKPP_GTEST_SOURCE:-}" \
  > "${build}.configure.log" 2>&1 \
  || { tail -30 "${build}.configure.log"; exit 1; }
# ninja -k 0: one target that does not build (a newer compiler's warning) leaves the others to test.
status=0
cmake --build "${build}" -j "$(nproc)" --target dlpackpp_streams_test \
  dlpackpp_streams_test_limited dlpackpp_test test_cuda_allocate dlpackpp_bindings_tests -- -k 0 \
  || status=1
log="${build}.gpu_check.log"
# nvcc's compile-only tests side by side; everything that runs on the device one at a time, so
# that no other process's load reaches the ordering tests' timings.
ctest --test-dir "${build}" --output-on-failure -j "$(nproc)" -R \
  '^cuda\.(smoke|host_api_cxx17|host_api_cxx20|example_cuda_scale|allocate|accessor_kernels|python_streams)$' \
  2>&1 | tee "${log}" || status=1
ctest --test-dir "${build}" -V -j 1 -R \
  '^(cuda\.example_streams(_run)?|python\.cuda_streams(_limited)?|python\.cuda|test_cuda_allocate\..*|conformance\.(probe|cuda_hooks|cuda_hooks_gpu)|bindings\.[a-z0-9_]+(\.venv|\.default)?)$' \
  2>&1 | tee -a "${log}" || status=1
if grep -q "DLPACKPP_TEST_SKIPPED\|(Skipped)" "${build}.gpu_check.log"; then
  echo "gpu_check: some tests were skipped (see above): not a full GPU run"
fi
exit "${status}"
