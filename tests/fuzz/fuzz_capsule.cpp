// SPDX-License-Identifier: Apache-2.0
// Fuzzes the Python capsule import (dlpackpp::python::try_from_capsule) in an embedded
// interpreter: capsules with arbitrary names (the two fresh ones, the two used ones, NULL,
// any bytes) holding a valid or malformed tensor of the kind the name promises, and objects
// that are not capsules at all. Properties: a fresh capsule is renamed "used_..." whether its
// tensor is accepted or refused; any other capsule is refused (invalid_argument) and left as
// it was; no Python exception is left pending; the producer's deleter runs exactly once over
// the capsule's whole life, whoever ends up calling it.
#include <dlpackpp/python.hpp>

#include "fuzz_support.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp_fuzz::Reader;

int deleter_calls = 0;
alignas(64) float values[16] = {};
std::int64_t shape[2] = {4, 4};

template <class M>
void count_delete(M* /*self*/) noexcept {
  ++deleter_calls;
}

template <class M>
constexpr const char* fresh_name() {
  return std::is_same<M, DLManagedTensor>::value ? "dltensor" : "dltensor_versioned";
}

// What a producer hangs on its capsule: the deleter runs if nobody consumed (renamed) it.
template <class M>
void producer_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, fresh_name<M>()) == 0) return;
  auto* m = static_cast<M*>(PyCapsule_GetPointer(capsule, fresh_name<M>()));
  if (m->deleter != nullptr) m->deleter(m);
}

template <class M>
void run(Reader& r, const std::string& name, bool null_name) {
  M m{};
  m.dl_tensor.data = values;
  m.dl_tensor.device = Device::cpu();
  m.dl_tensor.dtype = DataType::float32();
  m.dl_tensor.ndim = 2;
  m.dl_tensor.shape = shape;
  shape[0] = 4;
  const std::uint8_t defect = r.byte();
  if (defect % 4 == 1) shape[0] = r.edgy_i64();     // maybe negative or huge
  if (defect % 4 == 2) m.dl_tensor.ndim = r.i32();  // maybe negative or past shape
  if (m.dl_tensor.ndim > 2) m.dl_tensor.ndim = 2;   // never read past the array
  m.deleter = &count_delete<M>;
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    m.version.major = defect % 4 == 3 ? r.u32() : DLPACKPP_DLPACK_MAJOR;
    m.version.minor = DLPACKPP_DLPACK_MINOR;
    m.flags = r.byte() & 7U;
  }
  deleter_calls = 0;
  const char* capsule_name = null_name ? nullptr : name.c_str();
  PyObject* capsule = PyCapsule_New(&m, capsule_name, &producer_destructor<M>);
  FUZZ_CHECK(capsule != nullptr);
  const bool fresh = !null_name && name == fresh_name<M>();
  {
    auto imported = dlpackpp::python::try_from_capsule(capsule);
    FUZZ_CHECK(PyErr_Occurred() == nullptr);
    const char* after = PyCapsule_GetName(capsule);
    if (fresh) {
      const std::string used = std::string("used_") + fresh_name<M>();
      FUZZ_CHECK(after != nullptr && used == after);  // ownership was taken either way
      FUZZ_CHECK(deleter_calls == (imported ? 0 : 1));
      if (imported) FUZZ_CHECK(imported->numel() == 4 * shape[0] || m.dl_tensor.ndim != 2);
    } else {
      FUZZ_CHECK(!imported && imported.error().code() == Errc::invalid_argument);
      FUZZ_CHECK(null_name ? after == nullptr : (after != nullptr && name == after));
      FUZZ_CHECK(deleter_calls == 0);
    }
  }
  Py_DECREF(capsule);
  // A refused capsule of another name is still the producer's: its destructor does not
  // run the deleter for a name it did not make, so nothing ran in that case.
  FUZZ_CHECK(deleter_calls == (fresh ? 1 : 0));
  FUZZ_CHECK(PyErr_Occurred() == nullptr);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (Py_IsInitialized() == 0) Py_InitializeEx(0);
  Reader r(data, size);
  const std::uint8_t pick = r.byte();
  static const char* const names[] = {
      "dltensor", "dltensor_versioned", "used_dltensor", "used_dltensor_versioned",
      "",         "dltensor_"};
  std::string name;
  bool null_name = false;
  if (pick % 8 < 6) {
    name = names[pick % 8];
  } else if (pick % 8 == 6) {
    null_name = true;
  } else {
    for (std::uint8_t c = r.byte(); c != 0 && name.size() < 24; c = r.byte()) {
      name.push_back(static_cast<char>(c));
    }
  }
  if (pick >= 0xF0) {
    // Not a capsule at all.
    PyObject* number = PyLong_FromLong(static_cast<long>(pick));
    auto imported = dlpackpp::python::try_from_capsule(number);
    FUZZ_CHECK(!imported && imported.error().code() == Errc::invalid_argument);
    FUZZ_CHECK(PyErr_Occurred() == nullptr);
    Py_DECREF(number);
    return 0;
  }
  // A fresh name promises a kind (a producer breaking that promise cannot be detected);
  // any other name may hold either.
  const bool versioned =
      name == "dltensor_versioned" || (name != "dltensor" && (pick & 0x80U) != 0);
  if (versioned) {
    run<DLManagedTensorVersioned>(r, name, null_name);
  } else {
    run<DLManagedTensor>(r, name, null_name);
  }
  return 0;
}
