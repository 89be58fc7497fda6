// SPDX-License-Identifier: Apache-2.0
// Built with -fno-exceptions: the Result API works, and throwing entry points go to the handler.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

static_assert(DLPACKPP_USE_EXCEPTIONS == 0, "this file must be compiled with -fno-exceptions");

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;

TEST(NoExceptions, TryParseReportsThroughResult) {
  const dlpackpp::Result<Device> device = Device::try_parse("cuda:1");
  ASSERT_TRUE(device.has_value());
  EXPECT_EQ(*device, Device::cuda(1));

  const dlpackpp::Result<Device> bad_device = Device::try_parse("bogus");
  ASSERT_FALSE(bad_device.has_value());
  EXPECT_EQ(bad_device.error().code(), Errc::invalid_argument);

  const dlpackpp::Result<DataType> dtype = DataType::try_parse("float4_e2m1fnx2");
  ASSERT_TRUE(dtype.has_value());
  EXPECT_EQ(*dtype, DataType(17, 4, 2));

  const dlpackpp::Result<DataType> bad_dtype = DataType::try_parse("float128");
  ASSERT_FALSE(bad_dtype.has_value());
  EXPECT_EQ(bad_dtype.error().code(), Errc::invalid_argument);
}

TEST(NoExceptions, TryStorageBytesReportsThroughResult) {
  const dlpackpp::Result<std::int64_t> ok = DataType::float4_e2m1fn().try_storage_bytes(3);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, 2);

  const dlpackpp::Result<std::int64_t> overflow =
      DataType::float64().try_storage_bytes(INT64_MAX / 4);
  ASSERT_FALSE(overflow.has_value());
  EXPECT_EQ(overflow.error().code(), Errc::size_overflow);
}

TEST(NoExceptions, ThrowingFormsSucceedWithoutTheHandler) {
  EXPECT_EQ(Device::parse("rocm:2"), Device::rocm(2));
  EXPECT_EQ(DataType::parse("bfloat16"), DataType::bfloat16());
  EXPECT_EQ(DataType::int32().storage_bytes(5), 20);
}

// Returns, as a careless handler might; the library must abort regardless.
void returning_handler(const dlpackpp::Error& e) noexcept {
  std::fprintf(stderr, "custom-handler saw <%s>\n", e.what());
  std::fflush(stderr);
}

void exiting_handler(const dlpackpp::Error& e) noexcept {
  std::fprintf(stderr, "exiting-handler code=%s\n", dlpackpp::to_string(e.code()));
  std::fflush(stderr);
  std::_Exit(3);
}

// Death tests run in a child, so installing a handler there leaves this process untouched.
TEST(NoExceptionsDeath, CustomHandlerSeesTheErrorThenTheProcessAborts) {
  EXPECT_EXIT(
      {
        dlpackpp::set_error_handler(&returning_handler);
        static_cast<void>(Device::parse("bogus"));
        std::fprintf(stderr, "parse returned\n");
        std::exit(0);
      },
      testing::KilledBySignal(SIGABRT), "custom-handler saw <dlpackpp: device \"bogus\"");
}

TEST(NoExceptionsDeath, HandlerMayEndTheProcessItself) {
  EXPECT_EXIT(
      {
        dlpackpp::set_error_handler(&exiting_handler);
        static_cast<void>(DataType::float64().storage_bytes(INT64_MAX));
      },
      testing::ExitedWithCode(3), "exiting-handler code=size_overflow");
}

TEST(NoExceptionsDeath, DefaultHandlerPrintsWhatAndAborts) {
  EXPECT_EXIT(static_cast<void>(Device::parse("bogus")), testing::KilledBySignal(SIGABRT),
              "dlpackpp: device \"bogus\" is not a DLPack device");
  EXPECT_EXIT(static_cast<void>(DataType::parse("int7")), testing::KilledBySignal(SIGABRT),
              "dlpackpp: dtype \"int7\"");
}

TEST(NoExceptionsDeath, NullRestoresTheDefaultHandler) {
  EXPECT_EXIT(
      {
        dlpackpp::set_error_handler(&exiting_handler);
        dlpackpp::set_error_handler(nullptr);
        static_cast<void>(Device::parse("gpu:0"));
      },
      testing::KilledBySignal(SIGABRT), "dlpackpp: device \"gpu:0\"");
}

TEST(NoExceptionsDeath, ResultValueOnAnErrorGoesToTheHandler) {
  const dlpackpp::Result<void> failed = dlpackpp::Error(Errc::null_data, "data is NULL");
  EXPECT_EXIT(failed.value(), testing::KilledBySignal(SIGABRT), "dlpackpp: data is NULL");
}

}  // namespace
