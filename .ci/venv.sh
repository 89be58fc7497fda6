# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# Sourced by the Python legs (.ci/python-venv.sh, .ci/bindings.sh, .ci/packages.sh), from the
# repository root. Sets `python`: $PYTHON, else /usr/bin/python3 where it exists (Debian's,
# whose NumPy and PyTorch packages the tests also use), else python3 on PATH.
python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi

# test_venv <requirements file>...: the venv the Python and binding legs share
# (build/python-venv, made from $python if missing) with the pinned requirements installed;
# sets `venv` to its folder and lists the peers it holds.
test_venv() {
  venv=build/python-venv
  if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
  fi
  local args=() file
  for file in "$@"; do args+=(-r "$file"); done
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "${args[@]}"
  "$venv/bin/python" -m pip list --disable-pip-version-check 2>/dev/null |
    grep -iE '^(numpy|ml.dtypes|jax|jaxlib|torch|pybind11|nanobind) ' || true
}
