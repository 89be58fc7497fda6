# SPDX-License-Identifier: Apache-2.0
"""Exchange-table checks X1-X5 (DLPack 1.3 `__dlpack_c_exchange_api__`): the table is found,
walked and called through the probe, and what it gives is compared with __dlpack__'s."""

import numpy as np

from ._build import probe
from . import _fields as F
from ._checks import check, new
from ._checks_stream import cuda_tools
from ._kit import (READ_ONLY, Skip, address, collect, host_values, layouts, make, make_float32,
                   sample)

HDR = "dlpack.h 1.3 (DLPackExchangeAPI)"
REQUIRED = ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
            "managed_tensor_to_py_object_no_sync", "current_work_stream")


def exchange_api(target):
    """(x, type(x).__dlpack_c_exchange_api__) for a float32 array of the target's, or Skip:
    the table is optional."""
    x = make_float32(target, sample())
    api = getattr(type(x), "__dlpack_c_exchange_api__", None)
    if api is None:
        raise Skip("%s has no __dlpack_c_exchange_api__ (optional)" % type(x).__name__)
    return x, api


def table(target):
    """(x, its type's table capsule) or Skip: the table is optional."""
    x, api = exchange_api(target)
    if isinstance(api, int):
        raise Skip("an integer __dlpack_c_exchange_api__ (the 1.2 draft's form) is never "
                   "dereferenced; X1 reports it")
    return x, api


def usable(target):
    """(x, table) for a table the checks can call, or Skip (see X2)."""
    x, api = table(target)
    head = probe().table_header(api)
    if head["chain"][0][0] != 1 or not all(head["entries"][e] for e in REQUIRED):
        raise Skip("the table is not usable (see X2)")
    return x, api


@check("X1", "MUST", HDR + ": type(x).__dlpack_c_exchange_api__ is a 'dlpack_exchange_api' "
       "capsule, one table for the process")
def x1(target):
    """The table is a 'dlpack_exchange_api' capsule, the same every time."""
    out = new()
    x, api = exchange_api(target)
    if isinstance(api, int):
        out.add(False, "SHOULD", F.INTEGER_TABLE_RULE, F.integer_table())
        return out
    p = probe()
    import ctypes
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    name = get_name(api)
    out.add(name == b"dlpack_exchange_api", "MUST", F.TABLE_NAME_RULE,
            F.table_name(name.decode("utf-8", "replace") if name is not None else None))
    first = p.table_header(api)["address"]
    again = p.table_header(getattr(type(x), "__dlpack_c_exchange_api__"))["address"]
    other = make(target, np.zeros(3, dtype=np.float32))
    third = p.table_header(getattr(type(other), "__dlpack_c_exchange_api__"))["address"]
    out.add(first == again == third, "MUST", HDR + ": 'must stay alive throughout the lifetime "
            "of the process' (one static table)", "the table's address changes between looks")
    return out


@check("X2", "MUST", HDR + ": header major 1 (or an older table through prev_api), the chain "
       "ends, the required entries are not NULL")
def x2(target):
    """The table's header chain and required entries."""
    out = new()
    x, api = table(target)
    head = probe().table_header(api)
    out.add(not head["cyclic"], "MUST", HDR + ": prev_api ends in NULL",
            "prev_api does not end within 16 tables")
    out.add(any(v[0] == 1 for v in head["chain"]), "MUST", F.TABLE_MAJOR_RULE,
            F.table_major(head["chain"]))
    if head["chain"][0][0] == 1:
        missing = [e for e in REQUIRED if not head["entries"][e]]
        out.add(not missing, "MUST", HDR + ": 'This function must not be NULL'",
                "NULL entries: " + ", ".join(missing))
    return out


def _same(out, label, fa, fb, what):
    keys = ("ndim", "shape", "dtype", "device")
    for key in keys:
        if fa[key] != fb[key] and not (key == "shape" and not fa["ndim"]):
            out.add(False, "MUST", F.IMPORT_RULE,
                    "%s: %s" % (label, F.import_differs(key, fa[key], fb[key], what)))
            return
    first = (fa["data"] + fa["byte_offset"], fb["data"] + fb["byte_offset"])
    out.add(first[0] == first[1], "MUST", F.IMPORT_RULE,
            "%s: %s" % (label, F.import_starts(first[0], first[1], what)))


@check("X3", "MUST", HDR + ": managed_tensor_from_py_object_no_sync (and the borrow) describe "
       "the same tensor as __dlpack__(max_version=(1, 3))")
def x3(target):
    """The table's import equals __dlpack__'s, field by field."""
    out = new()
    x0, api = usable(target)
    p = probe()
    cases = [(n, a) for n, a in layouts(np) if n in ("C order", "sliced", "transposed", "0-d")]
    for name, a in cases:
        x = make(target, a)
        if x is None:
            continue
        owned = p.table_from_py(api, x)
        fa, va = p.read(owned), host_values(owned)
        cap = x.__dlpack__(max_version=(1, 3))
        fb, vb = p.read(cap), host_values(cap)
        _same(out, name, fa, fb, "the table's import")
        out.add(va == vb, "MUST", HDR + ": the same values", "%s: values differ" % name)
        out.add((fa["flags"] & READ_ONLY) == (fb["flags"] & READ_ONLY), "MUST",
                HDR + ": the same READ_ONLY flag", "%s: READ_ONLY differs" % name)
        borrowed = p.table_borrow(api, x)
        if borrowed is not None:
            _same(out, name, borrowed[0], fb, "the borrow")
            out.add(borrowed[1] == vb, "MUST", HDR + ": the borrow's values",
                    "%s: the borrow's values differ" % name)
        del owned, cap
    return out


@check("X4", "MUST", HDR + ": current_work_stream is the framework's current stream; for CPU "
       "'the producer can simply return NULL'")
def x4(target):
    """current_work_stream is the framework's current stream."""
    out = new()
    x, api = usable(target)
    rc, stream, why = probe().table_stream(api, 1, 0)
    out.add(rc == 0, "SHOULD", HDR + ": a CPU-only framework 'can just provide a dummy "
            "implementation that always sets NULL'", "current_work_stream(kDLCPU) failed "
            "(%d%s)" % (rc, ": " + why if why else ""))
    if rc == 0 and stream:
        out.add(False, "INFO", "", "CPU stream %#x (NULL is what consumers expect)" % stream)
    tools = cuda_tools()
    make_cuda, current = getattr(target, "cuda_array", None), getattr(target, "current_stream",
                                                                          None)
    if tools is None or make_cuda is None or current is None:
        out.add(False, "INFO", "", "GPU half skipped: %s" % ("no CUDA device" if tools is None
                else "the adapter has no cuda_array/current_stream"))
        return out
    xg = make_cuda(sample(flat=True))
    if xg is None:
        out.add(False, "INFO", "", "GPU half skipped: the framework has no CUDA device")
        return out
    dev = tuple(xg.__dlpack_device__())
    context = getattr(target, "stream_context", None)
    if context is not None:
        # A stream of its own made current, so that the default stream's NULL handle
        # cannot pass for the right answer.
        scope, want = context(dev)
        with scope:
            rc, stream, why = probe().table_stream(api, dev[0], dev[1])
    else:
        rc, stream, why = probe().table_stream(api, dev[0], dev[1])
        want = current(dev)
    out.add(rc == 0 and stream == want, "MUST", HDR + ": 'it should map to "
            "torch.cuda.current_stream'", "current_work_stream(%s) gave rc %d, %#x; the "
            "framework's current stream is %#x" % (dev, rc, stream, want))
    return out


@check("X5", "MUST", HDR + ": the allocator honours the prototype and calls SetError exactly "
       "when it fails; to_py_object takes ownership (deleter once)")
def x5(target):
    """The allocator and to_py_object keep their contracts."""
    out = new()
    x, api = usable(target)
    p = probe()
    rc, owned, calls, kind, message = p.table_alloc(api, (2, 3), (2, 32, 1), (1, 0))
    out.add(rc == 0 and owned is not None and calls == 0, "MUST", HDR + ": SetError 'is called "
            "exactly when NULL is returned'", "allocating float32 (2, 3) on CPU: rc %d, %s, "
            "SetError called %d times" % (rc, "a tensor" if owned else "NULL", calls))
    if owned is not None:
        f = p.read(owned)
        good = (f["shape"] == [2, 3] and tuple(f["dtype"]) == (2, 32, 1)
                and tuple(f["device"]) == (1, 0))
        out.add(good, "MUST", HDR + ": the allocation honours the prototype",
                "asked float32 (2, 3) on CPU, got %s %s on %s" % (tuple(f["dtype"]), f["shape"],
                                                                   tuple(f["device"])))
        del owned
    rc, owned, calls, kind, message = p.table_alloc(api, (2, 3), (200, 32, 1), (1, 0))
    if rc == 0:
        out.add(False, "MUST", HDR + ": the allocation honours the prototype",
                "an unknown dtype code 200 was allocated")
        del owned
    else:
        out.add(calls == 1 and owned is None, "MUST", HDR + ": SetError called exactly once on "
                "failure, *out NULL", "a refused allocation called SetError %d times" % calls)
    counter, frees = p.new_counter(), p.double_frees()
    a = sample()
    cap = p.make_capsule(a, address(a), a.shape, (3, 1), 0, (2, 32, 1), (1, 0), counter=counter)
    rc, obj = p.table_to_py(api, p.consume(cap))
    out.add(rc == 0 and obj is not None, "MUST", HDR + ": to_py_object wraps an owning tensor",
            "managed_tensor_to_py_object_no_sync failed (%d)" % rc)
    if obj is not None:
        out.add(type(obj) is type(x), "SHOULD", HDR + ": 'into the producer's Python type'",
                "to_py_object gave a %s" % type(obj).__name__)
    del obj, cap
    collect()
    out.add(p.count(counter) == 1 and p.double_frees() == frees, "MUST", HDR + ": ownership is "
            "taken: the deleter runs once when the object dies", "the deleter ran %d times"
            % p.count(counter))
    return out
