// SPDX-License-Identifier: Apache-2.0
// The whole host API in a CUDA translation unit, next to kernels that take accessors by
// value: nvcc's front end must accept every producer, adopt path, conversion, view check,
// printing and parser (compiled with nvcc -c at C++17 and C++20; nothing is run).
#include <dlpackpp/dlpackpp.hpp>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

__global__ void scale(dlpackpp::TensorAccessor<float, 2> x, float k) {
  const auto i = static_cast<std::int64_t>(blockIdx.x);
  const auto j = static_cast<std::int64_t>(threadIdx.x);
  if (i < x.size(0) && j < x.size(1)) x(i, j) *= k;
}

__global__ void sum_rows(dlpackpp::TensorAccessor<const float, 2> x,
                         dlpackpp::TensorAccessor<float, 1> out) {
  const auto i = static_cast<std::int64_t>(blockIdx.x);
  float s = 0;
  for (std::int64_t j = 0; j < x.size(1); ++j) s += x[i][j];
  out[i] = s;
}

template <class Handle>
std::string exercise(Handle t) {
  std::ostringstream text;
  const dlpackpp::TensorView v = t.view();
  v.require_dtype<float>().require_ndim(2).require_shape({-1, 3}).require_device(
      dlpackpp::Device::cpu());
  static_cast<void>(v.try_require_contiguous());
  static_cast<void>(v.try_require_writable());
  static_cast<void>(v.template try_data<const float>());
  static_cast<void>(v.template try_accessor<const float, 2>());
  static_cast<void>(v.try_shape(-1));
  static_cast<void>(v.try_stride(0));
  text << v << ' ' << t.strides() << ' ' << t.numel() << ' ' << t.nbytes() << ' ' << v.is_compact()
       << v.is_fortran_contiguous();
  const auto acc = v.template accessor<float, 2>();
  scale<<<1, 1>>>(acc, 2.0f);
  return text.str();
}

}  // namespace

std::string host_api_everything(DLManagedTensorVersioned* incoming, DLManagedTensor* legacy_in) {
  std::string out;
  out += exercise(dlpackpp::from_vector(std::vector<float>(6, 1.0f), {2, 3}));
  out +=
      exercise(dlpackpp::from_vector<dlpackpp::LegacyManagedTensor>(std::vector<float>(6), {2, 3}));
  out += exercise(dlpackpp::from_unique_ptr(std::unique_ptr<float[]>(new float[6]()), 6, {2, 3}));
  out += exercise(dlpackpp::from_shared_ptr(std::shared_ptr<float[]>(new float[6]()), 6, {2, 3}));
  out += exercise(dlpackpp::allocate(dlpackpp::DataType::float32(), {2, 3}));
  static float buffer[6];
  out += exercise(dlpackpp::wrap(buffer, dlpackpp::DataType::float32(), {2, 3}, {},
                                 dlpackpp::Device::cpu(), [] {}));
  auto r = dlpackpp::try_from_vector(std::vector<float>(6), {2, 3});
  if (r) out += exercise(std::move(*r));

  dlpackpp::ManagedTensor a = dlpackpp::ManagedTensor::adopt(incoming);
  auto b = dlpackpp::ManagedTensor::try_adopt(nullptr);
  dlpackpp::ManagedTensor c = dlpackpp::ManagedTensor::adopt_unchecked(nullptr);
  dlpackpp::LegacyManagedTensor d = dlpackpp::LegacyManagedTensor::adopt(legacy_in);
  auto e = dlpackpp::LegacyManagedTensor::try_adopt(nullptr);
  dlpackpp::LegacyManagedTensor f = dlpackpp::LegacyManagedTensor::adopt_unchecked(nullptr);
  dlpackpp::ManagedTensor g = dlpackpp::to_versioned(std::move(d), dlpackpp::flag::read_only);
  dlpackpp::LegacyManagedTensor h = dlpackpp::to_legacy(std::move(g), true);
  auto i = dlpackpp::try_to_legacy(std::move(a));
  out += b ? "" : b.error().what();
  out += e ? "" : e.error().what();
  out += c || f || h || i ? "owned" : "empty";

  const dlpackpp::Device dev = dlpackpp::Device::parse("cuda:1");
  const dlpackpp::DataType dt = dlpackpp::DataType::parse("float8_e4m3fn");
  auto bad = dlpackpp::Device::try_parse("nope");
  out += dev.to_string() + dt.to_string() + (bad ? "" : to_string(bad.error().code()));
  std::ostringstream text;
  text << dev << dt << dlpackpp::IntSpan{1, 2};
  out += text.str();

  static float rows[6];
  const dlpackpp::TensorView v(rows, dlpackpp::DataType::float32(), {2, 3});
  static float sums[2];
  const dlpackpp::TensorView s(sums, dlpackpp::DataType::float32(), {2});
  sum_rows<<<2, 1>>>(v.accessor<const float, 2>(), s.accessor<float, 1>());
  return out;
}
