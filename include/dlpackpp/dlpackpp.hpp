// SPDX-License-Identifier: Apache-2.0
/// @file
/// Umbrella header: all of dlpackpp except the opt-in Python helpers (<dlpackpp/python.hpp>).
#pragma once

#include "dlpackpp/version.hpp"  // DLPACKPP_VERSION_*
#include "dlpackpp/dlpack.hpp"   // the dlpack.h in force and DLPACKPP_HAS_* feature macros
#include "dlpackpp/error.hpp"    // Errc, Error, Result<T>, set_error_handler
#include "dlpackpp/device.hpp"   // Device
#include "dlpackpp/dtype.hpp"    // DataType, dtype_of<T>, dtype_traits<T>
