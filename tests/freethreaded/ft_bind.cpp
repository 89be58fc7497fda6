// SPDX-License-Identifier: Apache-2.0
// The stress test's binding module, built with pybind11 (py::mod_gil_not_used()) or nanobind
// (FREE_THREADED, which nanobind_add_module turns into NB_MODULE's declaration) as
// FT_BIND_NANOBIND selects: both declare they run without the GIL. Typed overloads by dtype,
// views, mutable accessors and owning imports, each answering (dtype name, sum) or a tensor.
#if defined(FT_BIND_NANOBIND)
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <dlpackpp/nanobind.hpp>
namespace bl = nanobind;
#define FT_BIND_MODULE(name, m) NB_MODULE(name, m)
#else
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpackpp/pybind11.hpp>
namespace bl = pybind11;
#define FT_BIND_MODULE(name, m) PYBIND11_MODULE(name, m, pybind11::mod_gil_not_used())
#endif

#include "ft_values.hpp"

#include <cstdint>
#include <string>
#include <utility>

namespace {

using dlpackpp::ManagedTensor;
using dlpackpp::TensorAccessor;
using dlpackpp::TensorView;
using Described = std::pair<std::string, double>;

// (dtype, sum) of a 1-d accessor.
template <class T>
Described typed(TensorAccessor<const T, 1> a) {
  double total = 0;
  for (std::int64_t i = 0; i < a.size(0); ++i) total += static_cast<double>(a[i]);
  return {dlpackpp::dtype_of<T>.to_string(), total};
}

// Multiplies a private tensor by k in place and answers (dtype, new sum).
template <class T>
Described scale(TensorAccessor<T, 1> a, T k) {
  double total = 0;
  for (std::int64_t i = 0; i < a.size(0); ++i) {
    a[i] = static_cast<T>(a[i] * k);
    total += static_cast<double>(a[i]);
  }
  return {dlpackpp::dtype_of<T>.to_string(), total};
}

Described described(const TensorView& v) { return ft::describe(v).value(); }

}  // namespace

FT_BIND_MODULE(FT_BIND_MODULE_NAME, m) {
  m.def("make",
        [](std::int64_t n, const std::string& dtype) { return ft::make(n, dtype).value(); });
  // Typed overloads: the first whose dtype fits loads, the others decline.
  m.def("typed", [](TensorAccessor<const float, 1> a) { return typed<float>(a); });
  m.def("typed", [](TensorAccessor<const double, 1> a) { return typed<double>(a); });
  m.def("typed", [](TensorAccessor<const std::int32_t, 1> a) { return typed<std::int32_t>(a); });
  m.def("typed", [](TensorAccessor<const std::int64_t, 1> a) { return typed<std::int64_t>(a); });
  m.def("scale_", [](TensorAccessor<float, 1> a, float k) { return scale(a, k); });
  m.def("scale_", [](TensorAccessor<double, 1> a, double k) { return scale(a, k); });
  m.def("scale_", [](TensorAccessor<std::int32_t, 1> a, std::int32_t k) { return scale(a, k); });
  m.def("scale_", [](TensorAccessor<std::int64_t, 1> a, std::int64_t k) { return scale(a, k); });
  m.def("view", [](const TensorView& v) { return described(v); });
  m.def("owned", [](ManagedTensor t) { return described(t.view()); });
  // An owning import handed back as a new dlpackpp.Tensor (another thread lets go of it).
  m.def("passed", [](ManagedTensor t) { return t; });
}
