#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A user's machine: the committed tree (git archive HEAD) unpacked into a fresh temporary
# folder with nothing beside it (no folder next to the checkout, no build/ of ours), then the
# README's two commands exactly as written, from that folder. CI installs every package the
# README lists before this runs. Prints ctest's summaries, the seconds each command took, and
# the dlpack.h matrix the test command found.
# Environment: KEEP_USER_MACHINE=1 keeps the folder (its path is printed); USER_MACHINE_HOME
# names a folder to use (made afresh, kept) instead of a temporary one; TMPDIR as usual.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS

if [ -n "${USER_MACHINE_HOME:-}" ]; then
  home=$USER_MACHINE_HOME
  rm -rf "$home"
  mkdir -p "$home"
else
  home=$(mktemp -d "${TMPDIR:-/tmp}/dlpackpp-user-machine.XXXXXX")
  if [ "${KEEP_USER_MACHINE:-0}" != 1 ]; then
    trap 'rm -rf "$home"' EXIT
  fi
fi
clone="$home/dlpackpp"
mkdir "$clone"
git -C "$repo" archive --format=tar HEAD | tar -x -C "$clone"
echo "=== user machine: $(git -C "$repo" rev-parse --short HEAD) unpacked in $clone ==="
echo "beside it: $(ls -A "$home" | tr '\n' ' ')"
cd "$clone"

demo_start=$SECONDS
cmake --workflow --preset demo
demo_s=$((SECONDS - demo_start))

# Wall time, plus the CPU time of every process it ran: on a shared machine the wall time
# depends on the neighbours, the CPU time (user + sys, over the core count) much less.
TIMEFORMAT="test command: %R s wall, %U s user, %S s sys"
test_start=$SECONDS
time cmake --workflow --preset test
test_s=$((SECONDS - test_start))

echo "=== user machine: the dlpack.h matrix ==="
ctest --test-dir build/test -N -L dlpack_h | grep -E '^ *Test +#.*(compat\.|_reference|test_abi_mix)' || true
echo "=== user machine: demo ${demo_s} s, test ${test_s} s on $(nproc) cores (README: test <= 300 s) ==="
if [ "$test_s" -gt 300 ]; then
  echo "warning: the README's test command took ${test_s} s, over the 300 s it should take" >&2
fi
echo "=== user machine: done in $((SECONDS - start)) s ==="
