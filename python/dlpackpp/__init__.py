# SPDX-License-Identifier: Apache-2.0
"""dlpackpp's C++ headers and build files, for authors of C++ extensions.

dlpackpp is a header-only C++17 library; this package only carries it and says where it is:
pass get_include() to the compiler, or point CMake at get_cmake_dir()
(``-Ddlpackpp_DIR=$(python -m dlpackpp --cmakedir)``) and link ``dlpackpp::dlpackpp``.

``inspect(obj)`` shows what a DLPack consumer of ``obj`` would be handed, field by field,
with the rules it breaks (see docs/inspect.md); it needs no compiler.

It also carries the DLPack conformance kit, ``python -m dlpackpp.conformance`` (see
docs/conformance.md), which compiles its small probe against these headers on first use.

This module holds no code of the C++ layer. The ``dlpackpp.Tensor`` objects that extensions
built with <dlpackpp/python.hpp> return are of a type those extensions make at run time: its
``__module__`` reads "dlpackpp", but no module holds it, this one included, so importing this
package neither creates nor replaces it.
"""

import os

__all__ = ["get_include", "get_cmake_dir", "get_pkgconfig_dir", "inspect"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _installed(what, *parts):
    # The files are put here by the wheel (`cmake --install` into this folder); the source
    # tree's python/dlpackpp has none of them, and a silent wrong path would fail much later.
    path = os.path.join(_HERE, *parts)
    if not os.path.isdir(path):
        raise FileNotFoundError(
            "dlpackpp: no %s at %s; this copy of the package was not installed from its wheel "
            "(pip install <dlpackpp checkout or wheel>)" % (what, path))
    return path


def get_include():
    """The folder to put on the include path: it holds dlpackpp/dlpackpp.hpp."""
    return _installed("headers", "include")


def get_cmake_dir():
    """The folder holding dlpackppConfig.cmake: pass it as dlpackpp_DIR."""
    return _installed("CMake package", "share", "cmake", "dlpackpp")


def get_pkgconfig_dir():
    """The folder holding dlpackpp.pc, for PKG_CONFIG_PATH."""
    return _installed("pkg-config file", "share", "pkgconfig")


def _read_version():
    # version.hpp is the version's one home, and the wheel carries it: nothing to keep in step.
    path = os.path.join(_installed("headers", "include"), "dlpackpp", "version.hpp")
    with open(path) as f:
        lines = f.read().splitlines()
    parts = []
    for name in ("MAJOR", "MINOR", "PATCH"):
        key = "#define DLPACKPP_VERSION_%s " % name
        found = [line[len(key):].strip() for line in lines if line.startswith(key)]
        if len(found) != 1 or not found[0].isdigit():
            raise ValueError("dlpackpp: %s does not define DLPACKPP_VERSION_%s" % (path, name))
        parts.append(found[0])
    return ".".join(parts)


def __getattr__(name):
    # __version__, read on first use (PEP 562), so that importing the package never fails.
    if name == "__version__":
        version = _read_version()
        globals()["__version__"] = version
        return version
    raise AttributeError("module 'dlpackpp' has no attribute %r" % name)


def inspect(obj):
    """What a DLPack consumer of ``obj`` (an object with ``__dlpack__``, or a capsule) would be
    handed, field by field, with the rules it breaks; see docs/inspect.md. Imported on first
    use, so that ``import dlpackpp`` (what an extension's build asks for its paths) stays
    light."""
    from ._inspect import inspect as inspect_now

    return inspect_now(obj)

