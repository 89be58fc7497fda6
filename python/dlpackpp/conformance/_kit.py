# SPDX-License-Identifier: Apache-2.0
"""What every check uses: findings, the kit's own producer (KitArray), the arrays it makes and
a framework's made from them, and reading a framework's export back through the probe."""

import gc

from ._build import probe
from ._targets import dtype_of, element_strides, numpy_dtype

READ_ONLY, IS_COPIED = 1, 2
CPU = (1, 0)


_progress = [None]


def progress(label):
    """Tells the runner which case of a check is running (named if the child dies in it)."""
    if _progress[0] is not None:
        _progress[0](label)


class Skip(Exception):
    """The check does not apply to this target (the message says why)."""


class Finding:
    """One rule applied to one case: its level, where the spec says it, and what was seen."""

    def __init__(self, ok, level, rule, text):
        self.ok, self.level, self.rule, self.text = bool(ok), level, rule, text


class Findings(list):
    def add(self, ok, level, rule, text):
        self.append(Finding(ok, level, rule, text))
        return ok


def collect():
    # Deleters of objects caught in cycles run on collection; twice catches finalizer chains.
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
    import numpy as np
    return np.ascontiguousarray(a).tobytes()


def address(a):
    return a.__array_interface__["data"][0]


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


HOST = (1, 3, 13)  # CPU, CUDA host, CUDA managed: memory this process can read


def host_values(capsule, fields=None):
    """The elements' bytes of a capsule in host-readable memory; None for device memory
    (reading a device pointer here would crash the child, not test the framework)."""
    p = probe()
    fields = p.read(capsule) if fields is None else fields
    if "device" not in fields:  # a versioned struct of another major: read up to its version
        raise ValueError("the capsule's tensor reads as DLPack %s.%s (freed, or of another "
                         "major): nothing past its version can be read"
                         % tuple(fields.get("version", ("?", "?"))))
    if tuple(fields["device"])[0] not in HOST:
        return None
    return p.gather(capsule)


def export(x, **kwargs):
    """x.__dlpack__(**kwargs) and the probe's reading of the capsule: (capsule, fields)."""
    cap = x.__dlpack__(**kwargs)
    return cap, probe().read(cap)


def capsule_of(y):
    """y's capsule, versioned where its __dlpack__ takes max_version (else the legacy one)."""
    try:
        return y.__dlpack__(max_version=(1, 3))
    except TypeError:
        return y.__dlpack__()


def first_address(fields):
    return fields["data"] + fields["byte_offset"]


def host_copy(y):
    """A numpy copy of any DLPack host array's values, read by the probe (what the kit uses
    where no framework's consumer should be trusted: dlpackpp's results, the matrix)."""
    import numpy as np
    cap = capsule_of(y)
    p = probe()
    fields = p.read(cap)
    owned = p.consume(cap)
    data = host_values(owned, fields)
    if data is None:
        raise BufferError("device %s: not host memory" % (tuple(fields["device"]),))
    dtype = numpy_dtype(fields["dtype"])
    out = np.frombuffer(data, dtype=dtype).reshape(fields["shape"] or ()).copy()
    out.flags.writeable = not fields.get("flags", 0) & READ_ONLY  # as the export says
    return out


def result_address(y, fallback):
    """Where a consumer's result keeps its first element: read through its own __dlpack__
    where it has one (so an adapter's to_numpy that copies cannot hide a copy), else the
    address of `fallback` (to_numpy's array)."""
    try:
        cap = capsule_of(y)
    except Exception:  # noqa: BLE001 - no __dlpack__ or it refuses: to_numpy's array
        return address(fallback)
    return first_address(probe().read(cap))


class KitArray:
    """A producer the kit controls field by field: it exports `a`'s memory (or `data`) with
    the given shape, strides, offset, dtype, device, flags and version, counts its deleter
    and records the keywords every __dlpack__ call received."""

    def __new__(cls, a, **kwargs):
        # Importers remember per type that a producer rejects max_version (the array API lets
        # them): a legacy producer is a type of its own, as it is in the field.
        if kwargs.get("legacy_only") and cls is KitArray:
            cls = LegacyKitArray
        return super().__new__(cls)

    def __init__(self, a, *, shape=None, strides="same", byte_offset=0, data=None, dtype=None,
                 device=CPU, version=(1, 3), flags=0, legacy_only=False, versioned=None,
                 same_capsule=False, **extra):
        p = probe()
        self.a = a
        self.shape = tuple(a.shape) if shape is None else shape
        self.strides = element_strides(a) if strides == "same" else strides
        self.byte_offset = byte_offset
        self.data = address(a) if data is None else data
        self.dtype = dtype_of(a.dtype) if dtype is None else dtype
        self.device, self.version, self.flags = device, version, flags
        self.legacy_only, self.versioned, self.same_capsule = legacy_only, versioned, same_capsule
        self.extra = extra
        self.counter = p.new_counter()
        self.calls = []
        self.made = 0  # capsules handed out: each must see its deleter run once
        self._capsule = None

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None, **unknown):
        self.calls.append({"stream": stream, "max_version": max_version, "dl_device": dl_device,
                           "copy": copy, "unknown": sorted(unknown)})
        if unknown:
            raise TypeError("unexpected keyword %s" % sorted(unknown)[0])
        if self.legacy_only and (max_version is not None or dl_device is not None
                                 or copy is not None):
            raise TypeError("__dlpack__() got an unexpected keyword argument (a legacy producer)")
        if self.same_capsule and self._capsule is not None:
            return self._capsule
        if dl_device is not None and tuple(dl_device) != tuple(self.device):
            raise BufferError("the kit's producer exports to its own device only")
        versioned = self.versioned
        if versioned is None:
            versioned = max_version is not None and max_version[0] >= 1 and not self.legacy_only
        fields = (self.a, self.data, self.shape, self.strides, self.byte_offset)
        flags = self.flags
        if copy:
            # A producer asked to copy gives new compact memory and says so (IS_COPIED).
            import numpy as np
            fresh = np.array(self.a, order="C", copy=True)
            fields = (fresh, address(fresh), self.shape, tuple(s // fresh.itemsize for s in
                                                              fresh.strides), 0)
            flags |= IS_COPIED
        cap = probe().make_capsule(
            *fields, self.dtype, self.device, versioned=versioned, version=self.version,
            flags=flags, counter=self.counter, **self.extra)
        if self.same_capsule:
            self._capsule = cap
        self.made += 1
        return cap

    def __dlpack_device__(self):
        return self.device

    def deleted(self):
        return probe().count(self.counter)

    def asked_versioned(self):
        return any(c["max_version"] is not None for c in self.calls)


class LegacyKitArray(KitArray):
    """A KitArray whose __dlpack__ predates max_version, dl_device and copy."""


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


def make_float32(target, a):
    """make(target, a) for a float32 source, which every producer is expected to hold: Skip
    where it cannot."""
    x = make(target, a)
    if x is None:
        raise Skip("from_numpy refused float32")
    return x
