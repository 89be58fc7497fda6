/* SPDX-License-Identifier: Apache-2.0 */
/* The hand-written C that dlpackpp's per-tensor path is measured against: a careful consumer
 * and producer of float32 DLPack tensors of any rank. */
#ifndef DLPACKPP_BENCH_C_SIDE_H
#define DLPACKPP_BENCH_C_SIDE_H

#include "dlpackpp/bundled/dlpack.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a consumer learns before it reads: the first element, the count, the layout. */
typedef struct {
  const float* data;
  int64_t numel;
  int contiguous;
  const int64_t* strides;
} CTensorFacts;

/* Checks version, ndim, shape and strides pointers, device, dtype, the element count with
 * overflow checks, contiguity, NULL data and 4-byte alignment; fills `out` and returns 1, or
 * returns 0. The deleter is the caller's business, as in the C++ path. */
int c_consume_versioned(const DLManagedTensorVersioned* t, int32_t ndim, CTensorFacts* out);

/* The same for a legacy tensor, deriving compact strides into `scratch` when they are NULL. */
int c_consume_legacy(const DLManagedTensor* t, int32_t ndim, int64_t* scratch, CTensorFacts* out);

/* Exports `data` (borrowed) as a compact float32 tensor: one malloc for the struct, shape and
 * strides, freed by its deleter. */
DLManagedTensorVersioned* c_export(float* data, const int64_t* shape, int32_t ndim);

#ifdef __cplusplus
}
#endif

#endif
