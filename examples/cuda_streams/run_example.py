# SPDX-License-Identifier: Apache-2.0
"""Runs the CUDA streams example (streams_ext.cu) with PyTorch on a GPU: its tensors are read
on PyTorch's stream with no host synchronization, and its kernel reads PyTorch's tensors on
PyTorch's current stream. Each case would read wrong values if the order were not kept: the
kernels are delayed (GPU clock spins) so that unordered work overtakes them.

Needs a CUDA device and PyTorch built for it; skips itself otherwise (CI has no GPU), after
checking what runs without one: the module loads, refuses a host array, and reports the CUDA
error of a machine without a device."""
import glob
import os
import sys
import time

import dlpackpp_cuda_streams_example as ext


def skip(why):
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.exit(0)


def no_device_checks():
    """What the module does without a GPU (it exits 1 on a wrong answer, before any skip)."""
    try:
        import numpy
    except ImportError:
        return
    try:
        ext.scale_(numpy.ones(3, numpy.float32), 2.0)
        sys.exit("scale_ accepted a NumPy (host) array")
    except ValueError as e:  # std::invalid_argument, as pybind11 maps it
        if "takes a CUDA tensor" not in str(e):
            sys.exit("scale_ refused a host array for another reason: %s" % e)
    try:
        ext.iota(4)
        sys.exit("iota succeeded without a CUDA device")
    except RuntimeError as e:
        if not str(e).startswith("cuda"):  # "<the CUDA call>: <CUDA's message>"
            sys.exit("iota failed without naming the CUDA call: %s" % e)
    print("ok    without a device: scale_ refuses host memory, iota names the CUDA error")


# Asking PyTorch whether there is a device means importing it (slow): a Linux machine without
# an NVIDIA device node is answered first.
if sys.platform.startswith("linux") and not (glob.glob("/dev/nvidia[0-9]*")
                                             or os.path.exists("/dev/dxg")):
    no_device_checks()
    skip("no CUDA device on this machine (no /dev/nvidia* device node)")
try:
    import torch
except ImportError:
    skip("PyTorch is not importable")
if not torch.cuda.is_available():
    skip("PyTorch has no CUDA device")

N = 1 << 20
SPIN = 200_000_000  # GPU clock cycles: about 0.1 s on an H200
failures = []


def expect(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


# Warm-up: the first launch of each kernel in a process waits for the device (lazy module
# loading), which would hide a missing order.
torch.from_dlpack(ext.iota(16, spin=1)).sum().item()
ext.scale_(torch.ones(16, device="cuda"), 1.0)
torch.cuda.synchronize()

# 1. A tensor still being written, read on PyTorch's (non-default) stream.
torch.cuda.set_stream(torch.cuda.Stream())
started = time.monotonic()
x = torch.from_dlpack(ext.iota(N, spin=SPIN))  # torch passes its stream: it waits, not the host
host_wait = time.monotonic() - started
expected = torch.arange(N, dtype=torch.float32, device="cuda")
expect(host_wait < 0.05, "iota + torch.from_dlpack returned in %.4f s (the kernel spins ~0.1 s): "
       "the host did not wait" % host_wait)
expect(torch.equal(x, expected), "values read on PyTorch's stream are the kernel's")

# 2. In a loop, no host synchronization anywhere. Each temporary dies (and its deleter runs)
# while PyTorch's add that reads it is still queued: the memory is freed in the extension's
# stream order, after PyTorch's stream (python/cuda.hpp), or the next iota would overwrite it.
total = torch.zeros(N, device="cuda")
started = time.monotonic()
for _ in range(20):
    total += torch.from_dlpack(ext.iota(N, spin=SPIN // 20))
loop_wait = time.monotonic() - started
reference = torch.zeros(N, device="cuda")
for _ in range(20):  # the same float32 additions: 20 * expected rounds differently past 2**24
    reference += expected
expect(torch.equal(total, reference), "20 calls in a loop: the sum is right (%.4f s on the "
       "host for ~0.1 s of GPU spins)" % loop_wait)

# 3. The extension reads (and writes) a PyTorch tensor on PyTorch's current stream.
y = torch.ones(N, device="cuda")
torch.cuda._sleep(SPIN)  # queued on the current stream, before the add
y.add_(1)                # 2, once the sleep is over
ext.scale_(y, 3.0)       # on torch.cuda.current_stream(), from PyTorch's exchange table
expect(torch.equal(y, torch.full_like(y, 6.0)), "scale_ ran after PyTorch's pending add_, on "
       "its current stream (6 = (1 + 1) * 3; 4 would mean it overtook the add)")

# 4. On a stream of the caller's: PyTorch orders its work before it (__dlpack__(stream=s)).
z = torch.ones(N, device="cuda")
torch.cuda._sleep(SPIN)
z.add_(1)
side = torch.cuda.Stream()
ext.scale_on_(z, 3.0, side.cuda_stream)
torch.cuda.current_stream().wait_stream(side)  # the caller orders the way back
expect(torch.equal(z, torch.full_like(z, 6.0)), "scale_on_ on the caller's stream after "
       "PyTorch ordered its pending add_ before it")

if failures:
    print("%d case(s) failed" % len(failures))
    sys.exit(1)
print("all cases passed")
