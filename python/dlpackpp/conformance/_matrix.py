# SPDX-License-Identifier: Apache-2.0
"""M1, the producer x consumer matrix: every producer's array of a fixed case set handed to
every consumer's from_dlpack, with outcome pass (same memory, same values), copy (same
values, other memory), refuse (an exception), wrong (other values, or another dtype: silent
narrowing) or crash (the child died; filled in by the runner)."""

import numpy as np

from ._checks import check, describe
from ._kit import adapter_changed, collect, compact_bytes, export, first_address, result_address

READ_ONLY_CASE = "read-only float32"


def cases():
    """The fixed case set: (name, array); bfloat16 where ml_dtypes is installed."""
    base = np.arange(1, 49, dtype=np.float32).reshape(6, 8)
    out = [
        ("C-order float32", base[:2, :3].copy()),
        ("transposed float32", base[:3, :4].T),
        ("sliced float32", base[1:6:2, 1:7:3]),
        ("negative-step float32", base[::-2, 3]),
        ("int64 vector", np.arange(5, dtype=np.int64) + (1 << 40)),
        ("float64 vector", np.arange(5, dtype=np.float64) / 3),
        ("bool", np.array([True, False, True])),
        ("complex64", np.arange(4).astype(np.complex64) * (1 - 1j)),
        ("size-0 float32", np.zeros((0, 3), dtype=np.float32)),
        ("0-d float64", np.array(2.25)),
        (READ_ONLY_CASE, base[:2, :3].copy()),
    ]
    try:
        import ml_dtypes
        out.insert(7, ("bfloat16", np.arange(1, 5).astype(ml_dtypes.bfloat16)))
    except ImportError:
        pass
    return out


def _source(producer, name, a):
    """The producer's array of case `name`, or None where it cannot make it as asked."""
    try:
        if name == READ_ONLY_CASE:
            return producer.read_only(a) if hasattr(producer, "read_only") else None
        x = producer.from_numpy(a)
    except NotImplementedError:
        return None
    return None if adapter_changed(producer, a, x) else x


def cell(producer, consumer, case):
    """One cell: {"outcome", "detail"}; None where the producer cannot make the case."""
    a = dict(cases())[case]
    x = _source(producer, case, a)
    if x is None:
        return None
    try:
        source = first_address(export(x, max_version=(1, 3))[1])
    except Exception:  # noqa: BLE001 - legacy producer, or one that cannot export twice
        try:
            source = first_address(export(x)[1])
        except Exception:  # noqa: BLE001
            source = None
    try:
        y = consumer.from_dlpack(x)
    except Exception as e:  # noqa: BLE001
        return {"outcome": "refuse", "detail": describe(e)}
    try:
        values = np.asarray(consumer.to_numpy(y))
    except Exception as e:  # noqa: BLE001
        return {"outcome": "refuse", "detail": "to_numpy: " + describe(e)}
    if values.shape != a.shape or compact_bytes(values) != compact_bytes(a):
        return {"outcome": "wrong", "detail": "%s %s, expected %s %s" % (
            values.dtype, values.shape, a.dtype, a.shape)}
    shared = a.size == 0 or source is None or result_address(y, values) == source
    del y, values
    collect()
    return {"outcome": "pass" if shared else "copy", "detail": ""}


@check("M1", "INFO", "every producer x consumer pair over a fixed case set")
def m1(target):
    """The matrix runs over pairs of targets, not one: the runner runs it with cell()."""
    raise AssertionError("M1 is run by the runner, cell by cell")
