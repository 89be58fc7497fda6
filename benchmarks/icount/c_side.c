/* SPDX-License-Identifier: Apache-2.0 */
/* Hand-written C consumer and producer; see c_side.h. */
#include "c_side.h"

#include <stdlib.h>

static int c_check_tensor(const DLTensor* x, int32_t ndim, const int64_t* strides,
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
  const char* first = (const char*)x->data + x->byte_offset;
  if (numel > 0 && x->data == NULL) return 0;
  if (((uintptr_t)first & 3u) != 0) return 0;
  out->data = (const float*)first;
  out->numel = numel;
  out->contiguous = contiguous;
  out->strides = strides;
  return 1;
}

int c_consume_versioned(const DLManagedTensorVersioned* t, int32_t ndim, CTensorFacts* out) {
  if (t->version.major != DLPACK_MAJOR_VERSION) return 0;
  if (t->dl_tensor.strides == NULL) return 0; /* DLPack >= 1.2 producers send strides */
  return c_check_tensor(&t->dl_tensor, ndim, t->dl_tensor.strides, out);
}

int c_consume_legacy(const DLManagedTensor* t, int32_t ndim, int64_t* scratch, CTensorFacts* out) {
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

static void c_free_export(DLManagedTensorVersioned* self) { free(self->manager_ctx); }

DLManagedTensorVersioned* c_export(float* data, const int64_t* shape, int32_t ndim) {
  const size_t arrays = 2 * (size_t)ndim * sizeof(int64_t);
  DLManagedTensorVersioned* t = (DLManagedTensorVersioned*)malloc(sizeof(*t) + arrays);
  if (t == NULL) return NULL;
  int64_t* out_shape = (int64_t*)(t + 1);
  int64_t* out_strides = out_shape + ndim;
  int64_t running = 1;
  for (int32_t d = ndim - 1; d >= 0; --d) {
    if (shape[d] < 0) {
      free(t);
      return NULL;
    }
    out_shape[d] = shape[d];
    out_strides[d] = running;
    if (__builtin_mul_overflow(running, shape[d] > 0 ? shape[d] : 1, &running)) {
      free(t);
      return NULL;
    }
  }
  t->version.major = DLPACK_MAJOR_VERSION;
  t->version.minor = DLPACK_MINOR_VERSION;
  t->manager_ctx = t;
  t->deleter = c_free_export;
  t->flags = 0;
  t->dl_tensor.data = data;
  t->dl_tensor.device.device_type = kDLCPU;
  t->dl_tensor.device.device_id = 0;
  t->dl_tensor.ndim = ndim;
  t->dl_tensor.dtype.code = kDLFloat;
  t->dl_tensor.dtype.bits = 32;
  t->dl_tensor.dtype.lanes = 1;
  t->dl_tensor.shape = out_shape;
  t->dl_tensor.strides = out_strides;
  t->dl_tensor.byte_offset = 0;
  return t;
}
