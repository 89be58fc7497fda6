// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python.h for the rooms of <dlpackpp/python.hpp>: it must come before any standard header,
/// so every room includes this first. A room needs Python.h on the include path (link CMake's
/// Python3::Module); only the umbrella python.hpp compiles to nothing without it.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
/// Py_ssize_t lengths for '#' formats, which Python 3.10+ requires before Python.h.
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>
#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif
