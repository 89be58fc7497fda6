// SPDX-License-Identifier: Apache-2.0
/// @file
/// DLPack capsules: to_capsule (an unconsumed capsule releases its tensor when it dies),
/// try_from_capsule (renaming the capsule is taking ownership; no path frees twice), and the
/// borrow engine's lease (consumed, so no other consumer takes the tensor, yet still its
/// owner: no handle).
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/conversions.hpp"
#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/free_threading.hpp"
#include "dlpackpp/validate.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {

/// The owning handle imports produce: versioned where the dlpack.h in force has it, legacy
/// otherwise (the legacy-only subset; see docs/python.md).
using ImportedTensor = DefaultManagedTensor;

namespace detail {
template <class M>
struct capsule_names;
template <>
struct capsule_names<DLManagedTensor> {
  static constexpr const char* fresh = "dltensor";
  static constexpr const char* used = "used_dltensor";
};
#if DLPACKPP_HAS_VERSIONED
template <>
struct capsule_names<DLManagedTensorVersioned> {
  static constexpr const char* fresh = "dltensor_versioned";
  static constexpr const char* used = "used_dltensor_versioned";
};
#endif

// Calls the deleter of a capsule nobody consumed (its name is still the fresh one), keeping
// any exception in flight intact: the capsule may die while one propagates.
template <class M>
void capsule_destructor(PyObject* capsule) {
  // One read of the name and one compare (PyCapsule_IsValid would compare it again before
  // GetPointer). The capsule is ours and valid, so GetName cannot fail and set an exception
  // over the one that may be in flight.
  const char* name = PyCapsule_GetName(capsule);
  if (name == nullptr || std::strcmp(name, capsule_names<M>::fresh) != 0) return;  // consumed
  PreserveError keep;
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, name));
  ::dlpackpp::detail::release_to_producer(managed);
}

inline bool name_is(const char* name, const char* expected) noexcept {
  return name != nullptr && std::strcmp(name, expected) == 0;
}

// A new capsule of kind M owning `tensor` (emptied on success, untouched on failure).
template <class M>
PyObject* capsule_of(BasicManagedTensor<M>&& tensor) noexcept {
  if (!tensor) {
    PyErr_SetString(PyExc_ValueError, "dlpackpp: to_capsule of an empty handle");
    return nullptr;
  }
  PyObject* capsule = PyCapsule_New(tensor.get(), capsule_names<M>::fresh, &capsule_destructor<M>);
  if (capsule != nullptr) static_cast<void>(tensor.release());
  return capsule;
}
}  // namespace detail

/// A new reference to a `"dltensor"` capsule owning `tensor` (the handle is emptied); when no
/// consumer takes it, the capsule's death calls the deleter exactly once. On failure returns
/// NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_capsule(LegacyManagedTensor&& tensor) noexcept {
  return detail::capsule_of(std::move(tensor));
}

#if DLPACKPP_HAS_VERSIONED
/// A new reference to a `"dltensor_versioned"` capsule owning `tensor` (the handle is
/// emptied); when no consumer takes it, the capsule's death calls the deleter exactly once. On
/// failure returns NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_capsule(ManagedTensor&& tensor) noexcept {
  return detail::capsule_of(std::move(tensor));
}
#endif

namespace detail {
// The pointer read from a fresh capsule of kind M: renaming the capsule is taking ownership (its
// destructor no longer frees), then adoption validates with `options` and releases a
// malformed tensor itself. No path frees twice.
template <class M>
Result<BasicManagedTensor<M>> take_pointer(PyObject* capsule, M* managed,
                                           const ValidateOptions& options) {
  if (PyCapsule_SetName(capsule, capsule_names<M>::used) != 0)
    return take_python_error("PyCapsule_SetName");
  return BasicManagedTensor<M>::try_adopt(managed, options);
}

DLPACKPP_COLD inline Error capsule_name_error(PyObject* capsule) {
  if (!PyCapsule_CheckExact(capsule)) {
    return make_error(Errc::invalid_argument, "expected a DLPack capsule, got a ",
                      type_name_of(capsule));
  }
  const char* name = PyCapsule_GetName(capsule);
  PyErr_Clear();
  if (name_is(name, "used_dltensor") || name_is(name, "used_dltensor_versioned")) {
    return make_error(Errc::invalid_argument, "capsule \"", name,
                      "\" was already consumed; a DLPack capsule can be consumed once");
  }
  return make_error(Errc::invalid_argument, "capsule name is \"", name != nullptr ? name : "(NULL)",
                    "\", expected \"dltensor_versioned\" or \"dltensor\"");
}

// The capsule's tensor when it is a fresh capsule of kind M, else NULL with nothing pending:
// one PyCapsule_GetPointer checks both the object and the name.
template <class M>
M* pointer_if(PyObject* capsule) noexcept {
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, capsule_names<M>::fresh));
  if (managed == nullptr) PyErr_Clear();
  return managed;
}

// The tensor in a fresh DLPack capsule, of one kind or the other; neither set: not a fresh
// DLPack capsule. The kind the producer was asked for (`expect_legacy`) is looked up first,
// so a capsule of that kind costs one PyCapsule_GetPointer.
struct CapsuleTensor {
#if DLPACKPP_HAS_VERSIONED
  DLManagedTensorVersioned* versioned = nullptr;
#endif
  DLManagedTensor* legacy = nullptr;
};

inline CapsuleTensor tensor_in(PyObject* capsule, bool expect_legacy) noexcept {
  CapsuleTensor found;
#if DLPACKPP_HAS_VERSIONED
  using Versioned = DLManagedTensorVersioned;
  if (!expect_legacy) found.versioned = pointer_if<Versioned>(capsule);
  if (found.versioned == nullptr) found.legacy = pointer_if<DLManagedTensor>(capsule);
  if (expect_legacy && found.legacy == nullptr) found.versioned = pointer_if<Versioned>(capsule);
#else
  static_cast<void>(expect_legacy);
  found.legacy = pointer_if<DLManagedTensor>(capsule);
#endif
  return found;
}

/// try_from_capsule, with `legacy_flags` set on a tensor that came as `"dltensor"` (the
/// flags the legacy struct cannot carry; the import route passes READ_ONLY on request), and
/// the kind the producer was asked for (`expect_legacy`) looked up first.
/// Every route that takes a capsule (try_from_capsule, try_from_dlpack, the borrow engine's
/// lease) goes through here or lease_view, under the capsule's critical section: a producer
/// may hand the same capsule to two threads at once (docs/python.md, decision 16), and "still
/// fresh? rename it" must then be one step, so that exactly one thread takes the tensor and
/// the other finds the capsule used.
inline Result<ImportedTensor> import_capsule(PyObject* capsule, const ValidateOptions& options,
                                             std::uint64_t legacy_flags,
                                             bool expect_legacy = false) {
  if (capsule == nullptr) return make_error(Errc::null_pointer, "capsule is NULL");
  const CriticalSection one_taker(capsule);
  const CapsuleTensor found = tensor_in(capsule, expect_legacy);
#if DLPACKPP_HAS_VERSIONED
  if (found.versioned != nullptr) return take_pointer(capsule, found.versioned, options);
  if (found.legacy != nullptr) {
    Result<LegacyManagedTensor> legacy = take_pointer(capsule, found.legacy, options);
    if (!legacy) return legacy.error();
    // to_versioned() without its re-validation, which would repeat the checks adoption has
    // just made on every legacy import (the legacy deleter stays responsible, called once);
    // `legacy_flags`: what the importer decided the legacy struct could not say.
    return ::dlpackpp::detail::versioned_from_checked(std::move(*legacy), legacy_flags);
  }
#else
  static_cast<void>(legacy_flags);  // no flags without a versioned struct
  if (found.legacy != nullptr) return take_pointer(capsule, found.legacy, options);
#endif
  return capsule_name_error(capsule);
}

// The destructor of a capsule leased (see lease_view): the capsule was renamed "used_...",
// so it releases the tensor itself, once, keeping any exception in flight intact.
template <class M>
void leased_capsule_destructor(PyObject* capsule) {
  PreserveError keep;
  auto* managed = static_cast<M*>(PyCapsule_GetPointer(capsule, capsule_names<M>::used));
  if (managed == nullptr) {
    PyErr_Clear();
    return;
  }
  ::dlpackpp::detail::release_to_producer(managed);
}

// Consumes a fresh capsule of kind M without taking the tensor out of it: renamed "used_...",
// no other consumer can take it, and the producer's destructor, which does nothing for a used
// capsule, is replaced by one that releases the tensor when the capsule dies. False with a
// Python exception set where the capsule refuses (it then stays unconsumed).
template <class M>
bool lease(PyObject* capsule) noexcept {
  PyCapsule_Destructor producers = PyCapsule_GetDestructor(capsule);
  if (PyCapsule_SetDestructor(capsule, &leased_capsule_destructor<M>) != 0) return false;
  if (PyCapsule_SetName(capsule, capsule_names<M>::used) == 0) return true;
  PyCapsule_SetDestructor(capsule, producers);
  return false;
}

template <class M>
Result<TensorView> view_and_lease(PyObject* capsule, DLTensor& tensor,
                                  const ValidateOptions& options) {
  Result<TensorView> view = ::dlpackpp::detail::view_in_place(tensor, options);
  if (DLPACKPP_UNLIKELY(view && !lease<M>(capsule))) return take_python_error("PyCapsule_SetName");
  return view;
}

// A view of the tensor in a fresh capsule, validated as adoption validates it (version, flags,
// the catalogue), and the capsule leased: consumed (no other consumer can take the tensor) but
// still owning it, so the view (which reads the struct in place) is valid while the capsule
// lives, and the capsule's death releases the tensor. No handle and no versioned wrapper. A
// capsule that fails stays unconsumed. `legacy_flags` and `expect_legacy` as for
// import_capsule.
inline Result<TensorView> lease_view(PyObject* capsule, const ValidateOptions& options,
                                     std::uint64_t legacy_flags, bool expect_legacy) {
  const CriticalSection one_taker(capsule);  // see import_capsule
  const CapsuleTensor found = tensor_in(capsule, expect_legacy);
  ValidateOptions with_flags = options;
#if DLPACKPP_HAS_VERSIONED
  if (DLManagedTensorVersioned* versioned = found.versioned) {
    if (DLPACKPP_UNLIKELY(versioned->version.major != DLPACKPP_DLPACK_MAJOR)) {
      return ::dlpackpp::detail::version_mismatch_error("version.major", versioned->version.major,
                                                        versioned->version.minor);
    }
    with_flags.flags = versioned->flags;
    return view_and_lease<DLManagedTensorVersioned>(capsule, versioned->dl_tensor, with_flags);
  }
#endif
  with_flags.flags = legacy_flags;
  if (found.legacy != nullptr)
    return view_and_lease<DLManagedTensor>(capsule, found.legacy->dl_tensor, with_flags);
  return capsule_name_error(capsule);
}
}  // namespace detail

/// Takes ownership of the tensor in a `"dltensor_versioned"` or `"dltensor"` capsule (a legacy
/// one is wrapped with to_versioned) and renames the capsule `"used_..."`. A used capsule or
/// one of another name is refused and left untouched; a tensor that fails validation is
/// released exactly once (the capsule stays renamed: ownership was taken).
inline Result<ImportedTensor> try_from_capsule(PyObject* capsule,
                                               const ValidateOptions& options = {}) {
  return detail::import_capsule(capsule, options, 0);
}

/// As try_from_capsule, throwing the Error.
inline ImportedTensor from_capsule(PyObject* capsule, const ValidateOptions& options = {}) {
  return try_from_capsule(capsule, options).value();
}

}  // namespace python
DLPACKPP_END_NAMESPACE
