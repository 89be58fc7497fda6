#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails when a tracked C, C++ or CUDA source differs from what clang-format makes of it under
# the project's .clang-format. Generated and foreign text is left alone: the single header
# (generated from include/), the bundled dlpack.h (its layout follows the reference header) and
# the fuzz corpora. Fix with: bash .ci/format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(--dry-run -Werror)
[ "${1:-}" = "--fix" ] && mode=(-i)
mapfile -t files < <(git ls-files -- '*.hpp' '*.cpp' '*.h' '*.c' '*.cu' \
  ':!:single_include/**' ':!:include/dlpackpp/bundled/**' ':!:tests/fuzz/corpus/**' \
  ':!:tests/fuzz/regressions/**')
clang-format --version
if clang-format "${mode[@]}" "${files[@]}"; then
  echo "format: ${#files[@]} files checked, 0 need formatting"
else
  echo "format: files above need formatting (bash .ci/format.sh --fix)" >&2
  exit 1
fi
