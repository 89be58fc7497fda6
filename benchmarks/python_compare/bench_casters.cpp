// SPDX-License-Identifier: Apache-2.0
// The binding-library rows: the same functions taking dlpackpp types through the casters of
// <dlpackpp/pybind11.hpp> (built as bench_pybind11) or <dlpackpp/nanobind.hpp> (built as
// bench_nb_casters, BENCH_NANOBIND), next to the same import written by hand on the library's
// plain handle with <dlpackpp/python.hpp> ("_hand"): the difference is what a caster costs.
#if defined(BENCH_NANOBIND)
#include <dlpackpp/nanobind.hpp>
namespace bl = nanobind;
using PythonError = nanobind::python_error;  // throws the pending Python exception
#define BENCH_MODULE(m) NB_MODULE(bench_nb_casters, m)
#else
#include <dlpackpp/pybind11.hpp>
namespace bl = pybind11;
using PythonError = pybind11::error_already_set;  // throws the pending Python exception
#define BENCH_MODULE(m) PYBIND11_MODULE(bench_pybind11, m)
#endif

#include <dlpackpp/dlpackpp.hpp>

#include "first_of.hpp"

#include <cstdint>
#include <vector>

namespace {

namespace py = dlpackpp::python;
using dlpackpp::DataType;
using dlpackpp::Result;
using dlpackpp::TensorView;

// What a by-hand function does with a failed import: the library raises it.
[[noreturn]] void raise(const dlpackpp::Error& error) {
  py::set_python_error(error);
  throw PythonError();
}

using bench::first_of;

using Vector = dlpackpp::TensorAccessor<const double, 1>;

// What first_of checks by hand, on the caster's accessor (dtype and rank it checked itself).
double first_element(const Vector& a) {
  if (a.size(0) > 1 && a.stride(0) != 1) throw bl::type_error("expected a contiguous array");
  return a.size(0) == 0 ? 0.0 : a[0];
}

dlpackpp::ManagedTensor zeros(std::int64_t n) {
  return dlpackpp::from_vector(std::vector<double>(static_cast<std::size_t>(n)), {n});
}

}  // namespace

BENCH_MODULE(m) {
  m.def("noop", [](bl::handle) {});
  // Untyped: a view for the call (borrowed through an exchange table, else owned).
  m.def("view_numel", [](TensorView v) { return v.numel(); });
  // Read in place: no copy of the view, and what it reads stays with the caster (see
  // bindings::detail::hand_over), not in the library's per-call keep-alive.
  m.def("view_numel_ref", [](const TensorView& v) { return v.numel(); });
  m.def("view_numel_hand", [](bl::handle h) {
    Result<std::int64_t> n = py::try_borrow(h.ptr(), [](const TensorView& v) { return v.numel(); });
    if (!n) raise(n.error());
    return *n;
  });
  // Owning.
  m.def("owned_numel", [](dlpackpp::ManagedTensor t) { return t.numel(); });
  m.def("owned_numel_hand", [](bl::handle h) {
    Result<py::ImportedTensor> t = py::try_from_dlpack(h.ptr());
    if (!t) raise(t.error());
    return t->numel();
  });
  // Typed: dtype and rank checked by the caster, contiguity in the body.
  m.def("first_f64", [](Vector a) { return first_element(a); });
  m.def("first_f64_ref", [](const Vector& a) { return first_element(a); });  // read in place
  m.def("first_f64_hand", [](bl::handle h) {
    Result<double> x = py::try_borrow(h.ptr(), &first_of);
    if (!x) raise(x.error());
    return *x;
  });
  // Returning a tensor: n float64 zeros as a dlpackpp.Tensor.
  m.def("make", [](std::int64_t n) { return zeros(n); });
  m.def("make_hand", [](std::int64_t n) {
    PyObject* obj = py::to_pyobject(zeros(n));
    if (obj == nullptr) throw PythonError();
#if defined(BENCH_NANOBIND)
    return bl::steal(obj);
#else
    return bl::reinterpret_steal<bl::object>(obj);
#endif
  });
}
