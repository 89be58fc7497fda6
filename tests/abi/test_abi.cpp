// SPDX-License-Identifier: Apache-2.0
// The bundled dlpack.h must be ABI-identical to DLPack 1.3: every size, alignment, offset,
// enumerator, macro value and type that abi_facts.cpp records must match a real 1.3 (or later
// 1.x) header where the machine has one (tests/abi/CMakeLists.txt), and the layout the
// specification fixes is checked against the bundled header everywhere.
#include "abi_facts.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>

#ifndef DLPACKPP_ABI_HAVE_REFERENCE
#error "tests/abi/CMakeLists.txt defines DLPACKPP_ABI_HAVE_REFERENCE to 0 or 1"
#endif

namespace {

using dlpackpp_abi::Facts;

std::map<std::string, std::string> by_name(const Facts& facts) {
  std::map<std::string, std::string> m;
  for (const auto& f : facts) {
    EXPECT_TRUE(m.emplace(f.name, f.value).second) << "fact recorded twice: " << f.name;
  }
  return m;
}

// What DLPack 1.3 fixes on a 64-bit (LP64) target, written down from the specification: a
// check that holds without any other header on the machine.
struct KnownFact {
  const char* name;
  const char* value;
};
constexpr KnownFact kLp64Layout[] = {
    {"DLPACK_MAJOR_VERSION", "1"},
    {"DLPACK_MINOR_VERSION", "3"},
    {"DLPACK_FLAG_BITMASK_READ_ONLY", "1"},
    {"DLPACK_FLAG_BITMASK_IS_COPIED", "2"},
    {"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED", "4"},
    {"sizeof(DLPackVersion)", "8"},
    {"offsetof(DLPackVersion::minor)", "4"},
    {"sizeof(DLDeviceType)", "4"},
    {"is_signed(underlying(DLDeviceType))", "1"},
    {"kDLCPU", "1"},
    {"kDLCUDA", "2"},
    {"kDLCUDAHost", "3"},
    {"kDLOpenCL", "4"},
    {"kDLVulkan", "7"},
    {"kDLMetal", "8"},
    {"kDLVPI", "9"},
    {"kDLROCM", "10"},
    {"kDLROCMHost", "11"},
    {"kDLExtDev", "12"},
    {"kDLCUDAManaged", "13"},
    {"kDLOneAPI", "14"},
    {"kDLWebGPU", "15"},
    {"kDLHexagon", "16"},
    {"kDLMAIA", "17"},
    {"kDLTrn", "18"},
    {"sizeof(DLDevice)", "8"},
    {"offsetof(DLDevice::device_id)", "4"},
    {"kDLInt", "0"},
    {"kDLUInt", "1"},
    {"kDLFloat", "2"},
    {"kDLOpaqueHandle", "3"},
    {"kDLBfloat", "4"},
    {"kDLComplex", "5"},
    {"kDLBool", "6"},
    {"kDLFloat8_e3m4", "7"},
    {"kDLFloat8_e4m3", "8"},
    {"kDLFloat8_e4m3b11fnuz", "9"},
    {"kDLFloat8_e4m3fn", "10"},
    {"kDLFloat8_e4m3fnuz", "11"},
    {"kDLFloat8_e5m2", "12"},
    {"kDLFloat8_e5m2fnuz", "13"},
    {"kDLFloat8_e8m0fnu", "14"},
    {"kDLFloat6_e2m3fn", "15"},
    {"kDLFloat6_e3m2fn", "16"},
    {"kDLFloat4_e2m1fn", "17"},
    {"sizeof(DLDataType)", "4"},
    {"offsetof(DLDataType::bits)", "1"},
    {"offsetof(DLDataType::lanes)", "2"},
    {"sizeof(DLTensor)", "48"},
    {"offsetof(DLTensor::device)", "8"},
    {"offsetof(DLTensor::ndim)", "16"},
    {"offsetof(DLTensor::dtype)", "20"},
    {"offsetof(DLTensor::shape)", "24"},
    {"offsetof(DLTensor::strides)", "32"},
    {"offsetof(DLTensor::byte_offset)", "40"},
    {"sizeof(DLManagedTensor)", "64"},
    {"offsetof(DLManagedTensor::manager_ctx)", "48"},
    {"offsetof(DLManagedTensor::deleter)", "56"},
    {"sizeof(DLManagedTensorVersioned)", "80"},
    {"offsetof(DLManagedTensorVersioned::manager_ctx)", "8"},
    {"offsetof(DLManagedTensorVersioned::deleter)", "16"},
    {"offsetof(DLManagedTensorVersioned::flags)", "24"},
    {"offsetof(DLManagedTensorVersioned::dl_tensor)", "32"},
    {"sizeof(DLPackExchangeAPIHeader)", "16"},
    {"offsetof(DLPackExchangeAPIHeader::prev_api)", "8"},
    {"sizeof(DLPackExchangeAPI)", "56"},
    {"offsetof(DLPackExchangeAPI::managed_tensor_allocator)", "16"},
    {"offsetof(DLPackExchangeAPI::managed_tensor_from_py_object_no_sync)", "24"},
    {"offsetof(DLPackExchangeAPI::managed_tensor_to_py_object_no_sync)", "32"},
    {"offsetof(DLPackExchangeAPI::dltensor_from_py_object_no_sync)", "40"},
    {"offsetof(DLPackExchangeAPI::current_work_stream)", "48"},
};

TEST(Abi, BundledHeaderHasTheSpecifiedLayout) {
  if (sizeof(void*) != 8) {
    GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: the written-down layout is for 64-bit targets";
  }
  const auto bundled = by_name(dlpackpp_abi::abi_facts_bundled());
  for (const KnownFact& want : kLp64Layout) {
    const auto it = bundled.find(want.name);
    if (it == bundled.end()) {
      ADD_FAILURE() << want.name << ": not among the recorded facts";
    } else {
      EXPECT_EQ(it->second, want.value) << want.name;
    }
  }
}

#if DLPACKPP_ABI_HAVE_REFERENCE

// Every test below compares with the reference build; say which header that was.
class AbiReference : public ::testing::Test {
 protected:
  void SetUp() override { RecordProperty("reference", DLPACKPP_ABI_REFERENCE); }
};

TEST_F(AbiReference, ReferenceHeaderIsDLPack13OrLater) {
  const auto ref = by_name(dlpackpp_abi::abi_facts_reference());
  EXPECT_EQ(ref.at("DLPACK_MAJOR_VERSION"), "1") << DLPACKPP_ABI_REFERENCE;
  EXPECT_GE(std::stoi(ref.at("DLPACK_MINOR_VERSION")), 3) << DLPACKPP_ABI_REFERENCE;
}

TEST_F(AbiReference, BothBuildsRecordTheSameFacts) {
  const Facts ref = dlpackpp_abi::abi_facts_reference();
  const Facts bundled = dlpackpp_abi::abi_facts_bundled();
  // Same source, so the same names in the same order; anything else means the builds did
  // not compile the same fact list and the comparison below would be meaningless.
  ASSERT_EQ(ref.size(), bundled.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(ref[i].name, bundled[i].name) << "at fact #" << i;
  }
}

TEST_F(AbiReference, BundledHeaderMatchesReference) {
  const Facts ref = dlpackpp_abi::abi_facts_reference();
  const auto bundled = by_name(dlpackpp_abi::abi_facts_bundled());
  ASSERT_GT(ref.size(), 100u) << "suspiciously few facts";
  std::size_t differences = 0;
  for (const auto& f : ref) {
    // A later 1.x reference differs here by design; its value is checked above.
    if (f.name == "DLPACK_MINOR_VERSION") {
      continue;
    }
    const auto it = bundled.find(f.name);
    if (it == bundled.end()) {
      ADD_FAILURE() << f.name << ": missing from the bundled header's facts";
      ++differences;
    } else if (it->second != f.value) {
      ADD_FAILURE() << f.name << ": reference says \"" << f.value << "\", bundled says \""
                    << it->second << "\"";
      ++differences;
    }
  }
  EXPECT_EQ(differences, 0u) << "include/dlpackpp/bundled/dlpack.h differs from "
                             << DLPACKPP_ABI_REFERENCE;
}

#else

TEST(AbiReference, NoReferenceHeader) {
  GTEST_SKIP() << "DLPACKPP_TEST_SKIPPED: no real DLPack 1.3 (or later 1.x) dlpack.h on this "
                  "machine to compare the bundled header with (pip install torch or "
                  "apache-tvm-ffi for the Python that CMake finds, or set "
                  "DLPACKPP_REFERENCE_DLPACK_DIR)";
}

#endif

}  // namespace
