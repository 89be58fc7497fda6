# SPDX-License-Identifier: Apache-2.0
"""What every check uses: findings, the arrays the kit makes and a framework's made from
them, and reading a framework's export back through the probe (the kit's own producer is
in _producer.py)."""

import gc

from ._build import probe
from ._channel import progress  # noqa: F401 (the checks' one import for it)
from ._dtypes import address
from ._host import HOST, IS_COPIED, READ_ONLY, capsule_of, host_copy, host_values  # noqa: F401

class Skip(Exception):
    """The check does not apply to this target (the message says why)."""


class Finding:
    """One rule applied to one case: its level, where the spec says it, and what was seen."""

    def __init__(self, ok, level, rule, text):
        self.ok, self.level, self.rule, self.text = bool(ok), level, rule, text


class Findings(list):
    """The findings of one check, in the order they were made."""

    def add(self, ok, level, rule, text):
        """Records one finding; returns `ok`."""
        self.append(Finding(ok, level, rule, text))
        return ok


def collect():
    # Deleters of objects caught in cycles run on collection; twice catches finalizer chains.
    """Runs the garbage collector (twice: finalizers may free more)."""
    gc.collect()
    gc.collect()


def layouts(np):
    """The fixed set of layouts (name, array) every layout check runs: each a view of a larger
    float32 buffer with distinct values, so a wrong stride or offset reads a wrong value."""
    base = np.arange(1, 241, dtype=np.float32).reshape(12, 20)
    odd = np.lib.stride_tricks.as_strided(base[3:4, 5:6], shape=(1, 1), strides=(7 * 4, 13 * 4))
    return [
        ("C order", base[:3, :4].copy()),
        ("F order", np.asfortranarray(base[:3, :4])),
        ("sliced", base[1:7:2, 2:11:3]),
        ("offset row", base[2, 5:9]),
        ("negative step", base[::-3, 4]),
        ("negative 2-d", base[5:1:-1, 8:2:-2]),
        ("transposed", base[:3, :5].T),
        ("size-1 odd strides", odd),
        ("size-0 first", base[:0, :4]),
        ("size-0 last", base[:3, :0]),
        ("size-0 middle", np.zeros((2, 0, 3), dtype=np.float32)),
        ("0-d", np.array(7.5, dtype=np.float32)),
    ]


def dtype_sources(np):
    """(name, array) for every dtype the kit can make with numpy (and ml_dtypes when present)."""
    out = []
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128"):
        a = (np.arange(6) % 2 == 1) if name == "bool" else np.arange(1, 7).astype(name)
        out.append((name, a.reshape(2, 3)))
    try:
        import ml_dtypes
        for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            out.append((name, np.arange(1, 7).astype(getattr(ml_dtypes, name)).reshape(2, 3)))
    except ImportError:
        pass
    return out


def compact_bytes(a):
    """A numpy array's elements' bytes, row-major."""
    import numpy as np
    return np.ascontiguousarray(a).tobytes()


def span(a):
    """[low, high) byte addresses a numpy array's elements occupy."""
    low = high = address(a)
    if a.size:
        for n, s in zip(a.shape, a.strides):
            if s < 0:
                low += (n - 1) * s
            else:
                high += (n - 1) * s
        high += a.itemsize
    return low, high


class BadCapsule(Exception):
    """__dlpack__ returned something that is not a tensor capsule (not a capsule, or a capsule
    under another name): nothing in it is read."""


NAME_RULE = ("Python spec: __dlpack__ returns a PyCapsule named 'dltensor' or "
             "'dltensor_versioned'")


def export(x, **kwargs):
    """x.__dlpack__(**kwargs) and the probe's reading of the capsule: (capsule, fields). The
    name is checked before anything is read: BadCapsule where it is not a tensor's."""
    cap = x.__dlpack__(**kwargs)
    state = probe().capsule_state(cap)
    if state is None or state[0] not in ("dltensor", "dltensor_versioned"):
        raise BadCapsule("__dlpack__(%s) returned %s" % (
            ", ".join("%s=%r" % kv for kv in kwargs.items()),
            "a %s, not a capsule" % type(cap).__name__ if state is None else
            "a capsule named %r" % state[0]))
    return cap, probe().read(cap)


def first_address(fields):
    """The address of element 0 of the fields read from a capsule."""
    return fields["data"] + fields["byte_offset"]


def result_address(y, fallback):
    """Where a consumer's result keeps its first element: read through its own __dlpack__
    where it has one (so an adapter's to_numpy that copies cannot hide a copy), else the
    address of `fallback` (to_numpy's array)."""
    try:
        cap = capsule_of(y)
    except Exception:  # noqa: BLE001 - no __dlpack__ or it refuses: to_numpy's array
        return address(fallback)
    return first_address(probe().read(cap))


def sample(flat=False):
    """The kit's usual source, fresh each call: float32 0..5 as 2 x 3 (or flat, 6)."""
    import numpy as np
    a = np.arange(6, dtype=np.float32)
    return a if flat else a.reshape(2, 3)


def make(target, a, label=None):
    """target.from_numpy(a), or None where the framework lacks the dtype or layout; `label`
    names the case to the runner first."""
    if label is not None:
        progress(label)
    if not hasattr(target, "from_numpy"):
        raise Skip("the adapter gives no producer (from_numpy)")
    try:
        return target.from_numpy(a)
    except NotImplementedError:
        return None


def adapter_changed(target, a, x):
    """Why x, what from_numpy made of `a`, is not of a's dtype as the adapter's own to_numpy
    reads it back (an adapter's choice, such as bool stored as uint8, is not the framework's
    export defect); None where it is, or where the adapter cannot say (no to_numpy)."""
    import numpy as np
    to_numpy = getattr(target, "to_numpy", None)
    if to_numpy is None:
        return None
    try:
        got = np.asarray(to_numpy(x)).dtype
    except Exception:  # noqa: BLE001 - the adapter cannot say: the export is judged alone
        return None
    # bfloat16 and fp8 come back as integers of their width where NumPy lacks the type.
    raw = got.kind in "ui" and got.itemsize == a.itemsize and a.dtype.kind not in "biu"
    if got == a.dtype or raw:
        return None
    return "from_numpy made %s of %s (the adapter's change, not the framework's export)" % (
        got, a.dtype)


def make_float32(target, a):
    """make(target, a) for a float32 source, which every producer is expected to hold: Skip
    where it cannot."""
    x = make(target, a)
    if x is None:
        raise Skip("from_numpy refused float32")
    return x
