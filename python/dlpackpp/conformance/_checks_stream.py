# SPDX-License-Identifier: Apache-2.0
"""P9, the `stream` keyword: the values each device allows, and on a GPU whether work queued
on the producer's stream is visible on the consumer's stream once __dlpack__(stream=s)
returned. The GPU half needs CUDA through PyTorch or CuPy (the consumer's stream and the
copy that reads on it); without CUDA it is skipped and the detail says so."""

import time

import numpy as np

from ._checks import check, describe, new
from ._kit import make_float32, sample

PY = "Python spec (__dlpack__ stream)"


def cuda_tools():
    """(name, module) of a CUDA-capable stream provider for the consumer side, or None."""
    try:
        import torch
        if torch.cuda.is_available():
            return "torch", torch
    except ImportError:
        pass
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() > 0:
            return "cupy", cupy
    except Exception:  # noqa: BLE001 - no CuPy or no device
        pass
    return None


def _reader(shape, tools):
    """A function reading a CUDA array on a fresh consumer stream after
    x.__dlpack__(stream=that stream), returning the bytes that stream sees. Everything that
    synchronizes the device (pinned host memory, streams) is made here, before the producer
    queues its slow work."""
    name, mod = tools
    if name == "torch":
        import torch.utils.dlpack
        s = mod.cuda.Stream()
        host = mod.empty(shape, dtype=mod.float32, pin_memory=True)

        def read(x):
            """The bytes the consumer's stream sees after x.__dlpack__(stream=it)."""
            t = torch.utils.dlpack.from_dlpack(x.__dlpack__(stream=s.cuda_stream))
            with mod.cuda.stream(s):
                host.copy_(t, non_blocking=True)
            s.synchronize()
            return host.numpy().tobytes()
        return read
    s = mod.cuda.Stream(non_blocking=True)
    pinned = mod.cuda.alloc_pinned_memory(int(np.prod(shape)) * 4)
    out = np.frombuffer(pinned, np.float32, int(np.prod(shape))).reshape(shape)

    def read(x):
        """The bytes the consumer's stream sees after x.__dlpack__(stream=it)."""
        t = mod.from_dlpack(_Capsule(x.__dlpack__(stream=s.ptr)))
        t.get(out=out, stream=s)
        s.synchronize()
        return out.tobytes()
    return read


class _Capsule:
    """Hands a capsule already made (with the stream asked for) to a consumer."""

    def __init__(self, cap):
        self.cap = cap

    def __dlpack__(self, **kwargs):
        return self.cap

    def __dlpack_device__(self):
        return (2, 0)


def stream_none(out, x):
    """Checks that stream=None is accepted; returns the other keywords that made it work:
    none, or max_version=(1, 3) for a producer that refuses legacy exports (the array API
    allows that from 2025)."""
    for kwargs in ({}, {"max_version": (1, 3)}):
        try:
            x.__dlpack__(stream=None, **kwargs)
        except BufferError as e:
            if not kwargs:  # a refused legacy export: asked again, versioned
                out.add(False, "INFO", "", "stream=None without max_version refused (%s): "
                        "allowed by the array API from 2025" % describe(e))
                continue
            error = e
        except Exception as e:  # noqa: BLE001
            error = e
        else:
            out.add(True, "MUST", "", "")
            return kwargs
        out.add(False, "MUST", PY + ": stream=None is always accepted", "stream=None%s raised "
                "%s" % (", max_version=(1, 3)" if kwargs else "", describe(error)))
        return kwargs


@check("P9", "MUST", PY + ": CPU takes None; CUDA never 0 (1 legacy, 2 per-thread); ROCm "
       "never 1 or 2; a non-integer is TypeError; the producer orders its work before the "
       "consumer's stream")
def p9(target):
    """The stream keyword's values per device, and GPU ordering."""
    out = new()
    x = make_float32(target, sample(flat=True))
    dev = tuple(x.__dlpack_device__())
    kwargs = stream_none(out, x)
    try:
        x.__dlpack__(stream="0", **kwargs)
        out.add(False, "SHOULD", PY + ": stream is an int or None (TypeError otherwise)",
                "stream='0' was accepted")
    except TypeError:
        out.add(True, "SHOULD", "", "")
    except Exception as e:  # noqa: BLE001
        out.add(False, "SHOULD", PY + ": stream is an int or None (TypeError otherwise)",
                "stream='0' raised %s" % describe(e))
    if dev[0] == 1:
        try:
            x.__dlpack__(stream=-1, **kwargs)
            out.add(False, "INFO", "", "stream=-1 accepted on CPU (the array API allows only "
                    "None there)")
        except Exception:  # noqa: BLE001
            pass
    tools = cuda_tools()
    make_cuda = getattr(target, "cuda_array", None)
    if tools is None or make_cuda is None:
        out.add(False, "INFO", "", "GPU half skipped: %s" %
                ("no CUDA device" if tools is None else "the adapter has no cuda_array"))
        return out
    a = np.arange(1 << 22, dtype=np.float32)
    xg = make_cuda(a)
    if xg is None:
        out.add(False, "INFO", "", "GPU half skipped: the framework has no CUDA device")
        return out
    try:
        xg.__dlpack__(stream=0)
        out.add(False, "SHOULD", PY + ": 0 is disallowed on CUDA (ambiguous)",
                "stream=0 was accepted for a CUDA array")
    except Exception:  # noqa: BLE001
        out.add(True, "SHOULD", "", "")
    if getattr(target, "slow_update", None) is None:
        out.add(False, "INFO", "", "GPU ordering skipped: the adapter has no slow_update (no "
                "way to queue work on this framework's stream)")
        return out
    ordering(out, target, make_cuda, a, xg, _reader(a.shape, tools),
             lambda: _synchronize(tools), tools[0])
    return out


def _synchronize(tools):
    name, mod = tools
    if name == "torch":
        mod.cuda.synchronize()
    else:
        mod.cuda.runtime.deviceSynchronize()


def ordering(out, target, make_cuda, a, xg, read, synchronize, consumer):
    """P9's GPU half: work queued on the producer's stream is visible on the consumer's
    stream after __dlpack__(stream=...) (`read(x)`: the bytes `consumer`'s stream sees;
    `synchronize()` waits for the device). Conclusive only where a kernel launch returns
    before the kernel ends, which is measured (after a warm-up), never assumed."""
    # The first launch of each kernel in a process waits for the device (CUDA loads modules
    # lazily; CuPy compiles its kernels on first use): everything the timed call runs is
    # run once on a scratch array first, and waited for.
    read(slow_update(target, make_cuda(a)))
    synchronize()
    started = time.monotonic()
    late = slow_update(target, xg)
    elapsed = time.monotonic() - started
    if elapsed > 0.05:
        # The long kernel ran while the host waited: nothing is pending when the consumer
        # asks, so the test cannot tell a producer that orders from one that does not.
        out.add(False, "INFO", "", "GPU ordering inconclusive: kernel launches block the host "
                "here even after a warm-up (%.2f s for slow_update; CUDA_LAUNCH_BLOCKING or a "
                "virtualized GPU)" % elapsed)
        return
    seen = read(late)
    out.add(seen == (a + 1).tobytes(), "MUST", PY + ": the producer makes the consumer's "
            "stream wait for its pending work", "the consumer's stream read stale values: the "
            "producer did not order its pending work before stream %s" % consumer)


def slow_update(target, xg):
    """xg + 1 queued behind a long kernel on the framework's current stream (so a producer
    that ignores `stream` hands over memory still being written), or None."""
    hook = getattr(target, "slow_update", None)
    return hook(xg) if hook else None
