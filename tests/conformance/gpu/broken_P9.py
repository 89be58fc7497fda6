# SPDX-License-Identifier: Apache-2.0
"""A broken adapter for P9's GPU half (run on a CUDA machine: see docs/conformance.md): a
PyTorch CUDA tensor whose __dlpack__ takes `stream` but never orders its pending work
before that stream, so the consumer's stream reads values still being written. The kit
must fail P9 with it; without CUDA the GPU half is skipped."""
import torch
import torch.utils.dlpack

NAME = "broken-gpu-P9"


class Late:
    def __init__(self, t):
        self.t = t

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if stream is not None and (not isinstance(stream, int) or stream == 0):
            raise TypeError("stream must be a non-zero int or None")
        return torch.utils.dlpack.to_dlpack(self.t)  # the fault: no wait on `stream`

    def __dlpack_device__(self):
        return tuple(int(v) for v in self.t.__dlpack_device__())


def from_numpy(a):
    return Late(torch.from_numpy(a))


def cuda_array(a):
    return Late(torch.from_numpy(a).cuda()) if torch.cuda.is_available() else None


def slow_update(x):
    torch.cuda.set_stream(torch.cuda.Stream(x.t.device))  # not the legacy default stream
    torch.cuda._sleep(200_000_000)  # the add below waits behind this on that stream
    x.t.add_(1)
    return x
