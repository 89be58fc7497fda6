// expect-error: Impl needs static ManagedTensor managed_tensor_allocator
// SPDX-License-Identifier: Apache-2.0
// The allocator is a required entry of the table: a producer without it is refused by name.
#include <dlpackpp/exchange_api.hpp>

#include <string_view>

struct NoAllocator {
  static dlpackpp::ManagedTensor managed_tensor_from_py_object_no_sync(void*) { return {}; }
  static void* managed_tensor_to_py_object_no_sync(dlpackpp::ManagedTensor&) { return nullptr; }
  static void set_error(std::string_view, std::string_view) {}
};

const DLPackExchangeAPI* table = dlpackpp::make_exchange_api<NoAllocator>();
