// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python.h for the rooms of <dlpackpp/python.hpp>: it must come before any standard header,
/// so every room includes it first, and a translation unit may simply start with a room.
#pragma once

#ifndef PY_SSIZE_T_CLEAN
#define PY_SSIZE_T_CLEAN
#endif
#include <Python.h>

#if PY_VERSION_HEX < 0x03080000
#error "dlpackpp/python.hpp needs Python 3.8 or newer"
#endif
