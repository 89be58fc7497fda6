// SPDX-License-Identifier: Apache-2.0
// The bundled dlpack.h must be ABI-identical to the reference DLPack 1.3 header: every size,
// alignment, offset, enumerator, macro value and type that abi_facts.cpp records must match.
#include "abi_facts.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>

namespace {

using dlpackpp_abi::Facts;

std::map<std::string, std::string> by_name(const Facts& facts) {
  std::map<std::string, std::string> m;
  for (const auto& f : facts) {
    EXPECT_TRUE(m.emplace(f.name, f.value).second) << "fact recorded twice: " << f.name;
  }
  return m;
}

TEST(Abi, ReferenceHeaderIsDLPack13) {
  const auto ref = by_name(dlpackpp_abi::abi_facts_reference());
  EXPECT_EQ(ref.at("DLPACK_MAJOR_VERSION"), "1");
  EXPECT_EQ(ref.at("DLPACK_MINOR_VERSION"), "3");
}

TEST(Abi, BothBuildsRecordTheSameFacts) {
  const Facts ref = dlpackpp_abi::abi_facts_reference();
  const Facts bundled = dlpackpp_abi::abi_facts_bundled();
  // Same source, so the same names in the same order; anything else means the builds did
  // not compile the same fact list and the comparison below would be meaningless.
  ASSERT_EQ(ref.size(), bundled.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(ref[i].name, bundled[i].name) << "at fact #" << i;
  }
}

TEST(Abi, BundledHeaderMatchesReference) {
  const Facts ref = dlpackpp_abi::abi_facts_reference();
  const auto bundled = by_name(dlpackpp_abi::abi_facts_bundled());
  ASSERT_GT(ref.size(), 100u) << "suspiciously few facts";
  std::size_t differences = 0;
  for (const auto& f : ref) {
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
  EXPECT_EQ(differences, 0u) << "include/dlpackpp/bundled/dlpack.h differs from the reference";
}

}  // namespace
