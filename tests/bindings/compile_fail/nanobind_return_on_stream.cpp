// expect-error: cannot return a TensorAccessor or an OnStream
// SPDX-License-Identifier: Apache-2.0
// A bound function returning an OnStream would hand Python a view that nothing owns.
#include <dlpackpp/nanobind.hpp>

NB_MODULE(return_on_stream, m) {
  m.def("same", [](dlpackpp::bindings::OnStream<dlpackpp::TensorView> x) { return x; });
}
