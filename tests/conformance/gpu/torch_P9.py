# SPDX-License-Identifier: Apache-2.0
"""P9's GPU half with PyTorch (run on a CUDA machine: see docs/conformance.md): a wrapper of a
PyTorch CUDA tensor whose __dlpack__ hands `stream` to PyTorch, which orders its pending work
before that stream (conforming), or, where $DLPACKPP_CONFORMANCE_FAULT is P9, exports through
torch.utils.dlpack.to_dlpack, which waits for nothing: the consumer's stream then reads
values still being written, and the kit must fail P9."""
import os

import torch
import torch.utils.dlpack

BROKEN = os.environ.get("DLPACKPP_CONFORMANCE_FAULT") == "P9"
NAME = "broken-torch-P9" if BROKEN else "conforming-torch-P9"


class Wrapped:
    """A framework array whose __dlpack__ may ignore `stream` (the fault)."""
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, **kwargs):
        if stream is not None and (not isinstance(stream, int) or stream == 0):
            raise TypeError("stream must be a non-zero int or None")
        if BROKEN:
            return torch.utils.dlpack.to_dlpack(self.t)  # the fault: no wait on `stream`
        return self.t.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return tuple(int(v) for v in self.t.__dlpack_device__())


def from_numpy(a):
    """A framework array with a's dtype, shape and values (or NotImplementedError)."""
    return Wrapped(torch.from_numpy(a))


def cuda_array(a):
    """A CUDA array of a's values (None without CUDA)."""
    return Wrapped(torch.from_numpy(a).cuda()) if torch.cuda.is_available() else None


def slow_update(x):
    """x + 1 queued behind a long kernel on the current stream (P9's ordering)."""
    torch.cuda.set_stream(torch.cuda.Stream(x.t.device))  # not the legacy default stream
    torch.cuda._sleep(200_000_000)  # the add below waits behind this on that stream
    x.t.add_(1)
    return x
