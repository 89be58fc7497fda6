// SPDX-License-Identifier: Apache-2.0
// Fuzzes the text parsers: Device::try_parse and DataType::try_parse on arbitrary bytes, and
// the round trip to_string -> try_parse for every value a parser accepts and for raw
// DLDevice/DLDataType values (valid ones must come back equal, others must be refused).
#include "fuzz_support.hpp"

#include <dlpackpp/dlpackpp.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;

void device_round_trip(Device d) {
  const std::string text = d.to_string();
  const auto back = Device::try_parse(text);
  if (d.is_known() && d.id() >= 0) {
    FUZZ_CHECK(back.has_value() && *back == d);
    FUZZ_CHECK(back->to_string() == text);
  } else {
    FUZZ_CHECK(!back && back.error().code() == Errc::invalid_argument);
  }
}

void dtype_round_trip(DataType t) {
  const std::string text = t.to_string();
  const auto back = DataType::try_parse(text);
  if (t.is_valid()) {
    FUZZ_CHECK(back.has_value() && *back == t);
    FUZZ_CHECK(back->to_string() == text);
  } else {
    FUZZ_CHECK(!back && back.error().code() == Errc::invalid_argument);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto device = Device::try_parse(text);
  if (device) {
    FUZZ_CHECK(device->is_known() && device->id() >= 0);
    device_round_trip(*device);
  } else {
    FUZZ_CHECK(device.error().code() == Errc::invalid_argument);
    FUZZ_CHECK(device.error().what() != nullptr);
  }
  const auto dtype = DataType::try_parse(text);
  if (dtype) {
    FUZZ_CHECK(dtype->is_valid());
    dtype_round_trip(*dtype);
  } else {
    FUZZ_CHECK(dtype.error().code() == Errc::invalid_argument);
  }
  // The same bytes as raw values: whatever a producer sends must print and parse back.
  dlpackpp_fuzz::Reader r(data, size);
  DLDevice raw_device{};
  raw_device.device_type = static_cast<DLDeviceType>(r.i32() % 64);
  raw_device.device_id = r.i32();
  device_round_trip(Device(raw_device));
  DLDataType raw_dtype{};
  raw_dtype.code = r.byte();
  raw_dtype.bits = r.byte();
  raw_dtype.lanes = r.u16();
  dtype_round_trip(DataType(raw_dtype));
  return 0;
}
