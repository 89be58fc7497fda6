// SPDX-License-Identifier: Apache-2.0
// TensorView: a valid-tensor grid against brute force, indexing, typed data, checks, printing.
#include <gtest/gtest.h>

#include "support/expect_error.hpp"
#include "support/layouts.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <dlpackpp/tensor_view.hpp>
#include <functional>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using dlpackpp_test::all_layouts;
using dlpackpp_test::column_major;
using dlpackpp_test::expect_error;
using dlpackpp_test::Layout;
using dlpackpp_test::layout_name;
using dlpackpp_test::make_layout;
using dlpackpp_test::Strided;

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::Errc;
using dlpackpp::Error;
using dlpackpp::IntSpan;
using dlpackpp::TensorView;
using dlpackpp::ValidateOptions;
namespace dtype_code = dlpackpp::dtype_code;
namespace flag = dlpackpp::flag;
using Ints = std::vector<std::int64_t>;

DLTensor make_tensor(void* data, DataType dtype, Ints& shape, Ints* strides,
                     std::uint64_t byte_offset = 0, Device device = Device::cpu()) {
  DLTensor t{};
  t.data = data;
  t.device = device;
  t.ndim = static_cast<std::int32_t>(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  t.strides = strides == nullptr ? nullptr : strides->data();
  t.byte_offset = byte_offset;
  return t;
}

// ---- The reference: written from the definitions, sharing no code with the library. ----

// Every type DLPack 1.3 defines, with each of its widths, plus vector lanes (also sub-byte).
std::vector<DataType> valid_dtypes() {
  struct Widths {
    std::uint8_t code;
    std::vector<std::uint8_t> bits;
  };
  const Widths table[] = {
      {dtype_code::int_, {4, 8, 16, 32, 64}},
      {dtype_code::uint, {4, 8, 16, 32, 64}},
      {dtype_code::float_, {16, 32, 64}},
      {dtype_code::opaque_handle, {32, 64}},
      {dtype_code::bfloat, {16}},
      {dtype_code::complex, {64, 128}},
      {dtype_code::bool_, {8}},
      {dtype_code::float8_e3m4, {8}},
      {dtype_code::float8_e4m3, {8}},
      {dtype_code::float8_e4m3b11fnuz, {8}},
      {dtype_code::float8_e4m3fn, {8}},
      {dtype_code::float8_e4m3fnuz, {8}},
      {dtype_code::float8_e5m2, {8}},
      {dtype_code::float8_e5m2fnuz, {8}},
      {dtype_code::float8_e8m0fnu, {8}},
      {dtype_code::float6_e2m3fn, {6}},
      {dtype_code::float6_e3m2fn, {6}},
      {dtype_code::float4_e2m1fn, {4}},
  };
  std::vector<DataType> out;
  for (const Widths& w : table) {
    for (std::uint8_t bits : w.bits) out.emplace_back(w.code, bits);
  }
  out.emplace_back(dtype_code::float_, 32, 4);
  out.emplace_back(dtype_code::int_, 8, 4);
  out.emplace_back(dtype_code::float4_e2m1fn, 4, 2);
  out.emplace_back(dtype_code::float6_e2m3fn, 6, 3);
  return out;
}

std::int64_t reference_nbytes(DataType t, std::int64_t numel, bool padded) {
  const std::int64_t lane_bits = padded && t.bits() < 8 ? 8 : t.bits();
  return (numel * lane_bits * t.lanes() + 7) / 8;
}

// What a view of (shape, strides) must report, found by visiting every index tuple.
struct Reference {
  std::int64_t numel = 0;
  bool contiguous = true;
  bool fortran = true;
  bool compact = true;
  std::int64_t low = 0;   // smallest element offset reached
  std::int64_t high = 0;  // largest element offset reached
};

Reference brute_force(const Ints& shape, const Ints& strides) {
  Reference r;
  r.numel = std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
  const Ints fortran_weights = column_major(shape);
  std::vector<std::int64_t> offsets;
  Ints index(shape.size(), 0);
  for (std::int64_t row_major_rank = 0; row_major_rank < r.numel; ++row_major_rank) {
    std::int64_t offset = 0;
    std::int64_t fortran_rank = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      offset += index[d] * strides[d];
      fortran_rank += index[d] * fortran_weights[d];
    }
    r.contiguous = r.contiguous && offset == row_major_rank;
    r.fortran = r.fortran && offset == fortran_rank;
    offsets.push_back(offset);
    for (std::size_t d = shape.size(); d-- > 0;) {  // odometer, last index fastest
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  // Compact: the offsets are exactly 0..numel-1, each once (so no gaps, no overlaps and,
  // since the first element is offset 0, no negative strides).
  std::sort(offsets.begin(), offsets.end());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    r.compact = r.compact && offsets[i] == static_cast<std::int64_t>(i);
  }
  if (!offsets.empty()) {
    r.low = offsets.front();
    r.high = offsets.back();
  }
  return r;
}

// ---- The grid: layouts x ranks, each checked for every valid dtype. ----

const int grid_ranks[] = {0, 1, 2, 3, 8, 9};

using GridParam = std::tuple<Layout, int>;

std::vector<GridParam> grid() {
  std::vector<GridParam> out;
  for (Layout layout : all_layouts) {
    for (int ndim : grid_ranks) {
      if (layout == Layout::zero_size && ndim == 0) continue;  // a scalar has one element
      out.emplace_back(layout, ndim);
    }
  }
  return out;
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  return std::string(layout_name(std::get<0>(info.param))) + "_ndim" +
         std::to_string(std::get<1>(info.param));
}

// The scalar facts of a view, compared as a whole between the ways of making one.
std::string summary(const TensorView& v) {
  std::ostringstream os;
  os << v << " numel " << v.numel() << " nbytes " << v.nbytes() << " contiguous "
     << v.is_contiguous() << v.is_fortran_contiguous() << v.is_compact() << " data " << v.data()
     << " flags " << v.flags();
  return os.str();
}

class ValidGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(ValidGrid, MatchesBruteForce) {
  const auto [layout, ndim] = GetParam();
  Ints shape;
  for (int d = 0; d < ndim; ++d) shape.push_back(2 + d % 2);  // ndim 9: 2592 elements
  Strided p = make_layout(layout, shape);
  const Ints& expected_strides = p.strides;
  const Reference ref = brute_force(p.shape, expected_strides);
  if (p.null_strides && ref.numel > 0) {
    ASSERT_TRUE(ref.contiguous) << "NULL strides must mean compact row-major";
  }

  for (const DataType dtype : valid_dtypes()) {
    for (const bool padded : {false, true}) {
      if (padded && !dtype.is_subbyte()) continue;
      SCOPED_TRACE(dtype.to_string() + (padded ? " padded" : " packed"));
      // Sized as if each element took 16 bytes, so every address the view can form is real.
      std::vector<unsigned char> buffer(
          static_cast<std::size_t>((ref.high - ref.low + 1 + p.offset_elements) * 16));
      const std::int64_t element_bytes =
          std::max<std::int64_t>(reference_nbytes(dtype, 1, padded), 1);
      void* data = p.null_data ? nullptr : buffer.data() + (-ref.low) * element_bytes;
      const auto byte_offset = static_cast<std::uint64_t>(p.offset_elements * element_bytes);
      const DLTensor t = make_tensor(data, dtype, p.shape, p.null_strides ? nullptr : &p.strides,
                                     byte_offset, Device::cuda_managed(1));
      ValidateOptions options;
      options.flags = padded ? flag::is_subbyte_type_padded : 0;

      const dlpackpp::Result<void> valid = dlpackpp::validate(t, options);
      ASSERT_TRUE(valid.has_value()) << valid.error().what();
      std::optional<TensorView> view(std::in_place, t, options);
      const TensorView& v = *view;

      EXPECT_EQ(v.ndim(), ndim);
      EXPECT_EQ(v.shape(), IntSpan(p.shape));
      if (ndim > 0) {
        EXPECT_EQ(v.shape().data(), p.shape.data()) << "a DLTensor's shape is borrowed, not copied";
      }
      EXPECT_EQ(v.strides(), IntSpan(expected_strides));
      if (!p.null_strides && ndim > 0) {
        EXPECT_EQ(v.strides().data(), p.strides.data()) << "producer strides are borrowed as is";
      }
      for (int d = 0; d < ndim; ++d) {
        const auto i = static_cast<std::size_t>(d);
        EXPECT_EQ(v.shape(d), p.shape[i]);
        EXPECT_EQ(v.shape(d - ndim), p.shape[i]);
        EXPECT_EQ(v.stride(d), expected_strides[i]);
        EXPECT_EQ(v.stride(d - ndim), expected_strides[i]);
      }
      EXPECT_EQ(v.numel(), ref.numel);
      EXPECT_EQ(v.nbytes(), reference_nbytes(dtype, ref.numel, padded));
      EXPECT_EQ(v.nbytes(), dtype.storage_bytes(ref.numel, padded));
      EXPECT_EQ(v.is_contiguous(), ref.contiguous);
      EXPECT_EQ(v.is_fortran_contiguous(), ref.fortran);
      EXPECT_EQ(v.is_compact(), ref.compact);
      EXPECT_EQ(v.dtype(), dtype);
      EXPECT_EQ(v.device(), Device::cuda_managed(1));
      EXPECT_EQ(v.byte_offset(), byte_offset);
      EXPECT_EQ(v.is_subbyte_padded(), padded);
      EXPECT_FALSE(v.read_only());
      EXPECT_EQ(v.data(),
                p.null_data ? nullptr
                            : static_cast<void*>(static_cast<unsigned char*>(data) + byte_offset));

      // The other ways to make the same view agree with it.
      dlpackpp::Result<TensorView> tried = TensorView::try_from(t, options);
      ASSERT_TRUE(tried.has_value());
      EXPECT_EQ(summary(*tried), summary(v));
      const TensorView trusted = TensorView::unchecked(t, options.flags);
      EXPECT_EQ(summary(trusted), summary(v));
      EXPECT_EQ(trusted.strides(), IntSpan(expected_strides));

      // to_dltensor describes the view with normalized strides and views back the same.
      const DLTensor round = v.to_dltensor();
      EXPECT_EQ(round.data, t.data);
      EXPECT_EQ(round.byte_offset, t.byte_offset);
      EXPECT_EQ(round.ndim, t.ndim);
      EXPECT_EQ(DataType(round.dtype), dtype);
      EXPECT_EQ(Device(round.device), Device::cuda_managed(1));
      EXPECT_EQ(round.shape, t.shape);
      if (ndim == 0) {
        EXPECT_EQ(round.strides, nullptr);
      } else {
        ASSERT_NE(round.strides, nullptr);
        EXPECT_EQ(IntSpan(round.strides, static_cast<std::size_t>(ndim)),
                  IntSpan(expected_strides));
      }
      EXPECT_EQ(summary(TensorView(round, options)), summary(v));

      // Copies keep normalized strides after the original is gone (ndim 9 holds them on the
      // heap, smaller ranks inside the view).
      const TensorView copy = v;
      view.reset();
      EXPECT_EQ(copy.strides(), IntSpan(expected_strides));
      EXPECT_EQ(copy.numel(), ref.numel);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(TensorView, ValidGrid, ::testing::ValuesIn(grid()), grid_name);

// Layouts no producer would send on purpose (overlaps, zero and mixed-sign strides, empty
// axes) still get the layout predicates right: seeded random cases against brute force.
TEST(TensorView, LayoutPredicatesOnRandomStrides) {
  std::uint64_t state = 0x9e3779b97f4a7c15u;
  const auto next = [&state](std::int64_t lo, std::int64_t hi) {  // xorshift, uniform enough
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return lo + static_cast<std::int64_t>(state % static_cast<std::uint64_t>(hi - lo + 1));
  };
  std::vector<double> storage(4096);
  int seen[3][2] = {};  // [predicate][value]: the cases must exercise both answers
  for (int round = 0; round < 4000; ++round) {
    Ints shape(static_cast<std::size_t>(next(0, 4)));
    Ints strides(shape.size());
    for (std::int64_t& e : shape) e = next(0, 9) == 0 ? 0 : next(1, 4);
    // Mostly a permuted dense layout with some strides spoiled, so that "yes" answers occur.
    Ints order(shape.size());
    std::iota(order.begin(), order.end(), 0);
    for (std::size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1],
                order[static_cast<std::size_t>(next(0, static_cast<std::int64_t>(i) - 1))]);
    }
    std::int64_t running = 1;
    for (const std::int64_t d : order) {
      const auto i = static_cast<std::size_t>(d);
      strides[i] = next(0, 3) == 0 ? next(-6, 6) : running;
      running *= std::max<std::int64_t>(shape[i], 1);
    }
    const Reference ref = brute_force(shape, strides);
    const TensorView v(make_tensor(storage.data() + 2048, DataType::float64(), shape, &strides));
    SCOPED_TRACE(v.to_string());
    ASSERT_EQ(v.is_contiguous(), ref.contiguous);
    ASSERT_EQ(v.is_fortran_contiguous(), ref.fortran);
    ASSERT_EQ(v.is_compact(), ref.compact);
    ++seen[0][ref.contiguous];
    ++seen[1][ref.fortran];
    ++seen[2][ref.compact];
  }
  for (const auto& counts : seen) {
    EXPECT_GT(counts[0], 100);
    EXPECT_GT(counts[1], 100);
  }
}

// ---- Everything else, with small hand-made tensors. ----

TEST(TensorView, NegativeIndexCountsFromTheEnd) {
  std::vector<float> storage(24);
  Ints shape{2, 3, 4};
  Ints strides{1, 2, 6};
  const TensorView v(make_tensor(storage.data(), DataType::float32(), shape, &strides));
  EXPECT_EQ(v.shape(-1), 4);
  EXPECT_EQ(v.shape(-2), 3);
  EXPECT_EQ(v.shape(-3), 2);
  EXPECT_EQ(v.stride(-1), 6);
  EXPECT_EQ(v.stride(-3), 1);
  for (const int d : {3, 4, -4, -100, INT32_MAX, INT32_MIN}) {
    const std::string text = "dimension " + std::to_string(d) + " is out of range for ndim 3";
    expect_error([&] { static_cast<void>(v.shape(d)); }, Errc::out_of_range, text);
    expect_error([&] { static_cast<void>(v.stride(d)); }, Errc::out_of_range, text);
  }
}

TEST(TensorView, ZeroDimTensor) {
  float value = 2.5f;
  DLTensor t{};
  t.data = &value;
  t.device = Device::cpu();
  t.dtype = DataType::float32();
  t.ndim = 0;  // shape and strides stay NULL
  const TensorView v(t);
  EXPECT_EQ(v.ndim(), 0);
  EXPECT_TRUE(v.shape().empty());
  EXPECT_TRUE(v.strides().empty());
  EXPECT_EQ(v.numel(), 1);
  EXPECT_EQ(v.nbytes(), 4);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_TRUE(v.is_fortran_contiguous());
  EXPECT_TRUE(v.is_compact());
  EXPECT_EQ(v.data<float>(), &value);
  EXPECT_EQ(*v.data<const float>(), 2.5f);
  EXPECT_EQ(v.to_dltensor().strides, nullptr);
  EXPECT_EQ(v.to_dltensor().shape, nullptr);
  EXPECT_EQ(v.to_string(), "float32[] strides [] cpu");
  expect_error([&] { static_cast<void>(v.shape(0)); }, Errc::out_of_range, "dimension 0");
  expect_error([&] { static_cast<void>(v.stride(-1)); }, Errc::out_of_range, "dimension -1");
}

// try_in_place reads the caller's DLTensor itself (a field changed later shows through, in
// copies too); detach_from_dltensor gives the view its own copy of the fields, after which the
// struct may change or die. try_from always copies. Both validate as the constructor does.
TEST(TensorView, InPlaceViewsReadTheStructUntilDetached) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  std::int64_t shape[2] = {2, 3};
  DLTensor t{};
  t.data = data;
  t.device = Device::cpu();
  t.dtype = DataType::float32();
  t.ndim = 2;
  t.shape = shape;
  dlpackpp::Result<TensorView> in_place = TensorView::try_in_place(t);
  dlpackpp::Result<TensorView> copied = TensorView::try_from(t);
  ASSERT_TRUE(in_place && copied);
  const TensorView copy_of_in_place = *in_place;
  t.byte_offset = 4;  // the struct changes: only the in-place views see it
  EXPECT_EQ(in_place->byte_offset(), 4u);
  EXPECT_EQ(copy_of_in_place.byte_offset(), 4u);
  EXPECT_EQ(copied->byte_offset(), 0u);

  in_place->detach_from_dltensor();
  t.byte_offset = 8;
  t.data = nullptr;
  EXPECT_EQ(in_place->byte_offset(), 4u);
  EXPECT_EQ(in_place->data<const float>(), data + 1);
  EXPECT_EQ(in_place->shape(1), 3);  // the arrays are still read where they are
  EXPECT_EQ(in_place->stride(0), 3);
  copied->detach_from_dltensor();  // nothing to detach: unchanged
  EXPECT_EQ(copied->data<const float>(), data);

  t.ndim = -1;
  expect_error([&] { static_cast<void>(TensorView::try_in_place(t).value()); }, Errc::invalid_ndim,
               "ndim is -1");
}

TEST(TensorView, ZeroSizeTensorWithNullData) {
  Ints shape{4, 0, 3};
  Ints odd{-9, 0, 5};  // strides of an empty tensor never matter
  for (Ints* strides : {static_cast<Ints*>(nullptr), &odd}) {
    const TensorView v(make_tensor(nullptr, DataType::float64(), shape, strides, 16));
    EXPECT_EQ(v.numel(), 0);
    EXPECT_EQ(v.nbytes(), 0);
    EXPECT_EQ(v.data(), nullptr) << "byte_offset is not applied to NULL";
    EXPECT_EQ(v.data<double>(), nullptr);
    EXPECT_TRUE(v.is_contiguous());
    EXPECT_TRUE(v.is_fortran_contiguous());
    EXPECT_TRUE(v.is_compact());
  }
}

// NULL strides on an empty tensor: each stride must fit even when the extents' product does
// not, since no element count bounds them.
TEST(TensorView, EmptyTensorWithNullStridesAndHugeExtents) {
  Ints shape{INT64_MAX, 0, 2};
  const TensorView v(make_tensor(nullptr, DataType::int8(), shape, nullptr));
  EXPECT_EQ(v.strides(), IntSpan({2, 2, 1}));
  Ints largest{2, INT64_MAX, 0};
  const TensorView w(make_tensor(nullptr, DataType::int8(), largest, nullptr));
  EXPECT_EQ(w.strides(), IntSpan({INT64_MAX, 1, 1}));
}

// Validation puts no bound on the extents of an empty tensor with strides, so no view may
// multiply them (UBSan reports the signed overflow if one does).
TEST(TensorView, EmptyTensorWithHugeExtentsAndStrides) {
  Ints shape{2, INT64_MAX, 4, 0};
  Ints strides{0, 1, 0, 1};
  const DLTensor t = make_tensor(nullptr, DataType::float32(), shape, &strides);
  const TensorView validated(t);
  const TensorView trusted = TensorView::unchecked(t, 0);
  for (const TensorView* v : {&validated, &trusted}) {
    EXPECT_EQ(v->numel(), 0);
    EXPECT_EQ(v->nbytes(), 0);
    EXPECT_TRUE(v->is_contiguous());
    EXPECT_TRUE(v->is_compact());
  }
}

TEST(TensorView, DataAppliesByteOffset) {
  std::vector<std::int32_t> storage(10);
  Ints shape{2, 2};
  const TensorView v(make_tensor(storage.data(), DataType::int32(), shape, nullptr, 8));
  EXPECT_EQ(v.byte_offset(), 8u);
  EXPECT_EQ(v.data(), storage.data() + 2);
  EXPECT_EQ(v.data<std::int32_t>(), storage.data() + 2);
  EXPECT_EQ(v.data<const std::int32_t>(), storage.data() + 2);
}

TEST(TensorView, TypedDataChecksDtype) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  const TensorView v(make_tensor(storage.data(), DataType::float32(), shape, nullptr));
  expect_error([&] { v.data<std::int32_t>(); }, Errc::dtype_mismatch,
               "dtype is float32, accessed as int32");
  expect_error([&] { v.data<const double>(); }, Errc::dtype_mismatch, "accessed as float64");
  expect_error([&] { v.data<std::uint32_t>(); }, Errc::dtype_mismatch, "accessed as uint32");
  EXPECT_EQ(v.data<float>(), storage.data());
}

// Both ways of marking a view read-only refuse mutable access and allow const access.
TEST(TensorView, ReadOnlyRefusesMutableAccess) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  const DLTensor t = make_tensor(storage.data(), DataType::float32(), shape, nullptr);
  const TensorView trusted = TensorView::unchecked(t, flag::read_only);
  const TensorView validated(t, ValidateOptions{false, 0, flag::read_only});
  for (const TensorView* v : {&trusted, &validated}) {
    EXPECT_TRUE(v->read_only());
    EXPECT_EQ(v->flags(), flag::read_only);
    expect_error([&] { v->data<float>(); }, Errc::read_only, "READ_ONLY");
    expect_error([&] { v->require_writable(); }, Errc::read_only, "READ_ONLY");
    EXPECT_EQ(v->data<const float>(), storage.data());
    // The dtype is still checked first for const access.
    expect_error([&] { v->data<const std::int64_t>(); }, Errc::dtype_mismatch, "int64");
    EXPECT_EQ(v->to_string(), "float32[2, 3] strides [3, 1] cpu read_only");
  }
}

struct RequireCase {
  const char* name;
  std::function<void(const TensorView&)> check;
  Errc code;
  const char* mention;
};

TEST(TensorView, RequireChecksThrowTheirCode) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  Ints transposed_strides{1, 2};
  const TensorView v(make_tensor(storage.data(), DataType::float32(), shape, nullptr));
  const TensorView transposed(
      make_tensor(storage.data(), DataType::float32(), shape, &transposed_strides));
  const TensorView read_only = TensorView::unchecked(v.to_dltensor(), flag::read_only);
  const RequireCase cases[] = {
      {"dtype", [](const TensorView& x) { x.require_dtype(DataType::float64()); },
       Errc::dtype_mismatch, "dtype is float32, required float64"},
      {"dtype<T>", [](const TensorView& x) { x.require_dtype<std::int32_t>(); },
       Errc::dtype_mismatch, "required int32"},
      {"ndim", [](const TensorView& x) { x.require_ndim(3); }, Errc::rank_mismatch,
       "ndim is 2, required 3"},
      {"shape_rank", [](const TensorView& x) { x.require_shape({2}); }, Errc::rank_mismatch,
       "ndim is 2, required shape has 1 dimensions"},
      {"shape_extent",
       [](const TensorView& x) {
         x.require_shape({-1, 4});
       },
       Errc::shape_mismatch, "shape[1] is 3, required 4"},
      {"shape_first_extent",
       [](const TensorView& x) {
         x.require_shape({3, -1});
       },
       Errc::shape_mismatch, "shape[0] is 2, required 3"},
      {"shape_bad_wildcard",
       [](const TensorView& x) {
         x.require_shape({-2, 3});
       },
       Errc::invalid_argument, "required shape[0] is -2"},
      {"device", [](const TensorView& x) { x.require_device(Device::cuda(0)); },
       Errc::device_mismatch, "device is cpu, required cuda:0"},
      {"device_id", [](const TensorView& x) { x.require_device(Device(kDLCPU, 1)); },
       Errc::device_mismatch, "required cpu:1"},
      {"chain_stops_at_failure",
       [](const TensorView& x) { x.require_ndim(2).require_dtype<double>().require_ndim(5); },
       Errc::dtype_mismatch, "required float64"},
  };
  for (const RequireCase& c : cases) {
    SCOPED_TRACE(c.name);
    expect_error([&] { c.check(v); }, c.code, c.mention);
  }
  expect_error([&] { transposed.require_contiguous(); }, Errc::not_contiguous,
               "float32[2, 3] strides [1, 2] cpu is not row-major contiguous");
  expect_error([&] { read_only.require_writable(); }, Errc::read_only, "READ_ONLY");
}

TEST(TensorView, RequireChecksChainOnSuccess) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  const TensorView v(make_tensor(storage.data(), DataType::float32(), shape, nullptr));
  const TensorView& same = v.require_dtype(DataType::float32())
                               .require_dtype<float>()
                               .require_ndim(2)
                               .require_shape({2, 3})
                               .require_shape({-1, 3})
                               .require_shape({2, -1})
                               .require_shape({-1, -1})
                               .require_device(Device::cpu())
                               .require_contiguous()
                               .require_writable();
  EXPECT_EQ(&same, &v);
}

TEST(TensorView, Streams) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  const TensorView v(make_tensor(storage.data(), DataType::float32(), shape, nullptr));
  std::ostringstream os;
  os << v;
  EXPECT_EQ(os.str(), "float32[2, 3] strides [3, 1] cpu");
  EXPECT_EQ(v.to_string(), os.str());

  std::vector<std::int64_t> wide(10);
  Ints one{4};
  Ints two{2};
  const TensorView w = TensorView::unchecked(
      make_tensor(wide.data(), DataType::int64(), one, &two, 16, Device::cuda(1)), flag::read_only);
  EXPECT_EQ(w.to_string(), "int64[4] strides [2] cuda:1 byte_offset 16 read_only");
}

TEST(TensorView, FromRawParts) {
  std::vector<std::int16_t> storage(13);
  const std::int64_t extents[] = {3, 4};
  const TensorView compact(storage.data(), DataType::int16(), extents);
  EXPECT_NE(compact.shape().data(), extents) << "raw parts are copied into the view";
  EXPECT_EQ(compact.shape(), IntSpan(extents));
  EXPECT_EQ(compact.strides(), IntSpan({4, 1}));
  EXPECT_TRUE(compact.is_contiguous());
  EXPECT_EQ(compact.device(), Device::cpu());
  EXPECT_EQ(compact.data(), storage.data());

  const Ints shape{4, 3};
  const Ints strides{1, 4};
  const TensorView strided(storage.data(), DataType::int16(), shape, strides, Device::cuda_host(),
                           2);
  EXPECT_NE(strided.strides().data(), strides.data()) << "raw parts are copied into the view";
  EXPECT_EQ(strided.strides(), IntSpan(strides));
  EXPECT_EQ(strided.device(), Device::cuda_host());
  EXPECT_EQ(strided.byte_offset(), 2u);
  EXPECT_EQ(strided.data(), storage.data() + 1);
  EXPECT_TRUE(strided.is_fortran_contiguous());

  const TensorView scalar(storage.data(), DataType::int16(), {});
  EXPECT_EQ(scalar.numel(), 1);

  expect_error([&] { TensorView(storage.data(), DataType::int16(), shape, {1}); },
               Errc::invalid_argument, "strides has 1 values but shape has 2");
  expect_error(
      [&] {
        TensorView(storage.data(), DataType::int16(), {2, -3});
      },
      Errc::negative_shape, "shape[1] is -3");
  expect_error([&] { TensorView(nullptr, DataType::int16(), {2}); }, Errc::null_data,
               "data is NULL");

  dlpackpp::Result<TensorView> bad =
      TensorView::try_from(storage.data(), DataType(dtype_code::bool_, 16), shape);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), Errc::unsupported_dtype);
  dlpackpp::Result<TensorView> good =
      TensorView::try_from(storage.data(), DataType::int16(), shape);
  ASSERT_TRUE(good.has_value());
  EXPECT_EQ(good->strides(), IntSpan({3, 1}));
}

TEST(TensorView, KeepsUnknownFlagBits) {
  float value = 0;
  Ints shape{1};
  const std::uint64_t flags = flag::is_copied | (std::uint64_t{1} << 63);
  const TensorView v(make_tensor(&value, DataType::float32(), shape, nullptr),
                     ValidateOptions{false, 0, flags});
  EXPECT_EQ(v.flags(), flags);
  EXPECT_FALSE(v.read_only());
  EXPECT_FALSE(v.is_subbyte_padded());
}

// Views from raw parts copy shape and strides, so temporaries do not dangle (ASan reports a
// stack-use-after-scope read here if the view kept pointing at the braced lists).
TEST(TensorView, RawPartsOutliveTheirBracedLists) {
  std::vector<float> buf(24);
  const TensorView small(buf.data(), DataType::float32(), {2, 3, 4}, {12, 4, 1});
  EXPECT_EQ(small.shape(), (IntSpan{2, 3, 4}));
  EXPECT_EQ(small.strides(), (IntSpan{12, 4, 1}));
  const TensorView copy = small;  // the copy reads its own arrays, not the original's
  EXPECT_EQ(copy.shape(2), 4);
  EXPECT_EQ(copy.stride(0), 12);

  const TensorView big(buf.data(), DataType::float32(), {1, 1, 1, 1, 1, 2, 3, 1, 4});
  const TensorView big_copy = big;
  EXPECT_EQ(big_copy.ndim(), 9);
  EXPECT_EQ(big_copy.shape(), (IntSpan{1, 1, 1, 1, 1, 2, 3, 1, 4}));
  EXPECT_EQ(big_copy.stride(5), 12);
  EXPECT_TRUE(big_copy.is_contiguous());
}

// ---- Lifetimes: what a temporary view hands out never dangles (ASan would report it). ----

TEST(TensorViewLifetimes, TemporaryViewsHandOutValues) {
  std::vector<float> storage(12);
  Ints shape{3, 4};
  const DLTensor t = make_tensor(storage.data(), DataType::float32(), shape, nullptr);
  // NULL strides: the compact ones live inside the view, so a temporary's come by value.
  const auto strides = TensorView(t).strides();
  EXPECT_EQ(strides, (IntSpan{4, 1}));
  const auto kept_shape = TensorView(storage.data(), DataType::float32(), {3, 4}).shape();
  EXPECT_EQ(kept_shape, (IntSpan{3, 4}));
  // In-expression uses keep working.
  EXPECT_EQ(TensorView(t).strides()[0], 4);
  std::int64_t sum = 0;
  for (auto s : TensorView(t).strides()) sum += s;
  EXPECT_EQ(sum, 5);
  // require_* on a temporary returns the view by value, so a kept reference is safe.
  const auto& v = TensorView(t).require_dtype<float>().require_ndim(2);
  EXPECT_EQ(v.strides(), (IntSpan{4, 1}));
  EXPECT_EQ(v.numel(), 12);
}

// ---- Read-only: no mutable path to a READ_ONLY view's elements. ----

TEST(TensorViewReadOnly, UntypedDataIsCheckedAndConstDataIsNot) {
  std::vector<float> storage(4);
  Ints shape{4};
  const DLTensor t = make_tensor(storage.data(), DataType::float32(), shape, nullptr);
  ValidateOptions read_only;
  read_only.flags = flag::read_only;
  const TensorView locked(t, read_only);
  expect_error([&] { static_cast<void>(locked.data()); }, Errc::read_only, "READ_ONLY");
  EXPECT_EQ(locked.const_data(), storage.data());
  EXPECT_EQ(locked.data<const float>(), storage.data());
  const TensorView open(t);
  EXPECT_EQ(open.data(), storage.data());
}

// ---- Typed access never hands out a misaligned pointer. ----

TEST(TensorViewAlignment, TypedAccessChecksAlignofT) {
  alignas(8) unsigned char bytes[64] = {};
  Ints shape{4};
  for (std::uint64_t offset : {1u, 2u, 3u, 5u}) {
    SCOPED_TRACE(offset);
    const DLTensor t = make_tensor(bytes, DataType::float32(), shape, nullptr, offset);
    const TensorView v(t);  // the view itself is fine: DLPack does not promise alignment
    EXPECT_EQ(v.const_data(), bytes + offset);
    expect_error([&] { static_cast<void>(v.data<const float>()); }, Errc::misaligned,
                 "not aligned to 4 bytes");
    expect_error([&] { static_cast<void>(v.accessor<const float, 1>()); }, Errc::misaligned);
    auto r = v.try_data<float>();
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), Errc::misaligned);
  }
  const DLTensor aligned = make_tensor(bytes, DataType::float32(), shape, nullptr, 4);
  EXPECT_EQ(TensorView(aligned).data<const float>(), reinterpret_cast<const float*>(bytes + 4));
  // Byte-sized elements are always aligned.
  const DLTensor u8 = make_tensor(bytes, DataType::uint8(), shape, nullptr, 3);
  EXPECT_EQ(TensorView(u8).data<const std::uint8_t>(), bytes + 3);
}

// ---- Bool: typed access reads bytes, defined for every value a producer may store. ----

TEST(TensorViewBool, BoolByteReadsAnyByte) {
  std::uint8_t bytes[4] = {0, 1, 2, 255};
  Ints shape{4};
  const DLTensor t = make_tensor(bytes, DataType::bool_(), shape, nullptr);
  const auto a = TensorView(t).accessor<const dlpackpp::BoolByte, 1>();
  EXPECT_FALSE(static_cast<bool>(a(0)));
  EXPECT_TRUE(static_cast<bool>(a(1)));
  EXPECT_TRUE(static_cast<bool>(a(2)));
  EXPECT_TRUE(static_cast<bool>(a(3)));
  EXPECT_EQ(a(3).byte, 255);
  dlpackpp::BoolByte* w = TensorView(t).data<dlpackpp::BoolByte>();
  w[3] = false;
  EXPECT_EQ(bytes[3], 0);
}

// ---- Every check has a non-throwing twin with the same code. ----

TEST(TensorViewTwins, TryFormsReportWhatTheThrowingFormsThrow) {
  std::vector<float> storage(6);
  Ints shape{2, 3};
  Ints strides{1, 2};
  const DLTensor t = make_tensor(storage.data(), DataType::float32(), shape, &strides);
  ValidateOptions ro;
  ro.flags = flag::read_only;
  const TensorView v(t, ro);
  EXPECT_EQ(v.try_require_dtype<double>().error().code(), Errc::dtype_mismatch);
  EXPECT_EQ(v.try_require_dtype(DataType::int8()).error().code(), Errc::dtype_mismatch);
  EXPECT_EQ(v.try_require_ndim(3).error().code(), Errc::rank_mismatch);
  EXPECT_EQ(v.try_require_shape({2, 4}).error().code(), Errc::shape_mismatch);
  EXPECT_EQ(v.try_require_shape({2}).error().code(), Errc::rank_mismatch);
  EXPECT_EQ(v.try_require_device(Device::cuda(0)).error().code(), Errc::device_mismatch);
  EXPECT_EQ(v.try_require_contiguous().error().code(), Errc::not_contiguous);
  EXPECT_EQ(v.try_require_writable().error().code(), Errc::read_only);
  EXPECT_EQ((v.try_accessor<float, 2>().error().code()), Errc::read_only);
  EXPECT_EQ((v.try_accessor<const float, 3>().error().code()), Errc::rank_mismatch);
  EXPECT_EQ(v.try_data<const double>().error().code(), Errc::dtype_mismatch);
  EXPECT_EQ(v.try_shape(2).error().code(), Errc::out_of_range);
  EXPECT_EQ(v.try_stride(-3).error().code(), Errc::out_of_range);
  EXPECT_EQ(*v.try_shape(-1), 3);
  EXPECT_EQ(*v.try_stride(1), 2);
  ASSERT_TRUE(v.try_require_dtype<float>());
  EXPECT_EQ(v.try_require_shape({-1, 3})->numel(), 6);
  EXPECT_EQ((*v.try_accessor<const float, 2>()).stride(1), 2);
  EXPECT_EQ(*v.try_data<const float>(), storage.data());
}

}  // namespace

// Copies and moves of views whose values live inside the view (normalized NULL strides, raw
// parts) must point at their own copies, so they outlive the view they came from.
namespace {
bool points_into(const TensorView& v, const std::int64_t* p) {
  const auto* begin = reinterpret_cast<const unsigned char*>(&v);
  const auto* q = reinterpret_cast<const unsigned char*>(p);
  return q >= begin && q < begin + sizeof(TensorView);
}

void expect_compact_4x3(const TensorView& v) {
  EXPECT_EQ(v.shape(), (Ints{4, 3}));
  EXPECT_EQ(v.strides(), (Ints{3, 1}));
  EXPECT_EQ(v.numel(), 12);
  EXPECT_TRUE(v.is_contiguous());
}
}  // namespace

TEST(TensorViewCopies, InlineValuesFollowTheCopy) {
  float buffer[12] = {};
  Ints shape = {4, 3};
  std::optional<TensorView> source;
  {
    const DLTensor legacy = make_tensor(buffer, DataType::float32(), shape, nullptr);
    source.emplace(legacy);  // NULL strides: normalized inline, the DLTensor itself dies here
  }
  std::optional<TensorView> raw;
  raw.emplace(buffer, DataType::float32(), IntSpan{4, 3});  // shape and strides copied inline

  for (std::optional<TensorView>* from : {&source, &raw}) {
    TensorView copied(**from);
    TensorView moved{TensorView(**from)};
    TensorView assigned(buffer, DataType::float32(), IntSpan{1});
    assigned = copied;
    TensorView move_assigned(buffer, DataType::float32(), IntSpan{1});
    move_assigned = TensorView(copied);
    from->reset();  // every pointer into the source now dangles
    for (const TensorView* v : {&copied, &moved, &assigned, &move_assigned}) {
      expect_compact_4x3(*v);
      EXPECT_TRUE(points_into(*v, v->strides().data()));
    }
    from->emplace(copied);
    EXPECT_TRUE(points_into(**from, (*from)->strides().data()));
  }
  TensorView self(buffer, DataType::float32(), IntSpan{4, 3});
  TensorView& alias = self;
  self = alias;
  expect_compact_4x3(self);
}

TEST(TensorViewCopies, ProducerArraysAreSharedNotCopied) {
  float buffer[12] = {};
  Ints shape = {4, 3};
  Ints strides = {3, 1};
  const DLTensor t = make_tensor(buffer, DataType::float32(), shape, &strides);
  const TensorView v(t);
  const TensorView copy = v;
  EXPECT_EQ(copy.shape().data(), shape.data());
  EXPECT_EQ(copy.strides().data(), strides.data());
}
