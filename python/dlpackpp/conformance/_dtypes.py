# SPDX-License-Identifier: Apache-2.0
"""DLPack dtypes as numpy sees them: the one table the checks, the targets and host_copy
share (kept apart so that none of them has to import another for it)."""

# numpy dtype name -> DLPack (code, bits, lanes). ml_dtypes' names where NumPy has none.
DTYPES = {
    "bool": (6, 8, 1), "int8": (0, 8, 1), "int16": (0, 16, 1), "int32": (0, 32, 1),
    "int64": (0, 64, 1), "uint8": (1, 8, 1), "uint16": (1, 16, 1), "uint32": (1, 32, 1),
    "uint64": (1, 64, 1), "float16": (2, 16, 1), "float32": (2, 32, 1), "float64": (2, 64, 1),
    "complex64": (5, 64, 1), "complex128": (5, 128, 1), "bfloat16": (4, 16, 1),
    "float8_e4m3fn": (10, 8, 1), "float8_e5m2": (12, 8, 1),
}


def dtype_of(np_dtype):
    """The DLPack triple of a numpy (or ml_dtypes) dtype; None for anything DLPack lacks."""
    if np_dtype.byteorder not in "=|" and np_dtype.itemsize > 1:
        return None
    return DTYPES.get(np_dtype.name)


def numpy_dtype(triple):
    """The numpy dtype for a DLPack triple: the real one where numpy (or ml_dtypes) has it,
    else an unsigned integer of the same width (the bytes are what the checks compare)."""
    import numpy as np
    for name, t in DTYPES.items():
        if tuple(triple) == t:
            try:
                return np.dtype(name)
            except TypeError:
                try:
                    import ml_dtypes
                    return np.dtype(getattr(ml_dtypes, name))
                except (ImportError, AttributeError):
                    break
    code, bits, lanes = triple
    if bits % 8 or bits * lanes // 8 not in (1, 2, 4, 8, 16):
        raise NotImplementedError("no numpy dtype for %s" % (triple,))
    width = bits * lanes // 8
    return np.dtype("V%d" % width) if width == 16 else np.dtype("u%d" % width)


def element_strides(a):
    """A numpy array's strides in elements."""
    return tuple(s // a.itemsize for s in a.strides)


def address(a):
    """The address of a numpy array's first element."""
    return a.__array_interface__["data"][0]
