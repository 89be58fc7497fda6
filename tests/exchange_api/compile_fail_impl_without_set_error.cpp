// expect-error: Impl needs static void set_error
// SPDX-License-Identifier: Apache-2.0
// A producer without set_error could not report its failures: refused with a message that
// names the missing function.
#include <dlpackpp/exchange_api.hpp>

struct NoSetError {
  static dlpackpp::ManagedTensor managed_tensor_allocator(const DLTensor&) { return {}; }
  static dlpackpp::ManagedTensor managed_tensor_from_py_object_no_sync(void*) { return {}; }
  static void* managed_tensor_to_py_object_no_sync(dlpackpp::ManagedTensor&) { return nullptr; }
};

const DLPackExchangeAPI* table = dlpackpp::make_exchange_api<NoSetError>();
