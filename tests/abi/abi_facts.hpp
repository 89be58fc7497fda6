// SPDX-License-Identifier: Apache-2.0
// The fact list shared by the two fact-gathering translation units and the comparing test.
// This header must not include any dlpack.h: the two TUs that fill the list each see a
// different one, and the test binary links both.
#pragma once

#include <string>
#include <vector>

namespace dlpackpp_abi {

/// One observable property of a dlpack.h, e.g. {"offsetof(DLTensor::shape)", "24"}. Values
/// are strings so that numbers, stringified macros and mangled type names compare alike.
struct Fact {
  std::string name;
  std::string value;
};

using Facts = std::vector<Fact>;

/// Facts about the real DLPack 1.3-or-later header (tests/abi/abi_facts.cpp, reference build);
/// linked only when tests/abi found one (DLPACKPP_ABI_HAVE_REFERENCE).
Facts abi_facts_reference();
/// Facts about dlpackpp's bundled header (tests/abi/abi_facts.cpp, bundled build).
Facts abi_facts_bundled();

}  // namespace dlpackpp_abi
