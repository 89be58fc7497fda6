// expect-ok
// SPDX-License-Identifier: Apache-2.0
// The harness can pass: the same kind of module returning an owning ManagedTensor compiles.
#include <dlpackpp/nanobind.hpp>

NB_MODULE(return_managed, m) {
  m.def("pass_on", [](dlpackpp::ManagedTensor t) { return t; });
  m.def("view_numel", [](dlpackpp::TensorView v) { return v.numel(); });
}
