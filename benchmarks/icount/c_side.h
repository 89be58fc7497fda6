/* SPDX-License-Identifier: Apache-2.0 */
/* The hand-written C that dlpackpp's per-tensor path is measured against: a careful consumer
 * and producer of float32 DLPack tensors of any rank. The consumer is defined here, static
 * inline, so that it inlines into its benchmark case as dlpackpp's header-only path inlines
 * into its own: the comparison is then of the checks, not of a call into another TU. */
#ifndef DLPACKPP_BENCH_C_SIDE_H
#define DLPACKPP_BENCH_C_SIDE_H

#include "dlpackpp/bundled/dlpack.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
/* This is C, compiled as part of the C++ harness too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#endif

/* What a consumer learns before it reads: the first element, the count, the layout. */
typedef struct {
  const float* data;
  int64_t numel;
  int contiguous;
  const int64_t* strides;
} CTensorFacts;

/* Checks rank, the shape pointer, device (cpu:0), dtype (float32), the element count with
 * overflow checks, contiguity, NULL data and 4-byte alignment of a tensor whose strides are
 * `strides` (not NULL); fills `out` and returns 1, or returns 0. */
static inline int c_check_tensor(const DLTensor* x, int32_t ndim, const int64_t* strides,
                                 CTensorFacts* out) {
  if (x->ndim != ndim || x->shape == NULL) return 0;
  if (x->device.device_type != kDLCPU || x->device.device_id != 0) return 0;
  if (x->dtype.code != kDLFloat || x->dtype.bits != 32 || x->dtype.lanes != 1) return 0;
  int64_t numel = 1;
  int contiguous = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    const int64_t extent = x->shape[d];
    if (extent < 0) return 0;
    if (extent != 1 && strides[d] != numel) contiguous = 0;
    if (__builtin_mul_overflow(numel, extent, &numel)) return 0;
  }
  if (numel > 0 && x->data == NULL) return 0;
  const uintptr_t first = (uintptr_t)x->data + (uintptr_t)x->byte_offset;
  if ((first & 3u) != 0) return 0;
  out->data = (const float*)first;
  out->numel = numel;
  out->contiguous = contiguous;
  out->strides = strides;
  return 1;
}

/* A versioned tensor: the version and the strides pointer (DLPack >= 1.2 producers send
 * strides), then c_check_tensor(). The deleter is the caller's business, as in the C++ path. */
static inline int c_consume_versioned(const DLManagedTensorVersioned* t, int32_t ndim,
                                      CTensorFacts* out) {
  if (t->version.major != DLPACK_MAJOR_VERSION || t->dl_tensor.strides == NULL) return 0;
  return c_check_tensor(&t->dl_tensor, ndim, t->dl_tensor.strides, out);
}

/* The same for a legacy tensor, deriving compact strides into `scratch` when they are NULL. */
static inline int c_consume_legacy(const DLManagedTensor* t, int32_t ndim, int64_t* scratch,
                                   CTensorFacts* out) {
  const DLTensor* x = &t->dl_tensor;
  const int64_t* strides = x->strides;
  if (strides == NULL) {
    if (x->ndim != ndim || x->shape == NULL) return 0;
    int64_t running = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
      scratch[d] = running;
      if (__builtin_mul_overflow(running, x->shape[d] > 0 ? x->shape[d] : 1, &running)) return 0;
    }
    strides = scratch;
  }
  return c_check_tensor(x, ndim, strides, out);
}

/* Exports `data` (borrowed) as a compact float32 tensor: one malloc for the struct, shape and
 * strides, freed by its deleter. */
DLManagedTensorVersioned* c_export(float* data, const int64_t* shape, int32_t ndim);

#ifdef __cplusplus
#pragma GCC diagnostic pop
}
#endif

#endif
