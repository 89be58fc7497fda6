// SPDX-License-Identifier: Apache-2.0
// TensorView and adopt_with_view never heap-allocate for ndim <= 8: counted by replacing global
// operator new/delete.
#include "support/counting_new.hpp"
#include "support/hand_made.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <dlpackpp/managed_tensor.hpp>
#include <dlpackpp/tensor_view.hpp>
#include <string>
#include <utility>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::Device;
using dlpackpp::IntSpan;
using dlpackpp::TensorView;
using Ints = std::vector<std::int64_t>;

using counting_new::allocations_during;

// A float tensor of extents 1, 2, 1, 2, ... over `storage`, with NULL or row-major strides.
struct Tensor {
  Ints shape;
  Ints strides;
  std::vector<float> storage;
  DLTensor t{};

  Tensor(int ndim, bool null_strides) {
    std::int64_t numel = 1;
    for (int d = 0; d < ndim; ++d) {
      shape.push_back(1 + d % 2);
      numel *= 1 + d % 2;
    }
    strides.assign(shape.size(), 1);
    for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
    storage.resize(static_cast<std::size_t>(numel));
    t.data = storage.data();
    t.device = Device::cpu();
    t.ndim = ndim;
    t.dtype = DataType::float32();
    t.shape = shape.data();
    t.strides = null_strides ? nullptr : strides.data();
  }
};

// Everything a consumer does with a view of `t`, folded into a number so none of it is
// optimized away.
std::int64_t use_views(const DLTensor& t) {
  std::int64_t sum = 0;
  const TensorView v(t);
  const dlpackpp::Result<TensorView> tried = TensorView::try_from(t);
  const TensorView raw(
      t.data, t.dtype, IntSpan(t.shape, static_cast<std::size_t>(t.ndim)),
      t.strides == nullptr ? IntSpan() : IntSpan(t.strides, static_cast<std::size_t>(t.ndim)));
  const TensorView trusted = TensorView::unchecked(t, 0);
  TensorView copy = v;
  copy = raw;
  const TensorView moved = std::move(copy);
  for (const TensorView* view : {&v, &*tried, &raw, &trusted, &moved}) {
    sum += view->numel() + view->nbytes() + view->ndim();
    for (std::int64_t s : view->strides()) sum += s;
    sum += view->is_contiguous() + view->is_fortran_contiguous() + view->is_compact();
    view->require_dtype<float>()
        .require_ndim(t.ndim)
        .require_device(Device::cpu())
        .require_contiguous();
    sum += view->data<const float>() != nullptr;
    sum += view->to_dltensor().ndim;
  }
  sum += dlpackpp::validate(t).has_value();
  return sum;
}

TEST(TensorViewAllocations, NoneForRanksUpTo8) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  for (int ndim = 0; ndim <= 8; ++ndim) {
    for (const bool null_strides : {false, true}) {
      const Tensor tensor(ndim, null_strides);
      std::int64_t sum = 0;
      EXPECT_EQ(allocations_during([&] { sum = use_views(tensor.t); }), 0)
          << "ndim " << ndim << (null_strides ? " with NULL strides" : " with strides");
      EXPECT_GT(sum, 0);
    }
  }
}

TEST(TensorViewAllocations, NoneForAccessors) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const Tensor tensor(2, true);
  const TensorView v(tensor.t);
  float total = 0;
  EXPECT_EQ(allocations_during([&] {
              const auto acc = v.accessor<const float, 2>();
              for (std::int64_t i = 0; i < acc.size(0); ++i) {
                for (std::int64_t j = 0; j < acc.size(1); ++j) total += acc(i, j) + acc[i][j];
              }
            }),
            0);
  EXPECT_EQ(total, 0.0f);
}

// Producer strides are borrowed at any rank; only normalizing NULL strides beyond the inline
// capacity needs the heap. This is also what shows the counter counts.
TEST(TensorViewAllocations, Rank9AllocatesOnlyForNullStrides) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const Tensor strided(9, false);
  EXPECT_EQ(allocations_during([&] { TensorView v(strided.t); }), 0);
  const Tensor null_strides(9, true);
  EXPECT_GT(allocations_during([&] { TensorView v(null_strides.t); }), 0);
  std::int64_t sum = 0;
  EXPECT_GT(allocations_during([&] { sum = use_views(null_strides.t); }), 0);
  EXPECT_GT(sum, 0);
}

// Failures build their message on the heap; only success is promised to be free.
TEST(TensorViewAllocations, FailuresMayAllocate) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  Tensor tensor(2, false);
  tensor.shape[1] = -1;
  bool valid = true;
  EXPECT_GT(allocations_during([&] { valid = dlpackpp::validate(tensor.t).has_value(); }), 0);
  EXPECT_FALSE(valid);
}

// adopt_with_view: adopting and viewing a valid tensor is as allocation-free as viewing it.
template <class Handle>
class AdoptWithViewAllocations : public ::testing::Test {
 protected:
  using Managed = typename Handle::managed_type;
  Managed* make(const dlpackpp_test::Layout& layout) {
    return dlpackpp_test::make_counted<Managed>(deletes, layout);
  }
  int deletes = 0;
};
using HandleKinds = ::testing::Types<dlpackpp::LegacyManagedTensor, dlpackpp::ManagedTensor>;
TYPED_TEST_SUITE(AdoptWithViewAllocations, HandleKinds, );

// What a consumer does after adopting, so that none of it is optimized away.
std::int64_t consume(const TensorView& v) {
  const float* data = v.require_dtype<float>().require_device(Device::cpu()).data<const float>();
  return v.numel() + (v.is_contiguous() ? 1 : 0) + v.strides()[0] + (data != nullptr ? 1 : 0);
}

TYPED_TEST(AdoptWithViewAllocations, NoneForRanksUpTo8) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  for (int ndim = 1; ndim <= 8; ++ndim) {
    for (const bool null_strides : {true, false}) {
      SCOPED_TRACE("ndim " + std::to_string(ndim) + (null_strides ? " NULL strides" : ""));
      dlpackpp_test::Layout layout{
          DataType::float32(), Ints(static_cast<std::size_t>(ndim), 2), {}};
      if (!null_strides) {
        layout.strides.assign(layout.shape.size(), 1);
        for (std::size_t d = layout.shape.size() - 1; d-- > 0;) {
          layout.strides[d] = layout.strides[d + 1] * 2;
        }
      }
      auto* first = this->make(layout);
      auto* second = this->make(layout);
      std::int64_t sum = 0;
      const long allocations = counting_new::allocations_during([&] {
        {
          auto [t, v] = TypeParam::adopt_with_view(first);
          sum += consume(v);
        }
        auto tried = TypeParam::try_adopt_with_view(second);
        if (tried) sum += consume(tried->view);
      });
      EXPECT_EQ(allocations, 0);
      EXPECT_EQ(sum, 2 * ((std::int64_t{1} << ndim) + 1 + (std::int64_t{1} << (ndim - 1)) + 1));
    }
  }
}

TYPED_TEST(AdoptWithViewAllocations, NoneForAdoptAsUpToRank8) {
  DLPACKPP_SKIP_UNLESS_COUNTING();
  const dlpackpp_test::Layout rank2{DataType::float32(), {2, 3}, {}};
  const dlpackpp_test::Layout rank8{DataType::float32(), Ints(8, 2), {}};
  auto* two = this->make(rank2);
  auto* eight = this->make(rank8);
  std::int64_t sizes = 0;
  const long allocations = counting_new::allocations_during([&] {
    {
      auto [t, a] = TypeParam::template adopt_as<const float, 2>(two);
      sizes += a.size(0) + a.stride(0);
    }
    auto tried = TypeParam::template try_adopt_as<const float, 8>(eight);
    if (tried) sizes += tried->accessor.size(7) + tried->accessor.stride(0);
  });
  EXPECT_EQ(allocations, 0);
  EXPECT_EQ(sizes, 2 + 3 + 2 + 128);
  EXPECT_EQ(this->deletes, 2);
}

}  // namespace
