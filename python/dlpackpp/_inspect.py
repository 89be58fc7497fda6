# SPDX-License-Identifier: Apache-2.0
"""dlpackpp.inspect(obj): what a DLPack consumer of obj would be handed, read field by field.

The capsule is read with ctypes over DLPack's ABI (the layouts of dlpack.h 1.x), so nothing is
compiled and nothing is needed beyond the standard library. The rules and their sentences are
the conformance kit's (conformance/_fields.py), so a problem reads as the kit reports it.
"""

import ctypes
import datetime

from .conformance import _fields as F
# dlpack.h's structs, written once for the kit's standalone scripts and read here too.
from .conformance._repro_toolkit import DLManagedTensor as _Managed
from .conformance._repro_toolkit import DLManagedTensorVersioned as _ManagedVersioned

#: What inspect asks a producer for: the newest DLPack it reads (dlpack.h 1.3).
MAX_VERSION = (1, 3)
_CAPSULE_TYPE = type(datetime.datetime_CAPI)  # PyCapsule: no public name before 3.13
_MAX_NDIM = 64  # above any framework's limit; a wild ndim is not walked into wild memory
_TENSOR_NAMES = (b"dltensor", b"dltensor_versioned")

# PYFUNCTYPE keeps the GIL and raises a pending Python error: these are C-API calls.
_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _TableHeader(ctypes.Structure):
    pass


_TableHeader._fields_ = [("version", _Version), ("prev_api", ctypes.POINTER(_TableHeader))]


class _Table(ctypes.Structure):
    # DLPackExchangeAPI of major 1: the header, then its function pointers in this order.
    _fields_ = [("header", _TableHeader), ("managed_tensor_allocator", ctypes.c_void_p),
                ("managed_tensor_from_py_object_no_sync", ctypes.c_void_p),
                ("managed_tensor_to_py_object_no_sync", ctypes.c_void_p),
                ("dltensor_from_py_object_no_sync", ctypes.c_void_p),
                ("current_work_stream", ctypes.c_void_p)]


# PYFUNCTYPE: the GIL stays held, as a capsule destructor holds it, and an exception the
# producer sets is raised here, unchanged.
_FromPyObject = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
_Deleter = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


class DType(tuple):
    """A tensor's DLDataType: (name, code, bits, lanes), also as attributes."""

    __slots__ = ()
    name = property(lambda self: self[0], doc="'float32', 'bool', 'float32x4' ...")
    code = property(lambda self: self[1], doc="DLDataTypeCode")
    bits = property(lambda self: self[2], doc="bits of one lane")
    lanes = property(lambda self: self[3], doc="lanes of one element")

    def __new__(cls, code, bits, lanes):
        return tuple.__new__(cls, (F.dtype_name(code, bits, lanes), code, bits, lanes))

    def __getnewargs__(self):
        # What __new__ takes (the name is derived): pickle and copy rebuild it from these.
        return self[1:]

    def __repr__(self):
        return "DType(name=%r, code=%d, bits=%d, lanes=%d)" % self


KEYS = ("producer", "capsule", "version", "flags", "dtype", "ndim", "shape", "strides",
        "byte_offset", "data", "alignment", "device", "dlpack_device", "deleter",
        "exchange_api", "exchange_import", "problems")
#: What exchange_import holds: the fields the table's import gave, compared with __dlpack__'s.
IMPORT_KEYS = ("version", "flags", "dtype", "ndim", "shape", "strides", "byte_offset", "data",
               "device", "deleter")


class Inspection(dict):
    """What dlpackpp.inspect found: a dict of KEYS whose str() is a readable table."""

    def __str__(self):
        rows = [(key, _shown(key, self[key], self)) for key in KEYS if key != "problems"]
        width = max(len(key) for key, _ in rows) + 2
        lines = ["%s%s" % (key.ljust(width), text) for key, text in rows]
        problems = self["problems"]
        lines.append("problems".ljust(width) + ("none" if not problems else problems[0]))
        lines += [" " * width + p for p in problems[1:]]
        return "\n".join(lines)


def _shown(key, value, record):
    # None means "not in this capsule" or "not read": say which, where the table would mislead.
    if value is None:
        legacy = "(legacy: none)" if record["capsule"] == "dltensor" else "(not read)"
        return {"producer": "(a bare capsule)", "version": legacy, "flags": legacy,
                "dlpack_device": "(a bare capsule)" if record["producer"] is None else
                "(no __dlpack_device__)", "exchange_api": "none",
                "strides": "NULL" if record["dtype"] is not None else "(not read)",
                "exchange_import": "(no usable exchange table)"}.get(key, "(not read)")
    if key == "exchange_import":
        return "%s (managed_tensor_from_py_object_no_sync)" % (
            "same tensor as __dlpack__" if value.get("same") else "differs: see problems")
    if key == "version" or key == "exchange_api":
        return "%d.%d" % value
    if key == "flags":
        return " | ".join(value) if value else "none set"
    if key == "dtype":
        return "%s (code %d, bits %d, lanes %d)" % value
    if key == "data":
        return "%#x" % value if value else "NULL"
    if key == "device" or key == "dlpack_device":
        if not isinstance(value, tuple) or len(value) != 2:
            return repr(value)
        return "%s, id %s  %r" % (F.device_name(value[0]) if isinstance(value[0], int)
                                  else value[0], value[1], value)
    if key == "deleter":
        return "set" if value else "NULL"
    return str(value)


def _ints(pointer, n):
    return None if not pointer else tuple(pointer[:n])


def _read_tensor(t, out, problems, version):
    """The DLTensor fields into `out`, and what breaks dlpack.h's rules into `problems`."""
    known = version is None or tuple(version) <= F.KNOWN
    out["dtype"] = dt = DType(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    out["ndim"] = t.ndim
    if 0 <= t.ndim <= _MAX_NDIM:
        out["shape"] = _ints(t.shape, t.ndim) if t.ndim else ()
        out["strides"] = _ints(t.strides, t.ndim)
        if t.ndim and not t.shape:
            problems.append(F.null_shape(t.ndim))
        if t.ndim and not t.strides and version is not None and tuple(version) >= (1, 2):
            problems.append(F.null_strides(version))
    else:
        problems.append(F.bad_ndim(t.ndim))
    out["byte_offset"] = t.byte_offset
    out["data"] = t.data or 0
    first = (out["data"] + t.byte_offset) % (1 << 64)
    out["alignment"] = min(first & -first, 256) if first else 256
    out["device"] = (t.device.device_type, t.device.device_id)
    shape = out.get("shape")
    if shape and any(n < 0 for n in shape):
        problems.append(F.negative_extent(shape))
    elif shape is not None:
        size = 1
        for n in shape:
            size *= n
        if size and not t.data:
            problems.append(F.null_data(size))
    if known and dt.code not in F.DTYPE_CODES:
        problems.append(F.unknown_code(dt.code))
    for what in ("bits", "lanes"):
        if getattr(dt, what) == 0:
            problems.append(F.zero_field(what))
    want = F.DTYPE_BITS.get(dt.code)
    if want is not None and dt.bits not in (0, want):
        problems.append(F.bad_bits(dt.name, dt.bits, want))
    if known and t.device.device_type not in F.DEVICE_TYPES:
        problems.append(F.unknown_device(t.device.device_type))


def _read_capsule(cap, out, problems):
    """Every field the capsule's name and version allow reading; the capsule is not consumed."""
    raw = _get_name(cap)
    name = None if raw is None else raw.decode("utf-8", "replace")
    out["capsule"] = name
    if raw not in _TENSOR_NAMES:
        used = raw is not None and raw[5:] in _TENSOR_NAMES and raw.startswith(b"used_")
        problems.append(F.consumed(name) if used else F.capsule_name(name))
        return
    address = _get_pointer(cap, raw)
    if raw == b"dltensor":
        m = _Managed.from_address(address)
    else:
        v = _Version.from_address(address)
        out["version"] = (v.major, v.minor)
        if v.major != 1:  # dlpack.h: nothing past the version is known for another major
            problems.append(F.unknown_major(out["version"]))
            return
        m = _ManagedVersioned.from_address(address)
        out["flags"] = F.flag_names(m.flags)
        if m.flags >> 3 and out["version"] <= F.KNOWN:  # bits above IS_SUBBYTE_TYPE_PADDED
            problems.append(F.unknown_flags(m.flags))
    out["deleter"] = bool(m.deleter)
    _read_tensor(m.dl_tensor, out, problems, out["version"])
    flags = getattr(m, "flags", 0)
    if flags & F.IS_SUBBYTE_TYPE_PADDED and m.dl_tensor.dtype.bits >= 8:
        problems.append(F.padded_not_subbyte(m.dl_tensor.dtype.bits))


def _exchange_api(cls, problems):
    """(the version of cls's exchange table (its first header), its table of major 1), each
    None where there is none."""
    api = getattr(cls, "__dlpack_c_exchange_api__", None)
    if api is None:
        return None, None
    if isinstance(api, int):
        problems.append(F.integer_table())
        return None, None
    if type(api) is not _CAPSULE_TYPE or _get_name(api) != b"dlpack_exchange_api":
        name = _get_name(api) if type(api) is _CAPSULE_TYPE else type(api).__name__
        problems.append(F.table_name(name.decode("utf-8", "replace")
                                     if isinstance(name, bytes) else name))
        return None, None
    link = _TableHeader.from_address(_get_pointer(api, b"dlpack_exchange_api"))
    chain, usable = [], None
    while len(chain) < 16:
        chain.append((link.version.major, link.version.minor))
        if usable is None and link.version.major == 1:
            usable = _Table.from_address(ctypes.addressof(link))
        if not link.prev_api:
            break
        link = link.prev_api.contents
    if usable is None:
        problems.append(F.table_major(chain))
    return chain[0], usable


def _exchange_import(table, obj, out, problems):
    """The tensor the table's managed_tensor_from_py_object_no_sync gives (what a consumer
    that takes the fast route is handed), compared with __dlpack__'s and released once."""
    if not table.managed_tensor_from_py_object_no_sync:
        problems.append(F.table_entry_null("managed_tensor_from_py_object_no_sync"))
        return None
    managed = ctypes.c_void_p()
    rc = _FromPyObject(table.managed_tensor_from_py_object_no_sync)(obj, ctypes.byref(managed))
    if rc != 0 or not managed.value:
        problems.append(F.table_import_failed(rc))
        return None
    m = _ManagedVersioned.from_address(managed.value)
    got, mine = {}, []
    try:
        got["version"] = (m.major, m.minor)
        if m.major != 1:
            mine.append(F.unknown_major(got["version"]))
        else:
            got["flags"], got["deleter"] = F.flag_names(m.flags), bool(m.deleter)
            _read_tensor(m.dl_tensor, got, mine, got["version"])
    finally:
        # Ours to release: the deleter sits where every major keeps it (dlpack.h: "everything
        # until this field [flags] stable, to ensure that deleter can be correctly called").
        if m.deleter:
            _Deleter(m.deleter)(managed.value)
    problems += [F.in_table_import(p) for p in mine]
    differs = [key for key in ("ndim", "shape", "dtype", "device") if got.get(key) != out[key]
               and not (key == "shape" and not out["ndim"])]
    for key in differs:
        problems.append(F.import_differs(key, got.get(key), out[key]))
    first = [f["data"] + f["byte_offset"] if f.get("data") is not None else None
             for f in (got, out)]
    if not differs and first[0] != first[1]:
        problems.append(F.import_starts(first[0], first[1]))
    read_only = ["READ_ONLY" in (f.get("flags") or ()) for f in (got, out)]
    if out["flags"] is not None and read_only[0] != read_only[1]:
        problems.append(F.import_differs("READ_ONLY", read_only[0], read_only[1]))
    result = dict((key, got.get(key)) for key in IMPORT_KEYS)
    result["same"] = not mine and not differs and first[0] == first[1] and (
        out["flags"] is None or read_only[0] == read_only[1])
    return result


def _device_pair(obj, problems):
    """What __dlpack_device__() says, or None without one; its exception propagates."""
    method = getattr(obj, "__dlpack_device__", None)
    if method is None:
        return None
    dev = method()
    if not (isinstance(dev, tuple) and len(dev) == 2 and all(isinstance(v, int) for v in dev)):
        problems.append(F.device_not_pair(dev))
        return dev
    return tuple(int(v) for v in dev)  # an IntEnum device type reads as its number


def _export(obj):
    """obj.__dlpack__ as a DLPack 1.x consumer asks: (capsule, asked_versioned)."""
    try:
        return obj.__dlpack__(max_version=MAX_VERSION), True
    except TypeError:
        pass
    # Asked outside the except clause: a producer's exception reaches the caller unchained.
    return obj.__dlpack__(), False


def inspect(obj):
    """What a DLPack consumer of `obj` (an object with __dlpack__, or a DLPack capsule) would be
    handed, as an Inspection; nothing is kept and what __dlpack__ hands over is released once."""
    out = Inspection((key, None) for key in KEYS)
    problems = out["problems"] = []
    if type(obj) is _CAPSULE_TYPE:
        _read_capsule(obj, out, problems)
        return out
    cls = type(obj)
    if not hasattr(cls, "__dlpack__"):
        raise TypeError("dlpackpp.inspect: %s has no __dlpack__ and is not a DLPack capsule"
                        % cls.__qualname__)
    module = getattr(cls, "__module__", None)
    out["producer"] = cls.__qualname__ if module in (None, "builtins") else "%s.%s" % (
        module, cls.__qualname__)
    # Before __dlpack__: were it to raise after, the traceback would keep the capsule alive.
    out["exchange_api"], table = _exchange_api(cls, problems)
    out["dlpack_device"] = dev = _device_pair(obj, problems)
    cap, asked = _export(obj)
    try:
        if type(cap) is not _CAPSULE_TYPE:
            problems.append(F.not_a_capsule(type(cap).__qualname__))
            return out
        _read_capsule(cap, out, problems)
    finally:
        del cap  # the capsule's destructor runs the producer's deleter, once, here
    _export_rules(out, asked, dev, problems)
    if table is not None and out["device"] is not None:
        out["exchange_import"] = _exchange_import(table, obj, out, problems)
    return out


def _export_rules(out, asked, dev, problems):
    """The rules that tie the capsule to what was asked and to __dlpack_device__. A legacy
    capsule for max_version is not one: a producer without 1.x may give it (the kit's P1
    still reports it, as a SHOULD)."""
    name, version = out["capsule"], out["version"]
    if asked and version is not None and version[0] > MAX_VERSION[0]:
        problems.insert(0, F.major_above(MAX_VERSION, name, version))
    device = out["device"]
    if device is not None and isinstance(dev, tuple) and len(dev) == 2 and tuple(dev) != device:
        problems.append(F.device_differs(dev, device))
