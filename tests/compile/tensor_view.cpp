// SPDX-License-Identifier: Apache-2.0
// Compile-time facts about TensorView, TensorAccessor and IntSpan: built, never run.
#include <array>
#include <cstdint>
#include <dlpackpp/tensor_view.hpp>
#include <type_traits>
#include <vector>

namespace {

using dlpackpp::DataType;
using dlpackpp::IntSpan;
using dlpackpp::TensorAccessor;
using dlpackpp::TensorView;

// TensorAccessor is what kernels receive by value: a plain, trivially copyable bundle.
static_assert(std::is_trivially_copyable<TensorAccessor<float, 0>>::value, "");
static_assert(std::is_trivially_copyable<TensorAccessor<float, 2>>::value, "");
static_assert(std::is_trivially_copyable<TensorAccessor<const double, 8>>::value, "");
static_assert(std::is_trivially_destructible<TensorAccessor<float, 3>>::value, "");
static_assert(std::is_nothrow_default_constructible<TensorAccessor<float, 3>>::value, "");
static_assert(std::is_same<decltype(std::declval<TensorAccessor<float, 2>>()(0, 1)), float&>::value,
              "operator() yields a reference to the element");
static_assert(std::is_same<decltype(std::declval<TensorAccessor<const float, 2>>()[0][1]),
                           const float&>::value,
              "chained operator[] ends at the element");
static_assert(std::is_same<decltype(std::declval<TensorAccessor<float, 1>>()[0]), float&>::value,
              "operator[] on rank 1 is the element");
static_assert(std::is_same<decltype(std::declval<TensorAccessor<int, 0>>()()), int&>::value,
              "a rank-0 accessor is called with no index");

// operator() takes exactly N integral indices.
static_assert(std::is_invocable<TensorAccessor<float, 2>, int, long long>::value, "");
static_assert(std::is_invocable<TensorAccessor<float, 2>, std::size_t, std::int64_t>::value, "");
static_assert(!std::is_invocable<TensorAccessor<float, 2>, int>::value, "too few indices");
static_assert(!std::is_invocable<TensorAccessor<float, 2>, int, int, int>::value, "too many");
static_assert(!std::is_invocable<TensorAccessor<float, 2>, double, int>::value, "not integral");

// Cheap to copy, never throws when copied, moved or destroyed; made only from a tensor.
static_assert(std::is_nothrow_copy_constructible<TensorView>::value, "");
static_assert(std::is_nothrow_move_constructible<TensorView>::value, "");
static_assert(std::is_nothrow_copy_assignable<TensorView>::value, "");
static_assert(std::is_nothrow_destructible<TensorView>::value, "");
static_assert(!std::is_default_constructible<TensorView>::value, "a view always views something");
static_assert(std::is_constructible<TensorView, const DLTensor&>::value, "");
static_assert(!std::is_convertible<const DLTensor&, TensorView>::value,
              "validating (and possibly throwing) is never implicit");
static_assert(std::is_same<decltype(TensorView::unchecked(std::declval<const DLTensor&>(), 0)),
                           TensorView>::value,
              "ManagedTensor builds its views with unchecked() (which may allocate for ranks "
              "above DLPACKPP_VIEW_INLINE_NDIM, so it is not noexcept)");
static_assert(std::is_constructible<TensorView, void*, DataType, IntSpan>::value, "raw parts");
static_assert(!std::is_constructible<TensorView, const float*, DataType, IntSpan>::value,
              "const data is not silently made writable");

// The accessors' types, as the contract names them.
static_assert(std::is_same<decltype(std::declval<const TensorView&>().shape()), IntSpan>::value,
              "");
static_assert(std::is_same<decltype(std::declval<const TensorView&>().strides()), IntSpan>::value,
              "");
static_assert(
    std::is_same<decltype(std::declval<const TensorView&>().numel()), std::int64_t>::value, "");
static_assert(std::is_same<decltype(std::declval<const TensorView&>().data()), void*>::value, "");
static_assert(std::is_same<decltype(std::declval<const TensorView&>().data<const float>()),
                           const float*>::value,
              "");
static_assert(std::is_same<decltype(std::declval<const TensorView&>().accessor<float, 3>()),
                           TensorAccessor<float, 3>>::value,
              "");
static_assert(std::is_same<decltype(std::declval<const TensorView&>().require_ndim(2)),
                           const TensorView&>::value,
              "checks chain");
static_assert(std::is_same<dlpackpp::Result<TensorView>,
                           decltype(TensorView::try_from(std::declval<const DLTensor&>()))>::value,
              "");

// IntSpan: a trivially copyable view, usable in constant expressions, fed from int64_t only.
static_assert(std::is_trivially_copyable<IntSpan>::value, "");
static_assert(std::is_convertible<const std::vector<std::int64_t>&, IntSpan>::value, "");
static_assert(std::is_convertible<const std::array<std::int64_t, 3>&, IntSpan>::value, "");
static_assert(std::is_convertible<const std::int64_t (&)[2], IntSpan>::value, "");
static_assert(!std::is_convertible<const std::vector<int>&, IntSpan>::value,
              "no silent reinterpretation of narrower integers");
static_assert(!std::is_convertible<const std::vector<std::uint64_t>&, IntSpan>::value, "");
constexpr std::int64_t extents[] = {2, 3};
static_assert(IntSpan(extents).size() == 2 && IntSpan(extents)[1] == 3, "");
static_assert(IntSpan(extents) == IntSpan(extents, 2) && IntSpan(extents) != IntSpan(extents, 1),
              "");

}  // namespace
