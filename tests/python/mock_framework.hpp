// SPDX-License-Identifier: Apache-2.0
// A small mock framework for the Python tests and benchmarks: a MockTensor type holding a
// 2x3 float32 tensor whose type publishes __dlpack_c_exchange_api__ (made with
// make_exchange_api), counts every call into its table, and whose __dlpack__ raises, so a
// test can prove the exchange path never reached it. Debian's PyTorch predates the API.
#pragma once

#include <dlpackpp/python.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if DLPACKPP_HAS_EXCHANGE_API
namespace dlpackpp_mock {

/// Calls into the mock's table (and into its forbidden __dlpack__).
struct MockStats {
  long from_object = 0;
  long borrow = 0;
  long to_object = 0;
  long allocate = 0;
  long stream = 0;
  long dunder = 0;
};
inline MockStats g_mock;

struct MockObject {
  PyObject_HEAD float values[6];
  std::int64_t shape[2];
  std::int64_t strides[2];  // row-major, as DLPack >= 1.2 producers must give them
  int mode;  // 0 works, 1: every table function throws an Error, 2: throws std::runtime_error
};

inline PyObject* g_mock_type = nullptr;

inline MockObject* as_mock(void* obj) { return static_cast<MockObject*>(obj); }

inline void maybe_throw(const MockObject* m) {
  if (m->mode == 1)
    throw dlpackpp::Error(dlpackpp::Errc::unsupported_device, "mock: refused on request");
  if (m->mode == 2) throw std::runtime_error("mock: a plain C++ exception");
}

/// The mock's exchange table: owning imports copy the values into a fresh export; borrows
// point into the object.
struct MockImpl {
  static dlpackpp::ManagedTensor managed_tensor_allocator(const DLTensor& prototype) {
    ++g_mock.allocate;
    return dlpackpp::allocate(prototype.dtype,
                              {prototype.shape, static_cast<std::size_t>(prototype.ndim)});
  }
  static dlpackpp::ManagedTensor managed_tensor_from_py_object_no_sync(void* obj) {
    ++g_mock.from_object;
    MockObject* m = as_mock(obj);
    maybe_throw(m);
    return dlpackpp::from_vector(std::vector<float>(m->values, m->values + 6),
                                 {m->shape[0], m->shape[1]});
  }
  static void* managed_tensor_to_py_object_no_sync(dlpackpp::ManagedTensor& tensor) {
    ++g_mock.to_object;
    return dlpackpp::python::to_pyobject(std::move(tensor));
  }
  static void dltensor_from_py_object_no_sync(void* obj, DLTensor& out) {
    ++g_mock.borrow;
    MockObject* m = as_mock(obj);
    maybe_throw(m);
    out.data = m->values;
    out.device = dlpackpp::Device::cpu();
    out.ndim = 2;
    out.dtype = dlpackpp::DataType::float32();
    out.shape = m->shape;
    out.strides = m->strides;
    out.byte_offset = 0;
  }
  static void* current_work_stream(dlpackpp::Device device) {
    ++g_mock.stream;
    return device == dlpackpp::Device::cpu() ? nullptr
                                             : reinterpret_cast<void*>(std::uintptr_t{0x1234});
  }
  static void set_error(std::string_view kind, std::string_view message) {
    PyObject* type = kind == "BufferError" ? PyExc_BufferError : PyExc_RuntimeError;
    PyErr_SetString(type, std::string(message).c_str());
  }
};

inline PyObject* mock_dunder(PyObject*, PyObject*, PyObject*) {
  ++g_mock.dunder;
  PyErr_SetString(PyExc_AssertionError,
                  "MockTensor.__dlpack__ must not be called: the exchange API is there");
  return nullptr;
}

/// The MockTensor type, made once; `name` is its qualified name ("module.MockTensor").
inline PyObject* mock_type(const char* name) {
  if (g_mock_type != nullptr) return g_mock_type;
  static PyMethodDef methods[] = {
      {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&mock_dunder)),
       METH_VARARGS | METH_KEYWORDS, nullptr},
      {nullptr, nullptr, 0, nullptr}};
  static PyType_Slot slots[] = {{Py_tp_methods, methods}, {0, nullptr}};
  static PyType_Spec spec = {name, static_cast<int>(sizeof(MockObject)), 0, Py_TPFLAGS_DEFAULT,
                             slots};
  PyObject* type = PyType_FromSpec(&spec);
  if (type == nullptr) return nullptr;
  PyObject* api =
      PyCapsule_New(const_cast<DLPackExchangeAPI*>(dlpackpp::make_exchange_api<MockImpl>()),
                    "dlpack_exchange_api", nullptr);
  if (api == nullptr || PyObject_SetAttrString(type, "__dlpack_c_exchange_api__", api) != 0) {
    Py_XDECREF(api);
    Py_DECREF(type);
    return nullptr;
  }
  Py_DECREF(api);
  g_mock_type = type;
  return type;
}

/// A MockTensor holding [[0, 1, 2], [3, 4, 5]]; `mode` 1 makes every table function throw
/// an Error, 2 a std::runtime_error. NULL with a Python exception on failure.
inline PyObject* make_mock(PyObject* type, int mode) {
  PyObject* obj = PyType_GenericAlloc(reinterpret_cast<PyTypeObject*>(type), 0);
  if (obj == nullptr) return nullptr;
  auto* m = reinterpret_cast<MockObject*>(obj);
  for (int i = 0; i < 6; ++i) m->values[i] = static_cast<float>(i);
  m->shape[0] = 2;
  m->shape[1] = 3;
  m->strides[0] = 3;
  m->strides[1] = 1;
  m->mode = mode;
  return obj;
}

}  // namespace dlpackpp_mock
#endif
