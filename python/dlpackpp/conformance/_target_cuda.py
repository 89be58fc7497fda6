# SPDX-License-Identifier: Apache-2.0
"""The `dlpackpp` target's GPU hooks (P9's ordering, X4): dlpackpp.Tensor as a CUDA producer
whose work is still queued on a stream when Python gets it (python/cuda.hpp), through a small
CUDA module (_probe_cuda.cu) that _build.py compiles with nvcc the first time a GPU check asks
for one. The checks ask only where PyTorch or CuPy found a CUDA device, so a machine without
a GPU (or without nvcc) never builds it: its GPU halves say "GPU half skipped"."""

from ._dtypes import dtype_of


def _hooks():
    from ._build import cuda_probe
    return cuda_probe()


class _CurrentStream:
    """Makes a stream dlpackpp's current work stream on a device for a `with` block (what
    the exchange table's current_work_stream reports), then puts the previous one back."""

    def __init__(self, device, handle):
        self.device, self.handle, self.previous = device, handle, None

    def __enter__(self):
        hooks = _hooks()
        self.previous = hooks.current_stream(*self.device)
        hooks.set_current_stream(self.device[0], self.device[1], self.handle)
        return self

    def __exit__(self, *exc):
        _hooks().set_current_stream(self.device[0], self.device[1], self.previous)
        return False


class DlpackppCuda:
    """The GPU hooks, as static methods (the built-in dlpackpp target inherits them)."""

    @staticmethod
    def cuda_array(a):
        """A CUDA array of a's values (None without CUDA): a dlpackpp.Tensor on cuda:0 whose
        copy may still be queued on the kit's producer stream when it is returned."""
        import numpy
        triple = dtype_of(a.dtype)
        if triple is None:
            raise NotImplementedError("dlpackpp.Tensor is made here from DLPack dtypes only")
        return _hooks().cuda_tensor(numpy.ascontiguousarray(a), triple)

    @staticmethod
    def current_stream(device):
        """dlpackpp's current work stream on `device` (this thread's)."""
        return _hooks().current_stream(device[0], device[1])

    @staticmethod
    def stream_context(device):
        """(a context making a new stream current, that stream's handle)."""
        handle = _hooks().new_stream()
        return _CurrentStream(device, handle), handle

    @staticmethod
    def slow_update(xg):
        """x + 1 queued behind a long kernel on a stream of its own, handed over with that
        stream (P9's ordering): a dlpackpp.Tensor sharing x's memory."""
        return _hooks().slow_update(xg, True)
