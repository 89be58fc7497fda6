// expect-error: ManagedTensor needs DLManagedTensorVersioned \(DLPack >= 1.0\), but the dlpack.h in force is DLPACK_VERSION [0-9]+
// SPDX-License-Identifier: Apache-2.0
// Built against a DLPack 0.x header (opted in with DLPACKPP_USE_BUNDLED_DLPACK=0): naming
// ManagedTensor is one readable error that names the version in force and the way out.
#include <dlpackpp/dlpackpp.hpp>

dlpackpp::ManagedTensor adopt(void* p) { return dlpackpp::ManagedTensor::adopt(p); }
