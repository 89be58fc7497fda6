// SPDX-License-Identifier: Apache-2.0
// The nanobind side of the Python comparison: the same functions as bench_dlpackpp.cpp,
// written the way nanobind's documentation shows (nb::ndarray arguments and return values).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>

namespace nb = nanobind;

NB_MODULE(bench_nanobind, m) {
  // The floor: a bound call that converts nothing.
  m.def("noop", [](nb::handle) {});
  // (a) and (b): any ndarray in, its element count out.
  m.def("numel", [](nb::ndarray<> a) { return a.size(); });
  // Typed: float64, one dimension, C-contiguous, read-only access; element 0.
  m.def("first_f64", [](nb::ndarray<const double, nb::ndim<1>, nb::c_contig> a) {
    return a.size() == 0 ? 0.0 : a.data()[0];
  });
  // (b): a C++-owned float64 array of n zeros, returned with no framework named
  // (nanobind 3 then returns a DLPack capsule).
  m.def("make", [](std::size_t n) {
    double* data = new double[n]();
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return nb::ndarray<double, nb::ndim<1>>(data, {n}, owner);
  });
  // The same returned as a NumPy array (nanobind makes it through NumPy's own import).
  m.def("make_numpy", [](std::size_t n) {
    double* data = new double[n]();
    nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
    return nb::ndarray<nb::numpy, double, nb::ndim<1>>(data, {n}, owner);
  });
}
