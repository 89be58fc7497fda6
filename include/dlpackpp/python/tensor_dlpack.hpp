// SPDX-License-Identifier: Apache-2.0
/// @file
/// `dlpackpp.Tensor.__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None)`:
/// its arguments checked as NumPy and PyTorch check theirs, then an export that shares the
/// tensor (any number of times) or, with copy=True, a fresh copy.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/conversions.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/python/capsule.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/tensor_object.hpp"

#include <climits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

// Where METH_FASTCALL | METH_KEYWORDS exists (the full API; the limited API from 3.10),
// __dlpack__ reads its keywords itself: interned names compare by address, and no tuple or
// dict is made for the call. Elsewhere PyArg_ParseTupleAndKeywords does it. What it buys:
// `__dlpack__(max_version=(1, 0))` runs 405 instructions inside the method instead of 1,750
// (callgrind, NumPy 2 venv), not counting the tuple and dict the interpreter no longer makes.
// What it relies on: the names interned in Internals::keyword_names (a name that is not
// interned is compared by text).
#if !defined(Py_LIMITED_API) || Py_LIMITED_API + 0 >= 0x030A0000
#define DLPACKPP_DETAIL_PY_FASTCALL_DLPACK 1
#else
#define DLPACKPP_DETAIL_PY_FASTCALL_DLPACK 0
#endif

/// The arguments of __dlpack__, each Py_None when not given (borrowed).
struct DlpackArguments {
  PyObject* stream = Py_None;
  PyObject* max_version = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
};

#if DLPACKPP_DETAIL_PY_FASTCALL_DLPACK
// Keyword-only, an unknown keyword is a TypeError, as PyArg_ParseTupleAndKeywords would say.
inline bool parse_dlpack_arguments(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                                   DlpackArguments& out) {
  if (nargs != 0) {
    PyErr_Format(PyExc_TypeError, "__dlpack__() takes no positional arguments (%zd given)", nargs);
    return false;
  }
  if (kwnames == nullptr) return true;
  Internals* in = internals();
  if (in == nullptr) return false;
  PyObject** slots[4] = {&out.max_version, &out.stream, &out.dl_device, &out.copy};
  const Py_ssize_t count = PyTuple_Size(kwnames);
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* name = PyTuple_GetItem(kwnames, i);
    int found = -1;
    for (int k = 0; found < 0 && k < 4; ++k) {
      if (name == in->keyword_names[k]) found = k;
    }
    for (int k = 0; found < 0 && k < 4; ++k) {  // a name that is not interned: compare the text
      const int cmp = PyUnicode_Compare(name, in->keyword_names[k]);
      if (cmp == -1 && PyErr_Occurred() != nullptr) return false;
      if (cmp == 0) found = k;
    }
    if (found < 0) {
      PyErr_Format(PyExc_TypeError, "'%U' is an invalid keyword argument for __dlpack__()", name);
      return false;
    }
    *slots[found] = args[nargs + i];
  }
  return true;
}
#endif

/// An int that is not a bool (True is an int to Python, never a meaningful stream or extent).
inline bool is_plain_int(PyObject* value) noexcept {
  return PyLong_Check(value) && !PyBool_Check(value);
}

// An int as a long, one too big for it saturated (LONG_MIN, LONG_MAX): an int of any size is a
// valid version or device number, just not one this tensor has.
inline long saturated_long(PyObject* value) noexcept {
  int overflow = 0;
  const long out = PyLong_AsLongAndOverflow(value, &overflow);
  return overflow > 0 ? LONG_MAX : overflow < 0 ? LONG_MIN : out;
}

// `value` as a (int, int) tuple, TypeError otherwise.
inline bool parse_pair(PyObject* value, const char* what, long& first, long& second) {
  if (!PyTuple_Check(value) || PyTuple_Size(value) != 2 ||
      !is_plain_int(PyTuple_GetItem(value, 0)) || !is_plain_int(PyTuple_GetItem(value, 1))) {
    PyErr_Format(PyExc_TypeError,
                 "dlpackpp.Tensor.__dlpack__: %s must be a tuple of two ints, not %R", what, value);
    return false;
  }
  first = saturated_long(PyTuple_GetItem(value, 0));
  second = saturated_long(PyTuple_GetItem(value, 1));
  return true;
}

/// What a checked __dlpack__ call asks for.
struct DlpackRequest {
  bool versioned = false;  ///< max_version >= (1, 0): a versioned capsule
  bool copy = false;       ///< copy=True
};

/// Checks every argument before anything is exported (see docs/python.md): stream None, or
/// an int (-1 only for a CPU tensor: ValueError for another); max_version and dl_device
/// tuples of two ints; copy None or a bool. A wrong type is TypeError.
inline bool check_dlpack_arguments(const ImportedTensor& tensor, const DlpackArguments& a,
                                   DlpackRequest& out) {
  const Device ours = tensor.device();
  if (a.stream != Py_None) {
    if (!is_plain_int(a.stream)) {
      PyErr_Format(PyExc_TypeError,
                   "dlpackpp.Tensor.__dlpack__: stream must be an int or None, "
                   "not %R",
                   a.stream);
      return false;
    }
    // Without a stream hook the C++ code that made the tensor finished writing before
    // to_pyobject, so any stream of its device is already in order; with one (a tensor handed
    // over with its producer's stream, python/cuda.hpp) the hook reads the value. A CPU
    // tensor has no streams at all: -1 ("do not synchronize") is the one integer allowed.
    if (ours.type() == kDLCPU) {
      const long long stream = PyLong_AsLongLong(a.stream);
      if (stream != -1 || PyErr_Occurred() != nullptr) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "dlpackpp.Tensor.__dlpack__: stream must be None or -1 "
                     "for a CPU tensor, not %R",
                     a.stream);
        return false;
      }
    }
  }
  long major = 0;
  long minor = 0;
  if (a.max_version != Py_None && !parse_pair(a.max_version, "max_version", major, minor))
    return false;
  out.versioned = DLPACKPP_HAS_VERSIONED && a.max_version != Py_None && major >= 1;
  if (a.dl_device != Py_None) {
    long type = 0;
    long id = 0;
    if (!parse_pair(a.dl_device, "dl_device", type, id)) return false;
    if (type != static_cast<long>(ours.type()) || id != static_cast<long>(ours.id())) {
      set_python_error(make_error(Errc::device_mismatch,
                                  "dlpackpp.Tensor.__dlpack__: the tensor "
                                  "is on ",
                                  ours.to_string(), " and cannot be moved to dl_device (", type,
                                  ", ", id, ")"));
      return false;
    }
  }
  if (a.copy != Py_None && !PyBool_Check(a.copy)) {
    PyErr_Format(PyExc_TypeError, "dlpackpp.Tensor.__dlpack__: copy must be a bool or None, not %R",
                 a.copy);
    return false;
  }
  out.copy = a.copy == Py_True;
  return true;
}

// A capsule of a fresh copy (copy=True): the original stays as it was.
inline PyObject* export_copy(const ImportedTensor& tensor, bool versioned) {
  Result<ImportedTensor> copied = copy_of(tensor.view());
  if (!copied) return raise_python(copied.error());
#if DLPACKPP_HAS_VERSIONED
  if (versioned) return to_capsule(std::move(*copied));
  Result<LegacyManagedTensor> legacy = try_to_legacy(std::move(*copied));
  if (!legacy) return raise_python(legacy.error());
  return to_capsule(std::move(*legacy));
#else
  static_cast<void>(versioned);
  return to_capsule(std::move(*copied));
#endif
}

// A capsule of kind M holding one more export that shares the tensor.
template <class M>
PyObject* shared_capsule(TensorObject* self) {
  SharedTensor* shared = shared_of(self);
  if (shared == nullptr) return nullptr;
  BasicManagedTensor<M> e = export_of<M>(shared);
  PyObject* capsule = e ? capsule_of(std::move(e)) : nullptr;  // on failure `e` lets go
  if (capsule != nullptr) mark_exported(self);
  return capsule;
}

// A consumer of the legacy protocol cannot be told READ_ONLY or padded sub-byte elements:
// refused, and the tensor stays exportable.
inline PyObject* export_shared(TensorObject* self, bool versioned) {
#if DLPACKPP_HAS_VERSIONED
  if (versioned) return shared_capsule<DLManagedTensorVersioned>(self);
  const ImportedTensor& tensor = tensor_of(self);
  if (tensor.read_only()) {
    return raise_python(Error(Errc::read_only,
                              "dlpackpp.Tensor.__dlpack__: the tensor is READ_ONLY and the legacy "
                              "protocol (no max_version >= (1, 0)) cannot say so; ask with "
                              "max_version=(1, 0)"));
  }
  if (tensor.is_subbyte_padded()) {
    return raise_python(Error(Errc::invalid_flags,
                              "dlpackpp.Tensor.__dlpack__: the tensor has IS_SUBBYTE_TYPE_PADDED, "
                              "which the legacy protocol cannot say; ask with max_version=(1, 0)"));
  }
#else
  static_cast<void>(versioned);
#endif
  return shared_capsule<DLManagedTensor>(self);
}

#if DLPACKPP_DETAIL_PY_FASTCALL_DLPACK
inline PyObject* tensor_dlpack(PyObject* obj, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
  DlpackArguments arguments;
  if (!parse_dlpack_arguments(args, nargs, kwnames, arguments)) return nullptr;
#else
inline PyObject* tensor_dlpack(PyObject* obj, PyObject* args, PyObject* kwargs) {
  static const char* keywords[] = {"stream", "max_version", "dl_device", "copy", nullptr};
  DlpackArguments arguments;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", const_cast<char**>(keywords),
                                  &arguments.stream, &arguments.max_version, &arguments.dl_device,
                                  &arguments.copy) == 0) {
    return nullptr;
  }
#endif
  auto* self = reinterpret_cast<TensorObject*>(obj);
  DlpackRequest request;
  const ImportedTensor& tensor = tensor_of(self);
  if (!check_dlpack_arguments(tensor, arguments, request)) return nullptr;
  // Work still queued on the producer's stream: the consumer's stream waits for it (every
  // export its own consumer's), or the host does where it reads a copy.
  if (self->hook != nullptr &&
      !self->hook->order(self->hook_context, request.copy ? nullptr : arguments.stream)) {
    return nullptr;
  }
  DLPACKPP_DETAIL_TRY {
    if (request.copy) return export_copy(tensor, request.versioned);
    return export_shared(self, request.versioned);
  }
  DLPACKPP_DETAIL_CATCH(...) { set_error_from_current_exception(); }
  return nullptr;
}

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
