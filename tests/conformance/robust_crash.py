# SPDX-License-Identifier: Apache-2.0
"""An adapter for the kit's robustness test: the reference framework, except that its
from_dlpack dies of SIGSEGV on a Fortran-order input. C3 fails naming the signal and the
case; the next child takes the checks after it."""
import ctypes

from _reference import adapter

globals().update(adapter(None))
NAME = "crash"
_from_dlpack = from_dlpack  # noqa: F821 (from the reference)


def from_dlpack(x, **kwargs):
    """The framework's consumer."""
    a = getattr(x, "a", None)
    if a is not None and a.ndim == 2 and a.flags.f_contiguous and not a.flags.c_contiguous:
        ctypes.string_at(0)  # a read of address 0: SIGSEGV
    return _from_dlpack(x, **kwargs)
