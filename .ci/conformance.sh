#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The DLPack conformance kit (python -m dlpackpp.conformance, docs/conformance.md) against
# the frameworks a user meets: Debian's NumPy 1.24 and PyTorch 1.13 (/usr/bin/python3), then
# NumPy 2.x, PyTorch 2.x, JAX (CPU) and apache-tvm-ffi from PyPI (the shared venv, with
# tests/conformance/requirements.txt added), each run with dlpackpp itself and the producer x
# consumer matrix. Keeps each run's JSON and HTML under build/conformance/, renders each page
# in headless Chromium and checks the screenshot (tests/conformance/check_html.py), runs the
# kit's self-proof (ctest -L conformance) with the venv's interpreter, and checks that the
# wheel `pip install .` makes carries the kit and runs it. Fails when dlpackpp fails a MUST
# check, when a self-proof case does not fail as it should, or when a page does not render;
# other frameworks' MUST failures are reported, not fatal (they are the kit's findings).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
# The page check is part of the leg: without a browser it would pass having checked nothing.
if ! command -v chromium >/dev/null; then
  echo "error: chromium not found (apt-get install chromium)" >&2
  exit 1
fi

source .ci/venv.sh
out=build/conformance
rm -rf "$out"
mkdir -p "$out"
export DLPACKPP_CONFORMANCE_CACHE="$PWD/$out/probe-cache" PYTHONPATH="$PWD/python"
export PYTHONDONTWRITEBYTECODE=1

# run_kit <label> <interpreter> <targets...>: one run, its reports kept; exit 0 or 1 only.
run_kit() {
  local label=$1 interpreter=$2 status=0 run_start=$SECONDS
  shift 2
  echo "=== conformance ($label): $("$interpreter" --version) on $* ==="
  "$interpreter" -m dlpackpp.conformance "$@" --json "$out/$label.json" \
    --html "$out/$label.html" --markdown "$out/$label.md" || status=$?
  if [ "$status" -gt 1 ]; then
    echo "error: the kit stopped with status $status ($label)" >&2
    exit 1
  fi
  cat "$out/$label.md"
  echo "=== conformance ($label): $((SECONDS - run_start)) s, kit exit $status ==="
  # dlpackpp itself must fail no MUST check.
  "$interpreter" - "$out/$label.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
bad = [c for t in report["targets"] if t["name"] == "dlpackpp" for c in t["checks"]
       if c["verdict"] == "fail" and c["level"] == "MUST"]
if not any(t["name"] == "dlpackpp" for t in report["targets"]):
    sys.exit("error: dlpackpp is missing from the report")
for c in bad:
    print("error: dlpackpp fails %s (%s): %s" % (c["id"], c["rule"], c["detail"]))
sys.exit(1 if bad else 0)
PY
  "$interpreter" tests/conformance/check_html.py "$out/$label.html" "$out/$label.json" \
    "$out/$label.png"
}

run_kit debian "$python" numpy torch dlpackpp

test_venv tests/python/requirements.txt tests/conformance/requirements.txt
run_kit pypi "$PWD/$venv/bin/python" numpy torch jax tvm_ffi dlpackpp

# The self-proof: every check fails on its broken adapter, the conforming one passes all.
tests="$out/tests"
cmake -S . -B "$tests" -DCMAKE_BUILD_TYPE=Debug -DDLPACKPP_BUILD_EXAMPLES=OFF \
  -DPython3_EXECUTABLE="$PWD/$venv/bin/python" >"$out/configure.log"
ctest --test-dir "$tests" -L conformance -j"$(nproc)" --output-on-failure

# Installed the way users get it: the wheel carries the kit, which runs from it.
rm -rf "$out/wheel" "$out/wheel-venv"
"$venv/bin/python" -m pip wheel . --no-deps --disable-pip-version-check -q -w "$out/wheel"
"$venv/bin/python" -c 'import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
sys.exit("the wheel lacks the kit" if "dlpackpp/conformance/_probe.cpp" not in names else 0)' \
  "$out"/wheel/*.whl
"$python" -m venv --system-site-packages "$out/wheel-venv"
"$out/wheel-venv/bin/python" -m pip install --no-deps --disable-pip-version-check -q \
  "$out"/wheel/*.whl
(cd "$out" && env -u PYTHONPATH DLPACKPP_CONFORMANCE_CACHE="$PWD/wheel-cache" \
  wheel-venv/bin/python -m dlpackpp.conformance dlpackpp --only P1,P3,C3,L1)

echo "=== conformance leg: done in $((SECONDS - start)) s; reports in $out ==="
