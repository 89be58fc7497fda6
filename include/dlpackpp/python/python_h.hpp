// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python.h for the rooms of <dlpackpp/python.hpp>: it must come before any standard header,
/// so every room includes this first. Where Python.h is not on the include path
/// DLPACKPP_PYTHON_AVAILABLE is 0 and every room is empty, so that tools compiling each header
/// alone keep working; using the names then fails to compile (add Python's include folder,
/// e.g. link CMake's Python3::Module).
#pragma once

#if defined(Py_PYTHON_H) || !defined(__has_include) || __has_include(<Python.h>)
/// 1: Python.h is in this translation unit and the Python layer is defined.
#define DLPACKPP_PYTHON_AVAILABLE 1
#ifndef PY_SSIZE_T_CLEAN
/// Py_ssize_t lengths for '#' formats, which Python 3.10+ requires before Python.h.
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif
#else
/// 0: Python.h is not on the include path; the Python layer's headers are empty.
#define DLPACKPP_PYTHON_AVAILABLE 0
#endif
