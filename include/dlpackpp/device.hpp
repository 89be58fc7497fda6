// SPDX-License-Identifier: Apache-2.0
/// @file
/// Device: a constexpr value type over DLDevice, with names that work on every dlpack.h.
#pragma once

#include "dlpackpp/detail/config.hpp"
#include "dlpackpp/detail/text.hpp"
#include "dlpackpp/dlpack.hpp"
#include "dlpackpp/error.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

DLPACKPP_BEGIN_NAMESPACE

/// Numeric DLDeviceType codes. Kept here, not taken from enumerators, so that device kinds an
/// older dlpack.h does not declare still have their names and makers.
namespace device_code {
inline constexpr std::int32_t cpu = 1;            ///< kDLCPU
inline constexpr std::int32_t cuda = 2;           ///< kDLCUDA
inline constexpr std::int32_t cuda_host = 3;      ///< kDLCUDAHost
inline constexpr std::int32_t opencl = 4;         ///< kDLOpenCL
inline constexpr std::int32_t vulkan = 7;         ///< kDLVulkan
inline constexpr std::int32_t metal = 8;          ///< kDLMetal
inline constexpr std::int32_t vpi = 9;            ///< kDLVPI
inline constexpr std::int32_t rocm = 10;          ///< kDLROCM
inline constexpr std::int32_t rocm_host = 11;     ///< kDLROCMHost
inline constexpr std::int32_t ext_dev = 12;       ///< kDLExtDev
inline constexpr std::int32_t cuda_managed = 13;  ///< kDLCUDAManaged
inline constexpr std::int32_t oneapi = 14;        ///< kDLOneAPI
inline constexpr std::int32_t webgpu = 15;        ///< kDLWebGPU
inline constexpr std::int32_t hexagon = 16;       ///< kDLHexagon
inline constexpr std::int32_t maia = 17;          ///< kDLMAIA
inline constexpr std::int32_t trn = 18;           ///< kDLTrn
}  // namespace device_code

namespace detail {
// Index = device code; nullptr marks codes DLPack leaves unassigned.
inline constexpr const char* device_names[] = {
    nullptr,  "cpu",    "cuda",    "cuda_host", "opencl",    nullptr,   nullptr,
    "vulkan", "metal",  "vpi",     "rocm",      "rocm_host", "ext_dev", "cuda_managed",
    "oneapi", "webgpu", "hexagon", "maia",      "trn"};
inline constexpr std::int32_t device_code_count =
    static_cast<std::int32_t>(sizeof(device_names) / sizeof(device_names[0]));

constexpr const char* device_name(std::int32_t code) noexcept {
  return (code >= 0 && code < device_code_count) ? device_names[code] : nullptr;
}
}  // namespace detail

namespace detail {
// A pre-0.8 DLDeviceType has no fixed underlying type, so it can only hold values up to its
// largest enumerator's bit width (0..15 on DLPack 0.6): a DLDeviceType value for a code the
// header does not declare is undefined. Device therefore moves whole DLDevice structs as bits
// and never forms such an enum value (except in type(), for codes the caller asked for).
struct RawDevice {
  std::int32_t type;
  std::int32_t id;
};
static_assert(sizeof(DLDevice) == sizeof(RawDevice), "DLDevice must be two 32-bit fields");
#if defined(__has_builtin) && !defined(__CUDACC__)
#if __has_builtin(__builtin_bit_cast)
#define DLPACKPP_DETAIL_HAS_BIT_CAST 1
#endif
#endif
constexpr RawDevice raw_device(const DLDevice& d) noexcept {
#ifdef DLPACKPP_DETAIL_HAS_BIT_CAST
  return __builtin_bit_cast(RawDevice, d);
#else
  return RawDevice{static_cast<std::int32_t>(d.device_type),
                   static_cast<std::int32_t>(d.device_id)};
#endif
}
constexpr DLDevice dl_device(RawDevice r) noexcept {
#ifdef DLPACKPP_DETAIL_HAS_BIT_CAST
  return __builtin_bit_cast(DLDevice, r);
#else
  DLDevice d{};
  d.device_type = static_cast<DLDeviceType>(r.type);
  d.device_id = r.id;
  return d;
#endif
}
#undef DLPACKPP_DETAIL_HAS_BIT_CAST
}  // namespace detail

/// Where a tensor's memory lives: a DLDeviceType code and a device ordinal.
class Device {
 public:
  /// `cpu:0`.
  constexpr Device() noexcept = default;
  /// A device of `type` with ordinal `id`. Explicit so that `device == kDLCUDA` does not
  /// compile into a comparison that silently includes id 0.
  explicit constexpr Device(DLDeviceType type, std::int32_t id = 0) noexcept
      : type_(static_cast<std::int32_t>(type)), id_(id) {}
  /// Implicit from the C struct, so a Device can be passed wherever a DLDevice is at hand.
  constexpr Device(DLDevice d) noexcept
      : type_(detail::raw_device(d).type), id_(detail::raw_device(d).id) {}

  /// A device from its numeric type code, including codes the dlpack.h in force lacks.
  static constexpr Device from_code(std::int32_t type_code, std::int32_t id = 0) noexcept {
    Device d;
    d.type_ = type_code;
    d.id_ = id;
    return d;
  }

  /// Implicit to the C struct.
  constexpr operator DLDevice() const noexcept {
    return detail::dl_device(detail::RawDevice{type_, id_});
  }

  /// Host memory.
  static constexpr Device cpu() noexcept { return from_code(device_code::cpu, 0); }
  /// A CUDA GPU.
  static constexpr Device cuda(std::int32_t id = 0) noexcept {
    return from_code(device_code::cuda, id);
  }
  /// Page-locked host memory from cudaMallocHost.
  static constexpr Device cuda_host() noexcept { return from_code(device_code::cuda_host, 0); }
  /// CUDA managed (unified) memory.
  static constexpr Device cuda_managed(std::int32_t id = 0) noexcept {
    return from_code(device_code::cuda_managed, id);
  }
  /// An AMD GPU through ROCm/HIP.
  static constexpr Device rocm(std::int32_t id = 0) noexcept {
    return from_code(device_code::rocm, id);
  }
  /// Page-locked host memory from hipMallocHost.
  static constexpr Device rocm_host() noexcept { return from_code(device_code::rocm_host, 0); }
  /// An OpenCL device.
  static constexpr Device opencl(std::int32_t id = 0) noexcept {
    return from_code(device_code::opencl, id);
  }
  /// A Vulkan device.
  static constexpr Device vulkan(std::int32_t id = 0) noexcept {
    return from_code(device_code::vulkan, id);
  }
  /// An Apple Metal GPU.
  static constexpr Device metal(std::int32_t id = 0) noexcept {
    return from_code(device_code::metal, id);
  }
  /// oneAPI unified shared memory.
  static constexpr Device oneapi(std::int32_t id = 0) noexcept {
    return from_code(device_code::oneapi, id);
  }
  /// A WebGPU device.
  static constexpr Device webgpu(std::int32_t id = 0) noexcept {
    return from_code(device_code::webgpu, id);
  }
  /// A Qualcomm Hexagon DSP.
  static constexpr Device hexagon(std::int32_t id = 0) noexcept {
    return from_code(device_code::hexagon, id);
  }
  /// A Microsoft MAIA accelerator.
  static constexpr Device maia(std::int32_t id = 0) noexcept {
    return from_code(device_code::maia, id);
  }
  /// An AWS Trainium accelerator.
  static constexpr Device trn(std::int32_t id = 0) noexcept {
    return from_code(device_code::trn, id);
  }
  /// The reserved extension device.
  static constexpr Device ext_dev(std::int32_t id = 0) noexcept {
    return from_code(device_code::ext_dev, id);
  }
  /// A Verilog simulator buffer.
  static constexpr Device vpi(std::int32_t id = 0) noexcept {
    return from_code(device_code::vpi, id);
  }

  /// The device type as the header's enum; only for types that header declares (a DLPack 0.6
  /// enum cannot hold trn, say). type_code() works for all.
  constexpr DLDeviceType type() const noexcept { return static_cast<DLDeviceType>(type_); }
  /// The device type as its numeric code (safe for codes the header does not declare).
  constexpr std::int32_t type_code() const noexcept { return type_; }
  /// The device ordinal.
  constexpr std::int32_t id() const noexcept { return id_; }

  /// True when DLPack defines this device type.
  constexpr bool is_known() const noexcept { return detail::device_name(type_) != nullptr; }
  /// True when host code may dereference the memory directly.
  constexpr bool is_host_accessible() const noexcept {
    return type_ == device_code::cpu || type_ == device_code::cuda_host ||
           type_ == device_code::cuda_managed || type_ == device_code::rocm_host;
  }

  /// "cpu", "cuda:1", "cuda_host"; host-side kinds omit ":0". Unknown codes print as
  /// "device(<code>):<id>", which parse() refuses.
  std::string to_string() const {
    detail::TextBuilder s;
    const char* name = detail::device_name(type_);
    if (name == nullptr) {
      s << "device(" << type_ << ')';
    } else {
      s << name;
      if (id_ == 0 && (type_ == device_code::cpu || type_ == device_code::cuda_host ||
                       type_ == device_code::rocm_host)) {
        return s.take();
      }
    }
    s << ':' << id_;
    return s.take();
  }

  /// Inverse of to_string(); a bare name means id 0. Fails with Errc::invalid_argument.
  static Result<Device> try_parse(std::string_view text) {
    const std::size_t colon = text.find(':');
    const std::string_view name = text.substr(0, colon);
    std::uint64_t id = 0;
    if (colon != std::string_view::npos &&
        !detail::parse_decimal(text.substr(colon + 1), INT32_MAX, id)) {
      return detail::make_error(Errc::invalid_argument, "device ", detail::quoted(text),
                                " has an invalid id (want a decimal in [0, 2147483647])");
    }
    for (std::int32_t code = 0; code < detail::device_code_count; ++code) {
      const char* candidate = detail::device_names[code];
      if (candidate != nullptr && detail::names_equal(candidate, name)) {
        return from_code(code, static_cast<std::int32_t>(id));
      }
    }
    return detail::make_error(Errc::invalid_argument, "device ", detail::quoted(text),
                              " is not a DLPack device (want e.g. \"cpu\", \"cuda:1\")");
  }

  /// Inverse of to_string(); throws Errc::invalid_argument naming the input.
  static Device parse(std::string_view text) { return try_parse(text).value(); }

  /// Same type code and ordinal.
  friend constexpr bool operator==(const Device& a, const Device& b) noexcept {
    return a.packed() == b.packed();  // one 64-bit compare on the consumer's hot path
  }
  /// Different type code or ordinal.
  friend constexpr bool operator!=(const Device& a, const Device& b) noexcept { return !(a == b); }

  /// Streams to_string(); a template so this header needs only `<iosfwd>`.
  template <class Traits>
  friend std::basic_ostream<char, Traits>& operator<<(std::basic_ostream<char, Traits>& os,
                                                      const Device& d) {
    return os << d.to_string();
  }

 private:
  // Stored as plain integers: a pre-0.8 DLDeviceType has no fixed underlying type, so values
  // it does not enumerate cannot safely live in the enum during constant evaluation.
  constexpr std::uint64_t packed() const noexcept {
    return std::uint64_t{static_cast<std::uint32_t>(type_)} |
           std::uint64_t{static_cast<std::uint32_t>(id_)} << 32;
  }

  std::int32_t type_ = device_code::cpu;
  std::int32_t id_ = 0;
};

DLPACKPP_END_NAMESPACE
