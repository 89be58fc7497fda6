// SPDX-License-Identifier: Apache-2.0
// One extension module for <dlpackpp/pybind11.hpp> and <dlpackpp/nanobind.hpp>: the same
// functions bound with whichever library DLPACKPP_BIND_NANOBIND selects (m.def reads the same
// in both), driven by test_bindings.py. Exports count their releases so the tests can see when
// a deleter runs relative to the call.
#if defined(DLPACKPP_BIND_NANOBIND)
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/variant.h>
#include <nanobind/stl/vector.h>

#include <dlpackpp/nanobind.hpp>
namespace bl = nanobind;
#define DLPACKPP_BIND_MODULE(name, m) NB_MODULE(name, m)
#define DLPACKPP_BIND_IO_NAMES (NB_VERSION_MAJOR >= 3)
#else
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlpackpp/pybind11.hpp>
namespace bl = pybind11;
// Runs without the GIL on a free-threaded Python (pybind11 2.13 and later can say so).
#if PYBIND11_VERSION_HEX >= 0x020D0000
#define DLPACKPP_BIND_MODULE(name, m) PYBIND11_MODULE(name, m, pybind11::mod_gil_not_used())
#else
#define DLPACKPP_BIND_MODULE(name, m) PYBIND11_MODULE(name, m)
#endif
#define DLPACKPP_BIND_IO_NAMES (PYBIND11_VERSION_MAJOR >= 3)
#endif

#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace {

using dlpackpp::ManagedTensor;
using dlpackpp::TensorAccessor;
using dlpackpp::TensorView;

std::int64_t released = 0;

// The owner of an export made here: counts its release.
struct CountedBuffer {
  std::vector<double> values;
  bool live = true;
  explicit CountedBuffer(std::vector<double> v) : values(std::move(v)) {}
  CountedBuffer(CountedBuffer&& other) noexcept : values(std::move(other.values)) {
    other.live = false;
  }
  CountedBuffer& operator=(CountedBuffer&&) = delete;
  CountedBuffer(const CountedBuffer&) = delete;
  CountedBuffer& operator=(const CountedBuffer&) = delete;
  ~CountedBuffer() {
    if (live) ++released;
  }
};

// 0, 1, ..., n-1 as float64[n]; READ_ONLY on request.
ManagedTensor make(std::int64_t n, bool read_only) {
  std::vector<double> values(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  double* data = values.data();
  return dlpackpp::wrap(data, dlpackpp::DataType::float64(), {n}, {}, dlpackpp::Device::cpu(),
                        CountedBuffer(std::move(values)),
                        read_only ? dlpackpp::flag::read_only : std::uint64_t{0});
}

double sum(TensorAccessor<const double, 1> a) {
  double s = 0;
  for (std::int64_t i = 0; i < a.size(0); ++i) s += a[i];
  return s;
}

template <class T>
std::string scale(TensorAccessor<T, 2> a, T k) {
  for (std::int64_t i = 0; i < a.size(0); ++i) {
    for (std::int64_t j = 0; j < a.size(1); ++j) a(i, j) *= k;
  }
  return dlpackpp::dtype_of<T>.to_string();
}

// A stream of the test's own on each device, as a function author's OnStream policy names
// one (never launched on: the tests see which stream the producer was asked to order).
struct TestStream {
  static void* stream(dlpackpp::Device device) noexcept {
    return reinterpret_cast<void*>(std::uintptr_t{0x5000} + static_cast<unsigned>(device.id()));
  }
};

// (the stream an OnStream parameter says to launch on, what it holds).
template <class V, class S, class Describe>
std::pair<std::uint64_t, std::string> launch(dlpackpp::bindings::OnStream<V, S>& x, Describe d) {
  return {static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(x.stream())), d(*x)};
}

// (sum of a float64[n] view, releases counted so far): inside the call nothing the caster
// imported may have been released yet.
std::pair<double, std::int64_t> probe(const TensorView& v) {
  return {sum(v.accessor<const double, 1>()), released};
}

}  // namespace

DLPACKPP_BIND_MODULE(DLPACKPP_BIND_MODULE_NAME, m) {
  // Whether the library names a result apart from an argument (pybind11 3, nanobind 3).
  m.attr("io_names") = bl::bool_(DLPACKPP_BIND_IO_NAMES);
  m.def("released", [] { return released; });
  m.def("make", [](std::int64_t n) { return make(n, false); });
  m.def("make_read_only", [](std::int64_t n) { return make(n, true); });
  m.def("make_legacy", [](std::int64_t n) { return dlpackpp::to_legacy(make(n, false)); });

  // TensorView: any layout, dtype and device.
  m.def("describe", [](TensorView v) { return v.to_string(); });
  m.def("describe_ref", [](const TensorView& v) { return v.to_string(); });
  m.def("describe_optional", [](std::optional<TensorView> v) { return v ? v->to_string() : ""; });
  m.def("numel", [](TensorView v) { return v.numel(); });
  m.def("address", [](TensorView v) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(v.const_data()));
  });
  m.def("probe", [](TensorView v) { return probe(v); });
  // Read in place: the caster itself keeps what the view reads until the call returns.
  m.def("probe_ref", [](const TensorView& v) { return probe(v); });
  m.def("probe_pointer", [](const TensorView* v) { return probe(*v); });
  m.def("probe_optional", [](std::optional<TensorView> v) {
    return v ? probe(*v) : std::pair<double, std::int64_t>{-1.0, released};
  });
  m.def("probe_variant", [](std::variant<std::int64_t, TensorView> v) {
    if (const TensorView* view = std::get_if<TensorView>(&v)) return probe(*view);
    return std::pair<double, std::int64_t>{static_cast<double>(std::get<std::int64_t>(v)),
                                           released};
  });
  m.def("probe_list", [](std::vector<TensorView> views) {  // list casters load into locals too
    double total = 0;
    for (const TensorView& v : views) total += probe(v).first;
    return std::pair<double, std::int64_t>{total, released};
  });
  m.def("probe_accessor_ref", [](const TensorAccessor<const double, 1>& a) {
    return std::pair<double, std::int64_t>{sum(a), released};
  });
  m.def("probe_optional_accessor", [](std::optional<TensorAccessor<const double, 1>> a) {
    return a ? std::pair<double, std::int64_t>{sum(*a), released}
             : std::pair<double, std::int64_t>{-1.0, released};
  });

  // Accessors: overloads by dtype, by rank, by writability.
  m.def("scale_", [](TensorAccessor<float, 2> a, float k) { return scale(a, k); });
  m.def("scale_", [](TensorAccessor<double, 2> a, double k) { return scale(a, k); });
  m.def("rank", [](TensorAccessor<const float, 1>) { return std::string("1-d"); });
  m.def("rank", [](TensorAccessor<const float, 2>) { return std::string("2-d"); });
  m.def("rank", [](TensorView) { return std::string("other"); });
  m.def("access", [](TensorAccessor<double, 1>) { return std::string("writable"); });
  m.def("access", [](TensorAccessor<const double, 1>) { return std::string("read-only"); });
  m.def("fill_", [](TensorAccessor<double, 1> a, double x) {
    for (std::int64_t i = 0; i < a.size(0); ++i) a[i] = x;
  });
  m.def("total", [](TensorAccessor<const double, 1> a) { return sum(a); });

  // Owning arguments.
  m.def("owned", [](ManagedTensor t) { return std::make_pair(t.numel(), t.read_only()); });
  m.def("owned_legacy", [](dlpackpp::LegacyManagedTensor t) { return t.numel(); });
  m.def("released_during", [](ManagedTensor t) {
    const std::int64_t before = released;
    t.reset();
    return released - before;
  });

  // OnStream parameters: which stream the function launches on, and the producer was asked
  // to order its work before. make_on(n, device_type) claims a device over host memory (never
  // read there); set_work_stream sets the thread's current work stream, which the exchange
  // table of dlpackpp.Tensor reports.
  using dlpackpp::bindings::OnStream;
  m.def("make_on", [](std::int64_t n, int device_type) {
    ManagedTensor t = make(n, false);
    t.get()->dl_tensor.device = dlpackpp::Device::from_code(device_type, 0);
    return t;
  });
  m.def("set_work_stream", [](int device_type, std::uint64_t stream) {
    return dlpackpp::python::detail::set_work_stream(
        dlpackpp::Device::from_code(device_type, 0),
        reinterpret_cast<void*>(static_cast<std::uintptr_t>(stream)));
  });
  const auto view_text = [](const TensorView& v) { return v.to_string(); };
  m.def("on_producer_stream", [view_text](OnStream<TensorView> x) { return launch(x, view_text); });
  m.def("on_producer_stream_ref",
        [view_text](OnStream<TensorView>& x) { return launch(x, view_text); });
  m.def("on_test_stream",
        [view_text](OnStream<TensorView, TestStream> x) { return launch(x, view_text); });
  m.def("on_test_stream_optional", [view_text](std::optional<OnStream<TensorView, TestStream>> x) {
    return x ? launch(*x, view_text) : std::pair<std::uint64_t, std::string>{0, "none"};
  });
  m.def("on_test_stream_fill", [](OnStream<TensorAccessor<double, 1>, TestStream> x) {
    return launch(x, [](TensorAccessor<double, 1>& a) { return std::to_string(a.size(0)); });
  });
  m.def("on_test_stream_owned", [](OnStream<ManagedTensor, TestStream> x) {
    return launch(x, [](ManagedTensor& t) { return t.device().to_string(); });
  });

  // The library's own cast inside a bound function: -1 when it declines (cast_error).
  m.def("cast_view", [](bl::handle h) -> std::int64_t {
    try {
      return bl::cast<TensorView>(h).numel();
    } catch (const bl::cast_error&) {
      return -1;
    }
  });

  // Code running inside the call (a callback here; another thread where the function releases
  // the GIL) may hand the argument to another consumer: what the parameter views stays owned
  // by the call.
  m.def("probe_calling", [](TensorView v, bl::object callback) {
    callback();
    return probe(v);
  });
  m.def("probe_ref_calling", [](const TensorView& v, bl::object callback) {
    callback();
    return probe(v);
  });
  m.def("total_calling", [](TensorAccessor<const double, 1> a, bl::object callback) {
    callback();
    return std::make_pair(sum(a), released);
  });
  m.def("fill_calling", [](TensorAccessor<double, 1> a, double x, bl::object callback) {
    callback();
    for (std::int64_t i = 0; i < a.size(0); ++i) a[i] = x;
    return released;
  });

  // A dlpackpp::Error thrown by the bound function: set_python_error's class and message.
  m.def("require_float32", [](TensorView v) { v.require_dtype(dlpackpp::DataType::float32()); });
  m.def("require_rank", [](TensorView v, int n) { v.require_ndim(n); });
  m.def("require_writable", [](TensorView v) { v.require_writable(); });
  m.def("parse_device",
        [](TensorView, std::string text) { return dlpackpp::Device::parse(text).to_string(); });

  // Why an object would not fit a parameter ("" when it fits).
  m.def("why_scale", [](bl::handle h) {
    return dlpackpp::bindings::explain_refusal<TensorAccessor<float, 2>>(h.ptr());
  });
  m.def("why_total", [](bl::handle h) {
    return dlpackpp::bindings::explain_refusal<TensorAccessor<const double, 1>>(h.ptr());
  });
  m.def("why_view",
        [](bl::handle h) { return dlpackpp::bindings::explain_refusal<TensorView>(h.ptr()); });
  m.def("why_owned",
        [](bl::handle h) { return dlpackpp::bindings::explain_refusal<ManagedTensor>(h.ptr()); });

  // Tensors among other parameter kinds: a decline leaves nothing behind for the next overload.
  m.def("mixed", [](TensorView) { return std::string("tensor"); });
  m.def("mixed", [](double) { return std::string("number"); });
  m.def("mixed", [](std::string) { return std::string("text"); });
  // A class (np.ndarray itself) declines, so the object overload takes it.
  m.def("which", [](TensorView) { return std::string("tensor"); });
  m.def("which", [](bl::object) { return std::string("object"); });
  // A dlpackpp::Error from a function with no dlpackpp parameter: translated all the same,
  // also as the first call into a fresh module.
  m.def("throw_error", [](bool read_only) {
    throw dlpackpp::Error(read_only ? dlpackpp::Errc::read_only : dlpackpp::Errc::rank_mismatch,
                          "thrown by a bound function");
  });
  m.def("why_on_stream_fill", [](bl::handle h) {
    return dlpackpp::bindings::explain_refusal<
        dlpackpp::bindings::OnStream<TensorAccessor<double, 1>, TestStream>>(h.ptr());
  });
  m.def("why_legacy", [](bl::handle h) {
    return dlpackpp::bindings::explain_refusal<dlpackpp::LegacyManagedTensor>(h.ptr());
  });
}
