// SPDX-License-Identifier: Apache-2.0
// A nanobind module whose functions take and return dlpackpp types (see docs/bindings.md).
#include <dlpackpp/nanobind.hpp>  // first: it includes Python.h

#include <dlpackpp/iterate.hpp>

#include <vector>

// Built with nanobind_add_module(... FREE_THREADED ...) (CMakeLists.txt): the module runs without
// the GIL, so on a free-threaded CPython (3.13t) importing it leaves the GIL off; the casters and
// these functions are safe from any number of threads at once. A GIL build ignores it.
NB_MODULE(dlpackpp_nanobind_example, m) {
  // float32, 2-d, writable. By value costs about what const& does here (1.03x in
  // instructions): what it reads goes on nanobind's per-call cleanup list.
  m.def("scale_", [](dlpackpp::TensorAccessor<float, 2> x, float k) {
    for (std::int64_t i = 0; i < x.size(0); ++i)
      for (std::int64_t j = 0; j < x.size(1); ++j) x(i, j) *= k;
  });
  m.def("scale_", [](dlpackpp::TensorAccessor<double, 2> x, double k) {  // by dtype
    for (std::int64_t i = 0; i < x.size(0); ++i)
      for (std::int64_t j = 0; j < x.size(1); ++j) x(i, j) *= k;
  });
  m.def("total", [](const dlpackpp::TensorView& v) {  // any rank and layout, valid for the call
    double sum = 0;
    dlpackpp::for_each_element<const float>(v, [&](float x) { sum += x; });
    return sum;
  });
  m.def("ones", [](std::int64_t n) {  // -> dlpackpp.Tensor, for any DLPack consumer
    return dlpackpp::from_vector(std::vector<float>(static_cast<std::size_t>(n), 1.0f), {n});
  });
}
