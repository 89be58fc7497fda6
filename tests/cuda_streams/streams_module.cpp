// SPDX-License-Identifier: Apache-2.0
// The extension test_streams.py drives: dlpackpp.Tensor's stream hook and the thread's current
// work stream without a GPU, and, where the CUDA runtime is linked, the CUDA room's
// to_pyobject(tensor, stream) against the real runtime (its refusals and, without a device,
// its error path; with one, its events).
//
// The recording hook reads `stream` with the very function the CUDA hook uses
// (cuda_consumer_stream), so what it records is what the CUDA hook would wait on; only the
// cudaStreamWaitEvent call itself needs a device.
#include <dlpackpp/python.hpp>

// The module's name: the same source is built with the full API and the limited API.
#ifndef DLPACKPP_STREAMS_MODULE
#define DLPACKPP_STREAMS_MODULE dlpackpp_streams_test
#endif
#define DLPACKPP_STREAMS_CAT2(a, b) a##b
#define DLPACKPP_STREAMS_CAT(a, b) DLPACKPP_STREAMS_CAT2(a, b)
#define DLPACKPP_STREAMS_STR2(x) #x
#define DLPACKPP_STREAMS_STR(x) DLPACKPP_STREAMS_STR2(x)

#if DLPACKPP_HAS_CUDA_RUNTIME
#include <cuda_runtime_api.h>
#endif

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace py = dlpackpp::python;
namespace pyd = dlpackpp::python::detail;
using dlpackpp::DataType;
using dlpackpp::Device;

namespace {

std::atomic<long> g_deleters{0};              // tensors released (their owners destroyed)
std::atomic<long> g_released{0};              // hook contexts released
std::atomic<long> g_deleters_at_release{-1};  // g_deleters when the last context was released
std::mutex g_mutex;                           // guards g_orders (the hook may run on any thread)
std::vector<std::pair<int, unsigned long long>> g_orders;  // (kind, handle); kind -2: the host

// The owner of a test tensor: its floats, and one tick of g_deleters when destroyed.
struct Counted {
  std::vector<float> values;
  bool live = true;
  explicit Counted(std::size_t n) : values(n) {
    for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i);
  }
  Counted(Counted&& other) noexcept : values(std::move(other.values)), live(other.live) {
    other.live = false;
  }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (live) ++g_deleters;
  }
};

// A tensor of n floats 0..n-1 in host memory that claims `device` (never read there).
py::ImportedTensor counted_tensor(Device device, std::size_t n) {
  Counted owner(n);
  void* data = owner.values.data();
  return dlpackpp::wrap<py::ImportedTensor>(
      data, DataType::float32(), {static_cast<std::int64_t>(n)}, {}, device, std::move(owner));
}

bool record_order(void*, PyObject* stream) noexcept {
  std::pair<int, unsigned long long> entry(-2, 0);
  if (stream != nullptr) {
    pyd::ConsumerStream consumer;
    if (!pyd::cuda_consumer_stream(stream, consumer)) return false;
    entry = {static_cast<int>(consumer.kind), consumer.handle};
  }
  const std::lock_guard<std::mutex> lock(g_mutex);
  g_orders.push_back(entry);
  return true;
}

void record_release(void*) noexcept {
  g_deleters_at_release = g_deleters.load();
  ++g_released;
  // Seen by a parent process even when this runs while the interpreter finalizes.
  static const char line[] = "streams_module: hook released\n";
  // Nothing to do if stderr is gone; a cast to void does not quiet warn_unused_result.
  if (::write(2, line, sizeof line - 1) < 0) return;
}

constexpr pyd::StreamHook kRecordingHook = {&record_order, &record_release};

// hooked(device_type, device_id, n): a dlpackpp.Tensor carrying the recording hook.
PyObject* hooked(PyObject*, PyObject* args) {
  int type = 0, id = 0;
  Py_ssize_t n = 0;
  if (PyArg_ParseTuple(args, "iin", &type, &id, &n) == 0) return nullptr;
  py::ImportedTensor t =
      counted_tensor(Device(static_cast<DLDeviceType>(type), id), static_cast<std::size_t>(n));
  return pyd::new_tensor_object(std::move(t), &kRecordingHook, nullptr);
}

// orders(): what the hook was asked, as [(kind, handle)], and forgets it.
PyObject* orders(PyObject*, PyObject*) {
  std::vector<std::pair<int, unsigned long long>> taken;
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    taken.swap(g_orders);
  }
  PyObject* list = PyList_New(0);
  for (const auto& o : taken) {
    PyObject* item = Py_BuildValue("(iK)", o.first, o.second);
    if (item == nullptr || PyList_Append(list, item) != 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

PyObject* deleters_at_release(PyObject*, PyObject*) {
  return PyLong_FromLong(g_deleters_at_release.load());
}

PyObject* counts(PyObject*, PyObject*) {
  return Py_BuildValue("(ll)", g_released.load(), g_deleters.load());
}

// current_stream(obj, device_type, device_id): py::current_stream, the consumers' way to the
// exchange table's current_work_stream.
PyObject* current_stream(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  int type = 0, id = 0;
  if (PyArg_ParseTuple(args, "Oii", &obj, &type, &id) == 0) return nullptr;
  dlpackpp::Result<void*> s = py::current_stream(obj, Device(static_cast<DLDeviceType>(type), id));
  if (!s) {
    py::set_python_error(s.error());
    return nullptr;
  }
  return PyLong_FromVoidPtr(*s);
}

// set_work_stream(device_type, device_id, address): the thread's current work stream.
PyObject* set_work_stream(PyObject*, PyObject* args) {
  int type = 0, id = 0;
  unsigned long long address = 0;
  if (PyArg_ParseTuple(args, "iiK", &type, &id, &address) == 0) return nullptr;
  if (!pyd::set_work_stream(Device(static_cast<DLDeviceType>(type), id),
                            reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)))) {
    return nullptr;
  }
  Py_RETURN_NONE;
}

// import_tensor(obj, stream=None, borrow=False): py::try_from_dlpack(obj) (stream None:
// through the exchange table where the type has one) or with ImportOptions::stream; with
// borrow, py::try_borrow instead (a dlpackpp.Tensor of this interpreter is read in place, its
// hook asked to order the stream). Returns the device of what was imported.
PyObject* import_tensor(PyObject*, PyObject* args) {
  PyObject* obj = nullptr;
  PyObject* stream = Py_None;
  int borrow = 0;
  if (PyArg_ParseTuple(args, "O|Op", &obj, &stream, &borrow) == 0) return nullptr;
  py::ImportOptions options;
  if (stream != Py_None) {
    options.stream = static_cast<std::intptr_t>(PyLong_AsSsize_t(stream));
    if (PyErr_Occurred() != nullptr) return nullptr;
  }
  const auto device_of = [](const dlpackpp::TensorView& view) { return view.device(); };
  dlpackpp::Result<Device> device = Device();
  if (borrow != 0) {
    device = py::try_borrow(obj, device_of, options);
  } else if (dlpackpp::Result<py::ImportedTensor> t = py::try_from_dlpack(obj, options)) {
    device = t->device();
  } else {
    device = t.error();
  }
  if (!device) {
    py::set_python_error(device.error());
    return nullptr;
  }
  return Py_BuildValue("(ii)", static_cast<int>(device->type()), device->id());
}

PyObject* has_cuda_runtime(PyObject*, PyObject*) {
  return PyBool_FromLong(DLPACKPP_HAS_CUDA_RUNTIME);
}

#if DLPACKPP_HAS_CUDA_RUNTIME
bool g_untouched = false;  // with_stream's last failure left the tensor to the caller

// with_stream(device_type, device_id, n, stream): py::to_pyobject(tensor, stream) of a counted
// tensor. Where it fails the exception propagates, and untouched() says whether the tensor
// was left to the caller (still owned here, its deleter not run; then released here).
PyObject* with_stream(PyObject*, PyObject* args) {
  int type = 0, id = 0;
  Py_ssize_t n = 0;
  unsigned long long stream = 0;
  if (PyArg_ParseTuple(args, "iinK", &type, &id, &n, &stream) == 0) return nullptr;
  py::ImportedTensor t =
      counted_tensor(Device(static_cast<DLDeviceType>(type), id), static_cast<std::size_t>(n));
  const long before = g_deleters.load();
  PyObject* obj = py::to_pyobject(
      std::move(t), reinterpret_cast<cudaStream_t>(static_cast<std::uintptr_t>(stream)));
  g_untouched = obj == nullptr && static_cast<bool>(t) && g_deleters.load() == before;
  return obj;  // on failure `t` is released as it goes, with the exception pending
}

PyObject* untouched(PyObject*, PyObject*) { return PyBool_FromLong(g_untouched ? 1 : 0); }

// cuda_devices(): cudaGetDeviceCount, 0 where it fails (no driver, no device).
PyObject* cuda_devices(PyObject*, PyObject*) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    static_cast<void>(cudaGetLastError());
    count = 0;
  }
  return PyLong_FromLong(count);
}
#endif

PyMethodDef g_methods[] = {
    {"hooked", &hooked, METH_VARARGS, "a dlpackpp.Tensor with the recording stream hook"},
    {"orders", &orders, METH_NOARGS, "what the hook was asked, since the last call"},
    {"counts", &counts, METH_NOARGS, "(hook contexts released, tensors released)"},
    {"deleters_at_release", &deleters_at_release, METH_NOARGS,
     "tensors released when the last hook context was"},
    {"current_stream", &current_stream, METH_VARARGS, "py::current_stream(obj, device)"},
    {"set_work_stream", &set_work_stream, METH_VARARGS, "the thread's current work stream"},
    {"import_tensor", &import_tensor, METH_VARARGS, "py::try_from_dlpack(obj[, stream[, borrow]])"},
    {"has_cuda_runtime", &has_cuda_runtime, METH_NOARGS, "built with the CUDA runtime"},
#if DLPACKPP_HAS_CUDA_RUNTIME
    {"with_stream", &with_stream, METH_VARARGS, "py::to_pyobject(tensor, stream)"},
    {"cuda_devices", &cuda_devices, METH_NOARGS, "cudaGetDeviceCount, 0 on failure"},
    {"untouched", &untouched, METH_NOARGS, "with_stream's last failure left the tensor"},
#endif
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT,
                        DLPACKPP_STREAMS_STR(DLPACKPP_STREAMS_MODULE),
                        "dlpackpp.Tensor's stream hook, tested",
                        -1,
                        g_methods,
                        nullptr,
                        nullptr,
                        nullptr,
                        nullptr};

}  // namespace

PyMODINIT_FUNC DLPACKPP_STREAMS_CAT(PyInit_, DLPACKPP_STREAMS_MODULE)() {
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
