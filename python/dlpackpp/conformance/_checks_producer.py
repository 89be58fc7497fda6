# SPDX-License-Identifier: Apache-2.0
"""Producer checks P1-P10: what a framework's __dlpack__ / __dlpack_device__ export, read
field by field through the probe and compared with the numpy source's values."""

import numpy as np

from ._build import probe
from . import _fields as F
from ._checks import check, describe, new
from ._dtypes import DTYPES
from ._kit import (HOST, IS_COPIED, READ_ONLY, BadCapsule, Skip, adapter_changed, address,
                   compact_bytes, dtype_sources, export, first_address, host_values, layouts,
                   make, make_float32, progress, sample, span)

PY = "Python spec (__dlpack__)"
ENDIAN = "; dlpack.h: non-native endianness 'should' raise"


def versioned_export(x, **kwargs):
    """__dlpack__(max_version=(1, 3), ...), or the legacy export where the producer predates
    max_version: (capsule, fields, asked_versioned)."""
    try:
        return export(x, max_version=(1, 3), **kwargs) + (True,)
    except TypeError:
        if kwargs:
            raise
        return export(x) + (False,)


def try_export(out, label, x):
    """versioned_export(x) for a case the framework holds: (capsule, fields), or None when it
    refused (BufferError is a refusal the spec allows, told as INFO; another class is not)."""
    progress(label)
    try:
        cap, f, _ = versioned_export(x)
        return cap, f
    except BufferError as e:
        out.add(False, "INFO", "", "%s: export refused (%s)" % (label, describe(e)))
    except BadCapsule:
        raise
    except Exception as e:  # noqa: BLE001
        out.add(False, "SHOULD", PY + ": an array that cannot be exported raises BufferError",
                "%s: export raised %s" % (label, describe(e)))
    return None


def exports(out, target, cases, skipped=None):
    """(name, source, capsule, fields) for each (name, source) case the framework holds and
    exports (try_export tells a refused export); the names it cannot hold go to `skipped`."""
    for name, a in cases:
        x = make(target, a, name)
        if x is None:
            if skipped is not None:
                skipped.append(name)
            continue
        changed = adapter_changed(target, a, x)
        if changed:
            out.add(False, "INFO", "", "%s: not judged: %s" % (name, changed))
            continue
        exported = try_export(out, name, x)
        if exported is not None:
            yield (name, a) + exported


def refused(out, rule, what, call):
    """call(), where the spec wants it refused with BufferError: a SHOULD pass where it is, a
    SHOULD failure under `rule` ('<what> raised ...') where another exception comes. Returns
    what call() returned where it was accepted (for the caller to judge), else None."""
    try:
        return call()
    except BufferError:
        out.add(True, "SHOULD", "", "")
    except BadCapsule:
        raise
    except Exception as e:  # noqa: BLE001
        out.add(False, "SHOULD", rule, "%s raised %s" % (what, describe(e)))
    return None


LEGACY_REFUSAL = ("array API (2025): a producer may refuse max_version=None with BufferError "
                  "(no legacy capsule)")


def legacy_export(out, x, **kwargs):
    """export(x, **kwargs) without max_version: (capsule, fields), or None where the producer
    refused it with BufferError, which the array API allows (told as INFO)."""
    try:
        return export(x, **kwargs)
    except BufferError as e:
        out.add(False, "INFO", "", "a legacy export (no max_version) refused (%s), as %s"
                % (describe(e), LEGACY_REFUSAL))
        return None


def predates(out, keyword, call, e):
    """The finding for a __dlpack__ whose `call` refused `keyword` with TypeError `e`."""
    out.add(False, "SHOULD", PY + " (array API 2023.12): %s keyword" % keyword,
            "%s refused (%s): a pre-2023.12 __dlpack__" % (call, describe(e)))


def elsewhere(device):
    """A device to ask for that is not `device`: CUDA, or Vulkan where `device` is CUDA."""
    return (2, 0) if tuple(device)[0] != 2 else (7, 0)


def values_of(fields, cap):
    """The elements' bytes of an export (None for device memory)."""
    return host_values(cap, fields)


@check("P1", "MUST", PY + ": max_version None or major 0 -> 'dltensor'; else "
       "'dltensor_versioned' with version.major <= the requested major")
def p1(target):
    """The capsule's name and version for each max_version asked."""
    out = new()
    x = make_float32(target, sample())
    legacy = legacy_export(out, x)
    if legacy is not None:
        out.add(legacy[1]["name"] == "dltensor", "MUST", PY + ": no max_version -> legacy "
                "'dltensor'", "no max_version gave %r" % legacy[1]["name"])
    for request in ((0, 8), (1, 0), (1, 3), (2, 0)):
        try:
            _, f = export(x, max_version=request)
        except TypeError as e:
            predates(out, "max_version", "max_version=%s" % (request,), e)
            break
        except BadCapsule:
            raise
        except Exception as e:  # noqa: BLE001 - a refusal: allowed, its class is SHOULD
            good = isinstance(e, BufferError) and request[0] < 1
            out.add(good, "SHOULD", PY + ": a request the producer cannot serve raises "
                    "BufferError (" + LEGACY_REFUSAL + ")", "max_version=%s raised %s"
                    % (request, describe(e)))
            continue
        if request[0] < 1:
            out.add(f["name"] == "dltensor", "MUST", PY + ": major 0 -> legacy 'dltensor'",
                    "max_version=%s gave %r" % (request, f["name"]))
            continue
        if f["name"] == "dltensor":
            out.add(False, "SHOULD", F.VERSIONED_RULE, F.legacy_for_versioned(request))
            continue
        good = f["name"] == "dltensor_versioned" and f["version"][0] <= request[0]
        out.add(good, "MUST", F.MAJOR_RULE, F.major_above(request, f["name"], f.get("version")))
    return out


@check("P2", "SHOULD", PY + ": keyword-only max_version: tuple[int, int]; a bad argument is "
       "TypeError")
def p2(target):
    """Malformed keywords are TypeError."""
    out = new()
    x = make_float32(target, sample(flat=True))
    for label, kwargs in (("max_version='1'", {"max_version": "1"}),
                          ("max_version=(1,)", {"max_version": (1,)}),
                          ("an unknown keyword", {"dlpackpp_kit_unknown": 1})):
        try:
            x.__dlpack__(**kwargs)
        except TypeError:
            out.add(True, "SHOULD", "", "")
        except Exception as e:  # noqa: BLE001
            out.add(False, "SHOULD", PY + ": malformed keyword -> TypeError",
                    "%s raised %s, not TypeError" % (label, describe(e)))
        else:
            out.add(False, "SHOULD", PY + ": malformed keyword -> TypeError",
                    "%s was accepted" % label)
    return out


@check("P3", "MUST", "dlpack.h: shape, strides in elements, data + byte_offset: the values "
       "they reach are the array's")
def p3(target):
    """The values reached through each layout's fields are the source's."""
    out = new()
    skipped = []
    for name, a, cap, f in exports(out, target, layouts(np), skipped):
        if f["ndim"] != a.ndim or tuple(f["shape"] or ()) != a.shape:
            out.add(False, "MUST", "dlpack.h: ndim and shape", "%s: ndim %s shape %s, expected %s"
                    % (name, f["ndim"], f["shape"], a.shape))
            continue
        got = values_of(f, cap)
        if got is None:
            out.add(True, "MUST", "", "")
            out.add(False, "INFO", "", "%s: device memory, values not read" % name)
        else:
            out.add(got == compact_bytes(a), "MUST", "dlpack.h: strides in number of elements; "
                    "data + byte_offset is element 0", "%s: the values read through strides "
                    "%s, byte_offset %d differ from the source" % (name, f["strides"],
                                                                   f["byte_offset"]))
        if f["versioned"] and tuple(f["version"]) >= (1, 2) and a.ndim and f["strides"] is None:
            out.add(False, "SHOULD", F.NULL_STRIDES_RULE,
                    "%s: %s" % (name, F.null_strides(f["version"])))
        if f.get("valid"):
            out.add(False, "INFO", "", "%s: dlpackpp's validation says %s" % (name, f["valid"]))
    if skipped:
        out.add(False, "INFO", "", "the framework cannot hold: " + ", ".join(skipped))
    return out


@check("P4", "MUST", "dlpack.h: data + byte_offset points at the first element "
       "(INFO: data 'always aligned to 256 bytes', which the header's own note says is not so)")
def p4(target):
    """data + byte_offset is element 0."""
    out = new()
    unaligned = 0
    for name, a, cap, f in exports(out, target, [(n, a) for n, a in layouts(np) if a.size]):
        if tuple(f["device"])[0] not in HOST:
            raise Skip("device memory: the source's addresses do not apply")
        first = first_address(f)
        low, high = span(a)
        if low <= first < high or low <= f["data"] < high:
            out.add(first == address(a), "MUST", "dlpack.h: data + byte_offset is element 0",
                    "%s: data + byte_offset = %#x, element 0 is at %#x"
                    % (name, first, address(a)))
        else:
            element = probe().gather(cap)[:a.itemsize]
            out.add(element == a.reshape(-1)[:1].tobytes() if a.ndim else element == a.tobytes(),
                    "MUST", "dlpack.h: data + byte_offset is element 0",
                    "%s: the element at data + byte_offset is not element 0" % name)
        unaligned += f["data"] % 256 != 0
    if unaligned:
        out.add(False, "INFO", "", "%d exports with data not 256-byte aligned" % unaligned)
    return out


@check("P5", "MUST", "dlpack.h: DLDataType codes (bool is kDLBool 8 bits), lanes 1")
def p5(target):
    """Each dtype's code, bits and lanes; an unsupported dtype is refused."""
    out = new()
    skipped = []
    for name, a, cap, f in exports(out, target, dtype_sources(np), skipped):
        want = DTYPES[name]
        out.add(tuple(f["dtype"]) == want, "MUST", "dlpack.h: DLDataType (code, bits, lanes)",
                "%s exported as %s, expected %s" % (name, tuple(f["dtype"]), want))
        got = values_of(f, cap)
        if got is not None and tuple(f["dtype"]) == want:
            out.add(got == compact_bytes(a), "MUST", "dlpack.h: element values",
                    "%s: values differ" % name)
    unsupported = PY + ": an unsupported dtype raises BufferError"
    for name, a in (("datetime64", np.array(["2020-01-01"], dtype="datetime64[D]")),
                    ("big-endian float32", np.arange(3, dtype=">f4"))):
        x = make(target, a, name)
        if x is None:
            continue
        exported = refused(out, unsupported, name, lambda: versioned_export(x))
        if exported is not None:
            _, _, versioned = exported
            out.add(False, "SHOULD", unsupported + (ENDIAN if versioned else ""),
                    "%s was exported" % name)
    if skipped:
        out.add(False, "INFO", "", "the framework lacks " + ", ".join(skipped))
    return out


@check("P6", "SHOULD", "dlpack.h: DLPACK_FLAG_BITMASK_READ_ONLY 'indicates the tensor is read "
       "only' (no MUST); Python spec: read-only data is not exported as legacy without a copy")
def p6(target):
    """READ_ONLY on read-only memory; its legacy export refused or copied."""
    out = new()
    if not hasattr(target, "read_only"):
        raise Skip("the adapter gives no read-only arrays (read_only)")
    a = sample()
    try:
        x = target.read_only(a)
    except NotImplementedError as e:
        raise Skip("read_only: %s" % e)
    versioned_at = None
    try:
        cap, f = export(x, max_version=(1, 3))
        out.add(f["flags"] & READ_ONLY, "SHOULD", "dlpack.h: READ_ONLY on read-only memory",
                "a versioned export of read-only memory lacks READ_ONLY (flags %#x)" % f["flags"])
        versioned_at = first_address(f)
        del cap
    except TypeError:
        out.add(False, "INFO", "", "no max_version: READ_ONLY cannot be said")
    legacy = refused(out, PY + ": a refused export raises BufferError",
                     "the legacy export of read-only memory", lambda: export(x))
    if legacy is not None:
        cap, f = legacy
        low, high = span(a)
        shared = low <= first_address(f) < high or first_address(f) == versioned_at
        out.add(not shared, "SHOULD", PY + ": a legacy capsule cannot say READ_ONLY, so read-only "
                "memory is refused or copied", "the legacy export shares the read-only memory")
    return out


@check("P7", "MUST", PY + ": copy=True always copies (IS_COPIED), copy=False never copies; "
       "an impossible no-copy raises BufferError")
def p7(target):
    """copy=True copies, copy=False never does."""
    out = new()
    a = sample()
    x = make_float32(target, a)
    try:
        _, plain = export(x, max_version=(1, 3))
        cap, f = export(x, max_version=(1, 3), copy=True)
    except TypeError as e:
        predates(out, "copy", "__dlpack__(max_version=..., copy=...)", e)
        return out
    except BufferError as e:
        out.add(False, "INFO", "", "copy=True refused (%s): the consumer copies" % describe(e))
        cap = None
    except BadCapsule:
        raise
    except Exception as e:  # noqa: BLE001 - a refusal of another class: the class is SHOULD
        out.add(False, "SHOULD", PY + ": a producer that cannot copy raises BufferError",
                "copy=True refused with %s" % describe(e))
        cap = None
    if cap is not None:
        out.add(first_address(f) != first_address(plain), "MUST", PY + ": copy=True copies",
                "copy=True shares the memory of a plain export")
        out.add(f["flags"] & IS_COPIED, "SHOULD", "dlpack.h: IS_COPIED on a copy the producer "
                "made", "copy=True without IS_COPIED (flags %#x)" % f["flags"])
        got = values_of(f, cap)
        if got is not None:
            out.add(got == compact_bytes(a), "MUST", PY + ": a copy has the values",
                    "copy differs")
    _, f = export(x, max_version=(1, 3), copy=False)
    out.add(first_address(f) == first_address(plain), "MUST", PY + ": copy=False never copies",
            "copy=False gave other memory than a plain export")
    other = elsewhere(plain["device"])
    moved = refused(out, PY + ": an impossible copy=False raises BufferError",
                    "copy=False to device %s" % (other,),
                    lambda: export(x, max_version=(1, 3), copy=False, dl_device=other))
    if moved is not None:
        _, f = moved
        out.add(tuple(f["device"]) == other and first_address(f) == first_address(plain),
                "MUST", PY + ": copy=False never copies", "copy=False, dl_device=%s gave a "
                "capsule on %s" % (other, tuple(f["device"])))
    return out


@check("P8", "MUST", PY + ": dl_device: the own device works; one it cannot export to raises "
       "BufferError")
def p8(target):
    """dl_device: the own device works, another is refused."""
    out = new()
    x = make_float32(target, sample())
    own = tuple(x.__dlpack_device__())
    try:
        cap, f = export(x, max_version=(1, 3), dl_device=own)
    except TypeError as e:
        predates(out, "dl_device", "__dlpack__(max_version=..., dl_device=...)", e)
        return out
    out.add(tuple(f["device"]) == own, "MUST", PY + ": dl_device honoured",
            "dl_device=%s gave a capsule on %s" % (own, tuple(f["device"])))
    other = elsewhere(own)
    moved = refused(out, PY + ": a device it cannot export to raises BufferError",
                    "dl_device=%s" % (other,),
                    lambda: export(x, max_version=(1, 3), dl_device=other))
    if moved is not None:
        _, f = moved
        out.add(tuple(f["device"]) == other, "MUST", PY + ": dl_device honoured or refused",
                "dl_device=%s gave a capsule on %s" % (other, tuple(f["device"])))
    return out


from . import _checks_stream  # noqa: E402,F401 (registers P9, which has a GPU half)


@check("P10", "MUST", PY + ": __dlpack_device__() -> (device_type: IntEnum, device_id: int), "
       "the capsule's device")
def p10(target):
    """__dlpack_device__ is a pair of ints equal to the capsule's device."""
    out = new()
    x = make_float32(target, sample(flat=True))
    dev = x.__dlpack_device__()
    shape_ok = isinstance(dev, tuple) and len(dev) == 2 and all(isinstance(v, int) for v in dev)
    out.add(shape_ok, "MUST", F.DEVICE_PAIR_RULE, F.device_not_pair(dev))
    _, f, _ = versioned_export(x)
    out.add(shape_ok and tuple(dev) == tuple(f["device"]), "MUST",
            F.DEVICE_AGREES_RULE, F.device_differs(dev, f["device"]))
    return out
