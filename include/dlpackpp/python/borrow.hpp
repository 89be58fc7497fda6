// SPDX-License-Identifier: Apache-2.0
/// @file
/// try_borrow: a view of any DLPack object for the length of one call, without ownership
/// where the producer allows (a dlpackpp.Tensor in place, the exchange table's
/// dltensor_from_py_object_no_sync), else through an owning import.
#pragma once

#include "dlpackpp/python/python_h.hpp"
#if DLPACKPP_PYTHON_AVAILABLE

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/gil.hpp"
#include "dlpackpp/python/import.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/tensor_object.hpp"
#include "dlpackpp/python/type_cache.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {
template <class R>
struct borrow_result {
  using type = Result<R>;
};
template <class X>
struct borrow_result<Result<X>> {
  using type = Result<X>;
};
template <class F>
using borrow_result_t = typename borrow_result<std::invoke_result_t<F&, const TensorView&>>::type;

template <class F>
borrow_result_t<F> call_with_view(F& f, const TensorView& view) {
  if constexpr (std::is_void<std::invoke_result_t<F&, const TensorView&>>::value) {
    f(view);
    return Result<void>();
  } else {
    return f(view);
  }
}

// The checks adoption would have made on a dlpackpp.Tensor beyond the ones it passed when it
// was made (its view carries its flags, READ_ONLY included, which a DLTensor lacks).
inline Result<void> own_tensor_fits(const ImportedTensor& own, const ValidateOptions& options) {
  if (DLPACKPP_LIKELY(!options.require_strides && options.alignment == 0)) return {};
  ValidateOptions with_flags = options;
  with_flags.flags = own.flags();
  return validate(own.get()->dl_tensor, with_flags);
}

/// The view a binding caster loads for one call, taking no ownership. Borrowed through the
/// exchange table where `may_borrow` and the type offers the borrowing entry: the view keeps
/// its own copy of the DLTensor and is READ_ONLY (the table carries no flags); `keeper` stays
/// NULL. Otherwise read inside `obj.__dlpack__()`'s capsule, left unconsumed in `keeper` (a
/// new reference that owns the tensor and releases it when it dies, so the view is valid
/// while `keeper` lives), with the import route's call, fallback and validation;
/// `only_reading` as ImportOptions::only_reading. `keeper` is NULL on failure.
inline Result<TensorView> view_for_call(PyObject* obj, PyObject*& keeper, bool may_borrow,
                                        bool only_reading) {
  keeper = nullptr;
  Result<Found> found = find_entry(obj);
  if (DLPACKPP_UNLIKELY(!found)) return found.error();
  TypeEntry& entry = *found->entry;
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = entry.api;
  if (may_borrow && api != nullptr && api->dltensor_from_py_object_no_sync != nullptr) {
    ValidateOptions read_only;
    read_only.flags = flag::read_only;
    DLTensor storage;  // the view keeps its own copy; shape and strides stay the producer's
    Result<TensorView> view = ::dlpackpp::view_from_object(api, obj, storage, read_only);
    if (DLPACKPP_UNLIKELY(!view))
      return exchange_error(view.error(), obj, "dltensor_from_py_object_no_sync");
    return view;
  }
#else
  static_cast<void>(may_borrow);
#endif
  ImportOptions options;
  options.only_reading = only_reading;
  bool legacy = entry.legacy;
  const ScopedRef held(cached_dlpack(entry, obj));  // __dlpack__ may evict the entry
  PyObject* capsule = capsule_to_read(*found->in, obj, held.get(), legacy, options);
  if (DLPACKPP_UNLIKELY(capsule == nullptr))
    return take_python_error(type_name_of(obj) + ".__dlpack__");
  Result<TensorView> view =
      view_in_capsule(capsule, options.validate, legacy_flags_of(options), legacy);
  if (DLPACKPP_UNLIKELY(!view)) {
    Py_DECREF(capsule);  // unconsumed: its destructor releases the tensor
    return view.error();
  }
  keeper = capsule;
  return view;
}
}  // namespace detail

/// Calls `f(const TensorView&)` on `obj`'s tensor and returns its result (a `Result<X>` that
/// `f` returns is passed through, `void` gives `Result<void>`). A dlpackpp.Tensor is read in
/// place; a type offering `dltensor_from_py_object_no_sync` is read through it (no
/// allocation, no ownership); anything else through try_from_dlpack. The view is valid only
/// inside `f`; `obj` is kept alive until `f` returns, whatever `f` does with it (exports of a
/// dlpackpp.Tensor share its tensor, so exporting it inside `f` is safe too).
template <class F>
DLPACKPP_FORCE_INLINE detail::borrow_result_t<F> try_borrow(PyObject* obj, F&& f,
                                                            const ImportOptions& options = {}) {
  if (DLPACKPP_UNLIKELY(obj == nullptr))
    return detail::make_error(Errc::null_pointer, "object is NULL");
  detail::Internals* in = detail::internals();
  if (DLPACKPP_UNLIKELY(in == nullptr))
    return detail::take_python_error("dlpackpp's interpreter state");
  const detail::ScopedRef keep_alive(obj);
  if (const ImportedTensor* own = detail::own_tensor_of(*in, obj)) {
    Result<void> fits = detail::own_tensor_fits(*own, options.validate);
    if (DLPACKPP_UNLIKELY(!fits)) return fits.error();
    return detail::call_with_view(f, own->view());
  }
  detail::TypeEntry* entry = detail::type_entry_of(*in, obj);
  if (DLPACKPP_UNLIKELY(entry == nullptr))
    return detail::take_python_error("dlpackpp's type cache");
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = entry->api;
  if (api != nullptr && api->dltensor_from_py_object_no_sync != nullptr &&
      detail::exchange_can_serve(options)) {
    DLTensor storage;  // outlives the view, which reads it in place
    Result<void> borrowed = ::dlpackpp::detail::borrow_into(api, obj, storage);
    if (DLPACKPP_UNLIKELY(!borrowed)) {
      return detail::exchange_error(borrowed.error(), obj, "dltensor_from_py_object_no_sync");
    }
    Result<TensorView> view = ::dlpackpp::detail::view_in_place(storage, options.validate);
    if (DLPACKPP_UNLIKELY(!view)) return view.error();
    return detail::call_with_view(f, *view);
  }
#endif
  Result<ImportedTensor> owned = detail::import_object(*in, *entry, obj, options);
  if (!owned) return owned.error();
  return detail::call_with_view(f, owned->view());
}

/// As try_borrow, throwing the Error.
template <class F>
auto borrow(PyObject* obj, F&& f, const ImportOptions& options = {}) {
  return try_borrow(obj, std::forward<F>(f), options).value();
}

}  // namespace python
DLPACKPP_END_NAMESPACE

#endif  // DLPACKPP_PYTHON_AVAILABLE
