# SPDX-License-Identifier: Apache-2.0
"""P9's GPU half with CuPy (run on a CUDA machine: see docs/conformance.md): a wrapper of a
CuPy array whose __dlpack__ hands `stream` to CuPy (conforming), or, where
$DLPACKPP_CONFORMANCE_FAULT is P9, passes stream=-1 (the array API's "no synchronization")
whatever the consumer asked: the consumer's stream then reads values still being written,
and the kit must fail P9."""
import os

import cupy

BROKEN = os.environ.get("DLPACKPP_CONFORMANCE_FAULT") == "P9"
NAME = "broken-cupy-P9" if BROKEN else "conforming-cupy-P9"
_SPIN = r"""extern "C" __global__ void spin(long long n) {
    long long t = clock64(); while (clock64() - t < n) {} }"""


class Wrapped:
    """A framework array whose __dlpack__ may ignore `stream` (the fault)."""
    def __init__(self, x):
        self.x = x

    def __dlpack__(self, stream=None, **kwargs):
        if stream is not None and (not isinstance(stream, int) or stream == 0):
            raise TypeError("stream must be a non-zero int or None")
        return self.x.__dlpack__(stream=-1 if BROKEN else stream, **kwargs)

    def __dlpack_device__(self):
        return tuple(int(v) for v in self.x.__dlpack_device__())


def from_numpy(a):
    """A framework array with a's dtype, shape and values (or NotImplementedError)."""
    return Wrapped(cupy.asarray(a))


def cuda_array(a):
    """A CUDA array of a's values (None without CUDA)."""
    return Wrapped(cupy.asarray(a))


def slow_update(x):
    """x + 1 queued behind a long kernel on the current stream (P9's ordering)."""
    cupy.cuda.Stream(non_blocking=True).use()  # not the legacy default stream
    cupy.RawKernel(_SPIN, "spin")((1,), (1,), (cupy.int64(200_000_000),))
    x.x += 1  # queued behind the spin on the same stream
    return x
