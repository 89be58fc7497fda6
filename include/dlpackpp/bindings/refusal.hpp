// SPDX-License-Identifier: Apache-2.0
/// @file
/// explain_refusal: why an object would not fit a dlpackpp parameter of a pybind11 or nanobind
/// function, in the words of the signature ("float32[*, *] writable: got float64[4, 4]").
/// Neither binding library can carry a caster's reason into its "incompatible function
/// arguments" TypeError, so a module that wants to say more asks this, with the same loaders
/// the casters run (one set of rules, not a second guess).
#pragma once
#ifndef DLPACKPP_BINDINGS_REFUSAL_HPP_
#define DLPACKPP_BINDINGS_REFUSAL_HPP_

#include "dlpackpp/python.hpp"

#include "dlpackpp/bindings/arguments.hpp"
#include "dlpackpp/bindings/names.hpp"
#include "dlpackpp/bindings/on_stream.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/tensor_accessor.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

DLPACKPP_BEGIN_NAMESPACE
namespace bindings {
namespace detail {

/// What a parameter of type P is called in signatures, what using it asks of a view, and
/// whether device memory fits (an OnStream parameter's user is a kernel).
template <class P>
struct Parameter {
  using Value = P;
  static constexpr const char* name = tensor_argument_name;
  static constexpr bool borrows = std::is_same<P, TensorView>::value;
  static constexpr Use use = Use::view;
  static constexpr bool on_device = false;
};
template <class T, int N>
struct Parameter<TensorAccessor<T, N>> {
  using Value = TensorAccessor<T, N>;
  static constexpr const char* name = AccessorName<T, N>::text.data;
  static constexpr bool borrows = true;
  static constexpr Use use = std::is_const<T>::value ? Use::read : Use::write;
  static constexpr bool on_device = false;
};
/// An OnStream parameter refuses what its V refuses, device memory excepted (the stream it
/// would ask for does not change what fits).
template <class V, class Stream>
struct Parameter<OnStream<V, Stream>> : Parameter<V> {
  static constexpr bool on_device = true;
};

/// An Error's message without the "dlpackpp: " every message starts with.
inline std::string_view message_of(const Error& error) {
  std::string_view text = error.what();
  constexpr std::string_view prefix = "dlpackpp: ";
  if (text.substr(0, prefix.size()) == prefix) text.remove_prefix(prefix.size());
  return text;
}

/// "float64[4, 4]", and " read-only" or " on cuda:0" where that is what matters.
inline std::string seen_as(const TensorView& view) {
  std::string out = view.dtype().to_string();
  out += '[';
  for (int d = 0; d < view.ndim(); ++d) {
    if (d != 0) out += ", ";
    out += std::to_string(view.shape(d));
  }
  out += ']';
  if (view.read_only()) out += " read-only";
  if (!view.device().is_host_accessible()) out += " on " + view.device().to_string();
  return out;
}

/// Why a view parameter refuses a view it was lent ("" when it fits): a TensorView takes any.
inline std::string view_refusal(const TensorView&, TensorView*, bool /*on_device*/) { return {}; }

/// Why an accessor parameter refuses a view it was lent ("" when it fits); `on_device` as in
/// accessor_of.
template <class T, int N>
std::string view_refusal(const TensorView& view, TensorAccessor<T, N>*, bool on_device) {
  TensorAccessor<T, N> unused;
  if (accessor_of(view, unused, on_device)) return {};
  std::string out = "got " + seen_as(view);
  const bool rest_fits = view.dtype() == dtype_of<std::remove_const_t<T>> && view.ndim() == N &&
                         (on_device || view.device().is_host_accessible()) &&
                         (std::is_const<T>::value || !view.read_only());
  if (rest_fits) {  // the accessor's own checks: alignment, sub-byte, overlapping writes
    Result<TensorAccessor<T, N>> accessor = view.template try_accessor<T, N>();
    if (!accessor) out += "; " + std::string(message_of(accessor.error()));
  }
  return out;
}

/// A failed import as a refusal's text, or, where the producer raised something other than
/// "does not fit" (KeyboardInterrupt, SystemExit, MemoryError...), that Error, which
/// set_python_error() re-raises unchanged.
inline Result<std::string> refusal_from(const Error& error) {
  if (!python::does_not_fit(error)) return error;
  std::string out(message_of(error));
  forget(error);
  return out;
}

/// Whether `obj` speaks DLPack at all: its type has the exchange table or `obj` has a
/// `__dlpack__`. Asked with PyObject_GetAttr, so an AttributeError is "no" and anything else
/// its `__getattr__` raises comes back as an Error (never printed behind the caller's back, as
/// PyObject_HasAttrString does).
inline Result<bool> speaks_dlpack(PyObject* obj) {
  if (python::exchange_api_of(obj) != nullptr) return true;
  PyObject* method = PyObject_GetAttrString(obj, "__dlpack__");
  if (method != nullptr) {
    Py_DECREF(method);
    return true;
  }
  if (PyErr_ExceptionMatches(PyExc_AttributeError) == 0)
    return python::detail::take_python_error(python::detail::type_name_of(obj) + ".__dlpack__");
  PyErr_Clear();
  return false;
}

/// Why `obj` does not fit a parameter of type P, without its name ("" when it fits); the
/// producer is asked once.
template <class P>
Result<std::string> refusal_of(PyObject* obj) {
  if (obj == nullptr) return std::string("NULL is not a DLPack object");
  if (PyType_Check(obj)) {
    return python::detail::type_name(obj) + " is a class, not a DLPack object (pass an instance)";
  }
  Result<bool> speaks = plainly_not_a_tensor(obj) ? Result<bool>(false) : speaks_dlpack(obj);
  if (!speaks) return speaks.error();
  if (!*speaks) return python::detail::type_name_of(obj) + " is not a DLPack object";
  if constexpr (Parameter<P>::on_device) {  // an OnStream caster asks the device first
    Result<Device> device = dlpack_device_of(obj);
    if (!device) return refusal_from(device.error());
  }
  if constexpr (Parameter<P>::borrows) {
    PyObject* keeper = nullptr;
    Result<TensorView> view = python::try_borrow_view(obj, keeper, options_for(Parameter<P>::use));
    const python::detail::HeldRef lease(keeper);  // released after the view is read
    if (!view) return refusal_from(view.error());
    using Value = typename Parameter<P>::Value;
    return view_refusal(*view, static_cast<Value*>(nullptr), Parameter<P>::on_device);
  } else {
    Result<ImportedTensor> imported = python::try_from_dlpack(obj);
    if (!imported) return refusal_from(imported.error());
    if constexpr (!std::is_same<typename Parameter<P>::Value, ImportedTensor>::value) {
#if DLPACKPP_HAS_VERSIONED  // else ImportedTensor is the legacy handle: the same type as P
      const std::string seen = seen_as(imported->view());
      if (!try_to_legacy(std::move(*imported)))
        return "got " + seen + " (a LegacyManagedTensor cannot say READ_ONLY)";
#endif
    }
    return std::string();
  }
}

}  // namespace detail

/// Why `obj` would not fit a pybind11 or nanobind parameter of type P (`TensorView`,
/// `TensorAccessor<T, N>`, `ManagedTensor`, `LegacyManagedTensor`, or an `OnStream` of one), as
/// "<what the signature says P takes>: <what obj is>", e.g. "float32[*, *] writable: got float64[4,
/// 4]", "float32[*, *] writable: got float32[4, 4] read-only", "tensor: int is not a DLPack
/// object"; "" when it fits. Runs the casters' own loaders (so it asks `obj.__dlpack__` once)
/// and keeps nothing: what it imported is released, no Python exception is left pending. What
/// the producer raised other than "does not fit" (KeyboardInterrupt, SystemExit...) is the
/// Error, which set_python_error() re-raises unchanged. Expects the GIL held.
template <class P>
Result<std::string> try_explain_refusal(PyObject* obj) {
  Result<std::string> why = detail::refusal_of<P>(obj);
  if (!why || why->empty()) return why;
  return std::string(detail::Parameter<P>::name) + ": " + *why;
}

/// As try_explain_refusal, throwing the Error (a bound function that lets it propagate
/// re-raises the producer's exception unchanged: the caster headers translate it).
template <class P>
std::string explain_refusal(PyObject* obj) {
  return try_explain_refusal<P>(obj).value();
}

}  // namespace bindings
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_BINDINGS_REFUSAL_HPP_
