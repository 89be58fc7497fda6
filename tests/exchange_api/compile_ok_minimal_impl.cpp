// expect-ok
// SPDX-License-Identifier: Apache-2.0
// The same producer with every required function compiles: the two cases beside this one fail
// for the function they lack, not for anything else.
#include <dlpackpp/exchange_api.hpp>

#include <string_view>

struct Complete {
  static dlpackpp::ManagedTensor managed_tensor_allocator(const DLTensor&) { return {}; }
  static dlpackpp::ManagedTensor managed_tensor_from_py_object_no_sync(void*) { return {}; }
  static void* managed_tensor_to_py_object_no_sync(dlpackpp::ManagedTensor&) { return nullptr; }
  static void set_error(std::string_view, std::string_view) {}
};

const DLPackExchangeAPI* table = dlpackpp::make_exchange_api<Complete>();
