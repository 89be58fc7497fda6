// expect-error: must be noexcept
// SPDX-License-Identifier: Apache-2.0
// An OnStream policy whose stream() may throw: the caster could not tell its exception from a
// producer's, so it does not compile.
#include <dlpackpp/pybind11.hpp>

struct MayThrow {
  static void* stream(dlpackpp::Device) { return nullptr; }
};

PYBIND11_MODULE(on_stream_throwing, m) {
  m.def("launch", [](dlpackpp::bindings::OnStream<dlpackpp::TensorView, MayThrow> x) {
    return x.stream() != nullptr;
  });
}
