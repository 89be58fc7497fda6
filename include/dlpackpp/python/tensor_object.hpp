// SPDX-License-Identifier: Apache-2.0
/// @file
/// The instance of `dlpackpp.Tensor` and its exports. The C++ tensor is shared by the object
/// and every export made of it (each a small DLPack struct of its own that points at the same
/// buffer, shape and strides); the last of them to go releases it, on whatever thread that
/// is, with no GIL needed: a count, not a Python reference, keeps it alive. Without the GIL the
/// object's fields are written once: the shared tensor when the object is made, the shape and
/// device tuples published once, the `exported` flag atomically.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/recycled_block.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/error.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/iterate.hpp"
#include "dlpackpp/managed_tensor.hpp"
#include "dlpackpp/producers.hpp"
#include "dlpackpp/python/capsule.hpp"
#include "dlpackpp/python/free_threading.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/stream_order.hpp"
#include "dlpackpp/tensor_view.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {
namespace detail {

// The blocks of exports and shared tensors (detail/recycled_block.hpp): with the GIL, one freed
// block of each kind kept for the next, exchanged atomically so that a block may be given back
// on any thread. Without it, none: the one slot would be a cache line that every thread's
// exports write (two threads importing their own tensors ran at half the speed of one).
template <class T>
using RecycledBlock = ::dlpackpp::detail::RecycledBlock<T, !DLPACKPP_DETAIL_PY_FREE_THREADED>;

/// The C++ tensor of a dlpackpp.Tensor once it has been exported, and the number of holders
/// (the object, each export). The object's stream hook moves here when the object dies with
/// exports alive (release_tensor), written before its holder is let go.
struct SharedTensor {
  std::atomic<std::size_t> holders{1};
  ImportedTensor tensor;
  const StreamHook* hook = nullptr;
  void* hook_context = nullptr;
  explicit SharedTensor(ImportedTensor&& t) noexcept : tensor(std::move(t)) {}
};

/// One holder gone; the last releases the hook, then the tensor (its deleter runs here,
/// exactly once).
inline void let_go(SharedTensor* shared) noexcept {
  if (shared->holders.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (shared->hook != nullptr) shared->hook->release(shared->hook_context);
    shared->~SharedTensor();
    RecycledBlock<SharedTensor>::give_back(shared);
  }
}

/// One export of a SharedTensor as a DLPack struct of kind M: the tensor's DLTensor as it is
/// (the buffer, shape and strides stay owned by the shared tensor), one holder while alive.
template <class M>
struct SharedExport {
  M managed;
  SharedTensor* shared;

  static void deleter(M* self) noexcept {
    auto* e = static_cast<SharedExport*>(self->manager_ctx);
    SharedTensor* shared = e->shared;
    RecycledBlock<SharedExport>::give_back(e);  // trivially destructible
    let_go(shared);
  }
};

/// A new export of `shared` (empty when out of memory, with MemoryError raised).
template <class M>
BasicManagedTensor<M> export_of(SharedTensor* shared) noexcept {
  static_assert(std::is_trivially_destructible<SharedExport<M>>::value, "see deleter");
  void* memory = RecycledBlock<SharedExport<M>>::take(std::nothrow);
  if (memory == nullptr) {
    PyErr_NoMemory();
    return {};
  }
  auto* e = ::new (memory) SharedExport<M>();
  e->managed.dl_tensor = shared->tensor.get()->dl_tensor;
  e->managed.manager_ctx = e;
  e->managed.deleter = &SharedExport<M>::deleter;
#if DLPACKPP_HAS_VERSIONED
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    e->managed.version.major = DLPACKPP_DLPACK_MAJOR;
    e->managed.version.minor = DLPACKPP_DLPACK_MINOR;
    e->managed.flags = shared->tensor.flags();
  }
#endif
  shared->holders.fetch_add(1, std::memory_order_relaxed);  // a holder is adding one
  e->shared = shared;
  return BasicManagedTensor<M>::adopt_unchecked(&e->managed);  // validated when it was made
}

/// The instance layout of dlpackpp.Tensor. With the GIL the tensor stays in the object until
/// its first export moves it into a SharedTensor: an object never exported costs no
/// allocation. Without it the SharedTensor is made with the object (to_pyobject), so that no
/// thread moves the tensor while another reads it, and `shared` never changes after that.
/// What the wait buys (callgrind): 211 instructions per object that lives beside others and is
/// never exported (1,452 -> 1,241 per to_pyobject and release, 100 alive at a time, where each
/// SharedTensor would be a malloc); it costs 10 per export (395 -> 405). What it relies on: the
/// GIL, so that no thread reads `own` while the first export moves it, and moving the handle
/// leaves the DLPack struct (and any view of it) where it was.
struct TensorObject {
  PyObject_HEAD ImportedTensor own;     ///< the tensor until the first export, then empty
  SharedTensor* shared;                 ///< from the first export on; one holder is the object
  std::atomic<PyObject*> shape;         ///< tuple, made on first use (publish_once)
  std::atomic<PyObject*> device_tuple;  ///< (device_type, device_id), made on first use
  std::atomic<bool> exported;           ///< exported (or imported through the table) at least once
  const StreamHook* hook;               ///< NULL, or how pending device work is ordered
  void* hook_context;                   ///< the hook's own, released with the tensor
};

inline bool is_tensor_object(Internals& in, PyObject* obj) noexcept {
  // No type yet (NULL) matches no object; comparing the pointer needs no ordering.
  return reinterpret_cast<PyObject*>(Py_TYPE(obj)) ==
         in.tensor_type.load(std::memory_order_relaxed);
}

/// Notes that the object was exported (read by its `exported` property only).
inline void mark_exported(TensorObject* self) noexcept {
  self->exported.store(true, std::memory_order_relaxed);
}

/// The object's tensor, wherever it is now. Moving it into a SharedTensor moves the handle
/// only: the DLPack struct, and so any view of it, stays where it was.
inline const ImportedTensor& tensor_of(const TensorObject* self) noexcept {
  return self->shared != nullptr ? self->shared->tensor : self->own;
}
inline const ImportedTensor& tensor_of(PyObject* obj) noexcept {
  return tensor_of(reinterpret_cast<const TensorObject*>(obj));
}

/// The object's SharedTensor, made on first use (with the GIL; without it, by to_pyobject);
/// NULL with MemoryError raised.
inline SharedTensor* shared_of(TensorObject* self) noexcept {
  if (!DLPACKPP_DETAIL_PY_FREE_THREADED && self->shared == nullptr) {
    void* memory = RecycledBlock<SharedTensor>::take(std::nothrow);
    if (memory == nullptr) {
      PyErr_NoMemory();
      return nullptr;
    }
    self->shared = ::new (memory) SharedTensor(std::move(self->own));
  }
  return self->shared;
}

/// Releases the object's hold on its tensor (tp_dealloc). Its stream hook goes with the tensor,
/// before the deleter: now if nothing else holds it, else with the last export.
inline void release_tensor(TensorObject* self) noexcept {
  if (self->shared != nullptr) {
    self->shared->hook = self->hook;
    self->shared->hook_context = self->hook_context;
    let_go(self->shared);
  } else {
    if (self->hook != nullptr) self->hook->release(self->hook_context);
    self->own.~ImportedTensor();
  }
}

/// Makes a consumer's `stream` wait for the work the object's producer may still have queued
/// (its stream hook, python/cuda.hpp), as its `__dlpack__(stream=...)` would: for a view read
/// in place. Nothing where it has no hook. False with a Python exception set.
inline bool order_pending_work(PyObject* obj, std::intptr_t stream) noexcept {
  auto* self = reinterpret_cast<TensorObject*>(obj);
  if (self->hook == nullptr) return true;
  PyObject* value = PyLong_FromLongLong(static_cast<long long>(stream));
  const bool ordered = value != nullptr && self->hook->order(self->hook_context, value);
  Py_XDECREF(value);
  return ordered;
}

/// obj's C++ tensor when obj is a dlpackpp.Tensor, else NULL. Valid while obj lives: exports
/// share the tensor, they never take it away.
inline const ImportedTensor* own_tensor_of(Internals& in, PyObject* obj) noexcept {
  return is_tensor_object(in, obj) ? &tensor_of(obj) : nullptr;
}

/// The object's shape tuple (borrowed), made on first use; NULL with an exception set.
inline PyObject* shape_tuple(TensorObject* self) {
  if (PyObject* shape = published(self->shape)) return shape;
  const IntSpan shape = tensor_of(self).shape();
  PyObject* tuple = PyTuple_New(static_cast<Py_ssize_t>(shape.size()));
  for (std::size_t d = 0; tuple != nullptr && d < shape.size(); ++d) {
    PyObject* extent = PyLong_FromLongLong(static_cast<long long>(shape[d]));
    if (extent == nullptr)
      Py_CLEAR(tuple);
    else
      PyTuple_SetItem(tuple, static_cast<Py_ssize_t>(d), extent);
  }
  return tuple != nullptr ? publish_once(self->shape, tuple) : nullptr;
}

/// A compact host copy of `view` (copy=True); sub-byte types only when already contiguous.
inline Result<ImportedTensor> copy_of(const TensorView& view) {
  if (!view.device().is_host_accessible()) {
    return make_error(Errc::unsupported_device, "copy=True of a tensor on ",
                      view.device().to_string(),
                      ": dlpackpp.Tensor copies host-accessible memory only");
  }
#if DLPACKPP_HAS_VERSIONED
  const std::uint64_t flags = flag::is_copied | (view.flags() & flag::is_subbyte_type_padded);
#else
  const std::uint64_t flags = 0;
#endif
  Result<ImportedTensor> out =
      try_allocate<ImportedTensor>(view.dtype(), view.shape(), Device::cpu(), flags);
  if (!out) return out;
  // Strided views go through the library's one index walk (iterate.hpp).
  if (Result<void> copied = try_copy_row_major(view, out->get()->dl_tensor.data); !copied) {
    return copied.error();
  }
  return out;
}

}  // namespace detail
}  // namespace python
DLPACKPP_END_NAMESPACE
