// SPDX-License-Identifier: Apache-2.0
/// @file
/// The `dlpackpp.Tensor` type: made once per interpreter, it exports a C++ tensor to Python
/// any number of times (`__dlpack__`, and its type's exchange table), all exports sharing the
/// buffer; to_pyobject() makes one.
#pragma once

#include "dlpackpp/python/python_h.hpp"

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/device.hpp"
#include "dlpackpp/dtype.hpp"
#include "dlpackpp/exchange_api.hpp"
#include "dlpackpp/flags.hpp"
#include "dlpackpp/python/errors.hpp"
#include "dlpackpp/python/free_threading.hpp"
#include "dlpackpp/python/state.hpp"
#include "dlpackpp/python/tensor_dlpack.hpp"
#include "dlpackpp/python/tensor_object.hpp"

#include <atomic>
#include <new>
#include <string>
#include <string_view>
#include <utility>

DLPACKPP_BEGIN_NAMESPACE
namespace python {

inline PyObject* to_pyobject(ImportedTensor&& tensor) noexcept;

namespace detail {

// The tuple is made once per object (the device never changes) and shared after that.
inline PyObject* tensor_dlpack_device(PyObject* obj, PyObject*) {
  auto* self = reinterpret_cast<TensorObject*>(obj);
  PyObject* tuple = published(self->device_tuple);
  if (tuple == nullptr) {
    const Device device = tensor_of(self).device();
    tuple = Py_BuildValue("(ii)", static_cast<int>(device.type()), static_cast<int>(device.id()));
    if (tuple == nullptr) return nullptr;
    tuple = publish_once(self->device_tuple, tuple);
  }
  Py_INCREF(tuple);
  return tuple;
}

inline PyObject* tensor_get_shape(PyObject* obj, void*) {
  PyObject* shape = shape_tuple(reinterpret_cast<TensorObject*>(obj));
  Py_XINCREF(shape);
  return shape;
}

// A str from what `describe` returns (it may throw bad_alloc).
template <class Describe>
PyObject* string_result(Describe&& describe) {
  DLPACKPP_DETAIL_TRY {
    const std::string s = describe();
    return PyUnicode_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
  }
  DLPACKPP_DETAIL_CATCH(...) { set_error_from_current_exception(); }
  return nullptr;
}

inline PyObject* tensor_get_dtype(PyObject* obj, void*) {
  return string_result([obj] { return tensor_of(obj).dtype().to_string(); });
}

inline PyObject* tensor_get_device(PyObject* obj, void*) {
  return string_result([obj] { return tensor_of(obj).device().to_string(); });
}

inline PyObject* tensor_get_read_only(PyObject* obj, void*) {
  return PyBool_FromLong(tensor_of(obj).read_only() ? 1 : 0);
}

inline PyObject* tensor_get_exported(PyObject* obj, void*) {
  const auto* self = reinterpret_cast<const TensorObject*>(obj);
  return PyBool_FromLong(self->exported.load(std::memory_order_relaxed) ? 1 : 0);
}

inline PyObject* tensor_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_TypeError,
                  "dlpackpp.Tensor cannot be created from Python; C++ code makes one with "
                  "dlpackpp::python::to_pyobject");
  return nullptr;
}

inline void tensor_dealloc(PyObject* obj) {
  auto* self = reinterpret_cast<TensorObject*>(obj);
  PyTypeObject* type = Py_TYPE(obj);
  {
    PreserveError keep;  // the deleter may run Python code while an exception is in flight
    release_tensor(self);
    Py_XDECREF(self->shape.load(std::memory_order_relaxed));  // the last reference: no race
    Py_XDECREF(self->device_tuple.load(std::memory_order_relaxed));
  }
  PyObject_Free(obj);
  Py_DECREF(reinterpret_cast<PyObject*>(type));  // instances of heap types own a reference
}

// Casts a method with keywords to the PyCFunction the table stores (through void(*)(void),
// the one cast GCC's -Wcast-function-type accepts).
template <class Fn>
PyCFunction as_cfunction(Fn fn) noexcept {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn));
}

#if DLPACKPP_HAS_EXCHANGE_API
/// The exchange table dlpackpp.Tensor carries: an owning import is one more export sharing
/// the tensor, borrowing reads it in place (neither waits for pending work: the table's
/// entries are `_no_sync`), and the current work stream is this thread's (stream_order.hpp).
struct TensorExchangeImpl {
  static Result<TensorObject*> checked(void* py_object) {
    auto* obj = static_cast<PyObject*>(py_object);
    Internals* in = internals();
    if (in == nullptr)
      return Error(Errc::invalid_argument, "dlpackpp's interpreter state is unavailable");
    if (!is_tensor_object(*in, obj)) {
      return Error(Errc::invalid_argument,
                   "dlpackpp.Tensor's exchange API called with another type");
    }
    return reinterpret_cast<TensorObject*>(obj);
  }
  static Result<ManagedTensor> managed_tensor_allocator(const DLTensor& prototype) {
    // The trampoline has checked the prototype (rank, shape, dtype, device).
    const IntSpan shape(prototype.shape, static_cast<std::size_t>(prototype.ndim));
    return try_allocate<ManagedTensor>(prototype.dtype, shape, prototype.device);
  }
  static Result<ManagedTensor> managed_tensor_from_py_object_no_sync(void* py_object) {
    Result<TensorObject*> self = checked(py_object);
    if (!self) return self.error();
    SharedTensor* shared = shared_of(*self);
    ManagedTensor out;
    if (shared != nullptr) out = export_of<DLManagedTensorVersioned>(shared);
    // Fails only out of memory; the MemoryError stays pending (set_error keeps it).
    if (!out) return Error(Errc::invalid_argument, "out of memory");
    mark_exported(*self);
    return out;
  }
  static Result<void*> managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    PyObject* obj = to_pyobject(std::move(tensor));
    // The Python exception to_pyobject set stays pending (set_error keeps it).
    if (obj == nullptr) return Error(Errc::invalid_argument, "to_pyobject failed");
    return static_cast<void*>(obj);
  }
  static Result<void> dltensor_from_py_object_no_sync(void* py_object, DLTensor& out) {
    Result<TensorObject*> self = checked(py_object);
    if (!self) return self.error();
    out = tensor_of(*self).get()->dl_tensor;
    return {};
  }
  // The stream this thread's C++ code last handed work over on (python/stream_order.hpp).
  static Result<void*> current_work_stream(Device device) {
    if (device.type() == kDLCPU) return static_cast<void*>(nullptr);
    return work_stream_of(device);
  }
  static void set_error(std::string_view kind, std::string_view message) {
    raise_kind(kind, message);
  }
};
#endif

inline PyObject* make_tensor_type() {
  static PyMethodDef methods[] = {
#if DLPACKPP_DETAIL_PY_FASTCALL_DLPACK
    {"__dlpack__", as_cfunction(&tensor_dlpack), METH_FASTCALL | METH_KEYWORDS,
#else
    {"__dlpack__", as_cfunction(&tensor_dlpack), METH_VARARGS | METH_KEYWORDS,
#endif
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule "
     "sharing the tensor (versioned when max_version >= (1, 0)); any number of times"},
    {"__dlpack_device__", &tensor_dlpack_device, METH_NOARGS, "(device_type, device_id)"},
    {nullptr, nullptr, 0, nullptr}
  };
  static PyGetSetDef getset[] = {
      {"shape", &tensor_get_shape, nullptr, "extents, a tuple of ints", nullptr},
      {"dtype", &tensor_get_dtype, nullptr, "element type name, e.g. 'float32'", nullptr},
      {"device", &tensor_get_device, nullptr, "device name, e.g. 'cpu' or 'cuda:1'", nullptr},
      {"read_only", &tensor_get_read_only, nullptr, "True when writes are refused (READ_ONLY)",
       nullptr},
      {"exported", &tensor_get_exported, nullptr, "True once exported at least once", nullptr},
      {nullptr, nullptr, nullptr, nullptr, nullptr}};
  static PyType_Slot slots[] = {
      {Py_tp_dealloc, reinterpret_cast<void*>(&tensor_dealloc)},
      {Py_tp_new, reinterpret_cast<void*>(&tensor_new)},
      {Py_tp_methods, methods},
      {Py_tp_getset, getset},
      {Py_tp_doc, const_cast<char*>("A DLPack tensor exported from C++ by dlpackpp: pass it to "
                                    "np.from_dlpack, torch.from_dlpack or any DLPack consumer.")},
      {0, nullptr}};
  static PyType_Spec spec = {"dlpackpp.Tensor", static_cast<int>(sizeof(TensorObject)), 0,
                             Py_TPFLAGS_DEFAULT, slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return nullptr;
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = ::dlpackpp::make_exchange_api<TensorExchangeImpl>();
  PyObject* capsule =
      PyCapsule_New(const_cast<DLPackExchangeAPI*>(api), "dlpack_exchange_api", nullptr);
  if (capsule == nullptr ||
      PyObject_SetAttrString(type, "__dlpack_c_exchange_api__", capsule) != 0) {
    Py_XDECREF(capsule);
    Py_DECREF(type);
    return nullptr;
  }
  Py_DECREF(capsule);
#endif
  return type;
}

}  // namespace detail

/// The `dlpackpp.Tensor` type of this interpreter (borrowed), made on first use, e.g. to add
/// it to a module; NULL with a Python exception set on failure.
inline PyTypeObject* tensor_type() noexcept {
  detail::Internals* in = detail::internals();
  if (in == nullptr) return nullptr;
  PyObject* type = detail::published(in->tensor_type);
  if (type == nullptr) {
    // Two threads may both make one: the first published is everyone's, the other dropped.
    PyObject* made = detail::make_tensor_type();
    if (made == nullptr) return nullptr;
    type = detail::publish_once(in->tensor_type, made);
  }
  return reinterpret_cast<PyTypeObject*>(type);
}

namespace detail {

/// to_pyobject's body, with a stream hook and its context (python/cuda.hpp; NULL for none),
/// which the object releases when it dies. On failure the caller keeps the tensor and the
/// context.
inline PyObject* new_tensor_object(ImportedTensor&& tensor, const StreamHook* hook,
                                   void* hook_context) noexcept {
  if (!tensor) {
    PyErr_SetString(PyExc_ValueError, "dlpackpp: to_pyobject of an empty handle");
    return nullptr;
  }
  PyTypeObject* type = ::dlpackpp::python::tensor_type();
  if (type == nullptr) return nullptr;
  // Without the GIL the tensor goes into its SharedTensor at once (see TensorObject); with it,
  // at the first export.
  void* block = nullptr;
  if constexpr (free_threaded) {
    block = RecycledBlock<SharedTensor>::take(std::nothrow);
    if (block == nullptr) {
      PyErr_NoMemory();
      return nullptr;
    }
  }
  PyObject* obj = PyType_GenericAlloc(type, 0);  // zero-filled; holds a reference to the type
  if (obj == nullptr) {
    if (block != nullptr) RecycledBlock<SharedTensor>::give_back(block);
    return nullptr;
  }
  auto* self = reinterpret_cast<TensorObject*>(obj);
  if constexpr (free_threaded) {
    self->shared = ::new (block) SharedTensor(std::move(tensor));
  } else {
    ::new (static_cast<void*>(&self->own)) ImportedTensor(std::move(tensor));
    self->shared = nullptr;
  }
  ::new (static_cast<void*>(&self->shape)) std::atomic<PyObject*>(nullptr);
  ::new (static_cast<void*>(&self->device_tuple)) std::atomic<PyObject*>(nullptr);
  ::new (static_cast<void*>(&self->exported)) std::atomic<bool>(false);
  self->hook = hook;
  self->hook_context = hook_context;
  return obj;
}

}  // namespace detail

/// A new reference to a `dlpackpp.Tensor` owning `tensor` (the handle is emptied): it
/// implements `__dlpack__(*, stream, max_version, dl_device, copy)` (versioned capsule when
/// max_version >= (1, 0), legacy otherwise; READ_ONLY is never exported as legacy),
/// `__dlpack_device__()`, the `shape`, `dtype` and `device` properties, and its type carries
/// `__dlpack_c_exchange_api__`. Every export shares the tensor; its deleter runs once, when
/// the object and every export are gone, on the thread that lets go last. On failure returns
/// NULL with a Python exception set and leaves `tensor` untouched.
inline PyObject* to_pyobject(ImportedTensor&& tensor) noexcept {
  return detail::new_tensor_object(std::move(tensor), nullptr, nullptr);
}

}  // namespace python
DLPACKPP_END_NAMESPACE
