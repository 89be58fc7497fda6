// expect-error: (use of deleted function|call to deleted|invokes a deleted function)
// SPDX-License-Identifier: Apache-2.0
// The compact strides of a view of a NULL-strides tensor live inside the view: a span of a
// temporary view's strides would dangle (shape() of a raw-parts view likewise).
#include <dlpackpp/managed_tensor.hpp>

dlpackpp::IntSpan strides_of(const dlpackpp::LegacyManagedTensor& t) {
  dlpackpp::IntSpan s = t.view().strides();
  return s;
}
