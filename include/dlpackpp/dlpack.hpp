// SPDX-License-Identifier: Apache-2.0
/// @file
/// Chooses which dlpack.h is in force and tells the rest of the library what it offers.
///
/// Order of preference:
///  1. a dlpack.h the translation unit already included (its include guard is set);
///  2. `DLPACKPP_DLPACK_HEADER`, a header name the user predefines, e.g. `<torch/dlpack.h>`;
///  3. `<dlpack/dlpack.h>` from the include path, only when the user opts in with
///     `DLPACKPP_USE_BUNDLED_DLPACK=0` (the CMake option DLPACKPP_USE_SYSTEM_DLPACK sets it);
///  4. otherwise dlpackpp's bundled, ABI-identical DLPack 1.3 header.
/// A dlpack.h that merely happens to be installed (Debian's libdlpack-dev is 0.6) never
/// silently replaces the bundled one: it would take ManagedTensor away.
/// This header is included by detail/config.hpp before anything else, so every dlpackpp
/// header sees the same choice.
#pragma once

#if !defined(DLPACK_DLPACK_H_) && defined(DLPACKPP_DLPACK_HEADER)
#include DLPACKPP_DLPACK_HEADER
#endif

#if !defined(DLPACK_DLPACK_H_) && defined(DLPACKPP_USE_BUNDLED_DLPACK)
#if !DLPACKPP_USE_BUNDLED_DLPACK
#include <dlpack/dlpack.h>  // the user asked for an external header: missing is an error
#endif
#endif

// The one place the bundled header comes in (so the single-header copy inlines it once).
#ifndef DLPACK_DLPACK_H_
#include "dlpackpp/bundled/dlpack.h"
#endif

#ifndef DLPACK_DLPACK_H_
#error "dlpackpp: the selected dlpack.h did not define DLPACK_DLPACK_H_"
#endif

// The version of the dlpack.h in force: 1.x headers say it directly, 0.x ones as DLPACK_VERSION
// (60 for 0.6, 80 for 0.8).
#ifndef DLPACKPP_DLPACK_MAJOR
#if defined(DLPACK_MAJOR_VERSION)
#define DLPACKPP_DLPACK_MAJOR DLPACK_MAJOR_VERSION
#define DLPACKPP_DLPACK_MINOR DLPACK_MINOR_VERSION
#elif defined(DLPACK_VERSION)
#define DLPACKPP_DLPACK_MAJOR 0
#define DLPACKPP_DLPACK_MINOR (DLPACK_VERSION / 10)
#else
#error \
    "dlpackpp: cannot tell the version of this dlpack.h (no DLPACK_MAJOR_VERSION or DLPACK_VERSION)"
#endif
#endif

#define DLPACKPP_DETAIL_STR2(x) #x
#define DLPACKPP_DETAIL_STR(x) DLPACKPP_DETAIL_STR2(x)
/// The dlpack.h version in force as a string literal, for diagnostics ("1.3", "DLPACK_VERSION 60").
#ifndef DLPACKPP_DLPACK_VERSION_STRING
#if defined(DLPACK_MAJOR_VERSION)
#define DLPACKPP_DLPACK_VERSION_STRING \
  DLPACKPP_DETAIL_STR(DLPACK_MAJOR_VERSION) "." DLPACKPP_DETAIL_STR(DLPACK_MINOR_VERSION)
#else
#define DLPACKPP_DLPACK_VERSION_STRING "DLPACK_VERSION " DLPACKPP_DETAIL_STR(DLPACK_VERSION)
#endif
#endif

/// 1 when the header declares DLManagedTensorVersioned (DLPack >= 1.0).
#ifndef DLPACKPP_HAS_VERSIONED
#if DLPACKPP_DLPACK_MAJOR >= 1
#define DLPACKPP_HAS_VERSIONED 1
#else
#define DLPACKPP_HAS_VERSIONED 0
#endif
#endif

/// 1 when the header declares DLPackExchangeAPI (DLPack >= 1.2). Some framework copies of
/// 1.1 carry it too; predefine DLPACKPP_HAS_EXCHANGE_API=1 for those, since a typedef cannot
/// be detected by the preprocessor.
#ifndef DLPACKPP_HAS_EXCHANGE_API
#if DLPACKPP_DLPACK_MAJOR > 1 || (DLPACKPP_DLPACK_MAJOR == 1 && DLPACKPP_DLPACK_MINOR >= 2)
#define DLPACKPP_HAS_EXCHANGE_API 1
#else
#define DLPACKPP_HAS_EXCHANGE_API 0
#endif
#endif

#if DLPACKPP_HAS_EXCHANGE_API && !DLPACKPP_HAS_VERSIONED
#error "DLPACKPP_HAS_EXCHANGE_API=1 needs a dlpack.h with DLManagedTensorVersioned"
#endif

/// 1 when dlpackpp's own header is the one in force.
#ifndef DLPACKPP_DLPACK_IS_BUNDLED
#ifdef DLPACKPP_BUNDLED_DLPACK_H_
#define DLPACKPP_DLPACK_IS_BUNDLED 1
#else
#define DLPACKPP_DLPACK_IS_BUNDLED 0
#endif
#endif
