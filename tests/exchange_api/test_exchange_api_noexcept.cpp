// SPDX-License-Identifier: Apache-2.0
// The producer kit and the consumer wrappers under -fno-exceptions: an Impl that fails by
// returning a Result reaches set_error / SetError and a failure return, as a throw would.
#include <dlpackpp/exchange_api.hpp>
#include <dlpackpp/producers.hpp>

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

static_assert(!DLPACKPP_USE_EXCEPTIONS, "this test must be built with -fno-exceptions");

namespace {

using dlpackpp::DataType;
using dlpackpp::Errc;
using dlpackpp::ManagedTensor;
using dlpackpp::Result;

struct Reports {
  int calls = 0;
  std::string kind;
  std::string message;
};
Reports reports;
bool fail = false;
int deleters = 0;
std::vector<float> values = {1, 2, 3};
std::vector<std::int64_t> shape = {3};

struct Counted {
  bool live = true;
  Counted() = default;
  Counted(Counted&& other) noexcept : live(other.live) { other.live = false; }
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (live) ++deleters;
  }
};

Result<ManagedTensor> export_values() {
  return dlpackpp::try_wrap(values.data(), DataType::float32(), shape, {}, dlpackpp::Device::cpu(),
                            Counted{});
}

struct ResultImpl {
  static Result<ManagedTensor> managed_tensor_allocator(const DLTensor&) {
    if (fail) return dlpackpp::Error(Errc::unsupported_dtype, "no such dtype here");
    return export_values();
  }
  static Result<ManagedTensor> managed_tensor_from_py_object_no_sync(void*) {
    if (fail) return dlpackpp::Error(Errc::device_mismatch, "wrong device");
    return export_values();
  }
  static Result<void*> managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    if (fail) return dlpackpp::Error(Errc::read_only, "cannot take it");
    tensor.reset();
    return static_cast<void*>(&reports);
  }
  static Result<void> dltensor_from_py_object_no_sync(void*, DLTensor& out) {
    if (fail) return dlpackpp::Error(Errc::rank_mismatch, "bad rank");
    out = DLTensor{};
    out.data = values.data();
    out.ndim = 1;
    out.shape = shape.data();
    out.dtype = DataType::float32();
    out.device = dlpackpp::Device::cpu();
    return {};
  }
  static Result<void*> current_work_stream(dlpackpp::Device) {
    if (fail) return dlpackpp::Error(Errc::unsupported_device, "no streams");
    return static_cast<void*>(&fail);
  }
  static void set_error(std::string_view kind, std::string_view message) {
    ++reports.calls;
    reports.kind = std::string(kind);
    reports.message = std::string(message);
  }
};

class ExchangeApiNoexcept : public ::testing::Test {
 protected:
  void SetUp() override {
    reports = Reports{};
    fail = false;
    deleters = 0;
  }
  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<ResultImpl>();
  int object = 0;
};

TEST_F(ExchangeApiNoexcept, SuccessPaths) {
  {
    Result<ManagedTensor> t = dlpackpp::managed_from_object(api, &object);
    ASSERT_TRUE(t);
    DLTensor storage{};
    Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, &object, storage);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->shape(0), 3);
    Result<void*> s = dlpackpp::current_stream(api, dlpackpp::Device::cuda(0));
    ASSERT_TRUE(s);
    EXPECT_EQ(*s, &fail);
    Result<void*> back = dlpackpp::to_object(api, std::move(*t));
    ASSERT_TRUE(back);
    EXPECT_EQ(deleters, 1);
  }
  EXPECT_EQ(deleters, 1);
  EXPECT_EQ(reports.calls, 0);
}

TEST_F(ExchangeApiNoexcept, ResultErrorsAreReported) {
  fail = true;
  Result<ManagedTensor> t = dlpackpp::managed_from_object(api, &object);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code(), Errc::invalid_argument);
  EXPECT_EQ(reports.kind, "BufferError");
  EXPECT_EQ(reports.message, "dlpackpp: wrong device");
  DLTensor storage{};
  EXPECT_FALSE(dlpackpp::view_from_object(api, &object, storage));
  EXPECT_EQ(reports.kind, "TypeError");
  EXPECT_FALSE(dlpackpp::current_stream(api, dlpackpp::Device::cuda(0)));
  EXPECT_EQ(reports.message, "dlpackpp: no streams");
  {
    fail = false;
    Result<ManagedTensor> mine = export_values();
    ASSERT_TRUE(mine);
    fail = true;
    Result<void*> back = dlpackpp::to_object(api, std::move(*mine));
    EXPECT_FALSE(back);
    EXPECT_TRUE(*mine);  // still ours
    EXPECT_EQ(reports.message, "dlpackpp: cannot take it");
  }
  EXPECT_EQ(deleters, 1);
  EXPECT_EQ(reports.calls, 4);
  std::int64_t dims[1] = {2};
  DLTensor prototype{};
  prototype.ndim = 1;
  prototype.shape = dims;
  prototype.dtype = DataType::float32();
  prototype.device = dlpackpp::Device::cpu();
  Result<ManagedTensor> made = dlpackpp::allocate_like(api, prototype);
  ASSERT_FALSE(made);
  EXPECT_NE(std::string(made.error().what()).find("TypeError: dlpackpp: no such dtype here"),
            std::string::npos)
      << made.error().what();
  EXPECT_EQ(reports.calls, 4);  // the allocator reports through SetError only
}

}  // namespace
