# SPDX-License-Identifier: Apache-2.0
"""The bodies of --repro scripts, one per check they reproduce: each takes the target (an
adapter: from_numpy, from_dlpack, to_numpy) and returns the cases that break the rule as
(case, expected, got). Their source is copied into the scripts with _repro_toolkit.py's, so
they use only numpy, the framework and the toolkit's names (read, gather, export, Producer)."""

# The kit's case sets a body needs, by name (their source goes into the script too).
NEEDS = {"P3": ("layouts",), "P5": ("dtype_sources",), "C3": ("layouts",)}


def repro_p1(target):
    """P1: the capsule name and version per max_version."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    bad = []
    for request, want in ((None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "versioned 1.x"),
                          ((1, 3), "versioned 1.x")):
        try:
            cap = x.__dlpack__() if request is None else x.__dlpack__(max_version=request)
        except (TypeError, BufferError):  # an old producer; a refused legacy export
            continue
        f = read(cap)
        got = f["name"] if f["name"] == "dltensor" else "%s %s" % (f["name"], f.get("version"))
        ok = got == want or (want == "versioned 1.x" and f["name"] == "dltensor_versioned"
                             and f["version"][0] <= request[0])
        if not ok:
            bad.append(("max_version=%s" % (request,), want, got))
    return bad


def repro_p3(target):
    """P3: the values reached through each layout's fields."""
    import numpy as np
    bad = []
    for name, a in layouts(np):
        try:
            x = target.from_numpy(a)
        except NotImplementedError:
            continue
        f = export(x)
        if tuple(f["shape"] or ()) != a.shape:
            bad.append((name, "shape %s" % (a.shape,), "shape %s" % f["shape"]))
        elif gather(f) != np.ascontiguousarray(a).tobytes():
            got = np.frombuffer(gather(f), a.dtype).tolist()
            bad.append((name, a.ravel().tolist(), "%s (strides %s, byte_offset %d)" % (
                got, f["strides"], f["byte_offset"])))
    return bad


def repro_p5(target):
    """P5: the dtype triple of each NumPy dtype."""
    import numpy as np
    codes = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
    bad = []
    for name, a in dtype_sources(np):
        if a.dtype.kind not in codes:
            continue
        try:
            f = export(target.from_numpy(a))
        except (NotImplementedError, BufferError):
            continue
        want = (codes[a.dtype.kind], a.itemsize * 8, 1)
        if tuple(f["dtype"]) != want:
            bad.append((name, "dtype %s" % (want,), "dtype %s" % (tuple(f["dtype"]),)))
    return bad


def _refusal(label, call, bad):
    """call() where the spec wants a refusal by BufferError: what it returned, or None."""
    try:
        return call()
    except BufferError:
        return None
    except Exception as e:  # noqa: BLE001 - the class is what is checked
        bad.append((label, "BufferError", "%s: %s" % (type(e).__name__, e)))
        return None


def repro_p7(target):
    """P7: copy=True copies (IS_COPIED), copy=False never does."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    plain = read(x.__dlpack__(max_version=(1, 3)))
    first = plain["data"] + plain["byte_offset"]
    bad = []
    for copy in (True, False):
        f = _refusal("copy=%s" % copy, lambda: read(x.__dlpack__(max_version=(1, 3),
                                                                 copy=copy)), bad)
        if f is None:
            continue
        shared = f["data"] + f["byte_offset"] == first
        if shared == copy:
            bad.append(("copy=%s" % copy, "new memory" if copy else "the same memory",
                        "the same memory" if shared else "new memory"))
        if copy and not f["flags"] & 2:
            bad.append(("copy=True", "flags with IS_COPIED (2)", "flags %#x" % f["flags"]))
    other = (2, 0) if plain["device"][0] != 2 else (7, 0)
    f = _refusal("copy=False, dl_device=%s" % (other,), lambda: read(x.__dlpack__(
        max_version=(1, 3), copy=False, dl_device=other)), bad)
    if f is not None:
        bad.append(("copy=False, dl_device=%s" % (other,), "BufferError", "a capsule"))
    return bad


def repro_p8(target):
    """P8: dl_device honoured or refused with BufferError."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32))
    own = tuple(x.__dlpack_device__())
    other = (2, 0) if own[0] != 2 else (7, 0)
    bad = []
    f = read(x.__dlpack__(max_version=(1, 3), dl_device=own))
    if tuple(f["device"]) != own:
        bad.append(("dl_device=%s" % (own,), "a capsule on it", "one on %s" % (f["device"],)))
    f = _refusal("dl_device=%s" % (other,), lambda: read(x.__dlpack__(
        max_version=(1, 3), dl_device=other)), bad)
    if f is not None and tuple(f["device"]) != other:
        bad.append(("dl_device=%s" % (other,), "a capsule on it or BufferError",
                    "one on %s" % (f["device"],)))
    return bad


def repro_p10(target):
    """P10: __dlpack_device__ equals the capsule's device."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32))
    dev = x.__dlpack_device__()
    f = export(x)
    ok = (isinstance(dev, tuple) and len(dev) == 2 and all(isinstance(v, int) for v in dev)
          and tuple(dev) == tuple(f["device"]))
    return [] if ok else [("__dlpack_device__()", "a pair of ints equal to %s" % (
        tuple(f["device"]),), repr(dev))]


def _imported(target, producer):
    """('ok', values as bytes) or ('refused', the exception) for from_dlpack(producer)."""
    import numpy as np
    try:
        y = target.from_dlpack(producer)
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        # Its frames may hold the capsule: dropped, so that its deleter can run now.
        e.__traceback__ = e.__context__ = e.__cause__ = None
        return "refused", e
    return "ok", np.ascontiguousarray(np.asarray(target.to_numpy(y))).tobytes()


def _released_once(label, producer, bad):
    """Adds a finding unless the producer's deleter ran exactly once."""
    import gc
    gc.collect()
    if producer.deleted != 1:
        bad.append((label, "the deleter called once", "%d calls" % producer.deleted))


def repro_c1(target):
    """C1: major-2 capsules refused, the deleter called once."""
    import numpy as np
    bad = []
    for label, poison in (("major 2, poisoned fields", True), ("major 2, valid fields", False)):
        p = Producer(np.arange(6, dtype=np.float32), version=(2, 0), poison=poison)
        state, got = _imported(target, p)
        if state == "ok":
            bad.append((label, "refused (BufferError)", "imported"))
        elif not isinstance(got, BufferError):
            bad.append((label, "BufferError", "%s: %s" % (type(got).__name__, got)))
        del got
        _released_once(label, p, bad)
    return bad


def _values_cases(target, cases):
    """The cases whose import gives other values or refuses with another class than
    BufferError, or whose deleter does not run once."""
    import numpy as np
    bad = []
    for label, a, kwargs in cases:
        p = Producer(a, **kwargs)
        state, got = _imported(target, p)
        if state == "ok" and got != np.ascontiguousarray(a).tobytes():
            bad.append((label, a.ravel().tolist(), np.frombuffer(got, a.dtype).tolist()))
        elif state == "refused" and not isinstance(got, BufferError):
            bad.append((label, "the values, or BufferError", "%s: %s" % (type(got).__name__,
                                                                          got)))
        del got
        _released_once(label, p, bad)
    return bad


def repro_c3(target):
    """C3: strided inputs read right or refused with BufferError."""
    import numpy as np
    wanted = ("F order", "sliced", "negative step", "negative 2-d", "transposed",
              "size-1 odd strides")
    return _values_cases(target, [(n, a, {}) for n, a in layouts(np) if n in wanted])


def repro_c4(target):
    """C4: byte_offset applied."""
    import numpy as np
    base = np.arange(1, 41, dtype=np.float32).reshape(4, 10)
    row = base[2]
    offset = row.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    return _values_cases(target, [("row 2 at byte_offset %d" % offset, row, {
        "data": base.__array_interface__["data"][0], "byte_offset": offset})])


def repro_c8(target):
    """C8: refusals are BufferError and call the deleter once."""
    import numpy as np
    bad = []
    for label, kwargs in (("dtype code 200", {"dtype": (200, 32, 1)}),
                          ("lanes 4", {"dtype": (2, 32, 4), "shape": [2, 1],
                                       "strides": [1, 1]}),
                          ("device kDLVulkan", {"device": (7, 0)})):
        p = Producer(np.arange(8, dtype=np.float32), **kwargs)
        state, got = _imported(target, p)
        if state == "refused" and not isinstance(got, BufferError):
            bad.append((label, "BufferError", "%s: %s" % (type(got).__name__, got)))
        del got
        _released_once(label, p, bad)
    return bad


def repro_c10(target):
    """C10: dtypes imported as themselves, never narrowed."""
    import numpy as np
    cases = [("int64", np.arange(1, 7, dtype=np.int64) + (1 << 40), {}),
             ("float64", np.arange(1, 7, dtype=np.float64) / 3, {}),
             ("bool", np.array([True, False, True]), {}),
             ("complex64", np.arange(3).astype(np.complex64) * (1 + 2j), {}),
             # Types NumPy lacks, as their bits: the values or a BufferError refusal.
             ("bfloat16", np.arange(0x3F80, 0x3F86, dtype=np.uint16), {"dtype": (4, 16, 1)}),
             ("float8_e4m3fn", np.arange(1, 7, dtype=np.uint8), {"dtype": (10, 8, 1)}),
             ("float8_e5m2", np.arange(1, 7, dtype=np.uint8), {"dtype": (12, 8, 1)})]
    return _values_cases(target, cases)


def repro_p2(target):
    """P2: malformed keywords raise TypeError."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32))
    bad = []
    for label, kwargs in (("max_version='1'", {"max_version": "1"}),
                          ("max_version=(1,)", {"max_version": (1,)}),
                          ("an unknown keyword", {"no_such_keyword": 1})):
        try:
            x.__dlpack__(**kwargs)
            bad.append((label, "TypeError", "accepted"))
        except TypeError:
            pass
        except Exception as e:  # noqa: BLE001 - the class is what is checked
            bad.append((label, "TypeError", "%s: %s" % (type(e).__name__, e)))
    return bad


def repro_p9(target):
    """P9 (CPU): stream=None is accepted, a non-integer stream is TypeError."""
    import numpy as np
    x = target.from_numpy(np.arange(6, dtype=np.float32))
    bad, kwargs = [], {}
    try:
        x.__dlpack__(stream=None)
    except BufferError:  # a refused legacy export (allowed): asked again, versioned
        kwargs = {"max_version": (1, 3)}
        try:
            x.__dlpack__(stream=None, **kwargs)
        except Exception as e:  # noqa: BLE001
            bad.append(("stream=None", "a capsule", "%s: %s" % (type(e).__name__, e)))
    except Exception as e:  # noqa: BLE001
        bad.append(("stream=None", "a capsule", "%s: %s" % (type(e).__name__, e)))
    try:
        x.__dlpack__(stream="0", **kwargs)
        bad.append(("stream='0'", "TypeError", "accepted"))
    except TypeError:
        pass
    except Exception as e:  # noqa: BLE001
        bad.append(("stream='0'", "TypeError", "%s: %s" % (type(e).__name__, e)))
    return bad


def repro_c2(target):
    """C2: the consumer passes max_version, and takes a producer that predates it."""
    import numpy as np
    a = np.arange(6, dtype=np.float32)
    p = Producer(a)
    bad = _values_cases(target, [("legacy producer", a, {"legacy_only": True})])
    _imported(target, p)
    if not any(c["max_version"] is not None for c in p.calls):
        bad.append(("from_dlpack", "__dlpack__(max_version=...)", "calls %s" % p.calls))
    return bad


def repro_c5(target):
    """C5: size 0 with NULL data and 0-d with NULL shape and strides are imported."""
    import numpy as np
    bad = []
    for label, a, kwargs in (("size 0 with NULL data", np.zeros((0, 3), np.float32),
                              {"data": 0}),
                             ("0-d with NULL shape and strides", np.array(3.5, np.float32), {})):
        p = Producer(a, **kwargs)
        state, got = _imported(target, p)
        if state == "refused":
            bad.append((label, "imported", "%s: %s" % (type(got).__name__, got)))
        elif got != a.tobytes():
            bad.append((label, a.tolist(), np.frombuffer(got, a.dtype).tolist()))
        del got
        _released_once(label, p, bad)
    return bad


def repro_c9(target):
    """C9: a NULL deleter and a NULL manager_ctx are tolerated."""
    import numpy as np
    a = np.arange(6, dtype=np.float32)
    bad = []
    for label, kwargs in (("NULL deleter", {"null_deleter": True}),
                          ("NULL manager_ctx", {"null_ctx": True})):
        state, got = _imported(target, Producer(a, **kwargs))
        if state == "refused":
            bad.append((label, "imported", "%s: %s" % (type(got).__name__, got)))
        elif got != a.tobytes():
            bad.append((label, a.tolist(), np.frombuffer(got, a.dtype).tolist()))
    return bad
