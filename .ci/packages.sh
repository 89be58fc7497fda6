#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The pip and Conan packages, used as their users use them (issue 20):
#   wheel    `pip wheel .` (scikit-build-core from PyPI), installed into a fresh venv; checks
#            dlpackpp.get_include()/get_cmake_dir() and `python -m dlpackpp --includedir`/
#            `--cmakedir`/`--pkgconfigdir`, then builds a copy of examples/python in a temporary
#            folder as an outside project that finds dlpackpp only through
#            -Ddlpackpp_DIR=$(python -m dlpackpp --cmakedir), and runs its tests (NumPy and
#            PyTorch from Debian, seen through the venv's system site packages)
#   pkg-config  PKG_CONFIG_PATH=$(python -m dlpackpp --pkgconfigdir): the flags point into the
#            installed wheel, and the README quick start compiles and runs with them
#   conan    conan from PyPI in a venv, a private CONAN_HOME, `conan profile detect`, the default
#            remote disabled (nothing is downloaded), `conan create .` (test_package builds and
#            runs the quick start through find_package)
# Needs: python3 with venv and headers (python3-venv python3-dev), a C++17 compiler, cmake,
# pkg-config, PyPI for scikit-build-core and conan (pip's cache is used). Optional: python3-numpy,
# python3-torch (their tests report themselves skipped without them).
# Environment: PYTHON (default /usr/bin/python3 where it exists, else python3), CONAN_SPEC (the
# pip requirement for conan, default conan==2.34.0).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$SECONDS

source .ci/venv.sh
conan_spec=${CONAN_SPEC:-conan==2.34.0}
pip_flags=(--disable-pip-version-check --quiet)
export PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1

# Everything a user's machine would hold outside the checkout lives here, so nothing found
# there can come from the checkout by accident.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlpackpp-packages.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

step() { echo "--- packages: $* ($((SECONDS - start)) s)"; }
fail() {
  echo "error: packages: $*" >&2
  exit 1
}
# expect_inside <what> <path> <folder>: fails unless <path> exists and lies under <folder>.
expect_inside() {
  [ -e "$2" ] || fail "$1 $2 does not exist"
  local real
  real=$(realpath "$2")
  case "$real/" in "$(realpath "$3")"/*) ;; *) fail "$1 is $real, not inside $3" ;; esac
}

for tool in cmake pkg-config "${CXX:-c++}"; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (Debian: apt-get install cmake pkg-config g++)"
done
"$python" -c 'import ensurepip, sysconfig, os, sys
sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("include"), "Python.h")))' ||
  fail "$python lacks venv or its headers (Debian: apt-get install python3-venv python3-dev)"

version=$(sed -nE 's/^#define DLPACKPP_VERSION_(MAJOR|MINOR|PATCH) ([0-9]+)$/\2/p' \
  include/dlpackpp/version.hpp | paste -sd.)
echo "=== packages: dlpackpp $version, $("$python" --version) from $python ==="

# ---- the wheel ----------------------------------------------------------------------------
step "tools venv (pip, $conan_spec)"
tools=build/packages/tools-venv
[ -x "$tools/bin/python" ] || "$python" -m venv "$tools"
"$tools/bin/python" -m pip install "${pip_flags[@]}" "$conan_spec"

step "pip wheel . (scikit-build-core from PyPI, build isolation)"
rm -rf build/wheel
"$tools/bin/python" -m pip wheel "${pip_flags[@]}" --no-deps -w build/wheel .
wheel=$(echo build/wheel/dlpackpp-*.whl)
[ -f "$wheel" ] || fail "pip wheel made no dlpackpp wheel"
case "$(basename "$wheel")" in
  "dlpackpp-$version-py3-none-any.whl") echo "wheel: $(basename "$wheel")" ;;
  *) fail "the wheel is $(basename "$wheel"), not dlpackpp-$version-py3-none-any.whl" ;;
esac

step "fresh venv, the wheel installed from its file alone"
venv=$tmp/venv
"$python" -m venv --system-site-packages "$venv"
py=$venv/bin/python
"$py" -m pip install "${pip_flags[@]}" --no-index --no-deps "$wheel"
site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
expect_inside "the dlpackpp package" "$("$py" -c 'import dlpackpp; print(dlpackpp.__file__)')" "$site"
[ "$("$py" -m dlpackpp --version)" = "$version" ] || fail "python -m dlpackpp --version is not $version"

include_dir=$("$py" -c 'import dlpackpp; print(dlpackpp.get_include())')
cmake_dir=$("$py" -c 'import dlpackpp; print(dlpackpp.get_cmake_dir())')
[ "$("$py" -m dlpackpp --includedir)" = "$include_dir" ] || fail "--includedir differs from get_include()"
[ "$("$py" -m dlpackpp --cmakedir)" = "$cmake_dir" ] || fail "--cmakedir differs from get_cmake_dir()"
pc_dir=$("$py" -m dlpackpp --pkgconfigdir)
for f in "$include_dir/dlpackpp/dlpackpp.hpp" "$include_dir/dlpackpp/python.hpp" \
  "$include_dir/dlpackpp/bundled/dlpack.h" "$cmake_dir/dlpackppConfig.cmake" \
  "$cmake_dir/dlpackppConfigVersion.cmake" "$pc_dir/dlpackpp.pc"; do
  expect_inside "wheel file" "$f" "$site/dlpackpp"
done
# Every header of the checkout is in the wheel, and nothing else is under include/.
diff <(cd include && find . -type f | sort) <(cd "$include_dir" && find . -type f | sort) ||
  fail "the wheel's include/ differs from the checkout's"
# The source tree's python/dlpackpp has no headers: it must say so, not print a wrong folder.
if (cd python && "$python" -m dlpackpp --includedir >/dev/null 2>&1); then
  fail "python -m dlpackpp --includedir succeeded from the source tree's python/ folder"
fi
echo "get_include():   $include_dir"
echo "get_cmake_dir(): $cmake_dir"

step "examples/python as an outside project, through -Ddlpackpp_DIR=\$(python -m dlpackpp --cmakedir)"
cp -R examples/python "$tmp/example"
cmake -S "$tmp/example" -B "$tmp/example-build" -DCMAKE_BUILD_TYPE=Release \
  -Ddlpackpp_DIR="$("$py" -m dlpackpp --cmakedir)" -DPython3_EXECUTABLE="$py"
found=$(sed -n 's/^dlpackpp_DIR:[A-Z]*=//p' "$tmp/example-build/CMakeCache.txt")
[ "$(realpath "$found")" = "$(realpath "$cmake_dir")" ] || fail "the example found dlpackpp at $found"
if grep -qF "$root/" "$tmp/example-build/CMakeCache.txt"; then
  fail "the outside project's cache names the checkout: $(grep -F "$root/" "$tmp/example-build/CMakeCache.txt" | head -3)"
fi
cmake --build "$tmp/example-build" -j"$(nproc)"
ctest --test-dir "$tmp/example-build" --output-on-failure
# The C++ layer names its tensor type dlpackpp.Tensor; the pure-Python package of that name
# must leave it alone (and still answer) when both are imported, in either order.
PYTHONPATH=$tmp/example-build/module "$py" -c '
import dlpackpp_example, dlpackpp
t = dlpackpp_example.arange(3)
assert type(t).__module__ == "dlpackpp" and type(t).__qualname__ == "Tensor", type(t)
assert not hasattr(dlpackpp, "Tensor")
assert dlpackpp_example.sum(t) == 3.0 and dlpackpp.get_include()
print("dlpackpp.Tensor from the example and the dlpackpp package coexist")'

step "the same example as a scikit-build-core project: dlpackpp found in site-packages, no hint"
"$py" -m pip install "${pip_flags[@]}" "scikit-build-core>=0.10"
cat >"$tmp/example/pyproject.toml" <<'EOF'
[build-system]
requires = ["scikit-build-core>=0.10", "dlpackpp"]
build-backend = "scikit_build_core.build"

[project]
name = "dlpackpp-example"
version = "0.0.0"

[tool.scikit-build]
build-dir = "skbuild"
EOF
# No build isolation: the build sees the venv, where the dlpackpp wheel is installed.
"$py" -m pip wheel "${pip_flags[@]}" --no-build-isolation --no-deps -w "$tmp/example-wheel" "$tmp/example"
found=$(sed -n 's/^dlpackpp_DIR:[A-Z]*=//p' "$tmp/example/skbuild/CMakeCache.txt")
[ "$(realpath "$found")" = "$(realpath "$cmake_dir")" ] || fail "scikit-build-core found dlpackpp at $found"
"$py" -m pip install "${pip_flags[@]}" --no-index --no-deps "$tmp"/example-wheel/dlpackpp_example-*.whl
# From $tmp, so the module can only come from the venv.
expect_inside "the installed example module" \
  "$(cd "$tmp" && "$py" -c 'import dlpackpp_example; print(dlpackpp_example.__file__)')" "$site"
(cd "$tmp" && "$py" example/test_example.py numpy)

step "pkg-config from the wheel"
export PKG_CONFIG_PATH=$pc_dir
cflags=$(pkg-config --cflags dlpackpp)
echo "pkg-config --cflags dlpackpp: $cflags"
[ "$(pkg-config --modversion dlpackpp)" = "$version" ] || fail "pkg-config --modversion is not $version"
pc_include=${cflags#-I}
pc_include=${pc_include%% *}
[ "$(realpath "$pc_include")" = "$(realpath "$include_dir")" ] ||
  fail "pkg-config's include folder $pc_include is not the wheel's $include_dir"
cp examples/quick_start.cpp "$tmp/quick_start.cpp"
# shellcheck disable=SC2086  # the flags are words
"${CXX:-c++}" -std=c++17 -Wall -Wextra -Werror $cflags "$tmp/quick_start.cpp" -o "$tmp/quick_start"
out=$("$tmp/quick_start")
[ "$out" = "float32[2, 3] strides [3, 1] cpu" ] || fail "quick start printed '$out'"
echo "quick start through pkg-config: $out"
unset PKG_CONFIG_PATH

# ---- Conan ---------------------------------------------------------------------------------
step "conan create . (offline, private CONAN_HOME)"
export CONAN_HOME=$tmp/conan-home
conan=$tools/bin/conan
"$conan" --version
"$conan" profile detect
# dlpackpp needs C++17 (the recipe says so in validate()); a compiler whose default is older
# (Clang 14: gnu14) gets its profile raised to 17, as its user would do, GNU extensions kept.
profile=$CONAN_HOME/profiles/default
if grep -qE '^compiler\.cppstd=(gnu)?(98|11|14)$' "$profile"; then
  sed -i -E 's/^compiler\.cppstd=(gnu)?(98|11|14)$/compiler.cppstd=\117/' "$profile"
  echo "raised the detected profile to $(grep '^compiler\.cppstd=' "$profile")"
fi
"$conan" remote disable conancenter
# test_package's build folder and presets go to the temporary folder, not into the checkout.
"$conan" create . -c tools.cmake.cmake_layout:test_folder="$tmp/conan-test" \
  -c tools.cmake.cmaketoolchain:user_presets=""
# The created package holds all of include/ (the bundled dlpack.h too), nothing less.
pkg_id=$("$conan" list "dlpackpp/$version:*" --format=json | "$tools/bin/python" -c '
import json, sys
ids = [p for rrevs in json.load(sys.stdin)["Local Cache"].values()
       for rrev in rrevs["revisions"].values() for p in rrev.get("packages", {})]
assert len(ids) == 1, ids
print(ids[0])')
pkg_dir=$("$conan" cache path "dlpackpp/$version:$pkg_id")
diff <(cd include && find . -type f | sort) <(cd "$pkg_dir/include" && find . -type f | sort) ||
  fail "the Conan package's include/ differs from the checkout's"
echo "conan package dlpackpp/$version:$pkg_id holds include/ and $(ls "$pkg_dir/licenses")"

echo "=== packages: wheel, pkg-config and Conan routes passed in $((SECONDS - start)) s ==="
