// SPDX-License-Identifier: Apache-2.0
/// @file
/// How the pybind11 and nanobind casters turn a Python argument into a dlpackpp value, built
/// on `<dlpackpp/python.hpp>`'s public API: try_from_dlpack for owning parameters, and for
/// views and accessors the borrow engine through try_borrow_view's overload that reads a
/// table borrow in the caster's own storage. Each loader answers one of three things:
/// loaded; declined (the argument does not fit: nothing raised, nothing pending, so the
/// binding library moves on to its next overload); or raised (anything else the producer
/// raised, pending for the caster to propagate unchanged). The binding library supplies how to
/// keep what a view reads alive until the call ends (`park`).
///
/// Writability is the engine's rule: a view through the exchange table's borrowing entry is
/// READ_ONLY (it carries no flags), so `TensorView` and `TensorAccessor<const T, N>` borrow
/// there, and a `TensorAccessor<T, N>` with a mutable `T` asks for a writable view (an owning
/// import, whose flags are known) and declines a read-only tensor.
#pragma once
#ifndef DLPACKPP_BINDINGS_ARGUMENTS_HPP_
#define DLPACKPP_BINDINGS_ARGUMENTS_HPP_

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/conversions.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <cstdint>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace bindings {
namespace detail {

// The owning handle python::try_from_dlpack returns (python/capsule.hpp defines it).
using ::dlpackpp::python::ImportedTensor;

/// Values no DLPack producer can be, declined before the type cache is asked: built-in values,
/// so an overload set mixing tensors and numbers neither raises nor fills the cache with
/// `float`, and classes, whose `__dlpack__` is an unbound method (`np.ndarray` itself): asking
/// it would raise a TypeError that ends overload resolution before a later `object` overload.
inline bool plainly_not_a_tensor(PyObject* src) noexcept {
  if (src == nullptr || src == Py_None || PyFloat_CheckExact(src)) return true;
  // int (bool with it), str, bytes, tuple, list, dict and type, subclasses included, carry one
  // of these flags and tensor types none: one test lets a tensor past the comparisons below.
  constexpr unsigned long builtin = Py_TPFLAGS_LONG_SUBCLASS | Py_TPFLAGS_UNICODE_SUBCLASS |
                                    Py_TPFLAGS_BYTES_SUBCLASS | Py_TPFLAGS_TUPLE_SUBCLASS |
                                    Py_TPFLAGS_LIST_SUBCLASS | Py_TPFLAGS_DICT_SUBCLASS |
                                    Py_TPFLAGS_TYPE_SUBCLASS;
  if (DLPACKPP_LIKELY(!PyType_HasFeature(Py_TYPE(src), builtin))) return false;
  return PyType_Check(src) || PyBool_Check(src) || PyLong_CheckExact(src) ||
         PyUnicode_CheckExact(src) || PyBytes_CheckExact(src) || PyTuple_CheckExact(src) ||
         PyList_CheckExact(src) || PyDict_CheckExact(src);
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
  python::discard_python_error(error);
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
/// is the only exception python.hpp's non-throwing calls can raise). Nothing else is caught: a
/// thread CPython ends at shutdown (3.13 and older call pthread_exit where a daemon thread
/// re-attaches) unwinds through here with no thread state, and glibc aborts the process when
/// that forced unwind is caught and not rethrown. Not noexcept, so it can pass.
/// Inlined: a try block costs nothing until something throws, a call frame on every load.
template <class Load>
DLPACKPP_FORCE_INLINE Loaded guarded(Load&& load) {
  DLPACKPP_DETAIL_TRY { return load(); }
  DLPACKPP_DETAIL_CATCH(const std::exception&) {
    PyErr_Clear();
    PyErr_NoMemory();
  }
  return Loaded::raised;
}

/// Owning import into `out` (a ManagedTensor, or a LegacyManagedTensor, which refuses a
/// READ_ONLY tensor: the legacy struct cannot say so), exactly as python::try_from_dlpack.
template <class Handle>
Loaded import_owned(PyObject* src, Handle& out, const python::ImportOptions& options = {}) {
  if (plainly_not_a_tensor(src)) return Loaded::declined;
  return guarded([&] {
    Result<ImportedTensor> imported = python::try_from_dlpack(src, options);
    if (DLPACKPP_UNLIKELY(!imported)) return refuse(imported.error());
    if constexpr (std::is_same<Handle, ImportedTensor>::value) {
      out = std::move(*imported);
    } else {  // a legacy handle where imports are versioned
      Result<Handle> legacy = try_to_legacy(std::move(*imported));
      if (!legacy) return Loaded::declined;  // `imported` still owns the tensor, releases it
      out = std::move(*legacy);
    }
    return Loaded::yes;
  });
}

/// What a loaded view is for: a `TensorView` (read, or written where its flags allow), a
/// `TensorAccessor<const T, N>` (only read), a `TensorAccessor<T, N>` (written).
enum class Use { view, read, write };

/// The borrow engine's options for `use`: a writer asks for a writable view; a reader lets a
/// producer without the table make the cheaper legacy capsule (ImportOptions::only_reading).
constexpr python::ImportOptions options_for(Use use) noexcept {
  python::ImportOptions options;
  options.only_reading = use == Use::read;
  options.writable = use == Use::write;
  return options;
}

/// options_for(U), made once: a caster passes it by reference instead of building it per call.
template <Use U>
constexpr python::ImportOptions options_of = options_for(U);

/// options_for(U) asking the producer to order its work before `stream` where one is given
/// (an OnStream parameter, bindings/on_stream.hpp).
constexpr python::ImportOptions options_on(Use use, std::optional<std::intptr_t> stream) {
  python::ImportOptions options = options_for(use);
  options.stream = stream;
  return options;
}

/// What keeps a loaded argument's tensor alive (a capsule, an owning import) is a HeldRef in
/// the caster: released with it, after the call, where the bound function read the value in
/// place (a `const T&` or `T*` parameter); handed here to the binding library's per-call
/// keep-alive (`park`, which takes the reference either way) where the value is moved out,
/// since it may then outlive the caster (a `T` parameter, or one inside `std::optional`,
/// `std::variant` or a list, whose caster dies before the call). pybind11's keep-alive is a
/// hash set it allocates per call: a parameter read in place skips it. False where `park`
/// could not keep it (the tensor is then released).
template <class Park>
bool hand_over(python::detail::HeldRef& kept, Park&& park) noexcept {
  PyObject* ref = kept.release();
  return ref == nullptr || park(ref);
}

/// Views `src` through the borrow engine (python::try_borrow_view, with `options`) and hands the
/// view to `take(TensorView&)`, which answers whether it fits; what keeps the view valid goes to
/// `kept` (see hand_over). `keepable`: false where nothing can be kept past the conversion
/// (nanobind's nb::cast), which declines a view that needs keeping. A view through the
/// exchange table reads `storage` in place: the caller keeps it, unmoved, while the view, or
/// what `take` made of it, is used.
template <class Take>
DLPACKPP_FORCE_INLINE Loaded import_view(PyObject* src, DLTensor& storage,
                                         python::detail::HeldRef& kept, bool keepable,
                                         const python::ImportOptions& options, Take&& take) {
  if (plainly_not_a_tensor(src)) return Loaded::declined;
  return guarded([&]() DLPACKPP_LAMBDA_FORCE_INLINE {
    PyObject* keeper = nullptr;
    Result<TensorView> seen = python::try_borrow_view(src, storage, keeper, options);
    if (DLPACKPP_UNLIKELY(!seen)) return refuse(seen.error());
    if ((keeper != nullptr && !keepable) || !take(*seen)) {
      Py_XDECREF(keeper);  // its death releases what the view read
      return Loaded::declined;
    }
    kept.reset(keeper);
    return Loaded::yes;
  });
}

/// `view` as TensorAccessor<T, N> when it fits: dtype, rank, writability for a mutable T,
/// host-accessible memory unless `on_device` (the accessor is indexed by the bound C++
/// function; on a stream, by its kernel), alignment, and for a mutable T one address per
/// element. The cheap comparisons come first so a declined overload builds no error message.
template <class T, int N>
bool accessor_of(const TensorView& view, TensorAccessor<T, N>& out,
                 bool on_device = false) noexcept {
  constexpr DataType wanted = dtype_of<std::remove_const_t<T>>;
  if (view.dtype() != wanted || view.ndim() != N) return false;
  if (!std::is_const<T>::value && view.read_only()) return false;
  if (!on_device && !view.device().is_host_accessible()) return false;
  DLPACKPP_DETAIL_TRY {
    Result<TensorAccessor<T, N>> accessor = view.template try_accessor<T, N>();
    if (!accessor) return false;  // misaligned, packed sub-byte elements, overlapping writes
    out = *accessor;
    return true;
  }
  DLPACKPP_DETAIL_CATCH(const std::exception&) {}  // describing the refusal threw: a refusal
  return false;
}

/// A caster's argument of type V, the one interface both libraries' casters hold: `load(src,
/// keepable)` answers Loaded; `get()` is the value read in place, valid while the argument
/// lives; `moved_out(park)` is the value to be moved out, what keeps it valid handed to `park`
/// first (see hand_over; NULL where `park` could not keep it). Defined for TensorView,
/// TensorAccessor<T, N> and the owning handles below, whose `load_on(src, keepable, stream)`
/// loads for an OnStream parameter, and for OnStream (bindings/on_stream.hpp).
template <class V>
class Argument;

/// A `TensorView` argument. A view borrowed through the exchange table reads the DLTensor kept
/// here in place (no copy of it, as python::try_borrow), valid while the argument lives; a
/// view moved out first takes its own copy. What reading in place buys: 17 to 18 instructions
/// per exchange-table view read in place (pybind11 377 -> 359, nanobind 405 -> 388: 5%), 4 to
/// 7 by value (caster_callgrind.py). What it relies on: the argument not moving while the view
/// reads it (the move constructor makes the view independent first).
template <>
class Argument<TensorView> {
 public:
  /// Nothing loaded. User-provided: the binding libraries value-initialize their casters,
  /// which would otherwise zero the storage and the whole optional view on every call.
  Argument() noexcept {}  // NOLINT(modernize-use-equals-default)
  Argument(const Argument&) = delete;
  Argument& operator=(const Argument&) = delete;
  Argument& operator=(Argument&&) = delete;
  /// Takes `other`'s view (a library may return its caster by value), which first takes its
  /// own copy of the DLTensor it read there.
  Argument(Argument&& other) noexcept : kept_(std::move(other.kept_)) {
    storage_.ndim = -1;  // never read: the view taken is independent of it
    if (other.view_) view_.emplace(other.independent());
  }
  ~Argument() = default;

  /// Loads `src`, keeping what the view reads (see hand_over); `keepable` as in import_view.
  DLPACKPP_FORCE_INLINE Loaded load(PyObject* src, bool keepable) {
    return load_with(src, keepable, options_of<Use::view>);
  }
  /// As load, the producer asked to order its work before `stream` where one is given.
  Loaded load_on(PyObject* src, bool keepable, std::optional<std::intptr_t> stream) {
    return load_with(src, keepable, options_on(Use::view, stream));
  }
  /// The loaded view, read in place.
  TensorView& get() noexcept { return *view_; }
  /// The loaded view, to be moved out: it no longer reads this argument's storage.
  template <class Park>
  TensorView* moved_out(Park&& park) noexcept {
    return hand_over(kept_, park) ? &independent() : nullptr;
  }

 private:
  DLPACKPP_FORCE_INLINE Loaded load_with(PyObject* src, bool keepable,
                                         const python::ImportOptions& options) {
    storage_.ndim = -1;  // a table borrow fills it in, with a valid rank
    return import_view(src, storage_, kept_, keepable, options, [&](TensorView& view) {
      view_.emplace(std::move(view));
      return true;
    });
  }
  // The view, made to keep its own copy of storage_ where it read it (a table borrow filled
  // storage_ with a valid rank); a second call finds the copy made.
  TensorView& independent() noexcept {
    if (storage_.ndim >= 0) view_->detach_from_dltensor();
    return *view_;
  }

  DLTensor storage_;  // what a borrow through the exchange table fills; read in place
  std::optional<TensorView> view_;
  python::detail::HeldRef kept_;
};

/// A `TensorAccessor<T, N>` argument (dtype, rank, writability for a mutable T, host memory,
/// alignment, one address per element for a mutable T), what it reads kept as a view's is.
template <class T, int N>
class Argument<TensorAccessor<T, N>> {
 public:
  /// Nothing loaded. User-provided, as the view's.
  Argument() noexcept {}  // NOLINT(modernize-use-equals-default)
  /// Loads `src`; `keepable` as in import_view. A declined import is released here, before
  /// the next overload is tried.
  DLPACKPP_FORCE_INLINE Loaded load(PyObject* src, bool keepable) {
    return load_with(src, keepable, options_of<use>, false);
  }
  /// As load, for a kernel on `stream` (device memory allowed), the producer asked to order its
  /// work before that stream where one is given.
  Loaded load_on(PyObject* src, bool keepable, std::optional<std::intptr_t> stream) {
    return load_with(src, keepable, options_on(use, stream), true);
  }
  /// The loaded accessor, read in place.
  TensorAccessor<T, N>& get() noexcept { return value_; }
  /// The loaded accessor, to be moved out.
  template <class Park>
  TensorAccessor<T, N>* moved_out(Park&& park) noexcept {
    return hand_over(kept_, park) ? &value_ : nullptr;
  }

 private:
  static constexpr Use use = std::is_const<T>::value ? Use::read : Use::write;

  DLPACKPP_FORCE_INLINE Loaded load_with(PyObject* src, bool keepable,
                                         const python::ImportOptions& options, bool on_device) {
    DLTensor storage;  // read in place by the view, done with here: the accessor keeps its
                       // own sizes and strides
    return import_view(src, storage, kept_, keepable, options, [&](const TensorView& view) {
      return accessor_of(view, value_, on_device);
    });
  }
  TensorAccessor<T, N> value_;
  python::detail::HeldRef kept_;
};

/// A `ManagedTensor` or `LegacyManagedTensor` argument: an owning import, which keeps nothing
/// else alive.
template <class DLManaged>
class Argument<BasicManagedTensor<DLManaged>> {
 public:
  /// Loads `src` as import_owned does; `keepable` does not matter (nothing to keep).
  Loaded load(PyObject* src, bool /*keepable*/) { return import_owned(src, value_); }
  /// As load, the producer asked to order its work before `stream` where one is given.
  Loaded load_on(PyObject* src, bool /*keepable*/, std::optional<std::intptr_t> stream) {
    return import_owned(src, value_, options_on(Use::view, stream));
  }
  /// The loaded handle.
  BasicManagedTensor<DLManaged>& get() noexcept { return value_; }
  /// The loaded handle, to be moved out: nothing to hand `park`.
  template <class Park>
  BasicManagedTensor<DLManaged>* moved_out(Park&& /*park*/) noexcept {
    return &value_;
  }

 private:
  BasicManagedTensor<DLManaged> value_;
};

/// Fails to compile, saying why, where a bound function returns a `V` that owns nothing (a
/// caster's `cast`/`from_cpp` for a view or accessor; `U` is what it was given).
template <class V, class U>
constexpr void refuse_return() noexcept {
  static_assert(!std::is_same<V, TensorView>::value || never<U>,
                "dlpackpp: a bound function cannot return a TensorView (it owns nothing); "
                "return a ManagedTensor");
  static_assert(std::is_same<V, TensorView>::value || never<U>,
                "dlpackpp: a bound function cannot return a TensorAccessor or an OnStream (they "
                "own nothing); return a ManagedTensor");
}

/// A returned handle as a new `dlpackpp.Tensor` (a legacy handle is wrapped first); NULL with
/// a Python exception set on failure, the handle then released.
template <class DLManaged>
PyObject* to_result(BasicManagedTensor<DLManaged>&& tensor) noexcept {
  if constexpr (std::is_same<BasicManagedTensor<DLManaged>, ImportedTensor>::value) {
    return python::to_pyobject(std::move(tensor));
  } else {  // a legacy handle where imports are versioned
    auto versioned = try_to_versioned(std::move(tensor));
    if (!versioned) {
      python::set_python_error(versioned.error());
      return nullptr;
    }
    return python::to_pyobject(std::move(*versioned));
  }
}

/// Whether V owns its tensor: the one parameter type a bound function may also return.
template <class V>
constexpr bool owns_tensor = false;
/// An owning handle.
template <class DLManaged>
constexpr bool owns_tensor<BasicManagedTensor<DLManaged>> = true;

/// What a caster returns to Python for a `V` a bound function returned: a new dlpackpp.Tensor
/// owning `src` where V is an owning handle, moved in (NULL with a Python exception set on
/// failure, the handle then released); a compile error for a view or an accessor, which own
/// nothing (refuse_return).
template <class V, class U>
PyObject* returned(U&& src) noexcept {
  if constexpr (owns_tensor<V>) {
    static_assert(!std::is_lvalue_reference<U>::value,
                  "dlpackpp: return the ManagedTensor by value (it is moved into Python)");
    return to_result(std::forward<U>(src));
  } else {
    refuse_return<V, U>();
    return nullptr;
  }
}

}  // namespace detail
}  // namespace bindings
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_BINDINGS_ARGUMENTS_HPP_
