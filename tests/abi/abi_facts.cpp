// SPDX-License-Identifier: Apache-2.0
// Compiled twice: once against a real DLPack 1.3 (or later 1.x) header and once against
// dlpackpp's bundled copy. Both define the same include guard and type names, so they cannot meet
// in one translation unit; instead each build turns what it sees into a list of facts under a
// distinct function name (DLPACKPP_ABI_FACTS_FUNCTION) and test_abi.cpp compares the lists.
//
// Everything here except that one function has internal linkage: the two builds see
// different definitions of DLTensor & co., and nothing that depends on them may be merged
// by the linker.
#include "abi_facts.hpp"

#include <dlpackpp/dlpack.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>

#ifndef DLPACKPP_ABI_FACTS_FUNCTION
#error "define DLPACKPP_ABI_FACTS_FUNCTION to abi_facts_reference or abi_facts_bundled"
#endif
#ifndef DLPACKPP_ABI_EXPECT_BUNDLED
#error "define DLPACKPP_ABI_EXPECT_BUNDLED to 1 (bundled build) or 0 (reference build)"
#endif

// A reference build that silently fell back to the bundled header would compare the bundled
// header with itself and always pass; refuse to build instead.
#if DLPACKPP_DLPACK_IS_BUNDLED != DLPACKPP_ABI_EXPECT_BUNDLED
#error "tests/abi: this build picked the wrong dlpack.h (check the reference tests/abi reports)"
#endif
// The bundled header is 1.3; a reference may be a later 1.x, whose additions leave the 1.3
// facts recorded here unchanged.
#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION != 1 || DLPACK_MINOR_VERSION < 3
#error "tests/abi: both builds must see a DLPack 1.3 (or later 1.x) header"
#endif
#if DLPACKPP_ABI_EXPECT_BUNDLED && DLPACK_MINOR_VERSION != 3
#error "tests/abi: the bundled header must be DLPack 1.3"
#endif

// --- exact types, checked in each build against signatures spelled out by hand --------------
// A signature that drifted (a const added, int32_t widened, a parameter reordered) changes
// the type and fails here with the typedef's name, before any runtime comparison.
static_assert(std::is_same<DLPackManagedTensorAllocator,
                           int (*)(DLTensor*, DLManagedTensorVersioned**, void*,
                                   void (*)(void*, const char*, const char*))>::value,
              "DLPackManagedTensorAllocator signature");
static_assert(std::is_same<DLPackManagedTensorFromPyObjectNoSync,
                           int (*)(void*, DLManagedTensorVersioned**)>::value,
              "DLPackManagedTensorFromPyObjectNoSync signature");
static_assert(std::is_same<DLPackDLTensorFromPyObjectNoSync, int (*)(void*, DLTensor*)>::value,
              "DLPackDLTensorFromPyObjectNoSync signature");
static_assert(
    std::is_same<DLPackCurrentWorkStream, int (*)(DLDeviceType, std::int32_t, void**)>::value,
    "DLPackCurrentWorkStream signature");
static_assert(std::is_same<DLPackManagedTensorToPyObjectNoSync,
                           int (*)(DLManagedTensorVersioned*, void**)>::value,
              "DLPackManagedTensorToPyObjectNoSync signature");
static_assert(std::is_same<decltype(DLManagedTensor::deleter), void (*)(DLManagedTensor*)>::value,
              "DLManagedTensor::deleter signature");
static_assert(std::is_same<decltype(DLManagedTensorVersioned::deleter),
                           void (*)(DLManagedTensorVersioned*)>::value,
              "DLManagedTensorVersioned::deleter signature");
static_assert(
    std::is_same<decltype(DLPackExchangeAPIHeader::prev_api), DLPackExchangeAPIHeader*>::value,
    "DLPackExchangeAPIHeader::prev_api type");

// The struct tags are part of the C API (`struct DLManagedTensor* self`). An elaborated name
// that the header did not declare would declare a new, different type here.
static_assert(std::is_same<struct DLManagedTensor, DLManagedTensor>::value, "struct tag");
static_assert(std::is_same<struct DLManagedTensorVersioned, DLManagedTensorVersioned>::value,
              "struct tag");
static_assert(std::is_same<struct DLPackExchangeAPIHeader, DLPackExchangeAPIHeader>::value,
              "struct tag");
static_assert(std::is_same<struct DLPackExchangeAPI, DLPackExchangeAPI>::value, "struct tag");

namespace {

using dlpackpp_abi::Fact;
using dlpackpp_abi::Facts;

template <class T>
std::string num(T v) {
  return std::to_string(v);
}

// A summary of a type's category that survives comparison across the two builds, next to
// its mangled name (identical across TUs for types that have the same name and shape).
template <class T>
std::string type_summary() {
  std::string s = typeid(T).name();
  s += std::is_pointer<T>::value ? " ptr" : "";
  s += std::is_enum<T>::value ? " enum" : "";
  s += std::is_integral<T>::value ? (std::is_signed<T>::value ? " signed" : " unsigned") : "";
  if (std::is_pointer<T>::value) {
    s += std::is_const<typename std::remove_pointer<T>::type>::value ? " to-const" : "";
  }
  return s;
}

template <class T>
void add_struct(Facts& f, const char* name) {
  const std::string n(name);
  f.push_back({"sizeof(" + n + ")", num(sizeof(T))});
  f.push_back({"alignof(" + n + ")", num(alignof(T))});
  f.push_back({"is_standard_layout(" + n + ")", num(std::is_standard_layout<T>::value)});
  f.push_back({"is_trivial(" + n + ")", num(std::is_trivial<T>::value)});
  f.push_back({"type(" + n + ")", type_summary<T>()});
}

template <class Field>
void add_field(Facts& f, const char* name, std::size_t offset) {
  const std::string n(name);
  f.push_back({"offsetof(" + n + ")", num(offset)});
  f.push_back({"sizeof(" + n + ")", num(sizeof(Field))});
  f.push_back({"alignof(" + n + ")", num(alignof(Field))});
  f.push_back({"type(" + n + ")", type_summary<Field>()});
}

template <class E>
void add_enum(Facts& f, const char* name) {
  using U = typename std::underlying_type<E>::type;
  const std::string n(name);
  f.push_back({"sizeof(" + n + ")", num(sizeof(E))});
  f.push_back({"sizeof(underlying(" + n + "))", num(sizeof(U))});
  f.push_back({"is_signed(underlying(" + n + "))", num(std::is_signed<U>::value)});
  f.push_back({"type(" + n + ")", type_summary<E>()});
}

template <class T>
void add_macro(Facts& f, const char* name, T value) {
  const std::string n(name);
  f.push_back({n, num(value)});
  f.push_back({"sizeof(" + n + ")", num(sizeof(T))});
  f.push_back({"is_unsigned(" + n + ")", num(std::is_unsigned<T>::value)});
  f.push_back({"type(" + n + ")", type_summary<T>()});
}

}  // namespace

#define DLPACKPP_ABI_STRUCT(S) add_struct<S>(f, #S)
#define DLPACKPP_ABI_FIELD(S, m) add_field<decltype(S::m)>(f, #S "::" #m, offsetof(S, m))
#define DLPACKPP_ABI_ENUMERATOR(e) f.push_back({#e, num(static_cast<long long>(e))})
#define DLPACKPP_ABI_MACRO(m) add_macro(f, #m, m)
// What a macro expands to, as text; covers macros that are not numbers (DLPACK_EXTERN_C).
#define DLPACKPP_ABI_STR2(...) #__VA_ARGS__
#define DLPACKPP_ABI_STR(...) DLPACKPP_ABI_STR2(__VA_ARGS__)
#define DLPACKPP_ABI_EXPANSION(m) f.push_back({"expansion(" #m ")", DLPACKPP_ABI_STR(m)})

namespace dlpackpp_abi {

Facts DLPACKPP_ABI_FACTS_FUNCTION() {
  Facts f;

  DLPACKPP_ABI_MACRO(DLPACK_MAJOR_VERSION);
  DLPACKPP_ABI_MACRO(DLPACK_MINOR_VERSION);
  DLPACKPP_ABI_MACRO(DLPACK_FLAG_BITMASK_READ_ONLY);
  DLPACKPP_ABI_MACRO(DLPACK_FLAG_BITMASK_IS_COPIED);
  DLPACKPP_ABI_MACRO(DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED);
  DLPACKPP_ABI_EXPANSION(DLPACK_EXTERN_C);
  DLPACKPP_ABI_EXPANSION(DLPACK_DLL);

  DLPACKPP_ABI_STRUCT(DLPackVersion);
  DLPACKPP_ABI_FIELD(DLPackVersion, major);
  DLPACKPP_ABI_FIELD(DLPackVersion, minor);

  add_enum<DLDeviceType>(f, "DLDeviceType");
  DLPACKPP_ABI_ENUMERATOR(kDLCPU);
  DLPACKPP_ABI_ENUMERATOR(kDLCUDA);
  DLPACKPP_ABI_ENUMERATOR(kDLCUDAHost);
  DLPACKPP_ABI_ENUMERATOR(kDLOpenCL);
  DLPACKPP_ABI_ENUMERATOR(kDLVulkan);
  DLPACKPP_ABI_ENUMERATOR(kDLMetal);
  DLPACKPP_ABI_ENUMERATOR(kDLVPI);
  DLPACKPP_ABI_ENUMERATOR(kDLROCM);
  DLPACKPP_ABI_ENUMERATOR(kDLROCMHost);
  DLPACKPP_ABI_ENUMERATOR(kDLExtDev);
  DLPACKPP_ABI_ENUMERATOR(kDLCUDAManaged);
  DLPACKPP_ABI_ENUMERATOR(kDLOneAPI);
  DLPACKPP_ABI_ENUMERATOR(kDLWebGPU);
  DLPACKPP_ABI_ENUMERATOR(kDLHexagon);
  DLPACKPP_ABI_ENUMERATOR(kDLMAIA);
  DLPACKPP_ABI_ENUMERATOR(kDLTrn);

  DLPACKPP_ABI_STRUCT(DLDevice);
  DLPACKPP_ABI_FIELD(DLDevice, device_type);
  DLPACKPP_ABI_FIELD(DLDevice, device_id);

  add_enum<DLDataTypeCode>(f, "DLDataTypeCode");
  DLPACKPP_ABI_ENUMERATOR(kDLInt);
  DLPACKPP_ABI_ENUMERATOR(kDLUInt);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat);
  DLPACKPP_ABI_ENUMERATOR(kDLOpaqueHandle);
  DLPACKPP_ABI_ENUMERATOR(kDLBfloat);
  DLPACKPP_ABI_ENUMERATOR(kDLComplex);
  DLPACKPP_ABI_ENUMERATOR(kDLBool);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e3m4);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e4m3);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e4m3b11fnuz);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e4m3fn);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e4m3fnuz);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e5m2);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e5m2fnuz);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat8_e8m0fnu);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat6_e2m3fn);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat6_e3m2fn);
  DLPACKPP_ABI_ENUMERATOR(kDLFloat4_e2m1fn);

  DLPACKPP_ABI_STRUCT(DLDataType);
  DLPACKPP_ABI_FIELD(DLDataType, code);
  DLPACKPP_ABI_FIELD(DLDataType, bits);
  DLPACKPP_ABI_FIELD(DLDataType, lanes);

  DLPACKPP_ABI_STRUCT(DLTensor);
  DLPACKPP_ABI_FIELD(DLTensor, data);
  DLPACKPP_ABI_FIELD(DLTensor, device);
  DLPACKPP_ABI_FIELD(DLTensor, ndim);
  DLPACKPP_ABI_FIELD(DLTensor, dtype);
  DLPACKPP_ABI_FIELD(DLTensor, shape);
  DLPACKPP_ABI_FIELD(DLTensor, strides);
  DLPACKPP_ABI_FIELD(DLTensor, byte_offset);

  DLPACKPP_ABI_STRUCT(DLManagedTensor);
  DLPACKPP_ABI_FIELD(DLManagedTensor, dl_tensor);
  DLPACKPP_ABI_FIELD(DLManagedTensor, manager_ctx);
  DLPACKPP_ABI_FIELD(DLManagedTensor, deleter);

  DLPACKPP_ABI_STRUCT(DLManagedTensorVersioned);
  DLPACKPP_ABI_FIELD(DLManagedTensorVersioned, version);
  DLPACKPP_ABI_FIELD(DLManagedTensorVersioned, manager_ctx);
  DLPACKPP_ABI_FIELD(DLManagedTensorVersioned, deleter);
  DLPACKPP_ABI_FIELD(DLManagedTensorVersioned, flags);
  DLPACKPP_ABI_FIELD(DLManagedTensorVersioned, dl_tensor);

  f.push_back({"type(DLPackManagedTensorAllocator)", type_summary<DLPackManagedTensorAllocator>()});
  f.push_back({"type(DLPackManagedTensorFromPyObjectNoSync)",
               type_summary<DLPackManagedTensorFromPyObjectNoSync>()});
  f.push_back(
      {"type(DLPackDLTensorFromPyObjectNoSync)", type_summary<DLPackDLTensorFromPyObjectNoSync>()});
  f.push_back({"type(DLPackCurrentWorkStream)", type_summary<DLPackCurrentWorkStream>()});
  f.push_back({"type(DLPackManagedTensorToPyObjectNoSync)",
               type_summary<DLPackManagedTensorToPyObjectNoSync>()});

  DLPACKPP_ABI_STRUCT(DLPackExchangeAPIHeader);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPIHeader, version);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPIHeader, prev_api);

  DLPACKPP_ABI_STRUCT(DLPackExchangeAPI);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, header);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, managed_tensor_allocator);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, managed_tensor_from_py_object_no_sync);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, managed_tensor_to_py_object_no_sync);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, dltensor_from_py_object_no_sync);
  DLPACKPP_ABI_FIELD(DLPackExchangeAPI, current_work_stream);

  return f;
}

}  // namespace dlpackpp_abi
