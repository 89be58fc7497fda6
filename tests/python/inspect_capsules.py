# SPDX-License-Identifier: Apache-2.0
"""For the dlpackpp.inspect tests: DLPack capsules built field by field with ctypes (any name,
version, NULL strides or data, wild fields), a producer handing them out, and counters of the
deleter and the capsule destructor. Its own ctypes layouts, written from dlpack.h, so a wrong
layout in dlpackpp/_inspect.py is not mirrored here."""

import ctypes
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # the pip package, from source

I64P = ctypes.POINTER(ctypes.c_int64)


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", I64P), ("strides", I64P), ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class Legacy(ctypes.Structure):
    _fields_ = [("dl_tensor", Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]


class Versioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", Tensor)]


_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, DESTRUCTOR)(
    ("PyCapsule_New", ctypes.pythonapi))
# Called from the destructor, with the dying capsule as a plain pointer (no reference taken).
_name_of = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_NAMES = {}  # capsule names must outlive their capsules: one buffer per name, for good
_KEEP = []  # a Capsule (its struct, deleter and destructor) outlives every capsule over it

WILD = 0x10  # an address no process maps: a field read through it crashes the test


def _name(name):
    if name not in _NAMES:
        _NAMES[name] = ctypes.create_string_buffer(name)
    return _NAMES[name]


class Capsule:
    """One capsule over a struct this object keeps; counts `deleted` (the deleter) and
    `destroyed` (the capsule's destructor). The destructor runs the deleter while the capsule
    still has a tensor name, as a producer's does."""

    def __init__(self, shape=(2, 3), strides="row", data=0x1000, dtype=(2, 32, 1), device=(1, 0),
                 version=(1, 3), flags=0, byte_offset=0, name=None, ndim=None, deleter=True,
                 poison=False):
        self.deleted = self.destroyed = 0
        self.shape = None if shape is None else (ctypes.c_int64 * max(len(shape), 1))(*shape)
        if strides == "row" and shape is not None:
            strides, n = [], 1
            for extent in reversed(shape):
                strides.insert(0, n)
                n *= extent
        self.strides = None if strides in (None, "row") else (
            ctypes.c_int64 * max(len(strides), 1))(*strides)
        self.struct = Legacy() if version is None else Versioned(*version)
        t = self.struct.dl_tensor
        t.data, t.device_type, t.device_id = data, device[0], device[1]
        t.ndim = (len(shape) if shape is not None else 0) if ndim is None else ndim
        t.code, t.bits, t.lanes = dtype
        t.shape = ctypes.cast(self.shape, I64P) if self.shape is not None else None
        t.strides = ctypes.cast(self.strides, I64P) if self.strides is not None else None
        t.byte_offset = byte_offset
        if poison:  # another major: every field past the version points nowhere
            t.data, t.ndim = WILD, 7
            t.shape = t.strides = ctypes.cast(WILD, I64P)
        if version is not None:
            self.struct.flags = flags
        self._deleter = DELETER(self._delete)
        if deleter:
            self.struct.deleter = self._deleter
        self._destructor = DESTRUCTOR(self._destroy)
        self.name = name or (b"dltensor" if version is None else b"dltensor_versioned")

    def _delete(self, _):
        self.deleted += 1

    def _destroy(self, capsule):
        self.destroyed += 1
        if _name_of(capsule) in (b"dltensor", b"dltensor_versioned"):
            self._deleter(ctypes.addressof(self.struct))

    def capsule(self):
        """A new capsule over the struct, named self.name."""
        _KEEP.append(self)
        return _new(ctypes.addressof(self.struct), _name(self.name), self._destructor)


class Producer:
    """An object with __dlpack__ handing out Capsule(**fields)'s capsules: `legacy_only`
    refuses max_version with TypeError; `raises` is raised by every call; `device` is what
    __dlpack_device__ says (None: the method is absent, see NoDevice)."""

    def __init__(self, legacy_only=False, raises=None, device=(1, 0), **fields):
        self.legacy_only, self.raises, self.device, self.fields = (legacy_only, raises, device,
                                                                   fields)
        self.calls, self.made = [], []

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(max_version)
        if self.raises is not None:
            raise self.raises
        if self.legacy_only and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        fields = dict(self.fields)
        if max_version is None and "version" not in fields:
            fields["version"] = None
        made = Capsule(**fields)
        self.made.append(made)
        return made.capsule()

    def __dlpack_device__(self):
        return self.device

    def deleted(self):
        """How many times the deleters of the capsules it handed out ran, in all."""
        return sum(c.deleted for c in self.made)


FROM_PY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))


class Header(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("prev_api", ctypes.c_void_p)]


class Table(ctypes.Structure):
    _fields_ = [("header", Header), ("allocator", ctypes.c_void_p), ("from_py", FROM_PY),
                ("to_py", ctypes.c_void_p), ("borrow", ctypes.c_void_p),
                ("stream", ctypes.c_void_p)]


def table_producer(rc=0, **fields):
    """A Producer type with a DLPack 1.3 exchange table whose managed_tensor_from_py_object
    gives Capsule(**fields)'s struct (or returns `rc` without a tensor where rc != 0); the
    type's `imports` lists those Capsules, to count their deleters."""
    imports = []

    def from_py(_, out):
        if rc:
            return rc
        made = Capsule(**fields)
        _KEEP.append(made)
        imports.append(made)
        out[0] = ctypes.addressof(made.struct)
        return 0

    table = Table(Header(1, 3, None), 0x1, FROM_PY(from_py), 0x1, None, 0x1)
    table.keep = table.from_py
    _KEEP.append(table)
    capsule = _new(ctypes.addressof(table), _name(b"dlpack_exchange_api"), _NO_DESTRUCTOR)
    return type("TableProducer", (Producer,), {"__dlpack_c_exchange_api__": capsule,
                                               "imports": imports})


_NO_DESTRUCTOR = DESTRUCTOR(lambda _: None)


def skip_script(why):
    """Skips the whole script: CTest reads the marker through SKIP_REGULAR_EXPRESSION."""
    print("DLPACKPP_TEST_SKIPPED: " + why)
    sys.stdout.flush()
    sys.exit(0)


def main():
    """unittest.main that fails when no test ran and says how many were skipped."""
    result = unittest.main(exit=False, verbosity=2).result
    if result.testsRun == 0:
        print("error: no test ran")
        sys.exit(1)
    print("ran %d, skipped %d" % (result.testsRun, len(result.skipped)))
    sys.exit(0 if result.wasSuccessful() else 1)
