// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python.h for the rooms of <dlpackpp/python.hpp>: it must come before any standard header,
/// so every room includes this first. A room needs Python.h on the include path (link CMake's
/// Python3::Module); only the umbrella python.hpp compiles to nothing without it. And the full
/// API's calls that 3.13 renamed, under one name for every version, so that the rooms have no
/// version branch of their own for them.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
/// Py_ssize_t lengths for '#' formats, which Python 3.10+ requires before Python.h.
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif

#include "dlpackpp/detail/config.hpp"

#if !defined(Py_LIMITED_API)
DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {
#if PY_VERSION_HEX >= 0x030D0000
/// The calling thread's state, or NULL; never fails.
inline PyThreadState* thread_state_unchecked() noexcept { return PyThreadState_GetUnchecked(); }
/// Whether the interpreter is finalizing.
inline bool is_finalizing() noexcept { return Py_IsFinalizing() != 0; }
/// `name` in `type`'s MRO through CPython's type cache: a new reference, or NULL (nothing set).
inline PyObject* type_lookup(PyTypeObject* type, PyObject* name) noexcept {
  return _PyType_LookupRef(type, name);
}
#else
/// The calling thread's state, or NULL; never fails.
inline PyThreadState* thread_state_unchecked() noexcept { return _PyThreadState_UncheckedGet(); }
/// Whether the interpreter is finalizing.
inline bool is_finalizing() noexcept { return _Py_IsFinalizing() != 0; }
/// `name` in `type`'s MRO through CPython's type cache: a new reference, or NULL (nothing set).
inline PyObject* type_lookup(PyTypeObject* type, PyObject* name) noexcept {
  PyObject* found = _PyType_Lookup(type, name);  // borrowed
  Py_XINCREF(found);
  return found;
}
#endif
}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
#endif  // !Py_LIMITED_API
