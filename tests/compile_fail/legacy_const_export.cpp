// expect-error: a legacy DLManagedTensor cannot mark itself read-only
// SPDX-License-Identifier: Apache-2.0
// A const element type means READ_ONLY, which a legacy DLManagedTensor cannot carry.
#include <dlpackpp/producers.hpp>

#include <memory>

dlpackpp::LegacyManagedTensor export_const(std::shared_ptr<const float> p) {
  return dlpackpp::from_shared_ptr<dlpackpp::LegacyManagedTensor>(std::move(p), {1});
}
