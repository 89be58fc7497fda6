# SPDX-License-Identifier: Apache-2.0
"""Consumer checks C1-C11: the framework's from_dlpack is handed KitArray producers the kit
made itself, conforming and malformed, and what it returns is read back with to_numpy."""

import numpy as np

from . import _fields as F
from ._checks import check, describe, new
from ._build import probe
from ._kit import (READ_ONLY, Skip, address, capsule_of, collect, compact_bytes, layouts,
                   progress, result_address, sample, span)
from ._producer import KitArray

PY = "Python spec (from_dlpack)"
HDR = "dlpack.h"


_REFUSES_HOST = {}  # target -> why its consumer refuses a plain CPU tensor (None: it takes it)


def consumer(target):
    """The target, or Skip where it has no consumer or takes no host memory at all (a
    GPU-only framework: the kit's producers are on the CPU)."""
    if not hasattr(target, "from_dlpack"):
        raise Skip("the adapter gives no consumer (from_dlpack)")
    if target not in _REFUSES_HOST:
        state, y = take(target, KitArray(sample()))
        _REFUSES_HOST[target] = None if state == "ok" else describe(y)
        del y
        collect()
    if _REFUSES_HOST[target] is not None:
        raise Skip("the consumer takes no host (CPU) tensor: %s" % _REFUSES_HOST[target])
    return target


def take(target, k, **kwargs):
    """from_dlpack(k): ('ok', result) or ('refused', exception). The __dlpack__ calls made
    meanwhile are the consumer's (k.consumer_calls): a result that is k itself (a consumer
    that hands back its input) is asked again by to_numpy, and those calls are the kit's."""
    calls = getattr(k, "calls", None)  # None for a capsule handed in itself (L3)
    before = len(calls or ())
    try:
        return "ok", target.from_dlpack(k, **kwargs)
    except Exception as e:  # noqa: BLE001 - refusals are judged by the caller
        # The traceback's frames may hold the capsule: drop them, or its deleter cannot run.
        e.__traceback__ = e.__context__ = e.__cause__ = None
        return "refused", e
    finally:
        if calls is not None:
            k.consumer_calls = calls[before:]


class Seen:
    """What the kit keeps of a consumer's result once the result itself is dropped."""

    def __init__(self, values):
        self.shape, self.itemsize, self.dtype = values.shape, values.itemsize, values.dtype
        self.writeable = values.flags.writeable
        self.bytes = compact_bytes(values)


def imported(out, target, label, k, expect, level="MUST", refusal_ok=True, **kwargs):
    """Imports k, checks the values equal `expect` (bytes) and the deleter ran once after the
    result died. A BufferError refusal passes where `refusal_ok`. Returns a Seen of the
    result (None when refused)."""
    progress(label)
    state, y = take(target, k, **kwargs)
    seen = None
    if state == "refused":
        if isinstance(y, BufferError) and refusal_ok:
            out.add(True, level, "", "")
        elif refusal_ok:
            out.add(False, "SHOULD", PY + ": a refusal raises BufferError",
                    "%s: refused with %s" % (label, describe(y)))
        else:
            out.add(False, level, PY + ": this input is valid and must be imported",
                    "%s: refused with %s" % (label, describe(y)))
    else:
        if y is k:
            out.add(False, "INFO", "", "from_dlpack returned the producer object it was given: "
                    "what to_numpy reads back is the kit's array, not what was imported")
        seen = Seen(np.asarray(target.to_numpy(y)))
        out.add(seen.bytes == expect, level, HDR + ": the values reached through the fields",
                "%s: the imported values differ from the producer's" % label)
    del y
    collect()
    deleted_once(out, label, k)
    return seen


def deleted_once(out, label, k):
    """Every capsule k made saw its deleter run exactly once (none made: a consumer that
    refused from __dlpack_device__ alone)."""
    if not k.extra.get("null_deleter"):
        why = ""
        if k.deleted() < k.made and probe().pending_drops() > k.pending_drops:
            why = " (the capsule was dropped with an exception already set: a destructor " \
                  "that runs Python cannot run then; numpy#32697)"
        out.add(k.deleted() == k.made, "MUST", PY + ": the deleter is called exactly once",
                "%s: %d capsule(s), the deleter ran %d times%s" % (label, k.made, k.deleted(),
                                                                   why))


@check("C1", "MUST", HDR + ": a major version above the consumer's: call the deleter, read no "
       "other field")
def c1(target):
    """Two major-2 capsules: one whose fields after the version are poison, one whose fields
    read as a valid 1.x tensor (so a consumer that ignores the version but checks the fields
    is caught too). Both must be refused without reading, and released once."""
    out = new()
    consumer(target)
    for label, poison in (("poisoned fields", True), ("fields valid as 1.x", False)):
        progress("major 2, " + label)
        k = KitArray(sample(), version=(2, 0), poison=poison)
        state, y = take(target, k)
        if not k.asked_versioned():
            raise Skip("the consumer never asks for a versioned capsule (see C2)")
        out.add(state == "refused", "MUST", HDR + ": major != DLPACK_MAJOR_VERSION is refused",
                "a major-2 capsule with %s was imported" % label)
        if state == "refused":
            out.add(isinstance(y, BufferError), "SHOULD", PY + ": an unsupported version "
                    "raises BufferError", "major 2, %s: refused with %s" % (label, describe(y)))
        del y
        collect()
        out.add(k.deleted() == k.made, "MUST", HDR + ": 'the consumer must call the deleter'",
                "major 2, %s: the deleter ran %d times" % (label, k.deleted()))
    return out


@check("C2", "SHOULD", PY + ": the consumer passes max_version and falls back on TypeError "
       "for a producer that predates it")
def c2(target):
    """The consumer passes max_version and falls back for a legacy producer."""
    out = new()
    consumer(target)
    a = sample()
    k = KitArray(a)
    imported(out, target, "versioned producer", k, compact_bytes(a), refusal_ok=False)
    asked = [c["max_version"] for c in k.consumer_calls]
    out.add(any(m is not None for m in asked), "SHOULD", PY + ": consumers pass max_version",
            "from_dlpack called __dlpack__ without max_version")
    legacy = KitArray(a, legacy_only=True)
    imported(out, target, "legacy producer", legacy, compact_bytes(a), level="SHOULD",
             refusal_ok=False)
    return out


@check("C3", "MUST", HDR + ": strides in elements; a consumer applies them or refuses with "
       "BufferError")
def c3(target):
    """Strided inputs give the right values or a clean refusal."""
    out = new()
    consumer(target)
    wanted = ("F order", "sliced", "negative step", "negative 2-d", "transposed",
              "size-1 odd strides")
    for name, a in layouts(np):
        if name in wanted:
            imported(out, target, name, KitArray(a), compact_bytes(a))
    return out


@check("C4", "MUST", HDR + ": byte_offset is added to data to reach element 0")
def c4(target):
    """byte_offset is applied."""
    out = new()
    consumer(target)
    base = np.arange(1, 41, dtype=np.float32).reshape(4, 10)
    # Compact layouts, so that a consumer refusing strides is not mistaken for one ignoring
    # byte_offset (C3 covers strides).
    for label, sub in (("row 2", base[2]), ("rows 1-2", base[1:3])):
        offset = address(sub) - address(base)
        k = KitArray(sub, data=address(base), byte_offset=offset)
        imported(out, target, "%s at byte_offset %d" % (label, offset), k, compact_bytes(sub),
                 refusal_ok=False)
    return out


@check("C5", "MUST", HDR + ": 'if the tensor is of size zero, then the data pointer should be "
       "set to NULL'; ndim 0 has NULL shape and strides")
def c5(target):
    """Size 0 with NULL data and 0-d with NULL shape and strides are imported."""
    out = new()
    consumer(target)
    empty = np.zeros((0, 3), dtype=np.float32)
    k = KitArray(empty, data=0)
    values = imported(out, target, "size 0 with NULL data", k, b"", refusal_ok=False)
    if values is not None:
        out.add(values.shape == (0, 3), "MUST", HDR + ": shape", "size 0 came back with shape %s"
                % (values.shape,))
    scalar = np.array(3.5, dtype=np.float32)
    k = KitArray(scalar, shape=None, strides=None)
    values = imported(out, target, "0-d with NULL shape and strides", k, scalar.tobytes(),
                      refusal_ok=False)
    return out


@check("C6", "MUST", HDR + " < 1.2: NULL strides mean row-major")
def c6(target):
    """NULL strides read as row-major; a 1.3 capsule with them is told."""
    out = new()
    consumer(target)
    a = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    imported(out, target, "legacy capsule with NULL strides", KitArray(a, strides=None,
             versioned=False), compact_bytes(a), refusal_ok=False)
    k = KitArray(a, strides=None)
    progress("1.3 capsule with NULL strides")
    state, y = take(target, k)
    if state == "ok":
        got = compact_bytes(np.asarray(target.to_numpy(y)))
        out.add(got == compact_bytes(a), "MUST", HDR + ": NULL strides, where accepted, are "
                "row-major", "a 1.3 capsule with NULL strides was read wrongly")
        if k.asked_versioned():
            out.add(False, "INFO", "", "accepts " + F.null_strides((1, 3)) + " (dlpack.h >= 1.2 "
                    "forbids them; the Python spec text still allows them)")
        del y
    else:
        out.add(False, "INFO", "", "refuses a 1.3 capsule with NULL strides (%s)" % describe(y))
    collect()
    deleted_once(out, "NULL-strides capsule", k)
    return out


@check("C7", "MUST", HDR + ": READ_ONLY; array API: a consumer may honour it (read-only "
       "result) or ignore it (the standard prefers that)")
def c7(target):
    """READ_ONLY is honoured or ignored, with the right values."""
    out = new()
    consumer(target)
    a = sample()
    k = KitArray(a, flags=READ_ONLY)
    values = imported(out, target, "READ_ONLY capsule", k, compact_bytes(a))
    if values is not None and k.asked_versioned():
        out.add(False, "INFO", "", "READ_ONLY %s" % ("honoured: the result is read-only"
                if not values.writeable else "ignored: the result is writable"))
    return out


@check("C8", "MUST", HDR + ": what the consumer cannot represent is refused (BufferError), the "
       "deleter called once")
def c8(target):
    """What the consumer cannot represent is refused, the deleter called once."""
    out = new()
    consumer(target)
    a = sample()
    # The Python destructor: a consumer that drops the capsule with its error already set
    # loses the error and the deleter with such producers (numpy#32697).
    for label, kwargs in (("dtype code 200", {"dtype": (200, 32, 1)}),
                          ("dtype code 200, a destructor in Python",
                           {"dtype": (200, 32, 1), "python_destructor": True}),
                          ("lanes 4", {"dtype": (2, 32, 4), "shape": (2, 1),
                                       "strides": (1, 1)}),
                          ("device kDLVulkan", {"device": (7, 0)})):
        progress(label)
        k = KitArray(a, **kwargs)
        state, y = take(target, k)
        if state == "refused":
            out.add(isinstance(y, BufferError), "SHOULD", PY + ": refusals raise BufferError",
                    "%s refused with %s" % (label, describe(y)))
        else:
            kept = carried(y)
            want = (k.dtype, k.device)
            out.add(kept == want, "MUST", HDR + ": a consumer refuses what it cannot represent "
                    "(or carries it unchanged)", "%s was imported as %s" % (
                        label, "something it cannot export again" if kept is None else
                        "dtype %s on %s" % kept))
        del y
        collect()
        deleted_once(out, label, k)
    return out


def carried(y):
    """(dtype, device) the result says through its own __dlpack__, or None without one."""
    try:
        f = probe().read(capsule_of(y))
        return tuple(f["dtype"]), tuple(f["device"])
    except Exception:  # noqa: BLE001 - a result that cannot say what it holds
        return None


@check("C9", "MUST", HDR + ": the deleter 'can be NULL'; manager_ctx is the producer's own")
def c9(target):
    """A NULL deleter and a NULL manager_ctx are tolerated."""
    out = new()
    consumer(target)
    a = sample()
    imported(out, target, "NULL deleter", KitArray(a, null_deleter=True), compact_bytes(a),
             refusal_ok=False)
    imported(out, target, "NULL manager_ctx", KitArray(a, null_ctx=True), compact_bytes(a),
             refusal_ok=False)
    return out


@check("C10", "MUST", HDR + ": dtype codes (int64, float64, bool kDLBool 8 bits, bfloat16, "
       "complex, float8) imported as that dtype (never narrowed) or refused with BufferError")
def c10(target):
    """Each dtype is imported as itself (never narrowed) or refused cleanly."""
    out = new()
    consumer(target)
    raw = np.arange(1, 7, dtype=np.uint8)
    # 64-bit values out of 32-bit range: a consumer that narrows them silently (JAX without
    # x64, MLX's float64) imports the wrong bits, and is caught by the width and the values.
    cases = [("int64", np.arange(1, 7, dtype=np.int64) + (1 << 40), (0, 64, 1)),
             ("float64", np.arange(1, 7, dtype=np.float64) / 3, (2, 64, 1)),
             ("bool", np.array([True, False, True, True, False, False]), (6, 8, 1)),
             ("complex64", np.arange(6).astype(np.complex64) * (1 + 2j), (5, 64, 1)),
             ("bfloat16", np.arange(0x3F80, 0x3F86, dtype=np.uint16), (4, 16, 1)),
             ("float8_e4m3fn", raw, (10, 8, 1)),
             ("float8_e5m2", raw, (12, 8, 1))]
    for label, a, triple in cases:
        values = imported(out, target, label, KitArray(a, dtype=triple), compact_bytes(a))
        if values is not None:
            out.add(values.itemsize == triple[1] // 8, "MUST", HDR + ": bits",
                    "%s came back %d bytes wide" % (label, values.itemsize))
            if label == "bool" and values.dtype.kind in "biufc":
                out.add(values.dtype.kind == "b", "MUST", HDR + ": kDLBool is a boolean",
                        "kDLBool came back as %s" % values.dtype)
    return out


@check("C11", "MUST", PY + ": from_dlpack(copy=True) copies, copy=False never does (array API: "
       "BufferError from __dlpack__, ValueError from from_dlpack: both are seen)")
def c11(target):
    """from_dlpack's copy= and device= semantics."""
    out = new()
    consumer(target)
    a = sample()
    low, high = span(a)
    for copy in (True, False):
        k = KitArray(a)
        try:
            y = target.from_dlpack(k, copy=copy)
        except TypeError as e:
            out.add(False, "SHOULD", PY + " (array API 2023.12): copy keyword",
                    "from_dlpack(copy=...) refused (%s): pre-2023.12" % describe(e))
            return out
        except (BufferError, ValueError) as e:
            # A consumer that needs a copy (alignment, layout) refuses copy=False.
            out.add(not copy, "SHOULD", PY + ": copy=True is always possible on the host",
                    "copy=%s refused with %s" % (copy, describe(e)))
            if not copy:
                out.add(False, "INFO", "", "copy=False refused: %s" % describe(e))
            continue
        values = np.asarray(target.to_numpy(y))
        out.add(compact_bytes(values) == compact_bytes(a), "MUST", PY + ": values",
                "copy=%s: values differ" % copy)
        shared = low <= result_address(y, values) < high
        out.add(shared != copy, "MUST", PY + ": copy=%s %s" % (copy, "copies" if copy else
                "never copies"), "copy=%s %s" % (copy, "shares the producer's memory" if copy
                                                 else "made a copy"))
        del y, values
        collect()
    k = KitArray(a, device=(7, 0), data=0)
    try:
        y = target.from_dlpack(k, copy=False)
    except (BufferError, ValueError):
        out.add(True, "SHOULD", "", "")
    except Exception as e:  # noqa: BLE001
        out.add(False, "SHOULD", PY + ": an impossible copy=False raises BufferError (from "
                "__dlpack__) or ValueError (from_dlpack)", "refused with %s" % describe(e))
    else:
        out.add(False, "MUST", PY + ": copy=False never copies; a device it cannot address is "
                "refused", "a kDLVulkan tensor was imported with copy=False")
        del y
    return out
