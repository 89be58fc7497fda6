// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python.h for the rooms of <dlpackpp/python.hpp>: it must come before any standard header,
/// so every room includes this first. Where Python.h is not on the include path
/// DLPACKPP_PYTHON_AVAILABLE is 0 and every room is empty, so that tools compiling each header
/// alone keep working; using the names then fails to compile (add Python's include folder,
/// e.g. link CMake's Python3::Module).
#pragma once

#if defined(Py_PYTHON_H) || !defined(__has_include) || __has_include(<Python.h>)
#define DLPACKPP_PYTHON_AVAILABLE 1
#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif
#else
#define DLPACKPP_PYTHON_AVAILABLE 0
#endif
