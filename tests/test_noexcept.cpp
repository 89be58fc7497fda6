// SPDX-License-Identifier: Apache-2.0
// Built with -fno-exceptions: the Result API works, and throwing entry points go to the handler.
#include <dlpackpp/dlpackpp.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

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

// The whole consumer and producer API through its non-throwing twins, without exceptions.
TEST(NoExceptions, EveryEntryPointHasAResultTwin) {
  auto exported = dlpackpp::try_from_vector(std::vector<float>(6, 1.0f), {2, 3});
  ASSERT_TRUE(exported.has_value());
  auto adopted = dlpackpp::ManagedTensor::try_adopt(std::move(*exported).release());
  ASSERT_TRUE(adopted.has_value());
  const dlpackpp::TensorView v = adopted->view();
  EXPECT_TRUE(v.try_require_dtype<float>().has_value());
  EXPECT_EQ(v.try_require_dtype<double>().error().code(), Errc::dtype_mismatch);
  EXPECT_EQ(v.try_require_ndim(1).error().code(), Errc::rank_mismatch);
  EXPECT_EQ(v.try_require_shape({2, 4}).error().code(), Errc::shape_mismatch);
  EXPECT_EQ(v.try_require_device(Device::cuda(0)).error().code(), Errc::device_mismatch);
  EXPECT_TRUE(v.try_require_contiguous().has_value());
  EXPECT_TRUE(v.try_require_writable().has_value());
  EXPECT_EQ((v.try_accessor<const float, 3>().error().code()), Errc::rank_mismatch);
  EXPECT_EQ((*v.try_accessor<const float, 2>())(1, 2), 1.0f);
  EXPECT_EQ(v.try_data<std::int32_t>().error().code(), Errc::dtype_mismatch);
  EXPECT_EQ(v.try_shape(5).error().code(), Errc::out_of_range);
  EXPECT_EQ(*v.try_stride(0), 3);
  std::vector<float> raw(4);
  EXPECT_EQ(dlpackpp::TensorView::try_from(raw.data(), DataType::float32(), {-1}).error().code(),
            Errc::negative_shape);
  auto legacy = dlpackpp::try_to_legacy(std::move(*adopted));
  ASSERT_TRUE(legacy.has_value());
  auto back = dlpackpp::try_to_versioned(std::move(*legacy), dlpackpp::flag::read_only);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->view().try_require_writable().error().code(), Errc::read_only);
  EXPECT_EQ(dlpackpp::try_allocate(DataType::float32(), {2}, Device::cuda(0)).error().code(),
            Errc::unsupported_device);
  EXPECT_EQ(dlpackpp::ManagedTensor::try_adopt(nullptr).error().code(), Errc::null_pointer);
  auto exported_again = dlpackpp::try_from_vector(std::vector<float>(6, 1.0f), {2, 3});
  ASSERT_TRUE(exported_again.has_value());
  auto with_view =
      dlpackpp::ManagedTensor::try_adopt_with_view(std::move(*exported_again).release());
  ASSERT_TRUE(with_view.has_value());
  EXPECT_EQ(with_view->view.numel(), 6);
  EXPECT_EQ(dlpackpp::ManagedTensor::try_adopt_with_view(nullptr).error().code(),
            Errc::null_pointer);
  auto typed = dlpackpp::ManagedTensor::try_adopt_as<const float, 2>(with_view->tensor.release());
  ASSERT_TRUE(typed.has_value());
  EXPECT_EQ(typed->accessor(1, 2), 1.0f);
  EXPECT_EQ((dlpackpp::ManagedTensor::try_adopt_as<const float, 1>(typed->tensor.release())
                 .error()
                 .code()),
            Errc::rank_mismatch);
}

TEST(NoExceptionsDeath, AdoptWithViewOfNullGoesToTheHandler) {
  EXPECT_EXIT(static_cast<void>(dlpackpp::ManagedTensor::adopt_with_view(nullptr)),
              testing::KilledBySignal(SIGABRT),
              "dlpackpp: DLManagedTensorVersioned pointer is NULL");
}

TEST(NoExceptionsDeath, ThrowingViewChecksGoToTheHandler) {
  std::vector<float> raw(4);
  const dlpackpp::TensorView v(raw.data(), DataType::float32(), {4});
  EXPECT_EXIT(static_cast<void>(v.require_ndim(2)), testing::KilledBySignal(SIGABRT),
              "dlpackpp: ndim is 1, required 2");
  EXPECT_EXIT(static_cast<void>(v.data<double>()), testing::KilledBySignal(SIGABRT),
              "dlpackpp: dtype is float32, accessed as float64");
}

}  // namespace
