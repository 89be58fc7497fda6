// SPDX-License-Identifier: Apache-2.0
/// @file
/// Python bindings without a binding library: capsules, `__dlpack__` and exchange-API import,
/// borrowing, and the `dlpackpp.Tensor` export type. Opt-in (not in the umbrella header); needs
/// only `Python.h` (3.8 to 3.13, the limited API included; see docs/python.md for what the
/// limited API costs). Every function expects the calling thread attached to the interpreter
/// (the GIL held, on a GIL build) unless it says otherwise. On a free-threaded CPython (3.13t)
/// any number of threads may use all of it at once, in modules that declare they run without
/// the GIL (docs/python.md, decision 5). The rooms, each one concern, in the order they build
/// on each other: python/errors.hpp (the one Errc-to-exception mapping),
/// python/free_threading.hpp (sharing state without the GIL), python/gil.hpp (references dropped
/// on any thread, shutdown), python/capsule.hpp, python/state.hpp (per interpreter),
/// python/type_cache.hpp (per producer type; exchange_api_of), python/stream_order.hpp (pending
/// device work, without CUDA types), python/tensor_object.hpp, python/tensor_dlpack.hpp and
/// python/tensor_type.hpp (dlpackpp.Tensor), python/import.hpp (try_from_dlpack),
/// python/borrow.hpp (try_borrow), python/cuda.hpp (to_pyobject with a producer stream; empty
/// unless the translation unit sees the CUDA runtime, as <dlpackpp/cuda.hpp> says).
#pragma once

// Empty where Python.h is not on the include path, so that tools compiling every public
// header alone keep working; using the names then fails to compile.
#if defined(Py_PYTHON_H) || !defined(__has_include) || __has_include(<Python.h>)
/// 1: Python.h is in this translation unit and the Python layer is defined.
#define DLPACKPP_PYTHON_AVAILABLE 1

#include "dlpackpp/python/python_h.hpp"  // Python.h, before any standard header

// The core the rooms build on (named here so that the vendored copy includes it first).
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers.hpp"
#include "dlpackpp/tensor_view.hpp"
#include "dlpackpp/validate.hpp"

#include "dlpackpp/python/borrow.hpp"
#include "dlpackpp/python/capsule.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/free_threading.hpp"
#include "dlpackpp/python/gil.hpp"
#include "dlpackpp/python/import.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/stream_order.hpp"
#include "dlpackpp/python/tensor_dlpack.hpp"
#include "dlpackpp/python/tensor_object.hpp"
#include "dlpackpp/python/tensor_type.hpp"
#include "dlpackpp/python/type_cache.hpp"
// Empty unless this translation unit sees the CUDA runtime (see dlpackpp/cuda.hpp).
#include "dlpackpp/python/cuda.hpp"

#else
/// 0: Python.h is not on the include path; this header defines nothing.
#define DLPACKPP_PYTHON_AVAILABLE 0
#endif
