/*
 * SPDX-License-Identifier: Apache-2.0
 *
 * dlpackpp's own rendition of the DLPack 1.3 C ABI.
 *
 * Written for dlpackpp from the published DLPack specification so that the library works
 * out of the box for users who have no dlpack.h of their own. It is ABI-identical to the
 * upstream DLPack 1.3 header: same include guard, type names, enumerator values, macro
 * values, struct layouts and function-pointer types (tests/abi proves it against the
 * reference header). Because the include guard is shared, whichever dlpack.h a translation
 * unit sees first is the one in force; a framework's own header therefore always wins when
 * it is included before dlpackpp.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_
/* Lets dlpackpp report that its own copy is the one in force. */
#define DLPACKPP_BUNDLED_DLPACK_H_ 1

/* C linkage marker for declarations consumers may add around this header. */
#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

/* ABI major: a mismatch means DLManagedTensorVersioned must only be deleted, not read. */
#define DLPACK_MAJOR_VERSION 1

/* API minor: only adds enumerators and flags; data from a newer minor stays readable. */
#define DLPACK_MINOR_VERSION 3

/* Symbol visibility decoration kept for source compatibility with Windows builds. */
#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version pair carried by every versioned tensor and exchange table. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* Where the bytes live. Gaps (5, 6) are historical and stay unused. */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3,     /* page-locked host memory from the CUDA runtime */
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,          /* Verilog simulator */
  kDLROCM = 10,
  kDLROCMHost = 11,    /* page-locked host memory from HIP */
  kDLExtDev = 12,      /* reserved for experiments; meaning is up to the implementation */
  kDLCUDAManaged = 13, /* unified memory, reachable from host and device */
  kDLOneAPI = 14,      /* oneAPI unified shared memory */
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18,
} DLDeviceType;

/* A device kind plus its ordinal; host-side kinds use ordinal 0. */
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/* Element kind. Stored as uint8_t in DLDataType to keep that struct four bytes. */
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U, /* only meaningful between parties that agree on it */
  kDLBfloat = 4U,
  kDLComplex = 5U,      /* interleaved real/imaginary pairs */
  kDLBool = 6U,         /* one byte per element */
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U, /* 6 bits; any other width must be refused by consumers */
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U, /* 4 bits; any other width must be refused by consumers */
} DLDataTypeCode;

/*
 * Element type: code, width in bits and vector lanes, in native byte order. Sub-byte
 * types are packed little-bit-endian unless the producer flags them as padded.
 */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/*
 * A strided view of memory that the struct itself does not own. `data` plus `byte_offset`
 * is the first element; `data` may be NULL for an empty tensor. `shape` and `strides` may be
 * NULL when `ndim` is 0. Strides count elements, not bytes; since DLPack 1.2 producers must
 * provide them for `ndim > 0`, while older producers used NULL for compact row-major data.
 */
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/*
 * Pre-1.0 ownership wrapper, still widely exchanged. The consumer calls `deleter` (when it
 * is not NULL) exactly once to hand the tensor back; the deleter frees `self` too.
 */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

/* Flag bits for DLManagedTensorVersioned::flags. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/*
 * The current ownership wrapper. Every field up to and including `flags` keeps its place
 * across major versions so that a consumer can always release a tensor it cannot read.
 */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

/*
 * Exchange API (DLPack 1.2+): a per-type table of C entry points for fast, GIL-light
 * exchange. None of these functions may let a C++ exception escape.
 */

/* Ask a producer for a fresh tensor shaped like `prototype` (dtype, ndim, shape, device
 * are read). Returns 0 on success; on failure calls SetError and leaves *out NULL. */
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));

/* Export a Python object as an owning versioned tensor, without stream synchronisation. */
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void* py_object,
                                                      DLManagedTensorVersioned** out);

/* Fill a caller-provided DLTensor that borrows from a Python object until control returns. */
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);

/* Report the producer's current stream for a device (NULL is fine for CPU). */
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id,
                                       void** out_current_stream);

/* Wrap an owning versioned tensor (ownership is taken) into the producer's Python type. */
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned* tensor,
                                                    void** out_py_object);

/* The part of the exchange table that never moves: its version and the older table. */
typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader* prev_api;
} DLPackExchangeAPIHeader;

/* The exchange table a framework publishes once per tensor type, alive for the process. */
typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;                 /* required */
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync; /* required */
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;     /* required */
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;       /* may be NULL */
  DLPackCurrentWorkStream current_work_stream;                           /* required */
} DLPackExchangeAPI;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DLPACK_DLPACK_H_ */
