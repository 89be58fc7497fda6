// SPDX-License-Identifier: Apache-2.0
// Writing needs one address per element: every mutable path of a view refuses a stride of 0
// over an extent above 1 (Errc::overlapping, naming the dimension); reading stays allowed.

#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/hand_made.hpp"

#include <cstdint>
#include <dlpackpp/iterate.hpp>
#include <dlpackpp/managed_tensor.hpp>
#include <dlpackpp/tensor_view.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::TensorView;
using dlpackpp_test::expect_error;
using dlpackpp_test::thrown_by;
using Ints = std::vector<std::int64_t>;

// A float32 tensor over `values` with the given layout; shape and strides must outlive it.
DLTensor float_tensor(float* values, Ints& shape, Ints& strides) {
  DLTensor t{};
  t.data = values;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<std::int32_t>(shape.size());
  t.dtype = DLDataType{kDLFloat, 32, 1};
  t.shape = shape.data();
  t.strides = strides.data();
  return t;
}

// Every mutable path of `v` fails with Errc::overlapping and `message` (the whole what()).
void expect_writes_refused(const TensorView& v, const std::string& message) {
  SCOPED_TRACE(v.to_string());
  const auto check = [&](const dlpackpp::Error& e) {
    EXPECT_EQ(e.code(), Errc::overlapping) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
  };
  check(thrown_by([&] { static_cast<void>(v.data<float>()); }));
  check(thrown_by([&] { static_cast<void>(v.data()); }));
  check(thrown_by([&] { static_cast<void>(v.require_writable()); }));
  check(thrown_by([&] { static_cast<void>(TensorView(v).require_writable()); }));
  if (v.ndim() == 2) check(thrown_by([&] { static_cast<void>(v.accessor<float, 2>()); }));
  const auto data = v.try_data<float>();
  ASSERT_FALSE(data);
  check(data.error());
  const auto writable = v.try_require_writable();
  ASSERT_FALSE(writable);
  check(writable.error());
  if (v.ndim() == 2) {
    const auto accessor = v.try_accessor<float, 2>();
    ASSERT_FALSE(accessor);
    check(accessor.error());
  }
}

// Every mutable path of `v` is open.
void expect_writes_allowed(const TensorView& v) {
  SCOPED_TRACE(v.to_string());
  EXPECT_TRUE(v.try_data<float>());
  EXPECT_TRUE(v.try_require_writable());
  EXPECT_NO_THROW(static_cast<void>(v.data()));
  EXPECT_NO_THROW(static_cast<void>(v.require_writable()));
  if (v.ndim() == 2) {
    EXPECT_TRUE((v.try_accessor<float, 2>()));
  }
}

// Every reading path of `v` is open, whatever its layout.
void expect_reads_allowed(const TensorView& v) {
  SCOPED_TRACE(v.to_string());
  EXPECT_TRUE(v.try_data<const float>());
  EXPECT_NE(v.const_data(), nullptr);
  if (v.ndim() == 2) {
    EXPECT_TRUE((v.try_accessor<const float, 2>()));
  }
}

TEST(Overlap, ErrcHasItsName) {
  EXPECT_STREQ(dlpackpp::to_string(Errc::overlapping), "overlapping");
  EXPECT_NE(static_cast<int>(Errc::overlapping), static_cast<int>(Errc::read_only));
}

// torch.ones(1, 3).expand(4, 3): every row is the same three floats.
TEST(Overlap, ExpandedRowsRefuseWritesAndAllowReads) {
  std::vector<float> row{1.0f, 2.0f, 3.0f};
  Ints shape{4, 3};
  Ints strides{0, 1};
  const DLTensor t = float_tensor(row.data(), shape, strides);
  const std::string message =
      "dlpackpp: strides[0] is 0 over extent 4: elements overlap; a writable access needs one "
      "address per element (read it through a const type, or copy it)";
  for (const TensorView& v : {TensorView(t), TensorView::unchecked(t),
                              TensorView(row.data(), DataType::float32(), shape, strides)}) {
    expect_writes_refused(v, message);
    expect_reads_allowed(v);
    const auto x = v.accessor<const float, 2>();
    EXPECT_EQ(&x(3, 2), &x(0, 2));  // the layout is read as given
    EXPECT_EQ(x(3, 2), 3.0f);
  }
  EXPECT_EQ(row, (std::vector<float>{1.0f, 2.0f, 3.0f}));
}

TEST(Overlap, TheFirstRepeatingDimensionIsNamed) {
  float value = 5.0f;
  Ints shape{3, 4};
  Ints column{1, 0};  // NumPy's broadcast_to of a column
  expect_writes_refused(TensorView(&value, DataType::float32(), shape, column),
                        "dlpackpp: strides[1] is 0 over extent 4: elements overlap; a writable "
                        "access needs one address per element (read it through a const type, "
                        "or copy it)");
  Ints everywhere{0, 0};  // one element seen twelve times
  const dlpackpp::Error e =
      thrown_by([&] { TensorView(&value, DataType::float32(), shape, everywhere).data<float>(); });
  EXPECT_EQ(e.code(), Errc::overlapping);
  EXPECT_NE(std::string(e.what()).find("strides[0] is 0 over extent 3"), std::string::npos)
      << e.what();
}

// Above the unrolled ranks and the inline storage: the search still finds the dimension.
TEST(Overlap, HighRank) {
  std::vector<float> values(512, 0.0f);
  Ints shape(10, 2);
  Ints strides(10, 0);
  std::int64_t running = 1;
  for (int d = 9; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = running;
    running *= 2;
  }
  expect_writes_allowed(TensorView(values.data(), DataType::float32(), shape, strides));
  strides[8] = 0;
  const TensorView v(values.data(), DataType::float32(), shape, strides);
  EXPECT_FALSE(v.is_contiguous());
  expect_error([&] { v.data<float>(); }, Errc::overlapping, "strides[8] is 0 over extent 2");
  EXPECT_TRUE(v.try_data<const float>());
}

// A stride of 0 over an extent of 1 (a kept or inserted size-1 dimension) repeats nothing.
TEST(Overlap, ExtentOneStrideZeroIsFine) {
  std::vector<float> values(3, 0.0f);
  for (const auto& layout :
       {std::pair<Ints, Ints>{{1, 3}, {0, 1}}, {{3, 1}, {1, 0}}, {{1, 1}, {0, 0}}, {{1}, {0}}}) {
    Ints shape = layout.first;
    Ints strides = layout.second;
    const TensorView v(values.data(), DataType::float32(), shape, strides);
    expect_writes_allowed(v);
    expect_reads_allowed(v);
  }
}

// An empty tensor has no element to share, whatever its strides.
TEST(Overlap, EmptyTensorsAreFine) {
  float value = 0.0f;
  for (const auto& layout : {std::pair<Ints, Ints>{{0, 4}, {4, 0}},
                             {{4, 0}, {0, 1}},
                             {{4, 0}, {0, 0}},
                             {{3, 0, 5}, {0, 0, 0}}}) {
    Ints shape = layout.first;
    Ints strides = layout.second;
    const DLTensor t = float_tensor(&value, shape, strides);
    for (const TensorView& v : {TensorView(t), TensorView::unchecked(t)}) {
      EXPECT_EQ(v.numel(), 0);
      expect_writes_allowed(v);
      expect_reads_allowed(v);
    }
  }
}

// One address per element, in any order or direction: writes stay open.
TEST(Overlap, StridedLayoutsWithoutRepeatsAreFine) {
  std::vector<float> values(24, 0.0f);
  const std::pair<Ints, Ints> layouts[] = {
      {{3, 4}, {4, 1}},   // row-major
      {{3, 4}, {1, 3}},   // transposed
      {{3, 4}, {8, 2}},   // every other element
      {{3, 4}, {-4, 1}},  // rows reversed (first element in the middle of memory)
      {{2, 3}, {3, 2}},   // interleaved: no permutation makes it compact, yet one-to-one
  };
  for (const auto& layout : layouts) {
    Ints shape = layout.first;
    Ints strides = layout.second;
    const std::uint64_t offset = strides[0] < 0 ? 8 * sizeof(float) : 0;
    const TensorView v(values.data(), DataType::float32(), shape, strides, Device::cpu(), offset);
    expect_writes_allowed(v);
    expect_reads_allowed(v);
  }
  float scalar = 1.0f;
  expect_writes_allowed(TensorView(&scalar, DataType::float32(), {}));
}

// READ_ONLY is the first reason given; a const T reads either.
TEST(Overlap, ReadOnlyIsReportedFirst) {
  std::vector<float> row(3, 0.0f);
  Ints shape{4, 3};
  Ints strides{0, 1};
  const DLTensor t = float_tensor(row.data(), shape, strides);
  dlpackpp::ValidateOptions options;
  options.flags = dlpackpp::flag::read_only;
  const TensorView v(t, options);
  expect_error([&] { v.data<float>(); }, Errc::read_only);
  expect_error([&] { v.require_writable(); }, Errc::read_only);
  expect_error([&] { v.accessor<float, 2>(); }, Errc::read_only);
  expect_reads_allowed(v);
}

// The other checks of typed access still come first: a wrong dtype is reported as such.
TEST(Overlap, DtypeIsReportedFirst) {
  std::vector<float> row(3, 0.0f);
  Ints shape{4, 3};
  Ints strides{0, 1};
  const TensorView v(row.data(), DataType::float32(), shape, strides);
  expect_error([&] { v.data<double>(); }, Errc::dtype_mismatch);
  expect_error([&] { v.accessor<float, 3>(); }, Errc::rank_mismatch);
}

// Element loops hand out T&: a mutable one over repeated elements is refused the same way.
TEST(Overlap, ElementLoopsRefuseWritesAndAllowReads) {
  std::vector<float> row{1.0f, 2.0f, 3.0f};
  Ints shape{4, 3};
  Ints strides{0, 1};
  const TensorView v(row.data(), DataType::float32(), shape, strides);
  const dlpackpp::Result<void> doubled =
      dlpackpp::try_for_each_element<float>(v, [](float& x) { x *= 2.0f; });
  ASSERT_FALSE(doubled);
  EXPECT_EQ(doubled.error().code(), Errc::overlapping);
  EXPECT_EQ(row, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  float sum = 0.0f;
  dlpackpp::for_each_element<const float>(v, [&](const float& x) { sum += x; });
  EXPECT_EQ(sum, 24.0f);
}

// ManagedTensor's typed paths skip the view: they refuse the same layouts.
TEST(Overlap, ManagedTypedPathsRefuseWritesAndAllowReads) {
  int deletes = 0;
  dlpackpp_test::Layout layout;
  layout.shape = {4, 3};
  layout.strides = {0, 1};
  using M = DLManagedTensorVersioned;
  {
    const auto t = dlpackpp::ManagedTensor::adopt(dlpackpp_test::make_counted<M>(deletes, layout));
    expect_error([&] { t.accessor<float, 2>(); }, Errc::overlapping,
                 "strides[0] is 0 over extent 4");
    expect_error([&] { t.data<float>(); }, Errc::overlapping, "strides[0] is 0 over extent 4");
    EXPECT_FALSE((t.try_accessor<float, 2>()));
    EXPECT_TRUE((t.try_accessor<const float, 2>()));
  }
  const auto refused = dlpackpp::ManagedTensor::try_adopt_as<float, 2>(
      dlpackpp_test::make_counted<M>(deletes, layout));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), Errc::overlapping);
  EXPECT_EQ(deletes, 2);  // the refused tensor went back to its producer
  const auto read = dlpackpp::ManagedTensor::try_adopt_as<const float, 2>(
      dlpackpp_test::make_counted<M>(deletes, layout));
  EXPECT_TRUE(read);
  layout.shape = {1, 3};  // stride 0 over extent 1: nothing repeats
  EXPECT_TRUE((dlpackpp::ManagedTensor::try_adopt_as<float, 2>(
      dlpackpp_test::make_counted<M>(deletes, layout))));
}
}  // namespace
