# SPDX-License-Identifier: Apache-2.0
"""A reference framework for the conformance kit's self-proof, built on the kit's probe: a
producer (RefArray: __dlpack__, __dlpack_device__, an exchange table), a zero-copy consumer
(from_dlpack) and to_numpy, written to the spec. adapter(None) is the conforming adapter;
adapter(ID) breaks exactly the rule check ID tests (see FAULTS), so the kit must report
that check as failed.
"""

import ctypes

import numpy as np

from dlpackpp.conformance import host_copy, probe

READ_ONLY, IS_COPIED = 1, 2
CPU = (1, 0)
# numpy dtype name <-> DLPack (code, bits, lanes), for the dtypes NumPy itself has.
_CODES = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
_HOST = (1, 3, 13)
_KEEP_NAME = b"dltensor_versioned"  # a name a broken consumer restores


_NAMES = {}  # a capsule keeps the pointer to its name: each name lives for the process


def set_name(capsule, name):
    """Renames a capsule (what a consumer does to one it takes)."""
    api = ctypes.pythonapi
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_SetName(capsule, _NAMES.setdefault(name, ctypes.c_char_p(name)))


def take_quietly(capsule, name):
    """Takes the capsule's tensor as a consumer that holds the only reference may: the
    destructor cleared, the name left as it was (nanobind does so, on purpose)."""
    owned = probe().consume(capsule)
    set_name(capsule, name.encode())
    api = ctypes.pythonapi
    api.PyCapsule_SetDestructor.argtypes = [ctypes.py_object, ctypes.c_void_p]
    api.PyCapsule_SetDestructor(capsule, None)
    return owned


def _mystery_capsule():
    """A capsule under a name no DLPack reader knows, over an address nothing may read."""
    api = ctypes.pythonapi
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    return api.PyCapsule_New(0x10, _NAMES.setdefault(b"dltensor_v9", ctypes.c_char_p(
        b"dltensor_v9")), None)


def read_as_major_1(capsule):
    """The fields of a versioned capsule read as if its major were 1 (a consumer that ignores
    the version): the version field is overwritten in place."""
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    ctypes.c_uint32.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")).value = 1
    return probe().read(capsule)

# What each broken adapter does wrong (the check it must fail).
FAULTS = {
    "P1": "exports 'dltensor_versioned' when no max_version was asked",
    "P2": "accepts unknown keywords and any max_version",
    "P3": "writes strides in bytes, not elements",
    "P4": "puts byte_offset one element past the first element",
    "P5": "exports bool as uint8 (kDLUInt)",
    "P6": "exports read-only memory without READ_ONLY",
    "P7": "ignores copy=True",
    "P8": "ignores dl_device",
    "P9": "accepts a non-integer stream",
    "P10": "__dlpack_device__ disagrees with the capsule's device",
    "L1": "an unconsumed capsule's destructor never calls the deleter",
    "L2": "the capsule destructor calls the deleter even after a consumer renamed it",
    "L3": "the consumer imports a capsule that was already consumed",
    "L4": "the capsule destructor clears a pending exception",
    "L5": "the producer reuses its memory when its object dies, before the deleter runs",
    "C1": "the consumer ignores the version: it validates the fields as 1.x and imports a "
          "major-2 capsule whose fields read as a valid tensor",
    "C2": "the consumer never passes max_version",
    "C3": "the consumer ignores strides (reads row-major)",
    "C4": "the consumer ignores byte_offset",
    "C5": "the consumer refuses NULL data for size 0",
    "C6": "the consumer refuses NULL strides in a legacy capsule",
    "C7": "the consumer refuses READ_ONLY with ValueError",
    "C8": "the consumer drops a refused capsule with its error already set (numpy#32697: a "
          "destructor that runs Python never calls the deleter)",
    "C9": "the consumer refuses a NULL manager_ctx",
    "C10": "the consumer imports kDLBool as uint8",
    "C11": "the consumer ignores copy=True",
    "X1": "the exchange table's capsule has another name",
    "X2": "the exchange table says major 2, with no older table",
    "X3": "the exchange table's import shrinks the first extent",
    "X4": "the exchange table's current_work_stream fails for CPU",
    "X5": "the allocator calls SetError twice for one failure",
    "M1": "to_numpy returns other values than it imported",
}
_TABLE_FAULTS = {"X2": 1, "X3": 3, "X4": 4, "X5": 5}

# Conforming variants: what real frameworks do that the spec allows, which the kit must pass
# (each was a false failure once).
VARIANTS = {
    "legacy-refusal": "the producer refuses max_version=None with BufferError (array API 2025)",
    "clears-destructor": "the consumer clears the destructor of a capsule it got from "
                         "__dlpack__ instead of renaming it (it holds the only reference)",
    "adapter-dtype": "from_numpy stores bool as uint8 (the adapter's choice, as pyarrow's)",
    "runtime-refusal": "__dlpack__(copy=True) is refused with RuntimeError, not BufferError",
}
# More faults, each for a fix of its own (fault name: the check that must fail, at which level,
# and what the report's detail must say: a wrong capsule name is never read, so never crashes).
EXTRA_FAULTS = {
    "wrong-name": ("P1", "MUST", "a capsule named 'dltensor_v9'",
                   "__dlpack__ returns a capsule named 'dltensor_v9' over a pointer that is no "
                   "tensor (reading it would crash)"),
    "narrowing": ("C10", "MUST", "int64 came back 4 bytes wide",
                  "the consumer imports int64 as int32 and float64 as float32 (silently)"),
    "hands-back": ("C2", "SHOULD", "without max_version",
                   "the consumer never passes max_version and returns the object it was "
                   "given (as nanobind does), so to_numpy asks that producer again"),
}
# The variants that break a SHOULD, not a MUST: that check fails at SHOULD, the exit status
# stays 0 (the level comes from the rule broken, not from the exception class seen).
SHOULD_ONLY = {"runtime-refusal": "P7"}


# NumPy's own types only: ml_dtypes registers some of its types (float8_e5m2) with kind 'f'.
_NUMPY_NAMES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128"}


def dtype_of(dtype):
    """The DLPack triple of a NumPy dtype (None where it has none here)."""
    if dtype.name not in _NUMPY_NAMES or not dtype.isnative:
        return None
    return (_CODES[dtype.kind], dtype.itemsize * 8, 1)


def _numpy_dtype(triple):
    code, bits, lanes = triple
    kinds = {v: k for k, v in _CODES.items()}
    if lanes != 1 or code not in kinds:
        return None
    return np.dtype("%s%d" % (kinds[code], bits // 8)) if code != 6 else np.dtype(bool)


def adapter(fault=None):
    """The adapter's names (NAME, from_numpy, read_only, from_dlpack, to_numpy) as a dict."""
    p = probe()

    class RefArray:
        """An array over numpy memory; `keep` holds what keeps imported memory alive."""

        def __init__(self, a, read_only=False, keep=None):
            self.a, self.read_only, self.keep = a, read_only, keep

        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None,
                       **unknown):
            if fault != "P2":
                if unknown:
                    raise TypeError("unexpected keyword %s" % sorted(unknown)[0])
                if max_version is not None and not (
                        isinstance(max_version, tuple) and len(max_version) == 2
                        and all(isinstance(v, int) for v in max_version)):
                    raise TypeError("max_version must be a tuple of two ints")
            if fault != "P9" and stream is not None and not isinstance(stream, int):
                raise TypeError("stream must be an int or None")
            if fault != "P8" and dl_device is not None and tuple(dl_device) != CPU:
                raise BufferError("RefArray lives on the CPU only")
            if fault == "wrong-name":
                return _mystery_capsule()
            if max_version is None and fault == "legacy-refusal":
                raise BufferError("RefArray exports versioned capsules only")
            if copy and fault == "runtime-refusal":
                raise RuntimeError("RefArray cannot copy on export")
            versioned = max_version is not None and max_version[0] >= 1
            if fault == "P1":
                versioned = True
            a, flags = self.a, 0
            if copy and fault != "P7":
                a, flags = np.array(a, order="C", copy=True), IS_COPIED
            if self.read_only and not flags:
                if not versioned:
                    raise BufferError("read-only memory cannot be exported as a legacy capsule")
                if fault != "P6":
                    flags |= READ_ONLY
            triple = dtype_of(a.dtype)
            if triple is None:
                raise BufferError("no DLPack dtype for %s" % a.dtype)
            if fault == "P5" and triple[0] == 6:
                triple = (1, 8, 1)
            strides = tuple(s // a.itemsize for s in a.strides)
            if fault == "P3":
                strides = tuple(a.strides)
            data, offset = a.__array_interface__["data"][0], 0
            if fault == "P4" and a.size:
                data, offset = data - a.itemsize, 2 * a.itemsize
            owner = None if fault == "L5" else a
            destructor = {"L1": 1, "L2": 3, "L4": 4}.get(fault, 0)
            return p.make_capsule(owner, data, a.shape, strides, offset, triple, CPU,
                                  versioned=versioned, flags=flags, destructor=destructor)

        def __dlpack_device__(self):
            return (1, 7) if fault == "P10" else CPU

        def __del__(self):
            if fault == "L5" and self.a.flags.writeable and self.a.size:
                self.a[...] = 0  # the memory goes back to the producer's pool

    if fault == "X1":
        RefArray.__dlpack_c_exchange_api__ = p.kit_table(0, False, "dlpack_exchange_api_v0")
    else:
        RefArray.__dlpack_c_exchange_api__ = p.kit_table(_TABLE_FAULTS.get(fault, 0))

    def wrap(owned, f, writable=True):
        """A RefArray over the memory an owned kit capsule points at (no copy)."""
        dtype = _numpy_dtype(f["dtype"])
        shape = tuple(f["shape"] or ())
        if fault == "C10" and f["dtype"][0] == 6:
            dtype = np.dtype(np.uint8)
        item = dtype.itemsize
        strides = f["strides"]
        if strides is None or fault == "C3":
            strides, n = [], 1
            for extent in reversed(shape):
                strides.insert(0, n)
                n *= extent
        first = f["data"] + (0 if fault == "C4" else f["byte_offset"])
        size = int(np.prod(shape)) if shape else 1
        if size == 0:
            out = np.empty(shape, dtype)
        else:
            low = high = 0
            for n, s in zip(shape, strides):
                low, high = (low + (n - 1) * s, high) if s < 0 else (low, high + (n - 1) * s)
            buf = (ctypes.c_char * ((high - low + 1) * item)).from_address(first + low * item)
            buf.owned = owned
            out = np.ndarray(shape, dtype, buffer=buf, offset=-low * item,
                             strides=tuple(s * item for s in strides))
        read_only = bool(f.get("flags", 0) & READ_ONLY)
        if read_only:
            out.flags.writeable = False
        return RefArray(out, read_only=read_only, keep=owned)

    def from_owned(owned):
        """A RefArray over what the exchange table's to_py_object was given."""
        return wrap(owned, p.read(owned))

    p.set_table_factory(from_owned)

    def refuse(box, why):
        """Refuses the capsule in box[0] (the caller's only reference) with BufferError."""
        if fault == "C8":
            p.drop_with_pending(box)  # dropped while the error is set: numpy#32697
            raise BufferError(why)
        owned = p.consume(box.pop())
        del owned  # the deleter runs now: a refusal still releases what it took
        raise BufferError(why)

    def export(x, copy, device):
        """The capsule of x: x itself where it is one (a capsule handed in), else
        x.__dlpack__ with the keywords the request needs."""
        if type(x).__name__ == "PyCapsule":
            return x
        kwargs = {} if fault in ("C2", "hands-back") else {"max_version": (1, 3)}
        if copy is not None and fault != "C11":
            kwargs["copy"] = copy
        if device is not None:
            kwargs["dl_device"] = device
        try:
            return x.__dlpack__(**kwargs)
        except TypeError:
            if "copy" in kwargs or "dl_device" in kwargs:
                raise BufferError("the producer predates copy= and dl_device=") from None
            return x.__dlpack__()

    def from_dlpack(x, copy=None, device=None):
        """The framework's consumer."""
        box = [export(x, copy, device)]
        handed = x if fault == "hands-back" else box[0] is x  # the capsule itself was given
        del x
        f = p.read(box[0])
        if fault == "L3" and f["name"].startswith("used_"):
            set_name(box[0], _KEEP_NAME)
            f = p.read(box[0])
        if f["name"].startswith("used_"):
            raise BufferError("the capsule was already consumed")
        if f["versioned"] and f["version"][0] != 1:
            if fault != "C1":
                refuse(box, "major version %d is not 1" % f["version"][0])
            f = read_as_major_1(box[0])  # the fault: the version is ignored
            if f["ndim"] < 0 or _numpy_dtype(f["dtype"]) is None:
                refuse(box, "the fields do not describe a tensor")
        if fault == "C9" and not f["manager_ctx"]:
            raise BufferError("NULL manager_ctx")
        if fault == "C5" and not f["data"]:
            raise BufferError("NULL data")
        if fault == "C6" and f["strides"] is None and f["ndim"]:
            raise BufferError("NULL strides")
        if fault == "C7" and f["flags"] & READ_ONLY:
            raise ValueError("read-only tensors are not supported")
        if tuple(f["device"])[0] not in _HOST:
            refuse(box, "device %s is not host memory" % (tuple(f["device"]),))
        if _numpy_dtype(f["dtype"]) is None:
            refuse(box, "dtype %s has no numpy dtype here" % (tuple(f["dtype"]),))
        if fault == "clears-destructor" and not handed:
            owned = take_quietly(box[0], f["name"])
        else:
            owned = p.consume(box[0])
        result = wrap(owned, f)
        if copy and not f.get("flags", 0) & IS_COPIED and fault != "C11":
            result = RefArray(result.a.copy())  # a producer that could not copy: copy here
        return handed if fault == "hands-back" else result

    def from_numpy(a):
        """A framework array with a's dtype, shape and values (or NotImplementedError)."""
        if dtype_of(a.dtype) is None and a.dtype.kind in "fV":  # ml_dtypes' types
            raise NotImplementedError("no %s here" % a.dtype)
        if fault == "adapter-dtype" and a.dtype == bool:
            a = a.astype(np.uint8)
        return RefArray(a)

    def to_numpy(y):
        """The values of what from_dlpack returned, as numpy."""
        if not isinstance(y, RefArray):  # the producer handed back (hands-back)
            return host_copy(y)
        if fault == "narrowing" and y.a.dtype.itemsize == 8 and y.a.dtype.kind in "if":
            return y.a.astype(y.a.dtype.kind + "4")
        return y.a + 1 if fault == "M1" and y.a.dtype.kind in "iuf" else y.a

    name = "reference" if fault is None else (fault if fault in VARIANTS else "broken-" + fault)
    return {"NAME": name, "VERSION": "1",
            "from_numpy": from_numpy, "read_only": lambda a: RefArray(a, read_only=True),
            "from_dlpack": from_dlpack, "to_numpy": to_numpy}

