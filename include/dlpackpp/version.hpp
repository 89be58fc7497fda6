// SPDX-License-Identifier: Apache-2.0
/// @file
/// The single source of dlpackpp's version; CMake reads these three lines.
#pragma once

/// Bumped on any breaking change; also names the inline ABI namespace (`v0`).
#define DLPACKPP_VERSION_MAJOR 0
/// Bumped when features are added compatibly.
#define DLPACKPP_VERSION_MINOR 1
/// Bumped for fixes only.
#define DLPACKPP_VERSION_PATCH 0
/// One comparable integer, e.g. `#if DLPACKPP_VERSION >= 100` for 0.1.0.
#define DLPACKPP_VERSION \
  (DLPACKPP_VERSION_MAJOR * 10000 + DLPACKPP_VERSION_MINOR * 100 + DLPACKPP_VERSION_PATCH)
