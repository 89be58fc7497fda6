# SPDX-License-Identifier: Apache-2.0
"""The targets: built-in adapters for the frameworks the kit knows, and adapter files.

An adapter is anything with NAME and some of VERSION, from_numpy, read_only, from_dlpack,
to_numpy (see docs/conformance.md); built-in ones are classes of static methods with the same
names, so the checks never tell them apart. Optional extras a built-in may have: cuda_array
(a CUDA array of a numpy array's values, or None without CUDA), current_stream(device) (the
framework's current stream handle, for X4), stream_context(device) (a context that makes a
new stream current, and its handle: X4) and slow_update(x) (x + 1 queued behind a long
kernel on the current stream: P9's ordering test).
"""

import importlib.util
import os
import sys

from ._build import UsageError
from ._dtypes import DTYPES, dtype_of, element_strides, numpy_dtype  # noqa: F401 (shared)
from ._host import host_copy
from ._target_cuda import DlpackppCuda

BUILTIN = ("numpy", "torch", "jax", "cupy", "tvm_ffi", "dlpackpp")

def _refuse(exc):
    # A framework that cannot hold a dtype or layout: the case is skipped, not failed.
    raise NotImplementedError("%s: %s" % (type(exc).__name__, exc)) from None


class NumPy:
    """NumPy: numpy.from_dlpack and ndarray.__dlpack__."""
    NAME = "numpy"

    @staticmethod
    def version():
        """The framework's version."""
        import numpy
        return numpy.__version__

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        return a

    @staticmethod
    def read_only(a):
        """A read-only framework array of a's values."""
        b = a.view()
        b.flags.writeable = False
        return b

    @staticmethod
    def from_dlpack(x, **kwargs):
        """The framework's consumer."""
        import numpy
        return numpy.from_dlpack(x, **kwargs)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        import numpy
        return numpy.asarray(y)


class Torch:
    """PyTorch: torch.from_dlpack and Tensor.__dlpack__."""
    NAME = "torch"

    @staticmethod
    def version():
        """The framework's version."""
        import torch
        return torch.__version__

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        import torch
        try:
            return torch.from_numpy(a)
        except (TypeError, ValueError, RuntimeError) as e:
            _refuse(e)

    @staticmethod
    def from_dlpack(x, **kwargs):
        """The framework's consumer."""
        import torch
        return torch.from_dlpack(x, **kwargs)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        import torch
        y = y.detach().cpu().resolve_conj()
        widths = {torch.bfloat16: torch.int16}
        for name in ("float8_e4m3fn", "float8_e5m2"):
            if hasattr(torch, name):
                widths[getattr(torch, name)] = torch.uint8
        if y.dtype in widths:
            y = y.view(widths[y.dtype]) if y.dim() else y.reshape(1).view(widths[y.dtype])[0]
        return y.numpy()

    @staticmethod
    def cuda_array(a):
        """A CUDA array of a's values (None without CUDA)."""
        import torch
        return torch.from_numpy(a).cuda() if torch.cuda.is_available() else None

    @staticmethod
    def current_stream(device):
        """The framework's current CUDA stream handle on `device`."""
        import torch
        return torch.cuda.current_stream(device[1]).cuda_stream

    @staticmethod
    def stream_context(device):
        """(a context making a new stream current, that stream's handle)."""
        import torch
        s = torch.cuda.Stream(device[1])
        return torch.cuda.stream(s), s.cuda_stream

    @staticmethod
    def slow_update(xg):
        """x + 1 queued behind a long kernel on the current stream (P9's ordering)."""
        import torch
        # On a stream of its own: work on the legacy default stream would be waited for by
        # any blocking stream, hiding a producer that does not order it.
        torch.cuda.set_stream(torch.cuda.Stream(xg.device))
        torch.cuda._sleep(200_000_000)  # about 0.1 s of GPU clock
        return xg.add_(1)


class Jax:
    """JAX: jax.numpy.from_dlpack and Array.__dlpack__."""
    NAME = "jax"

    @staticmethod
    def version():
        """The framework's version."""
        import jax
        return jax.__version__

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        import jax.numpy as jnp
        try:
            x = jnp.asarray(a)
        except (TypeError, ValueError) as e:
            _refuse(e)
        if x.dtype != a.dtype:  # 64-bit types without jax_enable_x64
            raise NotImplementedError("JAX holds %s as %s" % (a.dtype, x.dtype))
        return x

    # JAX arrays are immutable: every one is read-only memory.
    read_only = from_numpy

    @staticmethod
    def from_dlpack(x, **kwargs):
        """The framework's consumer."""
        import jax.numpy as jnp
        return jnp.from_dlpack(x, **kwargs)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        import numpy
        return numpy.asarray(y)

    @staticmethod
    def cuda_array(a):
        """A CUDA array of a's values (None without CUDA)."""
        import jax
        gpus = [d for d in jax.devices() if d.platform == "gpu"]
        return jax.device_put(a, gpus[0]) if gpus else None


class CuPy:
    """CuPy (GPU arrays): cupy.from_dlpack and ndarray.__dlpack__."""
    NAME = "cupy"

    @staticmethod
    def version():
        """The framework's version."""
        import cupy
        return cupy.__version__

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        import cupy
        try:
            x = cupy.asarray(a)
        except (TypeError, ValueError) as e:
            _refuse(e)
        if x.dtype != a.dtype:  # byte order converted on the way to the GPU
            raise NotImplementedError("CuPy holds %s as %s" % (a.dtype, x.dtype))
        return x

    @staticmethod
    def from_dlpack(x, **kwargs):
        """The framework's consumer."""
        import cupy
        return cupy.from_dlpack(x, **kwargs)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        import cupy
        return cupy.asnumpy(y)

    @staticmethod
    def cuda_array(a):
        """A CUDA array of a's values (None without CUDA)."""
        import cupy
        return cupy.asarray(a)

    @staticmethod
    def current_stream(device):
        """The framework's current CUDA stream handle on `device`."""
        import cupy
        return cupy.cuda.get_current_stream(device[1]).ptr

    @staticmethod
    def stream_context(device):
        """(a context making a new stream current, that stream's handle)."""
        import cupy
        s = cupy.cuda.Stream(non_blocking=True)
        return s, s.ptr

    @staticmethod
    def slow_update(xg):
        """x + 1 queued behind a long kernel on the current stream (P9's ordering)."""
        import cupy
        cupy.cuda.Stream(non_blocking=True).use()  # see Torch.slow_update
        spin = cupy.RawKernel(r"""extern "C" __global__ void spin(long long n) {
            long long t = clock64(); while (clock64() - t < n) {} }""", "spin")
        spin((1,), (1,), (cupy.int64(200_000_000),))
        return xg + 1


class TvmFfi:
    """Apache TVM FFI: tvm_ffi.from_dlpack and Tensor.__dlpack__."""
    NAME = "tvm_ffi"

    @staticmethod
    def version():
        """The framework's version."""
        import tvm_ffi
        return getattr(tvm_ffi, "__version__", "?")

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        import tvm_ffi
        try:
            return tvm_ffi.from_dlpack(a)
        except Exception as e:  # noqa: BLE001 - any refusal of numpy's export: skipped
            _refuse(e)

    @staticmethod
    def from_dlpack(x, **kwargs):
        """The framework's consumer."""
        import tvm_ffi
        return tvm_ffi.from_dlpack(x, **kwargs)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        return host_copy(y)


class Dlpackpp(DlpackppCuda):
    """dlpackpp itself: dlpackpp.Tensor (to_pyobject) and try_from_dlpack, via the probe; its
    GPU hooks (_target_cuda.py) hand over CUDA tensors with their producer's stream."""
    NAME = "dlpackpp"

    @staticmethod
    def version():
        """The framework's version."""
        from . import kit_version
        return kit_version()

    @staticmethod
    def _tensor(a, read_only):
        from ._build import probe
        triple = dtype_of(a.dtype)
        if triple is None:
            raise NotImplementedError("dlpackpp.Tensor is made here from DLPack dtypes only")
        return probe().dlpackpp_tensor(a, a.__array_interface__["data"][0], a.shape,
                                       element_strides(a), triple, read_only)

    @staticmethod
    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        return Dlpackpp._tensor(a, False)

    @staticmethod
    def read_only(a):
        """A read-only framework array of a's values."""
        return Dlpackpp._tensor(a, True)

    @staticmethod
    def from_dlpack(x, copy=None, device=None, stream=None):
        """The framework's consumer."""
        from ._build import probe
        return probe().dlpackpp_import(x, copy=copy, device=device, stream=stream)

    @staticmethod
    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        return host_copy(y)


_CLASSES = {"numpy": NumPy, "torch": Torch, "jax": Jax, "cupy": CuPy, "tvm_ffi": TvmFfi,
            "dlpackpp": Dlpackpp}
_MODULES = {"numpy": "numpy", "torch": "torch", "jax": "jax", "cupy": "cupy",
            "tvm_ffi": "tvm_ffi", "dlpackpp": "numpy"}


def importable(spec):
    """None when a built-in target's framework imports (or spec is an adapter file), else why
    it does not: an installed framework that fails to import is skipped, not failed."""
    if spec not in _MODULES:
        return None
    try:
        importlib.import_module(_MODULES[spec])
    except Exception as e:  # noqa: BLE001 - any import failure, reported as the reason
        return "%s does not import here: %s: %s" % (_MODULES[spec], type(e).__name__, e)
    return None


def present(name):
    """Whether a built-in target's framework is installed (found, not yet imported)."""
    return importlib.util.find_spec(_MODULES[name]) is not None


def is_builtin(spec):
    """Whether a command-line target names a built-in adapter (else it is a file)."""
    return spec in _CLASSES


def check_spec(spec):
    """Raises UsageError for a target that is neither built-in nor an existing .py file
    (before any child starts)."""
    if spec in _CLASSES:
        return
    if not spec.endswith(".py"):
        raise UsageError("unknown target %r (built-in: %s; or an adapter file ending in .py)"
                         % (spec, ", ".join(BUILTIN)))
    if not os.path.isfile(spec):
        raise UsageError("adapter file %s does not exist" % spec)


def load(spec):
    """The adapter for a target given on the command line: a built-in name or a .py path.
    An adapter file is imported with its own folder first on sys.path, as `python FILE`
    would, so that it can import its neighbours. Only children call this for a file: an
    adapter that crashes or hangs on import must not take the kit with it."""
    check_spec(spec)
    if spec in _CLASSES:
        return _CLASSES[spec]
    path = os.path.abspath(spec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = "dlpackpp_conformance_adapter_%x" % (hash(path) & 0xFFFFFFFF)
    try:
        module_spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    except BaseException as e:  # noqa: BLE001 - SystemExit too: any failure is the user's
        raise UsageError("adapter file %s cannot be loaded: %s: %s"
                         % (spec, type(e).__name__, e)) from None
    if not isinstance(getattr(module, "NAME", None), str):
        raise UsageError("adapter file %s has no NAME (a string)" % spec)
    if hasattr(module, "from_dlpack") and not hasattr(module, "to_numpy"):
        raise UsageError("adapter file %s has from_dlpack but no to_numpy" % spec)
    return module


def sides(adapter):
    """What the runner needs to know of an adapter before its checks run: its NAME and
    which sides it gives (a producer-only adapter adds no consumer column to the matrix)."""
    return {"name": adapter.NAME, "producer": hasattr(adapter, "from_numpy"),
            "consumer": hasattr(adapter, "from_dlpack")}


def version_of(adapter):
    """The framework's version, as the adapter or the framework says."""
    v = getattr(adapter, "VERSION", None)
    if v is None and callable(getattr(adapter, "version", None)):
        try:
            v = adapter.version()
        except Exception:  # noqa: BLE001 - a version we cannot read is not a failure
            v = None
    return str(v) if v is not None else ""
