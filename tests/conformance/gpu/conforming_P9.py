# SPDX-License-Identifier: Apache-2.0
"""The conforming counterpart of broken_P9.py (run on a CUDA machine: see docs/conformance.md):
the same wrapper of a PyTorch CUDA tensor, whose __dlpack__ hands `stream` to PyTorch, which
orders its pending work before that stream. The kit must pass P9's GPU half with it."""
import torch

NAME = "conforming-gpu-P9"


class Ordered:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return tuple(int(v) for v in self.t.__dlpack_device__())


def from_numpy(a):
    return Ordered(torch.from_numpy(a))


def cuda_array(a):
    return Ordered(torch.from_numpy(a).cuda()) if torch.cuda.is_available() else None


def slow_update(x):
    torch.cuda.set_stream(torch.cuda.Stream(x.t.device))  # not the legacy default stream
    torch.cuda._sleep(200_000_000)  # the add below waits behind this on that stream
    x.t.add_(1)
    return x
