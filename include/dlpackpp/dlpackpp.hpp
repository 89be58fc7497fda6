// SPDX-License-Identifier: Apache-2.0
/// @file
/// Umbrella header: the core of dlpackpp. The opt-in headers are outside it: python.hpp,
/// pybind11.hpp and nanobind.hpp (they need Python.h), iterate.hpp, mdspan.hpp, format.hpp,
/// fmt.hpp and cuda.hpp (docs/reference.md lists what each adds).
#pragma once

// The umbrella lists its parts in the order they build on each other.
// clang-format off
#include "dlpackpp/version.hpp"  // DLPACKPP_VERSION_*
#include "dlpackpp/dlpack.hpp"   // the dlpack.h in force and DLPACKPP_HAS_* feature macros
#include "dlpackpp/error.hpp"    // Errc, Error, Result<T>, set_error_handler
#include "dlpackpp/device.hpp"   // Device
#include "dlpackpp/dtype.hpp"    // DataType, dtype_of<T>, dtype_traits<T>
#include "dlpackpp/flags.hpp"            // flag::read_only, flag::is_copied, ...
#include "dlpackpp/int_span.hpp"         // IntSpan
#include "dlpackpp/validate.hpp"         // validate, ValidateOptions
#include "dlpackpp/tensor_accessor.hpp"  // TensorAccessor<T, N>
#include "dlpackpp/tensor_view.hpp"      // TensorView
#include "dlpackpp/managed_tensor.hpp"   // ManagedTensor, LegacyManagedTensor, adopt_with_view
#include "dlpackpp/conversions.hpp"      // to_versioned, to_legacy
#include "dlpackpp/producers.hpp"        // from_vector, from_unique_ptr, from_shared_ptr, wrap, allocate
#include "dlpackpp/exchange_api.hpp"     // find_exchange_api, view_from_object, make_exchange_api<Impl>
// clang-format on
