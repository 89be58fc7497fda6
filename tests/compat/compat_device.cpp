// SPDX-License-Identifier: Apache-2.0
// Device against this dlpack.h: every named device round-trips through DLDevice and text,
// including the kinds an old header has no enumerator for (oneapi, trn on 0.6).
#include "compat_check.hpp"

#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>

namespace dlpackpp_compat {

namespace {

// DLPack 0.6 declares DLDeviceType without a fixed underlying type, so the enum's values are
// only those of the smallest bit-field that holds its enumerators (kDLCUDAManaged = 13 at
// most, hence 0..15). Codes 16 and up (hexagon, maia, trn) exist as Device codes but cannot
// be stored in such a header's DLDevice without undefined behaviour (UBSan: "load of value
// 16, which is not a valid value for type 'DLDeviceType'"). From 0.8 on the enum is
// `: int32_t` and holds every code. An enum with a fixed underlying type is the one that
// can be list-initialized from an int.
template <class E, class = void>
struct has_fixed_underlying_type : std::false_type {};
template <class E>
struct has_fixed_underlying_type<E, std::void_t<decltype(E{0})>> : std::true_type {};

constexpr bool header_enum_holds(std::int32_t code) {
  return has_fixed_underlying_type<DLDeviceType>::value || (code >= 0 && code <= 15);
}

struct NamedDevice {
  dlpackpp::Device device;
  std::int32_t code;
  std::int32_t id;
  const char* text;
  bool host_accessible;
};
}  // namespace

void check_device() {
  using dlpackpp::Device;
  const NamedDevice all[] = {
      {Device::cpu(), 1, 0, "cpu", true},
      {Device::cuda(1), 2, 1, "cuda:1", false},
      {Device::cuda_host(), 3, 0, "cuda_host", true},
      {Device::opencl(2), 4, 2, "opencl:2", false},
      {Device::vulkan(3), 7, 3, "vulkan:3", false},
      {Device::metal(), 8, 0, "metal:0", false},
      {Device::vpi(1), 9, 1, "vpi:1", false},
      {Device::rocm(2), 10, 2, "rocm:2", false},
      {Device::rocm_host(), 11, 0, "rocm_host", true},
      {Device::ext_dev(4), 12, 4, "ext_dev:4", false},
      {Device::cuda_managed(5), 13, 5, "cuda_managed:5", true},
      {Device::oneapi(6), 14, 6, "oneapi:6", false},
      {Device::webgpu(7), 15, 7, "webgpu:7", false},
      {Device::hexagon(8), 16, 8, "hexagon:8", false},
      {Device::maia(9), 17, 9, "maia:9", false},
      {Device::trn(10), 18, 10, "trn:10", false},
  };
  DLPACKPP_COMPAT_CHECK(sizeof(all) / sizeof(all[0]) == 16);

  for (const NamedDevice& n : all) {
    const Device d = n.device;
    DLPACKPP_COMPAT_CHECK(d.type_code() == n.code);
    DLPACKPP_COMPAT_CHECK(d.id() == n.id);
    DLPACKPP_COMPAT_CHECK(d.to_string() == n.text);
    DLPACKPP_COMPAT_CHECK(d.is_host_accessible() == n.host_accessible);
    DLPACKPP_COMPAT_CHECK(Device::from_code(n.code, n.id) == d);

    // Through this header's own struct, both ways, for every code: the struct travels as bits
    // even where the header's enum cannot hold the value (DLPack 0.6 has no trn).
    const DLDevice raw = d;
    DLPACKPP_COMPAT_CHECK(raw.device_id == n.id);
    DLPACKPP_COMPAT_CHECK(Device(raw) == d);
    // The enum itself only where it can hold the code.
    if (header_enum_holds(n.code)) {
      DLPACKPP_COMPAT_CHECK(static_cast<std::int32_t>(d.type()) == n.code);
      DLPACKPP_COMPAT_CHECK(static_cast<std::int32_t>(raw.device_type) == n.code);
      DLPACKPP_COMPAT_CHECK(Device(static_cast<DLDeviceType>(n.code), n.id) == d);
    }

    // Through text, both ways.
    const auto parsed = Device::try_parse(n.text);
    DLPACKPP_COMPAT_CHECK(parsed.has_value());
    if (parsed) DLPACKPP_COMPAT_CHECK(*parsed == d);
    std::ostringstream os;
    os << d;
    DLPACKPP_COMPAT_CHECK(os.str() == n.text);

    for (const NamedDevice& other : all) {
      DLPACKPP_COMPAT_CHECK((d == other.device) == (&n == &other));
      DLPACKPP_COMPAT_CHECK((d != other.device) == (&n != &other));
    }
  }

  // Enumerators every supported header (0.6 and later) declares.
  DLPACKPP_COMPAT_CHECK(Device(kDLCPU) == Device::cpu());
  DLPACKPP_COMPAT_CHECK(Device(kDLCUDA, 1) == Device::cuda(1));
  DLPACKPP_COMPAT_CHECK(Device(kDLCUDAManaged, 2) == Device::cuda_managed(2));
  DLPACKPP_COMPAT_CHECK(Device() == Device::cpu());

  constexpr Device compile_time = Device::trn(3);
  static_assert(compile_time.id() == 3, "Device is usable in constant expressions");

  const auto bare = Device::try_parse("cuda");
  DLPACKPP_COMPAT_CHECK(bare.has_value() && *bare == Device::cuda(0));
  DLPACKPP_COMPAT_CHECK_ERRC(Device::try_parse("gpu:0"), invalid_argument);
  DLPACKPP_COMPAT_CHECK_ERRC(Device::try_parse(""), invalid_argument);
}

}  // namespace dlpackpp_compat
