// SPDX-License-Identifier: Apache-2.0
/// @file
/// How the pybind11 and nanobind casters turn a Python argument into a dlpackpp value, built
/// on `<dlpackpp/python.hpp>`'s public API: try_from_dlpack for owning parameters and the
/// borrow engine (try_borrow_view) for views and accessors. Each loader answers one of three
/// things: loaded; declined (the argument does not fit: nothing raised, nothing pending, so
/// the binding library moves on to its next overload); or raised (anything else the producer
/// raised, pending for the caster to propagate unchanged). The binding library supplies how
/// to keep what a view reads alive until the call ends (`park`).
///
/// Writability is the engine's rule: a view through the exchange table's borrowing entry is
/// READ_ONLY (it carries no flags), so `TensorView` and `TensorAccessor<const T, N>` borrow
/// there, and a `TensorAccessor<T, N>` with a mutable `T` asks for a writable view (an owning
/// import, whose flags are known) and declines a read-only tensor.
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

// The owning handle python::try_from_dlpack returns (python/capsule.hpp defines it).
using ::dlpackpp::python::ImportedTensor;

/// Built-in values no DLPack producer can be: declined before the type cache is asked, so an
/// overload set mixing tensors and numbers neither raises nor fills the cache with `float`.
inline bool plainly_not_a_tensor(PyObject* src) noexcept {
  return src == nullptr || src == Py_None || PyBool_Check(src) || PyLong_CheckExact(src) ||
         PyFloat_CheckExact(src) || PyUnicode_CheckExact(src) || PyBytes_CheckExact(src) ||
         PyTuple_CheckExact(src) || PyList_CheckExact(src) || PyDict_CheckExact(src);
}

/// What a loader did with an argument.
enum class Loaded {
  yes,       ///< the value is loaded
  declined,  ///< the argument does not fit: nothing is pending
  raised     ///< a Python exception is pending, to propagate unchanged
};

/// Drops every trace of a declined import: the Python exception python.hpp keeps for
/// set_python_error() (it may hold the argument alive through a traceback or an
/// AttributeError's `obj`) and whatever is pending.
DLPACKPP_COLD inline void forget(const Error& error) noexcept {
  python::set_python_error(error);
  PyErr_Clear();
}

/// A failed import: declined where it means "does not fit" (python::does_not_fit), else the
/// producer's exception raised again, unchanged, for the caster to propagate.
DLPACKPP_COLD inline Loaded refuse(const Error& error) noexcept {
  if (python::does_not_fit(error)) {
    forget(error);
    return Loaded::declined;
  }
  python::set_python_error(error);
  return Loaded::raised;
}

/// Runs `load`, raising MemoryError instead where describing an error throws (std::bad_alloc
/// is the only exception python.hpp's non-throwing calls can raise).
template <class Load>
Loaded guarded(Load&& load) noexcept {
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    return load();
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {
    PyErr_Clear();
    PyErr_NoMemory();
    return Loaded::raised;
  }
#endif
}

/// Owning import into `out` (a ManagedTensor, or a LegacyManagedTensor, which refuses a
/// READ_ONLY tensor: the legacy struct cannot say so), exactly as python::try_from_dlpack.
template <class Handle>
Loaded import_owned(PyObject* src, Handle& out) noexcept {
  if (plainly_not_a_tensor(src)) return Loaded::declined;
  return guarded([&] {
    Result<ImportedTensor> imported = python::try_from_dlpack(src);
    if (DLPACKPP_UNLIKELY(!imported)) return refuse(imported.error());
    if constexpr (std::is_same<Handle, ImportedTensor>::value) {
      out = std::move(*imported);
    } else {
#if DLPACKPP_HAS_VERSIONED  // else ImportedTensor is the legacy handle, the only one there is
      Result<Handle> legacy = try_to_legacy(std::move(*imported));
      if (!legacy) return Loaded::declined;  // `imported` still owns the tensor, releases it
      out = std::move(*legacy);
#endif
    }
    return Loaded::yes;
  });
}

/// What a loaded view is for: a `TensorView` (read, or written where its flags allow), a
/// `TensorAccessor<const T, N>` (only read), a `TensorAccessor<T, N>` (written).
enum class Use { view, read, write };

/// The borrow engine's options for `use`: a writer asks for a writable view; a reader lets a
/// producer without the table make the cheaper legacy capsule (ImportOptions::only_reading).
inline python::ImportOptions options_for(Use use) noexcept {
  python::ImportOptions options;
  options.only_reading = use == Use::read;
  options.writable = use == Use::write;
  return options;
}

/// Loads a view of `src` into `view` through the borrow engine (python::try_borrow_view);
/// `keeper` receives what keeps it valid (or NULL), which the caller must keep alive while
/// the view is used.
inline Loaded import_view(PyObject* src, Use use, std::optional<TensorView>& view,
                          PyObject*& keeper) noexcept {
  keeper = nullptr;
  if (plainly_not_a_tensor(src)) return Loaded::declined;
  return guarded([&] {
    Result<TensorView> seen = python::try_borrow_view(src, keeper, options_for(use));
    if (DLPACKPP_UNLIKELY(!seen)) return refuse(seen.error());
    view.emplace(*seen);
    return Loaded::yes;
  });
}

/// `view` as TensorAccessor<T, N> when it fits: dtype, rank, writability for a mutable T,
/// host-accessible memory (the accessor is indexed by the bound C++ function), alignment, and
/// for a mutable T one address per element. The cheap comparisons come first so a declined
/// overload builds no error message.
template <class T, int N>
bool accessor_of(const TensorView& view, TensorAccessor<T, N>& out) noexcept {
  constexpr DataType wanted = dtype_of<std::remove_const_t<T>>;
  if (view.dtype() != wanted || view.ndim() != N) return false;
  if (!std::is_const<T>::value && view.read_only()) return false;
  if (!view.device().is_host_accessible()) return false;
#if DLPACKPP_USE_EXCEPTIONS
  try {
#endif
    Result<TensorAccessor<T, N>> accessor = view.template try_accessor<T, N>();
    if (!accessor) return false;  // misaligned, packed sub-byte elements, overlapping writes
    out = *accessor;
    return true;
#if DLPACKPP_USE_EXCEPTIONS
  } catch (...) {  // describing the refusal threw: a refusal all the same
    return false;
  }
#endif
}

/// Loads a TensorView argument into `out`; `park(PyObject*)` keeps what the view reads alive
/// until the call ends, taking its reference either way (false: it cannot, the reference is
/// released, and the argument is declined).
template <class Park>
Loaded load_view(PyObject* src, std::optional<TensorView>& out, Park&& park) noexcept {
  PyObject* keeper = nullptr;
  const Loaded loaded = import_view(src, Use::view, out, keeper);
  if (loaded != Loaded::yes) return loaded;
  if (keeper != nullptr && !park(keeper)) {
    out.reset();
    return Loaded::declined;
  }
  return Loaded::yes;
}

/// Loads a TensorAccessor<T, N> argument into `out`; `park` as in load_view. A declined
/// import is released here, before the next overload is tried.
template <class T, int N, class Park>
Loaded load_accessor(PyObject* src, TensorAccessor<T, N>& out, Park&& park) noexcept {
  std::optional<TensorView> view;
  PyObject* keeper = nullptr;
  const Loaded loaded =
      import_view(src, std::is_const<T>::value ? Use::read : Use::write, view, keeper);
  if (loaded != Loaded::yes) return loaded;
  if (!accessor_of(*view, out)) {
    Py_XDECREF(keeper);  // its death releases what the view read
    return Loaded::declined;
  }
  return keeper == nullptr || park(keeper) ? Loaded::yes : Loaded::declined;
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
