// SPDX-License-Identifier: Apache-2.0
// Compile-time facts about the owning handles and what the factories return: built, never run.
#include <dlpackpp/dlpackpp.hpp>

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using dlpackpp::LegacyManagedTensor;
using dlpackpp::ManagedTensor;

// One set of facts, checked for both handle kinds by instantiating it below.
template <class Handle>
struct OwningHandleFacts {
  using M = typename Handle::managed_type;

  // Unique ownership: a copy would call the deleter twice.
  static_assert(!std::is_copy_constructible<Handle>::value, "");
  static_assert(!std::is_copy_assignable<Handle>::value, "");
  // Moves and destruction never throw, so handles can live in std::vector and be destroyed
  // during unwinding.
  static_assert(std::is_nothrow_move_constructible<Handle>::value, "");
  static_assert(std::is_nothrow_move_assignable<Handle>::value, "");
  static_assert(std::is_nothrow_destructible<Handle>::value, "");
  static_assert(std::is_nothrow_default_constructible<Handle>::value, "");
  static_assert(std::is_nothrow_swappable<Handle>::value, "");
  // Costs one pointer, the same as the raw struct pointer it replaces.
  static_assert(sizeof(Handle) == sizeof(void*), "");
  static_assert(sizeof(Handle) == sizeof(M*), "");
  // Adoption is explicit: a raw pointer never silently becomes owned.
  static_assert(std::is_constructible<Handle, M*>::value, "");
  static_assert(!std::is_convertible<M*, Handle>::value, "");
  // Tested in a condition, but never an accidental integer.
  static_assert(std::is_constructible<bool, Handle>::value, "");
  static_assert(!std::is_convertible<Handle, bool>::value, "");
  // A Result of a move-only handle is itself move-only.
  static_assert(!std::is_copy_constructible<dlpackpp::Result<Handle>>::value, "");
  static_assert(std::is_move_constructible<dlpackpp::Result<Handle>>::value, "");
  // The ownership queries cannot fail.
  static_assert(noexcept(std::declval<Handle&>().release()), "");
  static_assert(noexcept(std::declval<Handle&>().reset()), "");
  static_assert(noexcept(std::declval<const Handle&>().get()), "");
  static_assert(noexcept(Handle::adopt_unchecked(nullptr)), "");
  static_assert(std::is_same<decltype(std::declval<Handle&>().release()), M*>::value, "");

  static constexpr bool checked = true;
};
static_assert(OwningHandleFacts<LegacyManagedTensor>::checked, "");
static_assert(OwningHandleFacts<ManagedTensor>::checked, "");

static_assert(std::is_same<ManagedTensor::managed_type, DLManagedTensorVersioned>::value, "");
static_assert(std::is_same<LegacyManagedTensor::managed_type, DLManagedTensor>::value, "");
static_assert(ManagedTensor::is_versioned && !LegacyManagedTensor::is_versioned, "");
static_assert(std::is_same<dlpackpp::DefaultManagedTensor, ManagedTensor>::value,
              "factories return versioned tensors where the header has them");

// Factories return the handle kind named by their first template argument.
using Shape = dlpackpp::IntSpan;
template <class Handle>
struct FactoryFacts {
  static_assert(std::is_same<decltype(dlpackpp::from_vector<Handle>(std::vector<float>{}, Shape{})),
                             Handle>::value,
                "");
  static_assert(
      std::is_same<decltype(dlpackpp::from_unique_ptr<Handle>(std::unique_ptr<float[]>{}, Shape{})),
                   Handle>::value,
      "");
  static_assert(
      std::is_same<decltype(dlpackpp::from_shared_ptr<Handle>(std::shared_ptr<float>{}, Shape{})),
                   Handle>::value,
      "");
  static_assert(std::is_same<decltype(dlpackpp::wrap<Handle>(nullptr, dlpackpp::DataType{}, Shape{},
                                                             Shape{}, dlpackpp::Device{}, 0)),
                             Handle>::value,
                "");
  static_assert(std::is_same<decltype(dlpackpp::allocate<Handle>(dlpackpp::DataType{}, Shape{})),
                             Handle>::value,
                "");
  static_assert(
      std::is_same<decltype(dlpackpp::try_allocate<Handle>(dlpackpp::DataType{}, Shape{})),
                   dlpackpp::Result<Handle>>::value,
      "");
  static constexpr bool checked = true;
};
static_assert(FactoryFacts<LegacyManagedTensor>::checked, "");
static_assert(FactoryFacts<ManagedTensor>::checked, "");
static_assert(
    std::is_same<decltype(dlpackpp::allocate(dlpackpp::DataType{}, Shape{})), ManagedTensor>::value,
    "the default kind is the versioned one");

// Conversions consume their input: an lvalue handle must be moved in explicitly.
template <class F, class Arg, class = void>
struct accepts : std::false_type {};
template <class F, class Arg>
struct accepts<F, Arg, std::void_t<decltype(std::declval<F>()(std::declval<Arg>()))>>
    : std::true_type {};
struct ToLegacy {
  template <class T>
  auto operator()(T&& t) const -> decltype(dlpackpp::to_legacy(std::forward<T>(t)));
};
struct ToVersioned {
  template <class T>
  auto operator()(T&& t) const -> decltype(dlpackpp::to_versioned(std::forward<T>(t)));
};
static_assert(accepts<ToLegacy, ManagedTensor&&>::value, "");
static_assert(!accepts<ToLegacy, ManagedTensor&>::value, "");
static_assert(!accepts<ToLegacy, LegacyManagedTensor&&>::value, "");
static_assert(accepts<ToVersioned, LegacyManagedTensor&&>::value, "");
static_assert(!accepts<ToVersioned, LegacyManagedTensor&>::value, "");
static_assert(std::is_same<decltype(dlpackpp::to_legacy(std::declval<ManagedTensor>())),
                           LegacyManagedTensor>::value,
              "");
static_assert(std::is_same<decltype(dlpackpp::to_versioned(std::declval<LegacyManagedTensor>())),
                           ManagedTensor>::value,
              "");

}  // namespace
