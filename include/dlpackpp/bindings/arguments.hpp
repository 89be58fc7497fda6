// SPDX-License-Identifier: Apache-2.0
/// @file
/// How the pybind11 and nanobind casters turn a Python argument into a dlpackpp value, built
/// on `<dlpackpp/python.hpp>` (its public API, and python::detail::view_for_call for views
/// that need no handle). Each loader declines (returns false, raises
/// nothing, leaves no Python error pending) for anything that does not fit, so the binding
/// library moves on to its next overload. The binding library supplies one thing: how to keep
/// the producer's capsule alive until the call ends (`park`).
///
/// Writability: the exchange table's borrowing entry (`dltensor_from_py_object_no_sync`)
/// carries no flags, so what it lends is treated as READ_ONLY. Parameters that only read
/// (`TensorView`, `TensorAccessor<const T, N>`) borrow through it where the type offers it;
/// a `TensorAccessor<T, N>` with a mutable `T` always goes through `__dlpack__`, which reports
/// READ_ONLY, and declines a read-only tensor.
#pragma once
#ifndef DLPACKPP_BINDINGS_ARGUMENTS_HPP_
#define DLPACKPP_BINDINGS_ARGUMENTS_HPP_

#include "dlpackpp/python.hpp"

#if defined(Py_PYTHON_H)

#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/conversions.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <optional>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace bindings {
namespace detail {

/// The owning handle python::try_from_dlpack returns: versioned where the dlpack.h in force
/// has it, legacy otherwise.
using ImportedTensor = DefaultManagedTensor;

/// Built-in values no DLPack producer can be: declined before the type cache is asked, so an
/// overload set mixing tensors and numbers neither raises nor fills the cache with `float`.
inline bool plainly_not_a_tensor(PyObject* src) noexcept {
  return src == nullptr || src == Py_None || PyBool_Check(src) || PyLong_CheckExact(src) ||
         PyFloat_CheckExact(src) || PyUnicode_CheckExact(src) || PyBytes_CheckExact(src) ||
         PyTuple_CheckExact(src) || PyList_CheckExact(src) || PyDict_CheckExact(src);
}

/// Drops every trace of a declined import: the Python exception python.hpp keeps for
/// set_python_error() (it may hold the argument alive through a traceback or an
/// AttributeError's `obj`) and whatever is pending.
DLPACKPP_COLD inline void forget(const Error& error) noexcept {
  python::set_python_error(error);
  PyErr_Clear();
}

/// Runs `load` (true: it loaded) and declines instead where describing an error throws
/// (std::bad_alloc is the only exception python.hpp's non-throwing calls can raise).
template <class Load>
bool or_decline(Load&& load) noexcept {
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    return load();
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {
    PyErr_Clear();
    return false;
  }
#endif
}

/// Owning import into `out` (a ManagedTensor, or a LegacyManagedTensor, which refuses a
/// READ_ONLY tensor: the legacy struct cannot say so), exactly as python::try_from_dlpack.
template <class Handle>
bool import_owned(PyObject* src, Handle& out) noexcept {
  if (plainly_not_a_tensor(src)) return false;
  return or_decline([&] {
    Result<ImportedTensor> imported = python::try_from_dlpack(src);
    if (DLPACKPP_UNLIKELY(!imported)) {
      forget(imported.error());
      return false;
    }
    if constexpr (std::is_same<Handle, ImportedTensor>::value) {
      out = std::move(*imported);
    } else {
#if DLPACKPP_HAS_VERSIONED  // else ImportedTensor is the legacy handle, the only one there is
      Result<Handle> legacy = try_to_legacy(std::move(*imported));
      if (!legacy) return false;  // `imported` still owns the tensor and releases it
      out = std::move(*legacy);
#endif
    }
    return true;
  });
}

/// What a loaded view is for: a `TensorView` (read, or written where its flags allow), a
/// `TensorAccessor<const T, N>` (only read), a `TensorAccessor<T, N>` (written).
enum class Use { view, read, write };

/// Loads a view of `src` into `view` (python::detail::view_for_call): borrowed through the
/// exchange table unless `use` is write (READ_ONLY then; `keeper` stays NULL), else inside
/// `src.__dlpack__()`'s capsule, left unconsumed in `keeper` (with the producer's flags; the
/// legacy capsule first where `use` is read), which the caller must keep alive while the view
/// is used.
inline bool import_view(PyObject* src, Use use, std::optional<TensorView>& view,
                        PyObject*& keeper) noexcept {
  keeper = nullptr;
  if (plainly_not_a_tensor(src)) return false;
  return or_decline([&] {
    Result<TensorView> seen =
        python::detail::view_for_call(src, keeper, use != Use::write, use == Use::read);
    if (DLPACKPP_UNLIKELY(!seen)) {
      forget(seen.error());
      return false;
    }
    view.emplace(*seen);
    return true;
  });
}

/// `view` as TensorAccessor<T, N> when it fits: dtype, rank, writability for a mutable T,
/// host-accessible memory (the accessor is indexed by the bound C++ function), alignment.
/// The cheap comparisons come first so a declined overload builds no error message.
template <class T, int N>
bool accessor_of(const TensorView& view, TensorAccessor<T, N>& out) noexcept {
  constexpr DataType wanted = dtype_of<std::remove_const_t<T>>;
  if (view.dtype() != wanted || view.ndim() != N) return false;
  if (!std::is_const<T>::value && view.read_only()) return false;
  if (!view.device().is_host_accessible()) return false;
  return or_decline([&] {
    Result<TensorAccessor<T, N>> accessor = view.template try_accessor<T, N>();
    if (!accessor) return false;  // misaligned or packed sub-byte elements
    out = *accessor;
    return true;
  });
}

/// Loads a TensorView argument into `out`; `park(PyObject*)` keeps the capsule behind an import
/// alive until the call ends, taking its reference either way (false: it cannot, the capsule is
/// released, and the argument is declined).
template <class Park>
bool load_view(PyObject* src, std::optional<TensorView>& out, Park&& park) noexcept {
  PyObject* keeper = nullptr;
  if (!import_view(src, Use::view, out, keeper)) return false;
  if (keeper != nullptr && !park(keeper)) {
    out.reset();
    return false;
  }
  return true;
}

/// Loads a TensorAccessor<T, N> argument into `out`; `park` as in load_view. A declined
/// import is released here, before the next overload is tried.
template <class T, int N, class Park>
bool load_accessor(PyObject* src, TensorAccessor<T, N>& out, Park&& park) noexcept {
  std::optional<TensorView> view;
  PyObject* keeper = nullptr;
  if (!import_view(src, std::is_const<T>::value ? Use::read : Use::write, view, keeper))
    return false;
  if (!accessor_of(*view, out)) {
    Py_XDECREF(keeper);  // unconsumed: the producer's capsule releases the tensor
    return false;
  }
  return keeper == nullptr || park(keeper);
}

/// A returned handle as a new `dlpackpp.Tensor` (a legacy handle is wrapped first); NULL with
/// a Python exception set on failure, the handle then released.
template <class DLManaged>
PyObject* to_result(BasicManagedTensor<DLManaged>&& tensor) noexcept {
#if DLPACKPP_HAS_VERSIONED
  if constexpr (std::is_same<DLManaged, DLManagedTensor>::value) {
    Result<ManagedTensor> versioned = try_to_versioned(std::move(tensor));
    if (!versioned) {
      python::set_python_error(versioned.error());
      return nullptr;
    }
    return python::to_pyobject(std::move(*versioned));
  } else {
    return python::to_pyobject(std::move(tensor));
  }
#else
  return python::to_pyobject(std::move(tensor));
#endif
}

}  // namespace detail
}  // namespace bindings
DLPACKPP_END_NAMESPACE

#endif  // Py_PYTHON_H
#endif  // DLPACKPP_BINDINGS_ARGUMENTS_HPP_
