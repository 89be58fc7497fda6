// expect-error: cannot return a TensorView
// SPDX-License-Identifier: Apache-2.0
// A bound function returning a TensorView would hand Python a view that nothing owns.
#include <dlpackpp/pybind11.hpp>

PYBIND11_MODULE(return_view, m) {
  m.def("view_of", [](dlpackpp::TensorView v) { return v; });
}
