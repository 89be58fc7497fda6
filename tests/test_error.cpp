// SPDX-License-Identifier: Apache-2.0
// Errc names, Error messages and sharing, Result<T>/Result<void>, and the error handler slot.
#include <dlpackpp/error.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace {

using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::Result;

struct ErrcName {
  Errc code;
  const char* name;
};

// Spelled out rather than derived, so a renamed or reordered enumerator is caught.
constexpr ErrcName kErrcNames[] = {
    {Errc::version_mismatch, "version_mismatch"},
    {Errc::null_pointer, "null_pointer"},
    {Errc::invalid_ndim, "invalid_ndim"},
    {Errc::null_shape, "null_shape"},
    {Errc::negative_shape, "negative_shape"},
    {Errc::null_strides, "null_strides"},
    {Errc::null_data, "null_data"},
    {Errc::size_overflow, "size_overflow"},
    {Errc::offset_overflow, "offset_overflow"},
    {Errc::misaligned, "misaligned"},
    {Errc::unsupported_dtype, "unsupported_dtype"},
    {Errc::dtype_mismatch, "dtype_mismatch"},
    {Errc::unsupported_device, "unsupported_device"},
    {Errc::device_mismatch, "device_mismatch"},
    {Errc::rank_mismatch, "rank_mismatch"},
    {Errc::read_only, "read_only"},
    {Errc::not_contiguous, "not_contiguous"},
    {Errc::invalid_flags, "invalid_flags"},
    {Errc::invalid_argument, "invalid_argument"},
    {Errc::out_of_range, "out_of_range"},
};

static_assert(dlpackpp::to_string(Errc::misaligned)[0] == 'm', "to_string(Errc) is constexpr");

TEST(Errc, EveryCodeHasItsEnumeratorName) {
  for (const ErrcName& row : kErrcNames) {
    EXPECT_STREQ(dlpackpp::to_string(row.code), row.name);
  }
}

TEST(Errc, CodesAreDistinctAndNonZero) {
  // Zero stays free so that a value-initialized Errc is never mistaken for a real failure.
  for (std::size_t i = 0; i < std::size(kErrcNames); ++i) {
    EXPECT_NE(static_cast<int>(kErrcNames[i].code), 0) << kErrcNames[i].name;
    for (std::size_t j = i + 1; j < std::size(kErrcNames); ++j) {
      EXPECT_NE(kErrcNames[i].code, kErrcNames[j].code) << kErrcNames[i].name;
    }
  }
}

TEST(Errc, ValuesOutsideTheEnumAreUnknown) {
  EXPECT_STREQ(dlpackpp::to_string(Errc{}), "unknown");
  EXPECT_STREQ(dlpackpp::to_string(static_cast<Errc>(999)), "unknown");
}

TEST(Error, WhatIsPrefixedAndCodeIsKept) {
  const Error e(Errc::negative_shape, "shape[2] is -3, must be >= 0");
  EXPECT_EQ(e.code(), Errc::negative_shape);
  EXPECT_STREQ(e.what(), "dlpackpp: shape[2] is -3, must be >= 0");
}

TEST(Error, IsCatchableAsStdException) {
  try {
    throw Error(Errc::read_only, "tensor is read-only");
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(), "dlpackpp: tensor is read-only");
    return;
  }
  ADD_FAILURE() << "Error was not caught as std::exception";
}

TEST(Error, CopiesShareOneMessage) {
  const Error original(Errc::out_of_range, "dim 5 is out of range for ndim 2");
  const Error copy = original;  // NOLINT(performance-unnecessary-copy-initialization)
  Error assigned(Errc::null_pointer, "other");
  assigned = original;
  // Same pointer, not merely equal text: copying an exception must not allocate.
  EXPECT_EQ(copy.what(), original.what());
  EXPECT_EQ(assigned.what(), original.what());
  EXPECT_EQ(assigned.code(), Errc::out_of_range);
}

TEST(Error, MakeErrorFormatsEveryKindOfPart) {
  const std::string field = "strides";
  const Error e = dlpackpp::detail::make_error(Errc::invalid_argument, field, '[', std::uint8_t{1},
                                               "] is ", std::int64_t{-9},
                                               std::string_view(", want "), UINT64_MAX, ' ', true);
  EXPECT_STREQ(e.what(), "dlpackpp: strides[1] is -9, want 18446744073709551615 true");
}

TEST(Result, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_EQ(r.value(), 42);
  EXPECT_EQ(*r, 42);
  *r = 7;
  EXPECT_EQ(std::as_const(r).value(), 7);
}

TEST(Result, ArrowReachesMembers) {
  Result<std::string> r = std::string("tensor");
  EXPECT_EQ(r->size(), 6u);
  r->append("s");
  EXPECT_EQ(std::as_const(r)->size(), 7u);
}

TEST(Result, HoldsAnError) {
  const Result<int> r = Error(Errc::size_overflow, "numel overflows");
  ASSERT_FALSE(r.has_value());
  EXPECT_FALSE(static_cast<bool>(r));
  EXPECT_EQ(r.error().code(), Errc::size_overflow);
  EXPECT_STREQ(r.error().what(), "dlpackpp: numel overflows");
}

TEST(Result, ValueOnAnErrorThrowsTheHeldError) {
  const Result<int> r = Error(Errc::dtype_mismatch, "dtype is int8, want float32");
  try {
    static_cast<void>(r.value());
    ADD_FAILURE() << "value() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::dtype_mismatch);
    EXPECT_EQ(e.what(), r.error().what());
  }
}

TEST(Result, MoveOnlyValueCanBeMovedOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);

  Result<std::unique_ptr<int>> again = std::make_unique<int>(6);
  std::unique_ptr<int> q = *std::move(again);
  EXPECT_EQ(*q, 6);
}

TEST(Result, MoveOnlyErrorThrowsOnMoveOut) {
  Result<std::unique_ptr<int>> r = Error(Errc::null_pointer, "adopt(nullptr)");
  EXPECT_THROW(static_cast<void>(std::move(r).value()), Error);
}

// Copies, moves and assignments between every pair of states; ASan catches a leaked or
// double-destroyed member, the checks catch a wrong state.
TEST(Result, CopyAndAssignAcrossStates) {
  const Result<std::string> ok = std::string("value");
  const Result<std::string> bad = Error(Errc::misaligned, "data is misaligned");

  Result<std::string> copy = ok;
  EXPECT_EQ(*copy, "value");
  copy = bad;
  ASSERT_FALSE(copy.has_value());
  EXPECT_EQ(copy.error().what(), bad.error().what());
  copy = ok;
  EXPECT_EQ(*copy, "value");

  Result<std::string> moved = std::move(copy);
  EXPECT_EQ(*moved, "value");
  moved = Result<std::string>(Error(Errc::read_only, "ro"));
  EXPECT_EQ(moved.error().code(), Errc::read_only);
  moved = Result<std::string>(std::string("back"));
  EXPECT_EQ(*moved, "back");

  Result<std::string>& self = moved;
  moved = self;
  EXPECT_EQ(*moved, "back");
}

// Traits that lie make std::optional/std::vector pick a copy that then fails to instantiate.
TEST(Result, CopyabilityFollowsTheValueType) {
  using MoveOnly = Result<std::unique_ptr<int>>;
  EXPECT_TRUE(std::is_copy_constructible<Result<int>>::value);
  EXPECT_TRUE(std::is_copy_assignable<Result<std::string>>::value);
  EXPECT_FALSE(std::is_copy_constructible<MoveOnly>::value);
  EXPECT_FALSE(std::is_copy_assignable<MoveOnly>::value);
  EXPECT_TRUE(std::is_nothrow_move_constructible<MoveOnly>::value);
  EXPECT_TRUE(std::is_nothrow_move_assignable<MoveOnly>::value);
}

// Counts how a value reached the Result: a large value (a TensorView) costs what it copies.
struct Traced {
  int copies = 0;
  int moves = 0;
  Traced() = default;
  Traced(const Traced& other) : copies(other.copies + 1), moves(other.moves) {}
  Traced(Traced&& other) noexcept : copies(other.copies), moves(other.moves + 1) {}
  Traced& operator=(const Traced&) = default;
  Traced& operator=(Traced&&) = default;
  ~Traced() = default;
};

TEST(Result, ValueEntersWithOneCopyOrOneMove) {
  const Traced lvalue;
  const Result<Traced> copied = lvalue;
  EXPECT_EQ(copied->copies, 1);
  EXPECT_EQ(copied->moves, 0);
  Result<Traced> moved = Traced();
  EXPECT_EQ(moved->copies, 0);
  EXPECT_EQ(moved->moves, 1);
  // Only a copyable T takes a const T&: a move-only one must be moved in.
  EXPECT_TRUE((std::is_constructible<Result<std::string>, const std::string&>::value));
  EXPECT_FALSE(
      (std::is_constructible<Result<std::unique_ptr<int>>, const std::unique_ptr<int>&>::value));
  EXPECT_TRUE((std::is_constructible<Result<std::unique_ptr<int>>, std::unique_ptr<int>&&>::value));
  // A conversion still works (int to double; a literal to std::string, directly initialized).
  const Result<double> converted = 3;
  EXPECT_EQ(*converted, 3.0);
  const Result<std::string> text("abc");
  EXPECT_EQ(*text, "abc");
}

TEST(Result, BuildWithMakesTheValueInPlace) {
  const Result<Traced> built(dlpackpp::detail::BuildWith{}, [] { return Traced(); });
  ASSERT_TRUE(built.has_value());
  EXPECT_EQ(built->copies, 0);
  EXPECT_EQ(built->moves, 0);
}

TEST(ResultVoid, DefaultIsSuccess) {
  const Result<void> r;
  EXPECT_TRUE(r.has_value());
  EXPECT_TRUE(static_cast<bool>(r));
  EXPECT_NO_THROW(r.value());
}

TEST(ResultVoid, HoldsAndThrowsAnError) {
  const Result<void> r = Error(Errc::null_data, "data is NULL with 6 elements");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), Errc::null_data);
  try {
    r.value();
    ADD_FAILURE() << "value() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::null_data);
    EXPECT_STREQ(e.what(), "dlpackpp: data is NULL with 6 elements");
  }
  const Result<void> copy = r;
  EXPECT_EQ(copy.error().what(), r.error().what());
}

TEST(ResultVoid, AssignsAcrossStates) {
  const Result<void> ok;
  const Result<void> bad = Error(Errc::null_shape, "shape is NULL with ndim 2");
  const Result<void> worse = Error(Errc::invalid_ndim, "ndim is -1, must be >= 0");
  Result<void> r;
  r = bad;  // success -> error
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::null_shape);
  EXPECT_EQ(r.error().what(), bad.error().what());  // shared, not copied
  r = worse;                                        // error -> another error
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_ndim);
  const Result<void>& self = r;
  r = self;  // self-assignment keeps the error
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::invalid_ndim);
  r = ok;  // error -> success
  EXPECT_TRUE(r);
  r = ok;  // success -> success
  EXPECT_TRUE(r);
  EXPECT_NO_THROW(r.value());
}

TEST(ResultDeath, ContractViolationsAbortWithFileAndLine) {
  const Result<int> bad = Error(Errc::misaligned, "x");
  const Result<int> good = 1;
  const Result<void> fine;
  EXPECT_DEATH(static_cast<void>(*bad),
               "(error|dlpackpp)\\.hpp:[0-9]+: dlpackpp contract violated");
  EXPECT_DEATH(static_cast<void>(good.error()), "contract violated: Result::error\\(\\)");
  EXPECT_DEATH(static_cast<void>(fine.error()), "contract violated: Result<void>::error\\(\\)");
}

void handler_a(const Error&) noexcept {}
void handler_b(const Error&) noexcept {}

TEST(ErrorHandler, SetReturnsThePreviousHandler) {
  const dlpackpp::ErrorHandler original = dlpackpp::set_error_handler(&handler_a);
  ASSERT_NE(original, nullptr);
  EXPECT_EQ(dlpackpp::set_error_handler(&handler_b), &handler_a);
  // NULL means "the default", which must come back as the handler that was there at start.
  EXPECT_EQ(dlpackpp::set_error_handler(nullptr), &handler_b);
  EXPECT_EQ(dlpackpp::set_error_handler(original), original);
  EXPECT_EQ(dlpackpp::set_error_handler(original), original);
}

}  // namespace
