// SPDX-License-Identifier: Apache-2.0
// Compile-time facts about Device, DataType, Error and Result: built, never run.
#include <dlpackpp/dlpackpp.hpp>

#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::dtype_of;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::Result;

// Value types that cost nothing over the C structs they wrap and can cross into kernels.
static_assert(std::is_trivially_copyable<Device>::value, "");
static_assert(std::is_standard_layout<Device>::value, "");
static_assert(sizeof(Device) == 8 && sizeof(Device) == sizeof(DLDevice), "");
static_assert(std::is_trivially_copyable<DataType>::value, "");
static_assert(std::is_standard_layout<DataType>::value, "");
static_assert(sizeof(DataType) == 4 && sizeof(DataType) == sizeof(DLDataType), "");
static_assert(std::is_nothrow_default_constructible<Device>::value, "");
static_assert(std::is_nothrow_default_constructible<DataType>::value, "");

// Usable in constant expressions, through the C structs too.
constexpr Device kDevice = Device::cuda_managed(2);
constexpr DLDevice kDLDevice = kDevice;
static_assert(kDLDevice.device_type == kDLCUDAManaged && kDLDevice.device_id == 2, "");
static_assert(Device(kDLDevice) == kDevice && kDevice != Device::cuda(2), "");
static_assert(kDevice.is_host_accessible() && kDevice.is_known(), "");
constexpr DataType kDtype = DataType::float8_e4m3fn();
constexpr DLDataType kDLDtype = kDtype;
static_assert(kDLDtype.code == 10 && kDLDtype.bits == 8 && kDLDtype.lanes == 1, "");
static_assert(DataType(kDLDtype) == kDtype && kDtype.is_valid() && !kDtype.is_subbyte(), "");
static_assert(dlpackpp::to_string(Errc::size_overflow)[0] == 's', "");

// Conversions that must not exist: a bare number is neither a Device nor a DataType.
static_assert(!std::is_constructible<Device, int>::value, "");
static_assert(!std::is_convertible<int, DataType>::value, "");
static_assert(!std::is_convertible<DLDataTypeCode, DataType>::value, "");
static_assert(!std::is_convertible<Device, DataType>::value, "");

// Result tests with `if (r)` but never decays to bool by accident.
static_assert(!std::is_convertible<Result<int>, bool>::value, "");
static_assert(std::is_constructible<bool, Result<int>>::value, "");
static_assert(!std::is_convertible<Result<void>, bool>::value, "");
static_assert(std::is_constructible<bool, Result<void>>::value, "");
static_assert(std::is_same<Result<Device>::value_type, Device>::value, "");
static_assert(std::is_same<decltype(std::declval<Result<int>&>().error()), const Error&>::value,
              "");
// Moving a Result never throws when its value does not, and move-only values stay move-only.
static_assert(std::is_nothrow_move_constructible<Result<DataType>>::value, "");
static_assert(std::is_nothrow_move_constructible<Result<std::unique_ptr<int>>>::value, "");
static_assert(!std::is_copy_constructible<Result<std::unique_ptr<int>>>::value, "");
static_assert(std::is_same<decltype(std::declval<Result<std::unique_ptr<int>>>().value()),
                           std::unique_ptr<int>>::value,
              "a temporary Result hands its value out by value, so a kept reference cannot dangle");

// Copying an Error shares its message, so catching by value cannot throw.
static_assert(std::is_nothrow_copy_constructible<Error>::value, "");
static_assert(std::is_base_of<std::exception, Error>::value, "");
static_assert(std::is_same<dlpackpp::ErrorHandler, void (*)(const Error&) noexcept>::value, "");

// dtype_of values, independent of how the platform spells int64_t.
static_assert(dtype_of<bool> == DataType::bool_(), "");
static_assert(dtype_of<std::int8_t> == DataType::int8(), "");
static_assert(dtype_of<std::uint16_t> == DataType::uint16(), "");
static_assert(dtype_of<std::int32_t> == DataType::int32(), "");
static_assert(dtype_of<std::int64_t> == DataType::int64(), "");
static_assert(dtype_of<std::uint64_t> == DataType::uint64(), "");
static_assert(dtype_of<long long> == DataType::int64(), "");
static_assert(dtype_of<float> == DataType::float32(), "");
static_assert(dtype_of<const double> == DataType::float64(), "");
static_assert(dtype_of<std::complex<float>> == DataType::complex64(), "");
static_assert(dtype_of<std::complex<double>> == DataType::complex128(), "");
static_assert(DataType::of<unsigned char>() == DataType::uint8(), "");
static_assert(dlpackpp::has_dtype<std::uint8_t> && !dlpackpp::has_dtype<char>, "");
static_assert(!dlpackpp::has_dtype<long double> && !dlpackpp::has_dtype<void>, "");

}  // namespace
