// expect-error: cannot return a TensorAccessor
// SPDX-License-Identifier: Apache-2.0
// An accessor borrows its tensor just as a view does: returning one is refused too.
#include <dlpackpp/pybind11.hpp>

PYBIND11_MODULE(return_accessor, m) {
  m.def("same", [](dlpackpp::TensorAccessor<float, 1> a) { return a; });
}
