// SPDX-License-Identifier: Apache-2.0
// IntSpan: every way to make one, element access, comparison and streaming.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <dlpackpp/int_span.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using dlpackpp::IntSpan;

std::string streamed(IntSpan s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

// Each source must yield a span over its own storage, not over a copy.
void expect_views(IntSpan s, const std::int64_t* data, std::size_t size) {
  EXPECT_EQ(s.data(), data);
  EXPECT_EQ(s.size(), size);
  EXPECT_EQ(s.empty(), size == 0);
  EXPECT_EQ(s.begin(), data);
  EXPECT_EQ(s.end(), data + size);
}

TEST(IntSpan, DefaultIsEmpty) {
  constexpr IntSpan s;
  static_assert(s.empty() && s.size() == 0 && s.data() == nullptr, "default span is empty");
  EXPECT_EQ(streamed(s), "[]");
}

TEST(IntSpan, FromInitializerList) {
  // The list lives until the end of the full expression, so it is checked inside it.
  EXPECT_EQ(streamed({2, 3}), "[2, 3]");
  EXPECT_EQ(IntSpan({2, 3}).size(), 2u);
  EXPECT_EQ(IntSpan({-1, 4, 5})[0], -1);
  EXPECT_EQ(IntSpan({7})[0], 7);
  EXPECT_TRUE(IntSpan({}).empty());
}

TEST(IntSpan, FromVector) {
  const std::vector<std::int64_t> v{4, 5, 6};
  expect_views(v, v.data(), v.size());
  const std::vector<std::int64_t> empty;
  EXPECT_TRUE(IntSpan(empty).empty());
}

TEST(IntSpan, FromStdArray) {
  const std::array<std::int64_t, 4> a{1, 2, 3, 4};
  expect_views(a, a.data(), a.size());
  std::array<std::int64_t, 2> mutable_array{8, 9};
  expect_views(mutable_array, mutable_array.data(), 2);
}

TEST(IntSpan, FromCArray) {
  const std::int64_t c[3] = {7, 8, 9};
  expect_views(c, c, 3);
  static constexpr std::int64_t compile_time[2] = {10, 11};
  constexpr IntSpan s(compile_time);
  static_assert(s.size() == 2 && s[1] == 11, "a C array is usable in constant expressions");
}

TEST(IntSpan, FromPointerAndSize) {
  const std::int64_t values[5] = {1, 2, 3, 4, 5};
  expect_views(IntSpan(values + 1, 3), values + 1, 3);
  expect_views(IntSpan(nullptr, 0), nullptr, 0);
}

TEST(IntSpan, IndexAndIterate) {
  const std::vector<std::int64_t> v{3, -1, 4, 1, -5};
  const IntSpan s(v);
  std::vector<std::int64_t> seen;
  for (std::int64_t x : s) seen.push_back(x);
  EXPECT_EQ(seen, v);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(s[i], v[i]);
}

TEST(IntSpan, EqualityComparesValuesNotStorage) {
  const std::vector<std::int64_t> v{2, 3};
  const std::array<std::int64_t, 2> a{2, 3};
  const std::array<std::int64_t, 2> different{2, 4};
  const std::array<std::int64_t, 3> longer{2, 3, 1};
  EXPECT_TRUE(IntSpan(v) == IntSpan(a));
  EXPECT_FALSE(IntSpan(v) != IntSpan(a));
  EXPECT_TRUE(IntSpan(v) == IntSpan({2, 3}));
  EXPECT_FALSE(IntSpan(v) == IntSpan(different));
  EXPECT_TRUE(IntSpan(v) != IntSpan(different));
  EXPECT_FALSE(IntSpan(v) == IntSpan(longer));
  EXPECT_FALSE(IntSpan(longer) == IntSpan(v));
  EXPECT_TRUE(IntSpan() == IntSpan(nullptr, 0));
  EXPECT_TRUE(IntSpan() == IntSpan(v.data(), 0));
}

TEST(IntSpan, Streams) {
  const std::vector<std::int64_t> v{2, 3};
  EXPECT_EQ(streamed(v), "[2, 3]");
  const std::array<std::int64_t, 1> one{-7};
  EXPECT_EQ(streamed(one), "[-7]");
  const std::int64_t extremes[2] = {INT64_MIN, INT64_MAX};
  EXPECT_EQ(streamed(extremes), "[-9223372036854775808, 9223372036854775807]");
}

}  // namespace
