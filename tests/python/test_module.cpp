// SPDX-License-Identifier: Apache-2.0
// The extension module the Python tests drive: every entry point of <dlpackpp/python.hpp>
// exposed to Python, a tensor producer that counts its deleters, and a mock framework whose
// type publishes __dlpack_c_exchange_api__ (made with make_exchange_api) and whose
// __dlpack__ must never be called.
#include <dlpackpp/python.hpp>

#include "mock_framework.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// The module's name (the same source is built as several variants).
#ifndef DLPACKPP_TEST_MODULE_NAME
#define DLPACKPP_TEST_MODULE_NAME dlpackpp_test
#endif
#define DLPACKPP_TEST_STR2(x) #x
#define DLPACKPP_TEST_STR(x) DLPACKPP_TEST_STR2(x)

namespace py = dlpackpp::python;
using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::Result;
using dlpackpp::TensorView;

namespace {

std::atomic<long> g_deleters{0};
// The thread (PyThread_get_thread_ident, threading.get_ident's value) of the last deleter.
std::atomic<unsigned long> g_deleter_thread{0};

// The owner of a counted export: the bytes plus one tick of g_deleters when destroyed.
struct Counted {
  std::vector<unsigned char> bytes;
  bool live = true;
  explicit Counted(std::size_t n) : bytes(n) {}
  Counted(Counted&& other) noexcept : bytes(std::move(other.bytes)), live(other.live) {
    other.live = false;
  }
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (!live) return;
    g_deleter_thread = PyThread_get_thread_ident();
    ++g_deleters;
  }
};

PyObject* fail(const Error& e) {
  py::set_python_error(e);
  return nullptr;
}

// Every element in logical (row-major) order, as raw bytes: compared with NumPy's own
// tobytes() of a C-contiguous copy, so layout, offsets and values are all checked.
std::string gather(const TensorView& v) {
  std::string out;
  // Device memory is not read here: the CUDA tests compare through the framework instead.
  if (v.numel() == 0 || !v.device().is_host_accessible()) return out;
  const auto item = static_cast<std::size_t>(v.dtype().bits() / 8u * v.dtype().lanes());
  const auto* base = static_cast<const char*>(v.const_data());
  const int ndim = v.ndim();
  std::vector<std::int64_t> index(static_cast<std::size_t>(ndim), 0);
  for (std::int64_t n = 0; n < v.numel(); ++n) {
    std::int64_t offset = 0;
    for (int d = 0; d < ndim; ++d) offset += index[static_cast<std::size_t>(d)] * v.stride(d);
    out.append(base + offset * static_cast<std::int64_t>(item), item);
    for (int d = ndim - 1; d >= 0; --d) {
      if (++index[static_cast<std::size_t>(d)] < v.shape(d)) break;
      index[static_cast<std::size_t>(d)] = 0;
    }
  }
  return out;
}

PyObject* int_tuple(dlpackpp::IntSpan values) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(values.size()));
  for (std::size_t i = 0; t != nullptr && i < values.size(); ++i) {
    PyTuple_SetItem(t, static_cast<Py_ssize_t>(i),
                    PyLong_FromLongLong(static_cast<long long>(values[i])));
  }
  return t;
}

// A dict describing a view (what the tests compare with NumPy/PyTorch).
PyObject* describe(const TensorView& v) {
  const std::string data = gather(v);
  return Py_BuildValue("{s:N,s:N,s:s,s:s,s:K,s:O,s:y#,s:K}", "shape", int_tuple(v.shape()),
                       "strides", int_tuple(v.strides()), "dtype", v.dtype().to_string().c_str(),
                       "device", v.device().to_string().c_str(), "flags",
                       static_cast<unsigned long long>(v.flags()), "read_only",
                       v.read_only() ? Py_True : Py_False, "data", data.data(),
                       static_cast<Py_ssize_t>(data.size()), "byte_offset",
                       static_cast<unsigned long long>(v.byte_offset()));
}

bool parse_options(PyObject* stream, PyObject* dl_device, PyObject* copy,
                   py::ImportOptions& options) {
  if (stream != Py_None) options.stream = static_cast<std::intptr_t>(PyLong_AsLongLong(stream));
  if (dl_device != Py_None) {
    int type = 0;
    int id = 0;
    if (PyArg_ParseTuple(dl_device, "ii", &type, &id) == 0) return false;
    options.dl_device = Device::from_code(type, id);
  }
  if (copy != Py_None) options.copy = PyObject_IsTrue(copy) != 0;
  return PyErr_Occurred() == nullptr;
}

// import_tensor(obj, *, stream=None, dl_device=None, copy=None, legacy_read_only=False,
// require_strides=False, alignment=0, only_reading=False) -> dict, through try_from_dlpack.
PyObject* import_tensor(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"obj",       "stream",           "dl_device",
                                "copy",      "legacy_read_only", "require_strides",
                                "alignment", "only_reading",     nullptr};
  PyObject* obj = nullptr;
  PyObject* stream = Py_None;
  PyObject* dl_device = Py_None;
  PyObject* copy = Py_None;
  int legacy_read_only = 0;
  int require_strides = 0;
  unsigned long long alignment = 0;
  int only_reading = 0;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOppKp", const_cast<char**>(names), &obj,
                                  &stream, &dl_device, &copy, &legacy_read_only, &require_strides,
                                  &alignment, &only_reading) == 0) {
    return nullptr;
  }
  py::ImportOptions options;
  if (!parse_options(stream, dl_device, copy, options)) return nullptr;
  options.legacy_read_only = legacy_read_only != 0;
  options.only_reading = only_reading != 0;
  options.validate.require_strides = require_strides != 0;
  options.validate.alignment = static_cast<std::size_t>(alignment);
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj, options);
  if (!t) return fail(t.error());
  PyObject* d = describe(t->view());
  if (d != nullptr) {
    PyDict_SetItemString(d, "is_copied", t->is_copied() ? Py_True : Py_False);
  }
  return d;
}

// reexport_with(obj, legacy_read_only) -> dlpackpp.Tensor owning try_from_dlpack(obj) made
// with that option, to pass on to NumPy or PyTorch.
PyObject* reexport_with(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int legacy_read_only = 0;
  if (PyArg_ParseTuple(args, "Op", &obj, &legacy_read_only) == 0) return nullptr;
  py::ImportOptions options;
  options.legacy_read_only = legacy_read_only != 0;
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj, options);
  if (!t) return fail(t.error());
  return py::to_pyobject(std::move(*t));
}

// from_capsule(capsule) -> dict, through try_from_capsule.
PyObject* from_capsule(PyObject*, PyObject* capsule) {
  Result<py::ImportedTensor> t = py::try_from_capsule(capsule);
  if (!t) return fail(t.error());
  return describe(t->view());
}

// import_refused(obj, discard) -> bool: try_from_dlpack, a failure handled without raising
// (as a C++ caller that only logs it would), its producer exception dropped with
// discard_python_error when `discard` is true and otherwise left to the thread's end.
PyObject* import_refused(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int discard = 0;
  if (PyArg_ParseTuple(args, "Op:import_refused", &obj, &discard) == 0) return nullptr;
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (t) Py_RETURN_TRUE;
  if (discard != 0) py::discard_python_error(t.error());
  Py_RETURN_FALSE;
}

// borrow(obj) -> dict, through try_borrow (the view lives only inside the callback).
PyObject* borrow(PyObject*, PyObject* obj) {
  Result<PyObject*> d = py::try_borrow(obj, [](const TensorView& v) { return describe(v); });
  if (!d) return fail(d.error());
  return *d;
}

// borrow_calling(obj, callback) -> dict: try_borrow, calling callback() inside f before the
// view is read (the callback may export or drop whatever it likes).
PyObject* borrow_calling(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  PyObject* callback = nullptr;
  if (PyArg_ParseTuple(args, "OO", &obj, &callback) == 0) return nullptr;
  Result<PyObject*> d = py::try_borrow(obj, [callback](const TensorView& v) -> PyObject* {
    PyObject* r = PyObject_CallObject(callback, nullptr);
    if (r == nullptr) return nullptr;
    Py_DECREF(r);
    return describe(v);
  });
  if (!d) return fail(d.error());
  return *d;
}

// write_first(obj, value): writes element 0 (float32/float64/int32/int64) through the
// import's typed, checked access: READ_ONLY imports must refuse.
PyObject* write_first(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  double value = 0;
  if (PyArg_ParseTuple(args, "Od", &obj, &value) == 0) return nullptr;
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  const TensorView v = t->view();
  Result<void> written = [&]() -> Result<void> {
    if (v.dtype() == DataType::float32()) {
      Result<float*> p = v.try_data<float>();
      if (!p) return p.error();
      **p = static_cast<float>(value);
    } else if (v.dtype() == DataType::float64()) {
      Result<double*> p = v.try_data<double>();
      if (!p) return p.error();
      **p = value;
    } else if (v.dtype() == DataType::int64()) {
      Result<std::int64_t*> p = v.try_data<std::int64_t>();
      if (!p) return p.error();
      **p = static_cast<std::int64_t>(value);
    } else {
      Result<std::int32_t*> p = v.try_data<std::int32_t>();
      if (!p) return p.error();
      **p = static_cast<std::int32_t>(value);
    }
    return {};
  }();
  if (!written) return fail(written.error());
  Py_RETURN_NONE;
}

// borrow_write(obj, value, writable=False): writes element 0 (float32) through try_borrow,
// with ImportOptions::writable as given: a view that may not be written must refuse.
PyObject* borrow_write(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  double value = 0;
  int writable = 0;
  if (PyArg_ParseTuple(args, "Od|p", &obj, &value, &writable) == 0) return nullptr;
  py::ImportOptions options;
  options.writable = writable != 0;
  Result<void> done = py::try_borrow(
      obj,
      [value](const TensorView& v) -> Result<void> {
        Result<float*> p = v.try_data<float>();
        if (!p) return p.error();
        **p = static_cast<float>(value);
        return {};
      },
      options);
  if (!done) return fail(done.error());
  Py_RETURN_NONE;
}

// A C++ tensor of `shape` and `dtype` whose elements are 0, 1, 2, ... and whose owner ticks
// g_deleters once.
Result<py::ImportedTensor> make_counted(PyObject* shape_obj, const char* dtype_name,
                                        bool read_only) {
  Result<DataType> dtype = DataType::try_parse(dtype_name);
  if (!dtype) return dtype.error();
  std::vector<std::int64_t> shape;
  const Py_ssize_t ndim = PyTuple_Size(shape_obj);
  std::int64_t numel = 1;
  for (Py_ssize_t i = 0; i < ndim; ++i) {
    shape.push_back(PyLong_AsLongLong(PyTuple_GetItem(shape_obj, i)));
    numel *= shape.back();
  }
  const auto item = static_cast<std::size_t>(dtype->bits() / 8u);
  Counted owner(static_cast<std::size_t>(numel) * item);
  for (std::int64_t i = 0; i < numel; ++i) {
    unsigned char* p = owner.bytes.data() + static_cast<std::size_t>(i) * item;
    if (*dtype == DataType::float32()) {
      const auto f = static_cast<float>(i);
      std::memcpy(p, &f, sizeof f);
    } else if (*dtype == DataType::float64()) {
      const auto f = static_cast<double>(i);
      std::memcpy(p, &f, sizeof f);
    } else if (*dtype == DataType::int64()) {
      const auto f = static_cast<std::int64_t>(i);
      std::memcpy(p, &f, sizeof f);
    } else if (*dtype == DataType::int32()) {
      const auto f = static_cast<std::int32_t>(i);
      std::memcpy(p, &f, sizeof f);
    } else {
      return Error(Errc::unsupported_dtype, "make_counted: float32, float64, int32 or int64 only");
    }
  }
  void* data = numel == 0 ? nullptr : owner.bytes.data();
#if DLPACKPP_HAS_VERSIONED
  const std::uint64_t flags = read_only ? dlpackpp::flag::read_only : 0;
#else
  const std::uint64_t flags = 0;
  static_cast<void>(read_only);
#endif
  return dlpackpp::try_wrap<py::ImportedTensor>(data, *dtype, shape, {}, Device::cpu(),
                                                std::move(owner), flags);
}

// counted(shape, dtype="float32", read_only=False) -> dlpackpp.Tensor, through to_pyobject.
PyObject* counted(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"shape", "dtype", "read_only", nullptr};
  PyObject* shape = nullptr;
  const char* dtype = "float32";
  int read_only = 0;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "O!|sp", const_cast<char**>(names), &PyTuple_Type,
                                  &shape, &dtype, &read_only) == 0) {
    return nullptr;
  }
  Result<py::ImportedTensor> t = make_counted(shape, dtype, read_only != 0);
  if (!t) return fail(t.error());
  return py::to_pyobject(std::move(*t));
}

// counted_capsule(shape, dtype="float32", versioned=True) -> a capsule, through to_capsule.
PyObject* counted_capsule(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"shape", "dtype", "versioned", nullptr};
  PyObject* shape = nullptr;
  const char* dtype = "float32";
  int versioned = 1;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "O!|sp", const_cast<char**>(names), &PyTuple_Type,
                                  &shape, &dtype, &versioned) == 0) {
    return nullptr;
  }
  Result<py::ImportedTensor> t = make_counted(shape, dtype, false);
  if (!t) return fail(t.error());
#if DLPACKPP_HAS_VERSIONED
  if (versioned == 0) return py::to_capsule(dlpackpp::to_legacy(std::move(*t)));
#endif
  return py::to_capsule(std::move(*t));
}

// from_bytes(data, shape, dtype, read_only=False) -> dlpackpp.Tensor holding a copy of
// `data` (row-major) as `dtype` (any name DataType::parse knows, e.g. "bfloat16"); counted.
PyObject* from_bytes(PyObject*, PyObject* args, PyObject* kwargs) {
  static const char* names[] = {"data", "shape", "dtype", "read_only", nullptr};
  const char* bytes = nullptr;
  Py_ssize_t size = 0;
  PyObject* shape_obj = nullptr;
  const char* dtype_name = nullptr;
  int read_only = 0;
  if (PyArg_ParseTupleAndKeywords(args, kwargs, "y#O!s|p", const_cast<char**>(names), &bytes, &size,
                                  &PyTuple_Type, &shape_obj, &dtype_name, &read_only) == 0) {
    return nullptr;
  }
  Result<DataType> dtype = DataType::try_parse(dtype_name);
  if (!dtype) return fail(dtype.error());
  std::vector<std::int64_t> shape;
  for (Py_ssize_t i = 0; i < PyTuple_Size(shape_obj); ++i)
    shape.push_back(PyLong_AsLongLong(PyTuple_GetItem(shape_obj, i)));
  Counted owner(static_cast<std::size_t>(size));
  if (size > 0) std::memcpy(owner.bytes.data(), bytes, static_cast<std::size_t>(size));
  void* data = size == 0 ? nullptr : owner.bytes.data();
#if DLPACKPP_HAS_VERSIONED
  const std::uint64_t flags = read_only != 0 ? dlpackpp::flag::read_only : 0;
#else
  const std::uint64_t flags = 0;
#endif
  Result<py::ImportedTensor> t = dlpackpp::try_wrap<py::ImportedTensor>(
      data, *dtype, shape, {}, Device::cpu(), std::move(owner), flags);
  if (!t) return fail(t.error());
  if (t->nbytes() != size)
    return fail(Error(Errc::invalid_argument, "from_bytes: size does not match shape and dtype"));
  return py::to_pyobject(std::move(*t));
}

PyObject* deleter_count(PyObject*, PyObject*) { return PyLong_FromLong(g_deleters.load()); }

// drop_on_thread(obj): imports obj, then destroys the import on a std::thread while this
// thread has released the GIL (the producer's deleter must take the GIL itself).
PyObject* drop_on_thread(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  py::ImportedTensor owned = std::move(*t);
  Py_BEGIN_ALLOW_THREADS std::thread([&owned] { owned.reset(); }).join();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// owner_drop_on_thread(owner, make=False): a tensor whose deleter releases `owner` (a
// py::ObjectRef; with make=True the result of calling `owner`, so the tensor holds the only
// reference), destroyed on a std::thread while the GIL is released.
PyObject* owner_drop_on_thread(PyObject*, PyObject* args) {
  static float storage[4] = {1, 2, 3, 4};
  PyObject* owner = nullptr;
  int make = 0;
  if (PyArg_ParseTuple(args, "O|p", &owner, &make) == 0) return nullptr;
  py::ObjectRef ref = make != 0 ? py::ObjectRef::steal(PyObject_CallObject(owner, nullptr))
                                : py::ObjectRef::borrow(owner);
  if (ref.get() == nullptr) return nullptr;
  Result<py::ImportedTensor> t = dlpackpp::try_wrap<py::ImportedTensor>(
      storage, DataType::float32(), {4}, {}, Device::cpu(), std::move(ref));
  if (!t) return fail(t.error());
  py::ImportedTensor owned = std::move(*t);
  Py_BEGIN_ALLOW_THREADS std::thread([&owned] { owned.reset(); }).join();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// dies_during_exception(make_owner, as_tensor=False): a capsule (or a dlpackpp.Tensor) whose
// deleter releases the only reference to make_owner()'s result dies while a KeyError is
// pending; the KeyError must come out unchanged, whatever the owner's __del__ did.
PyObject* dies_during_exception(PyObject*, PyObject* args) {
  static float storage[2] = {1, 2};
  PyObject* make_owner = nullptr;
  int as_tensor = 0;
  if (PyArg_ParseTuple(args, "O|p", &make_owner, &as_tensor) == 0) return nullptr;
  py::ObjectRef owner = py::ObjectRef::steal(PyObject_CallObject(make_owner, nullptr));
  if (owner.get() == nullptr) return nullptr;
  Result<py::ImportedTensor> t = dlpackpp::try_wrap<py::ImportedTensor>(
      storage, DataType::float32(), {2}, {}, Device::cpu(), std::move(owner));
  if (!t) return fail(t.error());
  PyObject* holder =
      as_tensor != 0 ? py::to_pyobject(std::move(*t)) : py::to_capsule(std::move(*t));
  if (holder == nullptr) return nullptr;
  PyErr_SetString(PyExc_KeyError, "kept");
  Py_DECREF(holder);  // the deleter runs here, with the KeyError pending
  return nullptr;
}

PyObject* last_deleter_thread(PyObject*, PyObject*) {
  return PyLong_FromUnsignedLong(g_deleter_thread.load());
}

// Tensors held by C++ (hold(obj) imports one more), dropped together on four std::threads at
// once (drop_held_on_thread), without the GIL.
std::vector<py::ImportedTensor>& held() {
  static std::vector<py::ImportedTensor> tensors;
  return tensors;
}

PyObject* hold(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  held().push_back(std::move(*t));
  Py_RETURN_NONE;
}

PyObject* drop_held_on_thread(PyObject*, PyObject*) {
  std::vector<py::ImportedTensor> tensors = std::move(held());
  held().clear();
  Py_BEGIN_ALLOW_THREADS {
    std::vector<std::thread> threads;
    std::atomic<bool> go{false};
    for (std::size_t k = 0; k < 4; ++k) {
      threads.emplace_back([&tensors, &go, k] {
        while (!go.load()) std::this_thread::yield();
        for (std::size_t i = k; i < tensors.size(); i += 4) tensors[i].reset();
      });
    }
    go = true;
    for (std::thread& t : threads) t.join();
  }
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// release_on_thread_at_exit(owner, count): `count` ObjectRefs to `owner`, released one by one
// (about 100 us apart) by a detached std::thread that never holds the GIL, racing whatever
// the interpreter does meanwhile, its exit included.
PyObject* release_on_thread_at_exit(PyObject*, PyObject* args) {
  PyObject* owner = nullptr;
  int count = 0;
  if (PyArg_ParseTuple(args, "Oi", &owner, &count) == 0) return nullptr;
  auto refs = std::make_shared<std::vector<py::ObjectRef>>();
  for (int i = 0; i < count; ++i) refs->push_back(py::ObjectRef::borrow(owner));
  std::thread([refs] {
    for (py::ObjectRef& ref : *refs) {
      ref.reset();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }).detach();
  Py_RETURN_NONE;
}

// exchange_api_of(obj) -> the table's address, or None.
PyObject* exchange_api_of(PyObject*, PyObject* obj) {
#if DLPACKPP_HAS_EXCHANGE_API
  const DLPackExchangeAPI* api = py::exchange_api_of(obj);
  if (api != nullptr) return PyLong_FromVoidPtr(const_cast<DLPackExchangeAPI*>(api));
#else
  static_cast<void>(obj);
#endif
  Py_RETURN_NONE;
}

// Tensors kept by C++ statics: destroyed after the interpreter is gone.
std::optional<py::ImportedTensor>& kept_at_exit() {
  static std::optional<py::ImportedTensor> kept;
  return kept;
}

// keep_until_exit(owner): a tensor owning a reference to `owner`, alive in a C++ static until
// the process exits (after Py_Finalize): its deleter must then do nothing.
PyObject* keep_until_exit(PyObject*, PyObject* owner) {
  static float storage[2] = {1, 2};
  Result<py::ImportedTensor> t = dlpackpp::try_wrap<py::ImportedTensor>(
      storage, DataType::float32(), {2}, {}, Device::cpu(), py::ObjectRef::borrow(owner));
  if (!t) return fail(t.error());
  kept_at_exit() = std::move(*t);
  Py_RETURN_NONE;
}

// owner_tensor(owner) -> dlpackpp.Tensor whose deleter releases `owner` (for finalization).
PyObject* owner_tensor(PyObject*, PyObject* owner) {
  static float storage[2] = {1, 2};
  Result<py::ImportedTensor> t = dlpackpp::try_wrap<py::ImportedTensor>(
      storage, DataType::float32(), {2}, {}, Device::cpu(), py::ObjectRef::borrow(owner));
  if (!t) return fail(t.error());
  return py::to_pyobject(std::move(*t));
}

// reexport(obj) -> dlpackpp.Tensor owning what try_from_dlpack imported from `obj`.
PyObject* reexport(PyObject*, PyObject* obj) {
  Result<py::ImportedTensor> t = py::try_from_dlpack(obj);
  if (!t) return fail(t.error());
  return py::to_pyobject(std::move(*t));
}

PyObject* tensor_type(PyObject*, PyObject*) {
  PyTypeObject* type = py::tensor_type();
  if (type == nullptr) return nullptr;
  Py_INCREF(reinterpret_cast<PyObject*>(type));
  return reinterpret_cast<PyObject*>(type);
}

// current_stream(obj, device_type, device_id) -> int (the stream's address; 0 for none).
PyObject* current_stream(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int type = 0;
  int id = 0;
  if (PyArg_ParseTuple(args, "Oii", &obj, &type, &id) == 0) return nullptr;
  Result<void*> s = py::current_stream(obj, Device::from_code(type, id));
  if (!s) return fail(s.error());
  return PyLong_FromVoidPtr(*s);
}

PyObject* has_exchange_api(PyObject*, PyObject*) {
  return PyBool_FromLong(DLPACKPP_HAS_EXCHANGE_API);
}

// raise_error(code_name): set_python_error's mapping from Errc to Python exceptions.
PyObject* raise_error(PyObject*, PyObject* args) {
  int code = 0;
  if (PyArg_ParseTuple(args, "i", &code) == 0) return nullptr;
  return fail(Error(static_cast<Errc>(code), "raised on request"));
}

// ---- the mock framework ---------------------------------------------------------------------
#if DLPACKPP_HAS_EXCHANGE_API
using namespace dlpackpp_mock;

// mock(mode=0) -> a MockTensor holding [[0, 1, 2], [3, 4, 5]] as float32.
PyObject* mock(PyObject*, PyObject* args) {
  int mode = 0;
  if (PyArg_ParseTuple(args, "|i", &mode) == 0) return nullptr;
  PyObject* type = mock_type(DLPACKPP_TEST_STR(DLPACKPP_TEST_MODULE_NAME) ".MockTensor");
  if (type == nullptr) return nullptr;
  return make_mock(type, mode);
}

PyObject* mock_stats(PyObject*, PyObject*) {
  return Py_BuildValue("{s:l,s:l,s:l,s:l,s:l,s:l}", "from_object", g_mock.from_object, "borrow",
                       g_mock.borrow, "to_object", g_mock.to_object, "allocate", g_mock.allocate,
                       "stream", g_mock.stream, "dunder", g_mock.dunder);
}

// mock_to_object(shape): a counted C++ tensor handed to the mock's producer through
// dlpackpp::to_object (its to_py_object entry wraps it in a dlpackpp.Tensor).
PyObject* mock_to_object(PyObject*, PyObject* shape) {
  Result<py::ImportedTensor> t = make_counted(shape, "float32", false);
  if (!t) return fail(t.error());
  Result<void*> obj = dlpackpp::to_object(dlpackpp::make_exchange_api<MockImpl>(), std::move(*t));
  if (!obj) return fail(obj.error());
  return static_cast<PyObject*>(*obj);
}
#endif

PyMethodDef g_methods[] = {
    {"import_tensor",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&import_tensor)),
     METH_VARARGS | METH_KEYWORDS, "try_from_dlpack, described"},
    {"from_capsule", &from_capsule, METH_O, "try_from_capsule, described"},
    {"import_refused", &import_refused, METH_VARARGS, "try_from_dlpack failing, not raised"},
    {"borrow", &borrow, METH_O, "try_borrow, described"},
    {"borrow_calling", &borrow_calling, METH_VARARGS, "try_borrow calling back into Python"},
    {"borrow_write", &borrow_write, METH_VARARGS, "write element 0 through try_borrow"},
    {"reexport_with", &reexport_with, METH_VARARGS, "to_pyobject(from_dlpack(obj, options))"},
    {"last_deleter_thread", &last_deleter_thread, METH_NOARGS, "thread of the last deleter"},
    {"hold", &hold, METH_O, "import and keep in C++"},
    {"drop_held_on_thread", &drop_held_on_thread, METH_NOARGS, "drop the kept import on a thread"},
    {"release_on_thread_at_exit", &release_on_thread_at_exit, METH_VARARGS,
     "ObjectRefs released by a detached thread"},
    {"exchange_api_of", &exchange_api_of, METH_O, "python::exchange_api_of"},
    {"write_first", &write_first, METH_VARARGS, "write element 0 through the import"},
    {"counted", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&counted)),
     METH_VARARGS | METH_KEYWORDS, "a counted C++ tensor as dlpackpp.Tensor"},
    {"counted_capsule",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&counted_capsule)),
     METH_VARARGS | METH_KEYWORDS, "a counted C++ tensor as a capsule"},
    {"from_bytes", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&from_bytes)),
     METH_VARARGS | METH_KEYWORDS, "a dlpackpp.Tensor of any dtype from raw bytes"},
    {"deleter_count", &deleter_count, METH_NOARGS, "deleters run so far"},
    {"drop_on_thread", &drop_on_thread, METH_O, "import, then destroy on a thread without the GIL"},
    {"owner_drop_on_thread", &owner_drop_on_thread, METH_VARARGS, "ObjectRef released on a thread"},
    {"keep_until_exit", &keep_until_exit, METH_O, "a tensor kept by a C++ static"},
    {"dies_during_exception", &dies_during_exception, METH_VARARGS,
     "deleter under a pending exception"},
    {"owner_tensor", &owner_tensor, METH_O, "dlpackpp.Tensor owning a reference"},
    {"reexport", &reexport, METH_O, "to_pyobject(from_dlpack(obj))"},
    {"tensor_type", &tensor_type, METH_NOARGS, "dlpackpp.Tensor"},
    {"current_stream", &current_stream, METH_VARARGS, "python::current_stream"},
    {"has_exchange_api", &has_exchange_api, METH_NOARGS, "DLPACKPP_HAS_EXCHANGE_API"},
    {"raise_error", &raise_error, METH_VARARGS, "set_python_error(Error(code))"},
#if DLPACKPP_HAS_EXCHANGE_API
    {"mock", &mock, METH_VARARGS, "a MockTensor"},
    {"mock_stats", &mock_stats, METH_NOARGS, "calls into the mock's table"},
    {"mock_to_object", &mock_to_object, METH_O, "to_object through the mock's table"},
#endif
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        DLPACKPP_TEST_STR(DLPACKPP_TEST_MODULE_NAME),
                        nullptr,
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

#define DLPACKPP_TEST_INIT2(name) PyInit_##name
#define DLPACKPP_TEST_INIT(name) DLPACKPP_TEST_INIT2(name)
PyMODINIT_FUNC DLPACKPP_TEST_INIT(DLPACKPP_TEST_MODULE_NAME)() {
  PyObject* module = PyModule_Create(&g_module);
#ifdef Py_GIL_DISABLED
  // Runs without the GIL (docs/python.md, decision 5): importing it keeps the GIL off.
  if (module != nullptr && PyUnstable_Module_SetGIL(module, Py_MOD_GIL_NOT_USED) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
#endif
  return module;
}
