// SPDX-License-Identifier: Apache-2.0
// A DLTensor built by hand with this header's own field types (shape/strides are
// `const int64_t*` in some headers, ndim is `int` in 0.6), then validated and viewed.
#include "compat_check.hpp"

#include <array>
#include <cstdint>

#if __has_include(<dlpackpp/validate.hpp>)
#include <dlpackpp/validate.hpp>
#endif
// --- TensorView section: compiled once <dlpackpp/tensor_view.hpp> exists -------------------
#if __has_include(<dlpackpp/tensor_view.hpp>)
#include <dlpackpp/tensor_view.hpp>
#define DLPACKPP_COMPAT_HAVE_TENSOR_VIEW 1
#else
#define DLPACKPP_COMPAT_HAVE_TENSOR_VIEW 0
#endif

namespace dlpackpp_compat {

namespace {

using Ndim = decltype(DLTensor::ndim);

// A 2x3 float32 row-major tensor over `data`, with the header's own field types.
DLTensor make_tensor(float* data, std::int64_t* shape, std::int64_t* strides) {
  DLTensor t{};
  t.data = data;
  t.device = dlpackpp::Device::cpu();
  t.ndim = Ndim{2};
  t.dtype = dlpackpp::DataType::float32();
  t.shape = shape;  // int64_t* converts to either spelling of the field
  t.strides = strides;
  t.byte_offset = 0;
  return t;
}

}  // namespace

void check_tensor() {
  float data[6] = {0, 1, 2, 3, 4, 5};
  std::int64_t shape[2] = {2, 3};
  std::int64_t strides[2] = {3, 1};
  const DLTensor t = make_tensor(data, shape, strides);

  DLPACKPP_COMPAT_CHECK(dlpackpp::DataType(t.dtype) == dlpackpp::DataType::of<float>());
  DLPACKPP_COMPAT_CHECK(dlpackpp::Device(t.device) == dlpackpp::Device::cpu());
  DLPACKPP_COMPAT_CHECK(t.shape[1] == 3 && t.strides[0] == 3);

#if __has_include(<dlpackpp/validate.hpp>)
  DLPACKPP_COMPAT_CHECK(dlpackpp::validate(t).has_value());
  const DLTensor no_strides = make_tensor(data, shape, nullptr);
  DLPACKPP_COMPAT_CHECK(dlpackpp::validate(no_strides).has_value());
  dlpackpp::ValidateOptions strict;
  strict.require_strides = true;
  DLPACKPP_COMPAT_CHECK_ERRC(dlpackpp::validate(no_strides, strict), null_strides);

  std::int64_t bad_shape[2] = {2, -3};
  DLPACKPP_COMPAT_CHECK_ERRC(dlpackpp::validate(make_tensor(data, bad_shape, nullptr)),
                             negative_shape);
  DLTensor bad_ndim = t;
  bad_ndim.ndim = Ndim{-1};
  DLPACKPP_COMPAT_CHECK_ERRC(dlpackpp::validate(bad_ndim), invalid_ndim);
  DLTensor bad_device = t;
  bad_device.device.device_type = static_cast<DLDeviceType>(6);  // a gap DLPack never assigned
  DLPACKPP_COMPAT_CHECK_ERRC(dlpackpp::validate(bad_device), unsupported_device);
  DLTensor bad_dtype = t;
  bad_dtype.dtype.bits = 0;
  DLPACKPP_COMPAT_CHECK_ERRC(dlpackpp::validate(bad_dtype), unsupported_dtype);
#endif
}

void check_tensor_view() {
#if DLPACKPP_COMPAT_HAVE_TENSOR_VIEW
  using dlpackpp::DataType;
  using dlpackpp::Device;
  using dlpackpp::TensorView;

  float data[6] = {0, 1, 2, 3, 4, 5};
  std::int64_t shape[2] = {2, 3};

  // NULL strides (pre-1.2 producers) become compact row-major strides in the view.
  const DLTensor t = make_tensor(data, shape, nullptr);
  const TensorView v(t);
  DLPACKPP_COMPAT_CHECK(v.ndim() == 2);
  DLPACKPP_COMPAT_CHECK(v.shape().size() == 2 && v.strides().size() == 2);
  DLPACKPP_COMPAT_CHECK(v.shape(0) == 2 && v.shape(-1) == 3);
  DLPACKPP_COMPAT_CHECK(v.stride(0) == 3 && v.stride(1) == 1);
  DLPACKPP_COMPAT_CHECK(v.numel() == 6 && v.nbytes() == 24);
  DLPACKPP_COMPAT_CHECK(v.dtype() == DataType::float32() && v.device() == Device::cpu());
  DLPACKPP_COMPAT_CHECK(v.is_contiguous() && v.is_compact() && !v.is_fortran_contiguous());
  DLPACKPP_COMPAT_CHECK(!v.read_only() && v.byte_offset() == 0);
  DLPACKPP_COMPAT_CHECK(v.data() == data && v.data<float>() == data);
  DLPACKPP_COMPAT_CHECK(v.data<const float>() == data);
  DLPACKPP_COMPAT_CHECK(TensorView::try_from(t).has_value());

  const std::array<std::int64_t, 2> want{-1, 3};
  v.require_dtype<float>()
      .require_ndim(2)
      .require_shape(want)
      .require_device(Device::cpu())
      .require_contiguous()
      .require_writable();

  auto a = v.accessor<float, 2>();
  DLPACKPP_COMPAT_CHECK(a.size(0) == 2 && a.size(1) == 3 && a.stride(0) == 3);
  DLPACKPP_COMPAT_CHECK(a(1, 2) == 5.0f && a[1][0] == 3.0f);
  a(0, 1) = 10.0f;
  DLPACKPP_COMPAT_CHECK(data[1] == 10.0f);

  // Column-major strides the producer gave are kept as they are.
  std::int64_t fortran[2] = {1, 2};
  const TensorView f(make_tensor(data, shape, fortran));
  DLPACKPP_COMPAT_CHECK(f.is_fortran_contiguous() && !f.is_contiguous() && f.is_compact());
  DLPACKPP_COMPAT_CHECK(f.stride(0) == 1 && f.stride(1) == 2);

  // byte_offset is applied by data().
  std::int64_t five[1] = {5};
  DLTensor offset = make_tensor(data, five, nullptr);
  offset.ndim = Ndim{1};
  offset.byte_offset = sizeof(float);
  DLPACKPP_COMPAT_CHECK(TensorView(offset).data<float>() == data + 1);

  // Zero-dim: shape and strides may be NULL, one element.
  DLTensor scalar = make_tensor(data, nullptr, nullptr);
  scalar.ndim = Ndim{0};
  const TensorView s(scalar);
  DLPACKPP_COMPAT_CHECK(s.ndim() == 0 && s.numel() == 1 && s.strides().size() == 0);

  // From raw parts, with arrays that outlive the view.
  const std::array<std::int64_t, 2> raw_shape{3, 2};
  const TensorView r(data, DataType::float32(), raw_shape);
  DLPACKPP_COMPAT_CHECK(r.stride(0) == 2 && r.numel() == 6);
  const DLTensor back = r.to_dltensor();
  DLPACKPP_COMPAT_CHECK(back.ndim == 2 && back.shape[0] == 3 && back.strides[0] == 2);

  std::int64_t bad_shape[2] = {2, -3};
  DLPACKPP_COMPAT_CHECK_ERRC(TensorView::try_from(make_tensor(data, bad_shape, nullptr)),
                             negative_shape);
#endif
}

}  // namespace dlpackpp_compat
