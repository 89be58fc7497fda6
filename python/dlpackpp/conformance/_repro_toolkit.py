# SPDX-License-Identifier: Apache-2.0
"""DLPack through ctypes and the standard library alone: what a --repro script embeds (its
source is copied into each script, so that the script needs neither dlpackpp nor its probe).
read() gives a capsule's fields, name first; gather() the elements' bytes through shape,
strides and byte_offset; Producer exports a NumPy array's memory with chosen fields and
counts its deleter."""

import ctypes

c_int64_p = ctypes.POINTER(ctypes.c_int64)


class DLDevice(ctypes.Structure):
    """dlpack.h DLDevice."""
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    """dlpack.h DLDataType."""
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """dlpack.h DLTensor."""
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", c_int64_p), ("strides", c_int64_p),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    """dlpack.h DLManagedTensor (the legacy 'dltensor' capsule)."""
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    """dlpack.h DLManagedTensorVersioned (the 'dltensor_versioned' capsule)."""
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_NAMES = {True: ctypes.c_char_p(b"dltensor_versioned"), False: ctypes.c_char_p(b"dltensor")}
# What a capsule's struct, arrays and callbacks need: kept for the process, since a capsule
# may outlive its Producer (a consumer keeps it, or it dies at exit after the Producer).
_KEPT = []


def read(capsule):
    """The capsule's fields; only its name where the name is not a tensor's, and only the
    version where the major is not 1 (nothing past it has a known layout)."""
    name = _get_name(id(capsule)).decode()
    if name not in ("dltensor", "dltensor_versioned"):
        return {"name": name}
    address = _get_pointer(capsule, name.encode())
    out = {"name": name, "flags": 0}
    if name == "dltensor_versioned":
        m = DLManagedTensorVersioned.from_address(address)
        out.update(version=(m.major, m.minor), flags=m.flags)
        if m.major != 1:
            return out
        t = m.dl_tensor
    else:
        t = DLManagedTensor.from_address(address).dl_tensor
    n = t.ndim
    out.update(ndim=n, data=t.data or 0, byte_offset=t.byte_offset,
               shape=[t.shape[i] for i in range(n)] if t.shape else None,
               strides=[t.strides[i] for i in range(n)] if t.strides else None,
               dtype=(t.dtype.code, t.dtype.bits, t.dtype.lanes),
               device=(t.device.device_type, t.device.device_id))
    return out


def gather(f):
    """The elements' bytes, row-major, of host memory described by fields f."""
    item = f["dtype"][1] // 8 * f["dtype"][2]
    shape = f["shape"] or []
    strides, n = [], 1
    for extent in reversed(shape):
        strides.insert(0, n)
        n *= extent
    strides = f["strides"] or strides
    out = []
    for k in range(n if shape else 1):
        offset, rest = 0, k
        for extent, stride in zip(reversed(shape), reversed(strides)):
            offset += (rest % extent) * stride
            rest //= extent
        out.append(ctypes.string_at(f["data"] + f["byte_offset"] + offset * item, item))
    return b"".join(out)


class Producer:
    """Exports numpy array `a`'s memory through __dlpack__ with the fields given (dtype,
    version, byte_offset from `data`, device, flags; `poison` fills what follows the version
    with garbage), a fresh capsule per call; `deleted` counts its deleter's calls."""

    def __init__(self, a, dtype=None, version=(1, 3), data=None, byte_offset=0, shape=None,
                 strides=None, device=(1, 0), flags=0, poison=False, legacy_only=False,
                 null_deleter=False, null_ctx=False, null_strides=False):
        codes = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
        self.a, self.version, self.device, self.flags = a, version, device, flags
        self.dtype = dtype or (codes[a.dtype.kind], a.itemsize * 8, 1)
        self.data = a.__array_interface__["data"][0] if data is None else data
        self.byte_offset, self.poison = byte_offset, poison
        self.shape = list(a.shape) if shape is None else shape
        self.strides = [s // a.itemsize for s in a.strides] if strides is None else strides
        self.legacy_only, self.null_deleter, self.null_ctx = legacy_only, null_deleter, null_ctx
        self.null_strides = null_strides
        self.deleted, self.calls = 0, []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append({"max_version": max_version, "copy": copy, "dl_device": dl_device})
        if self.legacy_only and (max_version, dl_device, copy) != (None, None, None):
            raise TypeError("__dlpack__() got an unexpected keyword argument (a legacy producer)")
        versioned = max_version is not None and max_version[0] >= 1
        m = DLManagedTensorVersioned() if versioned else DLManagedTensor()
        t = m.dl_tensor
        shape = (ctypes.c_int64 * max(1, len(self.shape)))(*self.shape)
        strides = (ctypes.c_int64 * max(1, len(self.strides)))(*self.strides)
        t.data, t.ndim, t.byte_offset = self.data, len(self.shape), self.byte_offset
        t.device.device_type, t.device.device_id = self.device
        t.dtype.code, t.dtype.bits, t.dtype.lanes = self.dtype
        t.shape = ctypes.cast(shape, c_int64_p) if self.shape else None
        t.strides = ctypes.cast(strides, c_int64_p) if self.shape and not self.null_strides \
            else None
        if self.poison:
            t.data, t.ndim, t.byte_offset, t.dtype.code = 0x10, -7, 2 ** 64 - 1, 0xEE
            t.shape, t.strides = ctypes.cast(0x18, c_int64_p), ctypes.cast(0x20, c_int64_p)
        if versioned:
            m.major, m.minor, m.flags = self.version[0], self.version[1], self.flags
        deleter = _DELETER(self._count)
        m.deleter = None if self.null_deleter else ctypes.cast(deleter, ctypes.c_void_p)
        m.manager_ctx = None if self.null_ctx else ctypes.addressof(m)
        destructor = _DELETER(lambda capsule: self._destroy(capsule, m, deleter))
        _KEPT.extend([m, shape, strides, deleter, destructor])
        return _new_capsule(ctypes.addressof(m), _NAMES[versioned],
                            ctypes.cast(destructor, ctypes.c_void_p))

    def _count(self, managed):
        self.deleted += 1

    def _destroy(self, capsule, m, deleter):
        never_consumed = _get_name(capsule) in (b"dltensor", b"dltensor_versioned")
        if never_consumed and not self.null_deleter:
            deleter(ctypes.addressof(m))


def host_copy(y):
    """A numpy array of the values y exports through __dlpack__ (read by read() and gather():
    no consumer under test is trusted with them)."""
    import numpy as np
    try:
        f = read(y.__dlpack__(max_version=(1, 3)))
    except TypeError:
        f = read(y.__dlpack__())
    kinds = {6: "b", 0: "i", 1: "u", 2: "f", 5: "c"}
    code, bits, lanes = f["dtype"]
    dtype = np.dtype("%s%d" % (kinds[code], bits // 8)) if code in kinds and lanes == 1 else \
        np.dtype("u%d" % (bits * lanes // 8))
    return np.frombuffer(gather(f), dtype=dtype).reshape(f["shape"] or ())


def export(x):
    """x's capsule fields, versioned where its __dlpack__ takes max_version (or the legacy
    one where it refuses it with TypeError or BufferError, as the spec allows)."""
    try:
        return read(x.__dlpack__(max_version=(1, 3)))
    except TypeError:
        return read(x.__dlpack__())
