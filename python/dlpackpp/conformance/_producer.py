# SPDX-License-Identifier: Apache-2.0
"""KitArray, the producer the kit controls field by field: what the consumer and lifetime
checks hand a framework's from_dlpack. Like every real producer it makes a fresh capsule on
each __dlpack__ call (one capsule handed out twice is L3's case, made on purpose there)."""

import functools

from ._build import probe
from ._dtypes import address, dtype_of, element_strides
from ._host import IS_COPIED

CPU = (1, 0)
_TENSOR_NAMES = (b"dltensor", b"dltensor_versioned")
# How a kit capsule's destructor behaves (the probe's Destructor enum): right, and right but
# through Python code (as a producer written in Python or with ctypes/cffi has it).
RIGHT_DESTRUCTOR, PYTHON_DESTRUCTOR = 0, 5


@functools.lru_cache(maxsize=None)
def _capsule_api():
    # Prototypes of our own: ctypes.pythonapi's attributes are shared by every user.
    import ctypes
    name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
    return (name(("PyCapsule_GetName", ctypes.pythonapi)),
            pointer(("PyCapsule_GetPointer", ctypes.pythonapi)))


def _python_destructor(capsule_address):
    """The body of a capsule destructor written in Python with ctypes, as some producers have
    it (the probe's destructor calls it unless an exception is pending: then Python cannot
    run, the deleter is never reached and the error is lost, as numpy#32697 shows)."""
    get_name, get_pointer = _capsule_api()
    name = get_name(capsule_address)
    if name in _TENSOR_NAMES:  # not renamed used_...: nobody consumed it
        probe().run_deleter(get_pointer(capsule_address, name), name == _TENSOR_NAMES[1])


class KitArray:
    """Exports `a`'s memory (or `data`) with the given shape, strides, offset, dtype, device,
    flags and version; counts its deleter and records the keywords of every __dlpack__ call.
    `python_destructor` makes its capsules' destructor run Python code (numpy#32697 shows
    only with one); `keep_last` keeps the last capsule for the check to look at after use."""

    def __new__(cls, a, **kwargs):
        # Importers remember per type that a producer rejects max_version (the array API lets
        # them): a legacy producer is a type of its own, as it is in the field.
        if kwargs.get("legacy_only") and cls is KitArray:
            cls = LegacyKitArray
        return super().__new__(cls)

    def __init__(self, a, *, shape=None, strides="same", byte_offset=0, data=None, dtype=None,
                 device=CPU, version=(1, 3), flags=0, legacy_only=False, versioned=None,
                 python_destructor=False, keep_last=False, **extra):
        self.a = a
        self.shape = tuple(a.shape) if shape is None else shape
        self.strides = element_strides(a) if strides == "same" else strides
        self.byte_offset = byte_offset
        self.data = address(a) if data is None else data
        self.dtype = dtype_of(a.dtype) if dtype is None else dtype
        self.device, self.version, self.flags = device, version, flags
        self.legacy_only, self.versioned = legacy_only, versioned
        self.destructor = RIGHT_DESTRUCTOR
        if python_destructor:
            self.destructor = PYTHON_DESTRUCTOR
            probe().set_python_destructor(_python_destructor)
        self.keep_last, self.last = keep_last, None
        self.extra = extra
        self.counter = probe().new_counter()
        self.pending_drops = probe().pending_drops()  # the process's count when made
        self.calls = []
        self.consumer_calls = self.calls  # narrowed by take() to those of from_dlpack
        self.made = 0  # capsules handed out: each must see its deleter run once

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None, **unknown):
        self.calls.append({"stream": stream, "max_version": max_version, "dl_device": dl_device,
                           "copy": copy, "unknown": sorted(unknown)})
        if unknown:
            raise TypeError("unexpected keyword %s" % sorted(unknown)[0])
        if self.legacy_only and (max_version is not None or dl_device is not None
                                 or copy is not None):
            raise TypeError("__dlpack__() got an unexpected keyword argument (a legacy producer)")
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
            fields = (fresh, address(fresh), self.shape, element_strides(fresh), 0)
            flags |= IS_COPIED
        cap = probe().make_capsule(
            *fields, self.dtype, self.device, versioned=versioned, version=self.version,
            flags=flags, counter=self.counter, destructor=self.destructor, **self.extra)
        self.made += 1
        if self.keep_last:
            self.last = cap
        return cap

    def __dlpack_device__(self):
        return self.device

    def deleted(self):
        """How many times the deleters of this producer's capsules ran."""
        return probe().count(self.counter)

    def asked_versioned(self):
        """Whether the consumer passed max_version (in the calls of its from_dlpack, where
        take() recorded them; else in any call)."""
        return any(c["max_version"] is not None for c in self.consumer_calls)


class LegacyKitArray(KitArray):
    """A KitArray whose __dlpack__ predates max_version, dl_device and copy."""
