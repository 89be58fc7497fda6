// SPDX-License-Identifier: Apache-2.0
// Device: makers and codes, to_string/parse, DLDevice conversions, comparison, streaming.
#include <dlpackpp/device.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

namespace {

using dlpackpp::Device;
using dlpackpp::Errc;

// Constant evaluation is part of the contract: these fail the build, not the run.
constexpr Device kGpu = Device::cuda(3);
static_assert(kGpu.type_code() == 2 && kGpu.id() == 3, "");
static_assert(kGpu.type() == kDLCUDA, "");
static_assert(Device() == Device::cpu() && Device() != kGpu, "");
static_assert(Device(kDLROCM, 1) == Device::rocm(1), "");
static_assert(static_cast<DLDevice>(kGpu).device_id == 3, "");
static_assert(Device(DLDevice{kDLMetal, 1}) == Device::metal(1), "");
static_assert(Device::cuda_managed(1).is_host_accessible() && !kGpu.is_host_accessible(), "");
static_assert(Device::from_code(99).type_code() == 99 && !Device::from_code(99).is_known(), "");

struct Maker {
  const char* bare;     // the type's name, which parse() takes as id 0
  const char* at_zero;  // to_string() of the maker's id-0 device
  std::int32_t code;
  bool host_accessible;
  bool takes_id;
  Device (*make)(std::int32_t id);  // makers without an id ignore it
};

// Codes are literal DLPack numbers, not device_code constants, so a wrong constant is caught.
const Maker kMakers[] = {
    {"cpu", "cpu", 1, true, false, [](std::int32_t) { return Device::cpu(); }},
    {"cuda", "cuda:0", 2, false, true, [](std::int32_t id) { return Device::cuda(id); }},
    {"cuda_host", "cuda_host", 3, true, false, [](std::int32_t) { return Device::cuda_host(); }},
    {"cuda_managed", "cuda_managed:0", 13, true, true,
     [](std::int32_t id) { return Device::cuda_managed(id); }},
    {"rocm", "rocm:0", 10, false, true, [](std::int32_t id) { return Device::rocm(id); }},
    {"rocm_host", "rocm_host", 11, true, false, [](std::int32_t) { return Device::rocm_host(); }},
    {"opencl", "opencl:0", 4, false, true, [](std::int32_t id) { return Device::opencl(id); }},
    {"vulkan", "vulkan:0", 7, false, true, [](std::int32_t id) { return Device::vulkan(id); }},
    {"metal", "metal:0", 8, false, true, [](std::int32_t id) { return Device::metal(id); }},
    {"oneapi", "oneapi:0", 14, false, true, [](std::int32_t id) { return Device::oneapi(id); }},
    {"webgpu", "webgpu:0", 15, false, true, [](std::int32_t id) { return Device::webgpu(id); }},
    {"hexagon", "hexagon:0", 16, false, true, [](std::int32_t id) { return Device::hexagon(id); }},
    {"maia", "maia:0", 17, false, true, [](std::int32_t id) { return Device::maia(id); }},
    {"trn", "trn:0", 18, false, true, [](std::int32_t id) { return Device::trn(id); }},
    {"ext_dev", "ext_dev:0", 12, false, true, [](std::int32_t id) { return Device::ext_dev(id); }},
    {"vpi", "vpi:0", 9, false, true, [](std::int32_t id) { return Device::vpi(id); }},
};

TEST(Device, EveryMakerHasItsCodeNameAndHostAccess) {
  for (const Maker& m : kMakers) {
    SCOPED_TRACE(m.bare);
    const Device d = m.make(0);
    EXPECT_EQ(d.type_code(), m.code);
    EXPECT_EQ(static_cast<std::int32_t>(d.type()), m.code);
    EXPECT_EQ(d.id(), 0);
    EXPECT_TRUE(d.is_known());
    EXPECT_EQ(d.to_string(), m.at_zero);
    EXPECT_EQ(d.is_host_accessible(), m.host_accessible);
    if (m.takes_id) {
      EXPECT_EQ(m.make(5), Device::from_code(m.code, 5));
    }
  }
}

TEST(Device, DefaultIsCpuZero) {
  const Device d;
  EXPECT_EQ(d.type_code(), 1);
  EXPECT_EQ(d.id(), 0);
  EXPECT_EQ(Device(kDLVulkan).id(), 0);
  EXPECT_EQ(Device(kDLCUDA, 5), Device::cuda(5));
}

struct Printed {
  Device device;
  const char* text;
};

TEST(Device, ToStringExact) {
  const Printed cases[] = {
      {Device::cpu(), "cpu"},
      {Device(kDLCPU, 1), "cpu:1"},
      {Device::cuda(), "cuda:0"},
      {Device::cuda(1), "cuda:1"},
      {Device::cuda(INT32_MAX), "cuda:2147483647"},
      {Device::cuda_host(), "cuda_host"},
      {Device::from_code(3, 2), "cuda_host:2"},
      {Device::rocm_host(), "rocm_host"},
      {Device(kDLROCMHost, 1), "rocm_host:1"},
      {Device::cuda_managed(0), "cuda_managed:0"},
      {Device::cuda_managed(3), "cuda_managed:3"},
      {Device::rocm(7), "rocm:7"},
      {Device::opencl(2), "opencl:2"},
      {Device::vulkan(1), "vulkan:1"},
      {Device::vpi(4), "vpi:4"},
      {Device::oneapi(1), "oneapi:1"},
      {Device::trn(15), "trn:15"},
      // Not DLPack devices: printed so that they are visible in messages, never parseable.
      {Device::from_code(99), "device(99):0"},
      {Device::from_code(5, 1), "device(5):1"},
      {Device::from_code(0), "device(0):0"},
      {Device::from_code(19), "device(19):0"},
      {Device::from_code(-2, 3), "device(-2):3"},
      {Device::cuda(-1), "cuda:-1"},
  };
  for (const Printed& c : cases) {
    EXPECT_EQ(c.device.to_string(), c.text);
  }
}

TEST(Device, KnownCodesAreExactlyTheDLPackOnes) {
  int known = 0;
  for (std::int32_t code = -1; code < 64; ++code) {
    const bool expected = code >= 1 && code <= 18 && code != 5 && code != 6;
    EXPECT_EQ(Device::from_code(code).is_known(), expected) << code;
    known += Device::from_code(code).is_known() ? 1 : 0;
  }
  EXPECT_EQ(known, 16);
}

TEST(Device, ToStringParseRoundTrip) {
  const std::int32_t ids[] = {0, 1, 2, 9, 10, 99, 1000, INT32_MAX, -1};
  for (std::int32_t code = -1; code < 21; ++code) {
    for (std::int32_t id : ids) {
      const Device d = Device::from_code(code, id);
      const std::string text = d.to_string();
      const dlpackpp::Result<Device> parsed = Device::try_parse(text);
      // Everything to_string can print parses back, except the forms made to be refused.
      if (d.is_known() && id >= 0) {
        ASSERT_TRUE(parsed.has_value()) << text;
        EXPECT_EQ(*parsed, d) << text;
        EXPECT_EQ(Device::parse(text), d) << text;
      } else {
        EXPECT_FALSE(parsed.has_value()) << text;
      }
    }
  }
}

TEST(Device, ParseBareNameIsIdZero) {
  for (const Maker& m : kMakers) {
    EXPECT_EQ(Device::parse(m.bare), m.make(0)) << m.bare;
  }
}

TEST(Device, ParseAcceptsAnExplicitZeroForHostKinds) {
  EXPECT_EQ(Device::parse("cpu:0"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda_host:0"), Device::cuda_host());
  EXPECT_EQ(Device::parse("rocm_host:0"), Device::rocm_host());
}

// Checks both faces of a refused input: the Result and the exception, each naming the input.
void expect_rejected(std::string_view text) {
  SCOPED_TRACE(std::string("input: \"") + std::string(text) + "\"");
  const std::string quoted = "\"" + std::string(text) + "\"";
  const dlpackpp::Result<Device> r = Device::try_parse(text);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
  EXPECT_NE(std::string(r.error().what()).find(quoted), std::string::npos) << r.error().what();
  try {
    static_cast<void>(Device::parse(text));
    ADD_FAILURE() << "parse() did not throw";
  } catch (const dlpackpp::Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

TEST(Device, ParseRejectsAnythingElse) {
  const char* inputs[] = {
      "",
      "gpu",
      "cuda:",
      "cuda:-1",
      "cuda:01",
      "cuda:00",
      "cuda:2147483648",
      "cuda:99999999999999999999",
      " cpu",
      "cpu ",
      "CPU",
      "Cuda:1",
      "cuda:1:2",
      "cuda::1",
      "device(99):0",
      "device(1):0",
      ":0",
      ":",
      "cuda:+1",
      "cuda: 1",
      "cuda:0x1",
      "cuda:1 ",
      "cud",
      "cudax",
      "cuda_:0",
      "cpu0",
      "dlcpu",
  };
  for (const char* text : inputs) expect_rejected(text);
}

TEST(Device, ParseRejectsEmbeddedNul) {
  const dlpackpp::Result<Device> r = Device::try_parse(std::string_view("cpu\0", 4));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::invalid_argument);
}

TEST(Device, ConvertsToAndFromDLDevice) {
  const DLDevice dl = Device::cuda(3);
  EXPECT_EQ(dl.device_type, kDLCUDA);
  EXPECT_EQ(dl.device_id, 3);

  const Device back = DLDevice{kDLROCM, 2};
  EXPECT_EQ(back, Device::rocm(2));

  // Passing a Device where a C API wants a DLDevice needs no spelling.
  const auto id_of = [](DLDevice d) { return d.device_id; };
  EXPECT_EQ(id_of(Device::metal(4)), 4);

  // A code the header may not enumerate survives the trip through the C struct.
  const Device odd = Device::from_code(99, 1);
  const Device odd_back = static_cast<DLDevice>(odd);
  EXPECT_EQ(odd_back.type_code(), 99);
  EXPECT_EQ(odd_back, odd);
}

TEST(Device, EqualityComparesTypeAndId) {
  struct Pair {
    Device a, b;
    bool equal;
  };
  const Pair pairs[] = {
      {Device::cuda(1), Device::cuda(1), true},
      {Device::cuda(0), Device::cuda(1), false},
      {Device::cuda(1), Device::rocm(1), false},
      {Device::cpu(), Device::cuda_host(), false},
      {Device::cpu(), Device(DLDevice{kDLCPU, 0}), true},
      {Device::from_code(99, 2), Device::from_code(99, 2), true},
  };
  for (const Pair& p : pairs) {
    EXPECT_EQ(p.a == p.b, p.equal) << p.a << " vs " << p.b;
    EXPECT_EQ(p.a != p.b, !p.equal) << p.a << " vs " << p.b;
    EXPECT_EQ(p.b == p.a, p.equal) << p.a << " vs " << p.b;
  }
}

TEST(Device, StreamsItsName) {
  std::ostringstream os;
  os << Device::cuda(2) << ' ' << Device::cpu() << ' ' << Device::from_code(42, 1);
  EXPECT_EQ(os.str(), "cuda:2 cpu device(42):1");
}

}  // namespace
