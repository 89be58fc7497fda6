// SPDX-License-Identifier: Apache-2.0
/// @file
/// try_borrow and try_borrow_view: a view of any DLPack object without copying it, through
/// one engine with one writability rule: a dlpackpp.Tensor in place with its flags, the
/// exchange table's dltensor_from_py_object_no_sync (READ_ONLY: it carries no flags) unless a
/// writable view is asked for, else an owning import or `__dlpack__`'s capsule, consumed and
/// kept until the view's user lets go.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/python/capsule.hpp"
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

#if DLPACKPP_HAS_EXCHANGE_API
// Through the table's dltensor_from_py_object_no_sync: no allocation, no ownership. The bare
// DLTensor it fills cannot say READ_ONLY, so the view is READ_ONLY. It reads `storage` in
// place where given (the caller keeps it unmoved while the view is used); else it keeps its
// own copy of what was borrowed.
DLPACKPP_FORCE_INLINE Result<TensorView> lend_borrowed(const DLPackExchangeAPI* api, PyObject* obj,
                                                       DLTensor* storage,
                                                       const ValidateOptions& options) {
  DLTensor copied;
  DLTensor& filled = storage != nullptr ? *storage : copied;
  Result<void> borrowed = ::dlpackpp::detail::borrow_into(api, obj, filled);
  if (DLPACKPP_UNLIKELY(!borrowed))
    return exchange_error(borrowed.error(), obj, "dltensor_from_py_object_no_sync");
  ValidateOptions read_only = options;
  read_only.flags |= flag::read_only;
  if (storage != nullptr) return TensorView::try_in_place(*storage, read_only);
  return TensorView::try_from(copied, read_only);
}

// Through the table's owning entry (flags known), handed to a new capsule in `keeper`.
inline Result<TensorView> lend_owned(Internals& in, const TypeEntry& entry, PyObject* obj,
                                     PyObject*& keeper, const ImportOptions& options) {
  Result<ImportedTensor> owned = import_exchange(in, entry, obj, options);
  if (DLPACKPP_UNLIKELY(!owned)) return owned.error();
  const TensorView view = owned->view();  // reads the managed struct, which the capsule keeps
  keeper = to_capsule(std::move(*owned));
  if (DLPACKPP_UNLIKELY(keeper == nullptr)) return take_python_error("PyCapsule_New");
  return view;
}
#endif

// Through obj.__dlpack__(): the capsule leased into `keeper` (see lease_view), with the import
// route's call, fallback and validation, and what the legacy protocol could not promise checked.
inline Result<TensorView> lend_capsule(Internals& in, const TypeEntry& entry, PyObject* obj,
                                       PyObject*& keeper, const ImportOptions& options) {
  bool legacy = entry.legacy;
  const HeldRef method(dlpack_method(in, obj));
  PyObject* capsule = capsule_to_read(in, obj, method.get(), legacy, options);
  if (DLPACKPP_UNLIKELY(capsule == nullptr))
    return take_python_error(type_name_of(obj) + ".__dlpack__");
  Result<TensorView> view = lease_view(capsule, options.validate, legacy_flags_of(options), legacy);
  const Result<void> fits = DLPACKPP_UNLIKELY(view && legacy && (options.copy || options.dl_device))
                                ? check_legacy_result(view->device(), obj, options)
                                : Result<void>();
  if (DLPACKPP_UNLIKELY(!view || !fits)) {
    Py_DECREF(capsule);  // leased or not, its destructor releases the tensor
    return view ? fits.error() : view.error();
  }
  keeper = capsule;
  return view;
}

// The borrow engine, the one route and writability rule for try_borrow, try_borrow_view and
// so the binding casters. A dlpackpp.Tensor of this state is read in place with its flags (a
// stream asked for waits for its pending work, as its __dlpack__ would make it).
// Where the type's exchange table can serve the request, a reader borrows through
// dltensor_from_py_object_no_sync (READ_ONLY: the table carries no flags; into `storage`
// where given, see lend_borrowed), and a writer (ImportOptions::writable) or a table without
// that entry imports with ownership. Otherwise __dlpack__'s capsule is leased. `keeper`
// (NULL on entry) receives the new reference, if any, that keeps the view's tensor alive; the
// view also needs `obj`.
DLPACKPP_FORCE_INLINE Result<TensorView> lend(Internals& in, PyObject* obj, DLTensor* storage,
                                              PyObject*& keeper, const ImportOptions& options) {
  if (const ImportedTensor* own = own_tensor_of(in, obj)) {  // in place, its flags
    Result<void> fits = own_tensor_fits(*own, options.validate);
    if (DLPACKPP_UNLIKELY(!fits)) return fits.error();
    if (DLPACKPP_UNLIKELY(options.stream) && !order_pending_work(obj, *options.stream))
      return take_python_error("dlpackpp.Tensor's stream order");
    return own->view();
  }
  const TypeEntry* entry = type_entry_of(in, obj);
  if (DLPACKPP_UNLIKELY(entry == nullptr)) return take_python_error("dlpackpp's type cache");
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = entry->api;
  if (api != nullptr && exchange_can_serve(options)) {
    if (!options.writable && api->dltensor_from_py_object_no_sync != nullptr)
      return lend_borrowed(api, obj, storage, options.validate);
    return lend_owned(in, *entry, obj, keeper, options);
  }
#else
  static_cast<void>(storage);
#endif
  return lend_capsule(in, *entry, obj, keeper, options);
}
}  // namespace detail

/// A view of `obj`'s tensor without copying it, for a caller that cannot scope its use in a
/// callback (a binding library's caster; the casters use the overload below): the one borrow
/// engine behind try_borrow, with the same route and the same writability rule (see
/// try_borrow). `keeper` receives a new reference, or NULL, to hold while the view is used and
/// then release (the GIL held): the view is valid while both `keeper` and `obj` live, and
/// nothing else can take the tensor meanwhile. A view through the exchange table keeps its own
/// copy of the borrowed DLTensor.
DLPACKPP_FORCE_INLINE Result<TensorView> try_borrow_view(PyObject* obj, PyObject*& keeper,
                                                         const ImportOptions& options = {}) {
  keeper = nullptr;
  return detail::with_state(obj, [&](detail::Internals& in) DLPACKPP_LAMBDA_FORCE_INLINE {
    return detail::lend(in, obj, nullptr, keeper, options);
  });
}

/// As try_borrow_view, for a caller that keeps `storage` alive and unmoved while the view is
/// used (a binding caster's own member): a view through the exchange table then reads the
/// DLTensor it borrowed into `storage` in place instead of copying it.
DLPACKPP_FORCE_INLINE Result<TensorView> try_borrow_view(PyObject* obj, DLTensor& storage,
                                                         PyObject*& keeper,
                                                         const ImportOptions& options = {}) {
  keeper = nullptr;
  return detail::with_state(obj, [&](detail::Internals& in) DLPACKPP_LAMBDA_FORCE_INLINE {
    return detail::lend(in, obj, &storage, keeper, options);
  });
}

/// Calls `f(const TensorView&)` on `obj`'s tensor and returns its result (a `Result<X>` that
/// `f` returns is passed through, `void` gives `Result<void>`). A dlpackpp.Tensor is read in
/// place, with its flags. Where the type's exchange table can serve the request it is read
/// through `dltensor_from_py_object_no_sync` (no allocation, no ownership), and that view is
/// READ_ONLY: the table carries no flags. `options.writable` asks for a view that may be
/// written where the producer allows: the tensor is then imported with ownership (the table's
/// owning entry), whose flags are known. Anything else goes through `__dlpack__`, whose
/// capsule is consumed for the call. The view is valid only inside `f`; `obj` is kept alive
/// until `f` returns, whatever `f` does with it (exports of a dlpackpp.Tensor share its
/// tensor, so exporting it inside `f` is safe too).
template <class F>
DLPACKPP_FORCE_INLINE detail::borrow_result_t<F> try_borrow(PyObject* obj, F&& f,
                                                            const ImportOptions& options = {}) {
  using R = detail::borrow_result_t<F>;
  return detail::with_state(obj, [&](detail::Internals& in) DLPACKPP_LAMBDA_FORCE_INLINE -> R {
    const detail::HeldRef keep_alive = detail::HeldRef::borrow(obj);
    DLTensor storage;  // outlives the view, which reads it in place where the table lends it
    PyObject* keeper = nullptr;
    Result<TensorView> view = detail::lend(in, obj, &storage, keeper, options);
    if (DLPACKPP_UNLIKELY(!view)) return view.error();
    const detail::HeldRef lease(keeper);
    return detail::call_with_view(f, *view);
  });
}

/// As try_borrow, throwing the Error.
template <class F>
auto borrow(PyObject* obj, F&& f, const ImportOptions& options = {}) {
  return try_borrow(obj, std::forward<F>(f), options).value();
}

}  // namespace python
DLPACKPP_END_NAMESPACE
