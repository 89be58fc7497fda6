// SPDX-License-Identifier: Apache-2.0
// The exchange API against a mock framework: the chain walk, every consumer wrapper, the
// producer kit's C trampolines (no exception crosses into C), and ownership on every path
// (each exported tensor's deleter counted exactly once). Built against every dlpack.h that
// declares the table, the 1.1-era draft with `prev_version_api` included.
#include "mock_producer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

// The variants built against a reference header must really use it.
#ifdef DLPACKPP_TEST_EXTERNAL_DLPACK
static_assert(!DLPACKPP_DLPACK_IS_BUNDLED, "this variant must use the reference dlpack.h");
#endif
#ifdef DLPACKPP_TEST_DRAFT_PREV_FIELD
static_assert(sizeof(&DLPackExchangeAPIHeader::prev_version_api) > 0,
              "this variant must use the draft header's prev_version_api");
#endif

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::ManagedTensor;
using dlpackpp::Result;
using mock::counters;
using mock::FakeObject;
using mock::Mode;

template <class T>
void expect_failure(const Result<T>& r, Errc code, std::string_view text = {}) {
  ASSERT_FALSE(r.has_value()) << "expected " << dlpackpp::to_string(code);
  EXPECT_EQ(r.error().code(), code) << r.error().what();
  EXPECT_NE(std::string_view(r.error().what()).find(text), std::string_view::npos)
      << "'" << r.error().what() << "' lacks '" << text << "'";
}

class ExchangeApi : public ::testing::Test {
 protected:
  void SetUp() override {
    counters() = mock::Counters{};
    mock::mode() = Mode::ok;
    mock::set_error_throws() = false;
  }
  void TearDown() override { mock::mode() = Mode::ok; }

  const DLPackExchangeAPI* api = dlpackpp::make_exchange_api<mock::MockImpl>();
};

// A table header of the given version, for chain walks (only the header is ever read).
DLPackExchangeAPI table_of_version(std::uint32_t major, std::uint32_t minor) {
  DLPackExchangeAPI t{};
  t.header.version.major = major;
  t.header.version.minor = minor;
  return t;
}

// ---- find_exchange_api ----------------------------------------------------------------------

TEST(FindExchangeApi, NullHeadIsNull) { EXPECT_EQ(dlpackpp::find_exchange_api(nullptr), nullptr); }

TEST(FindExchangeApi, HeadOfThisMajorIsItself) {
  DLPackExchangeAPI t = table_of_version(DLPACK_MAJOR_VERSION, 7);
  EXPECT_EQ(dlpackpp::find_exchange_api(&t.header), &t);
}

TEST(FindExchangeApi, SkipsNewerMajorsToTheFirstMatch) {
  DLPackExchangeAPI mine = table_of_version(DLPACK_MAJOR_VERSION, 0);
  DLPackExchangeAPI older_too = table_of_version(DLPACK_MAJOR_VERSION, 0);
  DLPackExchangeAPI next = table_of_version(DLPACK_MAJOR_VERSION + 1, 0);
  DLPackExchangeAPI after_next = table_of_version(DLPACK_MAJOR_VERSION + 2, 5);
  dlpackpp::detail::prev_exchange_api(after_next.header) = &next.header;
  dlpackpp::detail::prev_exchange_api(next.header) = &mine.header;
  dlpackpp::detail::prev_exchange_api(mine.header) = &older_too.header;
  EXPECT_EQ(dlpackpp::find_exchange_api(&after_next.header), &mine);
}

TEST(FindExchangeApi, NoneMatchingIsNull) {
  DLPackExchangeAPI old = table_of_version(0, 9);
  DLPackExchangeAPI next = table_of_version(DLPACK_MAJOR_VERSION + 1, 0);
  dlpackpp::detail::prev_exchange_api(next.header) = &old.header;
  EXPECT_EQ(dlpackpp::find_exchange_api(&next.header), nullptr);
}

TEST(FindExchangeApi, CyclicChainEnds) {
  DLPackExchangeAPI a = table_of_version(DLPACK_MAJOR_VERSION + 1, 0);
  DLPackExchangeAPI b = table_of_version(DLPACK_MAJOR_VERSION + 2, 0);
  dlpackpp::detail::prev_exchange_api(a.header) = &b.header;
  dlpackpp::detail::prev_exchange_api(b.header) = &a.header;
  EXPECT_EQ(dlpackpp::find_exchange_api(&a.header), nullptr);
}

// ---- the table make_exchange_api builds ------------------------------------------------------

TEST_F(ExchangeApi, VersionIsTheHeadersAndNothingIsChained) {
  EXPECT_EQ(api->header.version.major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
  EXPECT_EQ(api->header.version.minor, static_cast<std::uint32_t>(DLPACK_MINOR_VERSION));
  EXPECT_EQ(dlpackpp::detail::prev_exchange_api(api->header), nullptr);
  EXPECT_EQ(dlpackpp::find_exchange_api(&api->header), api);
}

TEST_F(ExchangeApi, OneStaticTablePerImpl) {
  EXPECT_EQ(dlpackpp::make_exchange_api<mock::MockImpl>(), api);
  EXPECT_NE(dlpackpp::make_exchange_api<mock::MinimalImpl>(), api);
  // Constant-initialized: usable at compile time, no guard variable.
  static_assert(dlpackpp::detail::ExchangeTable<mock::MockImpl>::value.header.version.major ==
                DLPACK_MAJOR_VERSION);
}

TEST_F(ExchangeApi, EveryEntryIsFilledWhenImplHasEveryFunction) {
  EXPECT_NE(api->managed_tensor_allocator, nullptr);
  EXPECT_NE(api->managed_tensor_from_py_object_no_sync, nullptr);
  EXPECT_NE(api->managed_tensor_to_py_object_no_sync, nullptr);
  EXPECT_NE(api->dltensor_from_py_object_no_sync, nullptr);
  EXPECT_NE(api->current_work_stream, nullptr);
}

TEST_F(ExchangeApi, OptionalEntriesWithoutImplFunctions) {
  const DLPackExchangeAPI* minimal = dlpackpp::make_exchange_api<mock::MinimalImpl>();
  EXPECT_EQ(minimal->dltensor_from_py_object_no_sync, nullptr);
  // The header forbids a NULL current_work_stream: a producer without streams reports NULL.
  ASSERT_NE(minimal->current_work_stream, nullptr);
  void* stream = &stream;
  EXPECT_EQ(minimal->current_work_stream(kDLCUDA, 1, &stream), 0);
  EXPECT_EQ(stream, nullptr);
  // The consumer side says so plainly.
  DLTensor storage{};
  auto object = mock::make_object();
  expect_failure(dlpackpp::view_from_object(minimal, object.get(), storage), Errc::null_pointer,
                 "dltensor_from_py_object_no_sync");
  Result<void*> s = dlpackpp::current_stream(minimal, Device::cuda(0));
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, nullptr);
}

TEST_F(ExchangeApi, PlainValueImplRoundTrips) {
  const DLPackExchangeAPI* minimal = dlpackpp::make_exchange_api<mock::MinimalImpl>();
  auto object = mock::make_object();
  {
    Result<ManagedTensor> t = dlpackpp::managed_from_object(minimal, object.get());
    ASSERT_TRUE(t) << t.error().what();
    Result<void*> back = dlpackpp::to_object(minimal, std::move(*t));
    ASSERT_TRUE(back) << back.error().what();
    EXPECT_FALSE(*t);
    delete static_cast<FakeObject*>(*back);
  }
  EXPECT_EQ(counters().deleters, 1);
}

// ---- managed_from_object ---------------------------------------------------------------------

TEST_F(ExchangeApi, ManagedFromObjectOwnsAndReleasesOnce) {
  auto object = mock::make_object();
  {
    Result<ManagedTensor> t = dlpackpp::managed_from_object(api, object.get());
    ASSERT_TRUE(t) << t.error().what();
    EXPECT_EQ(t->ndim(), 2);
    EXPECT_EQ(t->shape()[1], 3);
    EXPECT_EQ(t->dtype(), DataType::float32());
    EXPECT_EQ(t->data<float>()[4], 4.0F);
    EXPECT_EQ(counters().deleters, 0);
  }
  EXPECT_EQ(counters().deleters, 1);
  EXPECT_EQ(counters().set_error_calls, 0);
}

TEST_F(ExchangeApi, ManagedFromObjectThrowingProducerReportsThroughSetError) {
  auto object = mock::make_object();
  mock::mode() = Mode::throw_error;
  Result<ManagedTensor> t = dlpackpp::managed_from_object(api, object.get());
  expect_failure(t, Errc::invalid_argument, "managed_tensor_from_py_object_no_sync failed");
  EXPECT_EQ(counters().set_error_calls, 1);
  EXPECT_EQ(counters().last_kind, "BufferError");
  EXPECT_EQ(counters().last_message, "dlpackpp: mock refuses this device");
  EXPECT_EQ(counters().deleters, 0);
}

TEST_F(ExchangeApi, ManagedFromObjectReturnedErrorReportsThroughSetError) {
  auto object = mock::make_object();
  mock::mode() = Mode::return_error;
  expect_failure(dlpackpp::managed_from_object(api, object.get()), Errc::invalid_argument);
  EXPECT_EQ(counters().set_error_calls, 1);
  EXPECT_EQ(counters().last_kind, "TypeError");
  mock::mode() = Mode::return_empty;
  expect_failure(dlpackpp::managed_from_object(api, object.get()), Errc::invalid_argument);
  EXPECT_EQ(counters().set_error_calls, 2);
  EXPECT_NE(counters().last_message.find(
                "Impl::managed_tensor_from_py_object_no_sync returned no tensor"),
            std::string::npos);
}

TEST_F(ExchangeApi, ManagedFromObjectReleasesAMalformedTensorOnce) {
  auto object = mock::make_object();
  mock::mode() = Mode::malformed;
  expect_failure(dlpackpp::managed_from_object(api, object.get()), Errc::negative_shape);
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, ManagedFromObjectReleasesAnotherMajorOnce) {
  auto object = mock::make_object();
  mock::mode() = Mode::other_major;
  expect_failure(dlpackpp::managed_from_object(api, object.get()), Errc::version_mismatch);
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, WrappersRefuseUnusableTables) {
  auto object = mock::make_object();
  DLTensor storage{};
  expect_failure(dlpackpp::managed_from_object(nullptr, object.get()), Errc::null_pointer, "NULL");
  expect_failure(dlpackpp::view_from_object(nullptr, object.get(), storage), Errc::null_pointer);
  expect_failure(dlpackpp::current_stream(nullptr, Device::cuda(0)), Errc::null_pointer);
  expect_failure(dlpackpp::managed_from_object(api, nullptr), Errc::null_pointer, "py_object");
  expect_failure(dlpackpp::view_from_object(api, nullptr, storage), Errc::null_pointer);
  DLPackExchangeAPI newer = *api;
  newer.header.version.major = DLPACK_MAJOR_VERSION + 1;
  expect_failure(dlpackpp::managed_from_object(&newer, object.get()), Errc::version_mismatch,
                 "find_exchange_api");
  expect_failure(dlpackpp::view_from_object(&newer, object.get(), storage), Errc::version_mismatch);
  expect_failure(dlpackpp::current_stream(&newer, Device::cuda(0)), Errc::version_mismatch);
  expect_failure(dlpackpp::allocate_like(&newer, storage), Errc::version_mismatch);
  expect_failure(dlpackpp::to_object(&newer, ManagedTensor()), Errc::version_mismatch);
  EXPECT_EQ(counters().set_error_calls, 0);
}

// ---- view_from_object ------------------------------------------------------------------------

TEST_F(ExchangeApi, ViewFromObjectBorrows) {
  auto object = mock::make_object();
  DLTensor storage{};
  Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, object.get(), storage);
  ASSERT_TRUE(v) << v.error().what();
  EXPECT_EQ(v->ndim(), 2);
  EXPECT_EQ(v->shape(0), 2);
  EXPECT_EQ(v->stride(0), 3);
  EXPECT_EQ(v->const_data(), object->values.data());
  EXPECT_EQ(storage.shape, object->shape.data());
  EXPECT_EQ(counters().deleters, 0);
}

// The view keeps its own copy of the borrowed DLTensor (bindings keep it past the storage).
TEST_F(ExchangeApi, ViewFromObjectOutlivesItsStorage) {
  auto object = mock::make_object();
  std::optional<dlpackpp::TensorView> kept;
  {
    DLTensor storage{};
    Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, object.get(), storage);
    ASSERT_TRUE(v) << v.error().what();
    kept.emplace(*v);
    storage = DLTensor{};  // scribbled over, then gone
  }
  EXPECT_EQ(kept->ndim(), 2);
  EXPECT_EQ(kept->shape(1), 3);
  EXPECT_EQ(kept->const_data(), object->values.data());
}

TEST_F(ExchangeApi, ViewFromObjectNormalizesNullStrides) {
  auto object = mock::make_object();
  object->strides.clear();
  DLTensor storage{};
  Result<dlpackpp::TensorView> v = dlpackpp::view_from_object(api, object.get(), storage);
  ASSERT_TRUE(v) << v.error().what();
  EXPECT_EQ(v->stride(0), 3);
  EXPECT_EQ(v->stride(1), 1);
}

TEST_F(ExchangeApi, ViewFromObjectValidates) {
  auto object = mock::make_object();
  object->shape[1] = -1;
  DLTensor storage{};
  expect_failure(dlpackpp::view_from_object(api, object.get(), storage), Errc::negative_shape);
  object->shape[1] = 3;
  dlpackpp::ValidateOptions read_only;
  read_only.flags = dlpackpp::flag::read_only;
  Result<dlpackpp::TensorView> v =
      dlpackpp::view_from_object(api, object.get(), storage, read_only);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->read_only());
}

TEST_F(ExchangeApi, ViewFromObjectProducerExceptionBecomesSetError) {
  auto object = mock::make_object();
  DLTensor storage{};
  mock::mode() = Mode::throw_runtime;
  expect_failure(dlpackpp::view_from_object(api, object.get(), storage), Errc::invalid_argument,
                 "dltensor_from_py_object_no_sync failed (returned -1)");
  EXPECT_EQ(counters().set_error_calls, 1);
  EXPECT_EQ(counters().last_kind, "RuntimeError");
  EXPECT_EQ(counters().last_message, "mock failure");
}

// ---- the trampolines called as C ---------------------------------------------------------------

TEST_F(ExchangeApi, NoExceptionCrossesTheCBoundary) {
  auto object = mock::make_object();
  struct Case {
    Mode mode;
    const char* kind;
    const char* message;  // a part of it
  };
  const Case cases[] = {
      {Mode::throw_error, "BufferError", "mock refuses this device"},
      {Mode::throw_bad_alloc, "MemoryError", ""},
      {Mode::throw_runtime, "RuntimeError", "mock failure"},
      {Mode::throw_int, "RuntimeError", "unknown C++ exception"},
      {Mode::return_error, "TypeError", "mock returns an error"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind);
    mock::mode() = c.mode;
    const int before = counters().set_error_calls;
    const auto reported = [&](const char* function) {
      SCOPED_TRACE(function);
      EXPECT_EQ(counters().set_error_calls, before + 1);
      EXPECT_EQ(counters().last_kind, c.kind);
      EXPECT_NE(counters().last_message.find(c.message), std::string::npos);
      counters().set_error_calls = before;
    };

    DLManagedTensorVersioned* out = nullptr;
    EXPECT_EQ(api->managed_tensor_from_py_object_no_sync(object.get(), &out), -1);
    EXPECT_EQ(out, nullptr);
    reported("managed_tensor_from_py_object_no_sync");

    DLTensor storage{};
    if (c.mode != Mode::return_error) {  // this one returns void: it can only throw
      EXPECT_EQ(api->dltensor_from_py_object_no_sync(object.get(), &storage), -1);
      reported("dltensor_from_py_object_no_sync");
    }

    if (c.mode != Mode::return_error) {  // returns void*: it can only throw
      void* stream = &stream;
      EXPECT_EQ(api->current_work_stream(kDLCUDA, 0, &stream), -1);
      EXPECT_EQ(stream, nullptr);
      reported("current_work_stream");
    }

    ManagedTensor t = mock::export_object(*object);
    void* py = &py;
    EXPECT_EQ(api->managed_tensor_to_py_object_no_sync(t.get(), &py), -1);
    EXPECT_EQ(py, nullptr);
    EXPECT_TRUE(t);  // still the caller's
    reported("managed_tensor_to_py_object_no_sync");
  }
  EXPECT_EQ(counters().deleters, static_cast<int>(std::size(cases)));
}

TEST_F(ExchangeApi, ThrowingSetErrorIsContained) {
  auto object = mock::make_object();
  mock::mode() = Mode::throw_runtime;
  mock::set_error_throws() = true;
  DLManagedTensorVersioned* out = nullptr;
  EXPECT_EQ(api->managed_tensor_from_py_object_no_sync(object.get(), &out), -1);
  EXPECT_EQ(counters().set_error_calls, 1);
}

TEST_F(ExchangeApi, TrampolinesRefuseNullArguments) {
  auto object = mock::make_object();
  EXPECT_EQ(api->managed_tensor_from_py_object_no_sync(object.get(), nullptr), -1);
  DLManagedTensorVersioned* out = nullptr;
  EXPECT_EQ(api->managed_tensor_from_py_object_no_sync(nullptr, &out), -1);
  EXPECT_EQ(api->dltensor_from_py_object_no_sync(object.get(), nullptr), -1);
  EXPECT_EQ(api->current_work_stream(kDLCUDA, 0, nullptr), -1);
  void* py = nullptr;
  EXPECT_EQ(api->managed_tensor_to_py_object_no_sync(nullptr, &py), -1);
  EXPECT_EQ(counters().set_error_calls, 5);
  EXPECT_EQ(counters().last_kind, "ValueError");
  EXPECT_NE(counters().last_message.find("tensor is NULL"), std::string::npos);
  int set_error_calls = 0;
  const auto count = [](void* ctx, const char*, const char*) { ++*static_cast<int*>(ctx); };
  EXPECT_EQ(api->managed_tensor_allocator(nullptr, &out, &set_error_calls, count), -1);
  EXPECT_EQ(api->managed_tensor_allocator(nullptr, nullptr, &set_error_calls, count), -1);
  EXPECT_EQ(set_error_calls, 2);
  EXPECT_EQ(api->managed_tensor_allocator(nullptr, &out, nullptr, nullptr), -1);  // no SetError
}

// The producer kit checks a prototype with the consumer's own check before Impl sees it:
// Impl would read shape[0..ndim) through NULL, or take ndim -1 for a 0-d tensor.
TEST_F(ExchangeApi, AllocatorTrampolineRefusesMalformedPrototypes) {
  struct Report {
    int calls = 0;
    std::string kind;
    std::string message;
  };
  const auto record = [](void* ctx, const char* kind, const char* message) {
    auto* r = static_cast<Report*>(ctx);
    ++r->calls;
    r->kind = kind;
    r->message = message;
  };
  std::int64_t negative[2] = {2, -3};
  struct Case {
    std::int32_t ndim;
    std::int64_t* shape;
    DLDataType dtype;
    const char* kind;
    const char* expected;
  };
  const Case cases[] = {
      {3, nullptr, DataType::float32(), "ValueError", "shape is NULL with ndim 3"},
      {-1, nullptr, DataType::float32(), "ValueError", "ndim is -1"},
      {2, negative, DataType::float32(), "ValueError", "shape[1] is -3"},
      {1, negative, DLDataType{kDLFloat, 0, 1}, "TypeError", "dtype.bits is 0"},
  };
  for (const Case& c : cases) {
    DLTensor prototype{};
    prototype.ndim = c.ndim;
    prototype.shape = c.shape;
    prototype.dtype = c.dtype;
    prototype.device = Device::cpu();
    Report report;
    auto* out = reinterpret_cast<DLManagedTensorVersioned*>(std::uintptr_t{1});
    EXPECT_EQ(api->managed_tensor_allocator(&prototype, &out, &report, record), -1) << c.expected;
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(report.calls, 1);
    EXPECT_EQ(report.kind, c.kind);
    EXPECT_NE(report.message.find(c.expected), std::string::npos) << report.message;
  }
  EXPECT_EQ(counters().deleters, 0);         // Impl made nothing
  EXPECT_EQ(counters().set_error_calls, 0);  // the allocator reports through SetError only
}

// ---- current_stream ------------------------------------------------------------------------

TEST_F(ExchangeApi, CurrentStreamAsksTheProducer) {
  Result<void*> s = dlpackpp::current_stream(api, Device::cuda(3));
  ASSERT_TRUE(s) << s.error().what();
  EXPECT_EQ(*s, reinterpret_cast<void*>(std::uintptr_t{0x1003}));
  EXPECT_EQ(counters().stream_queries, 1);
  EXPECT_EQ(counters().last_stream_device, Device::cuda(3));
}

TEST_F(ExchangeApi, CurrentStreamOfCpuIsNullWithoutAsking) {
  Result<void*> s = dlpackpp::current_stream(api, Device::cpu());
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, nullptr);
  EXPECT_EQ(counters().stream_queries, 0);
}

TEST_F(ExchangeApi, CurrentStreamFailureIsReported) {
  mock::mode() = Mode::throw_error;
  expect_failure(dlpackpp::current_stream(api, Device::cuda(0)), Errc::invalid_argument,
                 "current_work_stream failed");
  EXPECT_EQ(counters().set_error_calls, 1);
}

// ---- allocate_like ---------------------------------------------------------------------------

struct Prototype {
  std::int64_t shape[2] = {4, 5};
  DLTensor tensor{};
  Prototype() {
    tensor.ndim = 2;
    tensor.shape = shape;
    tensor.dtype = DataType::int16();
    tensor.device = Device::cpu();
  }
};

TEST_F(ExchangeApi, AllocateLikeFollowsThePrototype) {
  Prototype p;
  {
    Result<ManagedTensor> t = dlpackpp::allocate_like(api, p.tensor);
    ASSERT_TRUE(t) << t.error().what();
    EXPECT_EQ(t->dtype(), DataType::int16());
    EXPECT_EQ(t->shape()[0], 4);
    EXPECT_EQ(t->shape()[1], 5);
    EXPECT_EQ(counters().deleters, 0);
  }
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, AllocateLikeCarriesTheProducersKindAndMessage) {
  Prototype p;
  mock::mode() = Mode::throw_bad_alloc;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::invalid_argument,
                 "managed_tensor_allocator failed: MemoryError: ");
  mock::mode() = Mode::throw_error;
  expect_failure(
      dlpackpp::allocate_like(api, p.tensor), Errc::invalid_argument,
      "managed_tensor_allocator failed: BufferError: dlpackpp: mock refuses this device");
  mock::mode() = Mode::return_error;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::invalid_argument,
                 "TypeError: dlpackpp: mock returns an error");
  mock::mode() = Mode::return_empty;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::invalid_argument,
                 "ValueError: dlpackpp: Impl::managed_tensor_allocator returned no tensor");
  // The allocator reports through SetError only, never the framework's error state.
  EXPECT_EQ(counters().set_error_calls, 0);
  EXPECT_EQ(counters().deleters, 0);
}

TEST_F(ExchangeApi, AllocateLikeRefusesATensorUnlikeThePrototype) {
  Prototype p;
  mock::mode() = Mode::wrong_shape;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::rank_mismatch);
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, AllocateLikeChecksThePrototypeFirst) {
  Prototype p;
  p.shape[1] = -5;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::negative_shape);
  p.shape[1] = 5;
  p.tensor.dtype.bits = 0;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::unsupported_dtype);
  p.tensor.dtype = DataType::int16();
  p.tensor.shape = nullptr;
  expect_failure(dlpackpp::allocate_like(api, p.tensor), Errc::null_shape);
  EXPECT_EQ(counters().deleters, 0);
}

// ---- to_object -------------------------------------------------------------------------------

TEST_F(ExchangeApi, ToObjectPassesOwnershipOnSuccess) {
  auto source = mock::make_object();
  ManagedTensor t = mock::export_object(*source);
  Result<void*> object = dlpackpp::to_object(api, std::move(t));
  ASSERT_TRUE(object) << object.error().what();
  EXPECT_FALSE(t);
  auto* made = static_cast<FakeObject*>(*object);
  EXPECT_TRUE(made->held);
  EXPECT_EQ(counters().deleters, 0);
  delete made;  // the framework's object dies: its tensor with it
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, ToObjectKeepsOwnershipOnFailure) {
  auto source = mock::make_object();
  for (Mode m : {Mode::throw_error, Mode::throw_int, Mode::return_error, Mode::return_empty}) {
    mock::mode() = m;
    ManagedTensor t = mock::export_object(*source);
    DLManagedTensorVersioned* raw = t.get();
    expect_failure(dlpackpp::to_object(api, std::move(t)), Errc::invalid_argument,
                   "managed_tensor_to_py_object_no_sync failed");
    EXPECT_EQ(t.get(), raw);
    EXPECT_EQ(counters().deleters, 0);
    t.reset();
    EXPECT_EQ(counters().deleters, 1);
    counters().deleters = 0;
  }
  EXPECT_EQ(counters().set_error_calls, 4);
}

TEST_F(ExchangeApi, ToObjectWhereImplKeepsACopyReleasesTheTensor) {
  auto source = mock::make_object();
  mock::mode() = Mode::keep_copy;
  Result<void*> object = dlpackpp::to_object(api, mock::export_object(*source));
  ASSERT_TRUE(object);
  EXPECT_EQ(counters().deleters, 1);  // Impl took ownership and let it go
  delete static_cast<FakeObject*>(*object);
  EXPECT_EQ(counters().deleters, 1);
}

TEST_F(ExchangeApi, ToObjectTrampolineRefusesAMalformedTensorAndLeavesItToTheCaller) {
  auto source = mock::make_object();
  ManagedTensor t = mock::export_object(*source);
  t.get()->dl_tensor.shape[0] = -1;
  void* py = nullptr;
  EXPECT_EQ(api->managed_tensor_to_py_object_no_sync(t.get(), &py), -1);
  EXPECT_EQ(counters().last_kind, "ValueError");
  t.get()->version.major = DLPACK_MAJOR_VERSION + 1;
  EXPECT_EQ(api->managed_tensor_to_py_object_no_sync(t.get(), &py), -1);
  EXPECT_EQ(counters().last_kind, "BufferError");
  EXPECT_EQ(counters().deleters, 0);
  t.reset();
  EXPECT_EQ(counters().deleters, 1);
}

// Impl broke its contract (it took the tensor, then failed): neither side may free it, so
// the trampoline stops the program rather than let the caller free it a second time.
struct StealingImpl : mock::MinimalImpl {
  static void* managed_tensor_to_py_object_no_sync(ManagedTensor& tensor) {
    static ManagedTensor stolen;
    stolen = std::move(tensor);
    throw std::runtime_error("failed after taking the tensor");
  }
};

TEST_F(ExchangeApi, ImplThatTakesTheTensorAndFailsIsAContractViolation) {
  const DLPackExchangeAPI* stealing = dlpackpp::make_exchange_api<StealingImpl>();
  auto source = mock::make_object();
  ManagedTensor t = mock::export_object(*source);
  EXPECT_DEATH(
      {
        void* py = nullptr;
        static_cast<void>(stealing->managed_tensor_to_py_object_no_sync(t.get(), &py));
      },
      "took the tensor and then failed");
}

TEST_F(ExchangeApi, ToObjectOfAnEmptyHandle) {
  expect_failure(dlpackpp::to_object(api, ManagedTensor()), Errc::null_pointer, "tensor is NULL");
}

// ---- a hand-built C table: producers that misbehave within the C rules --------------------------

struct CProducer {
  static inline int deleters = 0;
  static inline DLManagedTensorVersioned* kept = nullptr;
  static inline std::int64_t shape[1] = {3};
  static inline float values[3] = {1, 2, 3};

  static void deleter(DLManagedTensorVersioned* self) {
    ++deleters;
    delete self;
  }
  static DLManagedTensorVersioned* make() {
    auto* t = new DLManagedTensorVersioned{};
    t->version.major = DLPACK_MAJOR_VERSION;
    t->version.minor = DLPACK_MINOR_VERSION;
    t->deleter = &deleter;
    t->dl_tensor.data = values;
    t->dl_tensor.ndim = 1;
    t->dl_tensor.shape = shape;
    t->dl_tensor.dtype = DataType::float32();
    t->dl_tensor.device = Device::cpu();
    return t;
  }

  static int allocator_sets_error(DLTensor*, DLManagedTensorVersioned** out, void* ctx,
                                  void (*set_error)(void*, const char*, const char*)) {
    *out = nullptr;
    set_error(ctx, "CustomError", "disk on fire");
    set_error(ctx, "SecondError", "ignored");  // only the first report counts
    return -1;
  }
  static int allocator_silent(DLTensor*, DLManagedTensorVersioned** out, void*,
                              void (*)(void*, const char*, const char*)) {
    *out = nullptr;
    return -1;
  }
  static int allocator_null(DLTensor*, DLManagedTensorVersioned** out, void*,
                            void (*)(void*, const char*, const char*)) {
    *out = nullptr;
    return 0;
  }
  static int from_null(void*, DLManagedTensorVersioned** out) {
    *out = nullptr;
    return 0;
  }
  static int from_fails_leaving_garbage(void*, DLManagedTensorVersioned** out) {
    *out = reinterpret_cast<DLManagedTensorVersioned*>(std::uintptr_t{0x10});  // never touched
    return -1;
  }
  static int to_fails(DLManagedTensorVersioned*, void** out) {
    *out = nullptr;
    return -1;
  }
  static int to_keeps(DLManagedTensorVersioned* t, void** out) {
    kept = t;
    *out = &kept;
    return 0;
  }
  static int to_keeps_without_object(DLManagedTensorVersioned* t, void** out) {
    kept = t;
    *out = nullptr;
    return 0;
  }
  static int stream_fails(DLDeviceType, std::int32_t, void**) { return -1; }

  static DLPackExchangeAPI table() {
    DLPackExchangeAPI t{};
    t.header.version.major = DLPACK_MAJOR_VERSION;
    t.header.version.minor = DLPACK_MINOR_VERSION;
    t.managed_tensor_allocator = &allocator_sets_error;
    t.managed_tensor_from_py_object_no_sync = &from_null;
    t.managed_tensor_to_py_object_no_sync = &to_fails;
    t.dltensor_from_py_object_no_sync = nullptr;
    t.current_work_stream = &stream_fails;
    return t;
  }
};

class HandBuiltTable : public ::testing::Test {
 protected:
  void SetUp() override {
    CProducer::deleters = 0;
    CProducer::kept = nullptr;
  }
  DLPackExchangeAPI table = CProducer::table();
  int py_object = 0;  // any non-NULL "PyObject"
  Prototype prototype;
};

TEST_F(HandBuiltTable, SetErrorKindAndMessageReachTheError) {
  expect_failure(dlpackpp::allocate_like(&table, prototype.tensor), Errc::invalid_argument,
                 "managed_tensor_allocator failed: CustomError: disk on fire");
}

TEST_F(HandBuiltTable, AllocatorFailingWithoutSetError) {
  table.managed_tensor_allocator = &CProducer::allocator_silent;
  expect_failure(dlpackpp::allocate_like(&table, prototype.tensor), Errc::invalid_argument,
                 "without calling SetError");
  table.managed_tensor_allocator = &CProducer::allocator_null;
  expect_failure(dlpackpp::allocate_like(&table, prototype.tensor), Errc::null_pointer,
                 "returned success but no tensor");
  table.managed_tensor_allocator = nullptr;
  expect_failure(dlpackpp::allocate_like(&table, prototype.tensor), Errc::null_pointer,
                 "has no managed_tensor_allocator");
}

TEST_F(HandBuiltTable, FromObjectSuccessWithoutTensor) {
  expect_failure(dlpackpp::managed_from_object(&table, &py_object), Errc::null_pointer,
                 "returned success but no tensor");
}

TEST_F(HandBuiltTable, FromObjectFailureLeavesOutAlone) {
  table.managed_tensor_from_py_object_no_sync = &CProducer::from_fails_leaving_garbage;
  expect_failure(dlpackpp::managed_from_object(&table, &py_object), Errc::invalid_argument,
                 "failed (returned -1)");
}

TEST_F(HandBuiltTable, ToObjectFailureKeepsOwnership) {
  {
    ManagedTensor t = ManagedTensor::adopt(CProducer::make());
    expect_failure(dlpackpp::to_object(&table, std::move(t)), Errc::invalid_argument);
    EXPECT_TRUE(t);
    EXPECT_EQ(CProducer::deleters, 0);
  }
  EXPECT_EQ(CProducer::deleters, 1);
}

TEST_F(HandBuiltTable, ToObjectSuccessPassesOwnership) {
  table.managed_tensor_to_py_object_no_sync = &CProducer::to_keeps;
  DLManagedTensorVersioned* raw = CProducer::make();
  {
    ManagedTensor t = ManagedTensor::adopt(raw);
    Result<void*> object = dlpackpp::to_object(&table, std::move(t));
    ASSERT_TRUE(object);
    EXPECT_EQ(*object, &CProducer::kept);
    EXPECT_FALSE(t);
  }
  EXPECT_EQ(CProducer::deleters, 0);
  EXPECT_EQ(CProducer::kept, raw);
  raw->deleter(raw);  // the producer's object dies
  EXPECT_EQ(CProducer::deleters, 1);
}

TEST_F(HandBuiltTable, ToObjectSuccessWithoutObjectStillPassesOwnership) {
  table.managed_tensor_to_py_object_no_sync = &CProducer::to_keeps_without_object;
  DLManagedTensorVersioned* raw = CProducer::make();
  ManagedTensor t = ManagedTensor::adopt(raw);
  expect_failure(dlpackpp::to_object(&table, std::move(t)), Errc::null_pointer,
                 "returned success but no object");
  EXPECT_FALSE(t);
  EXPECT_EQ(CProducer::kept, raw);
  raw->deleter(raw);
  EXPECT_EQ(CProducer::deleters, 1);
}

TEST_F(HandBuiltTable, StreamFailureAndMissingEntries) {
  expect_failure(dlpackpp::current_stream(&table, Device::cuda(0)), Errc::invalid_argument,
                 "current_work_stream failed");
  table.current_work_stream = nullptr;  // non-conforming, but read as "no stream"
  Result<void*> s = dlpackpp::current_stream(&table, Device::cuda(0));
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, nullptr);
  DLTensor storage{};
  expect_failure(dlpackpp::view_from_object(&table, &py_object, storage), Errc::null_pointer,
                 "has no dltensor_from_py_object_no_sync");
  table.managed_tensor_from_py_object_no_sync = nullptr;
  expect_failure(dlpackpp::managed_from_object(&table, &py_object), Errc::null_pointer);
  table.managed_tensor_to_py_object_no_sync = nullptr;
  expect_failure(dlpackpp::to_object(&table, ManagedTensor::adopt(CProducer::make())),
                 Errc::null_pointer);
  EXPECT_EQ(CProducer::deleters, 1);  // the temporary handle released it
}

}  // namespace
