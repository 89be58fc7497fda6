# SPDX-License-Identifier: Apache-2.0
"""Builds the kit's probe (_probe.cpp) on first use and loads it; the same for the dlpackpp
target's GPU hooks (_probe_cuda.cu, with nvcc), where a GPU check first asks for them.

The wheel is headers only, so the probe is compiled where the kit runs: with the system's
C++ compiler ($CXX, else c++), this interpreter's headers, and dlpackpp's own headers (the
checkout's include/ when run from the source tree, dlpackpp.get_include() when installed).
The result is cached under a hash of everything that goes into it, in
$DLPACKPP_CONFORMANCE_CACHE (else the user's cache folder).
"""

import hashlib
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

MODULE = "_dlpackpp_conformance_probe"
_HERE = os.path.dirname(os.path.abspath(__file__))
# The probe's translation units (compiled and linked in one command) and their shared header.
_UNITS = ("_probe.cpp", "_probe_capsules.cpp", "_probe_read.cpp", "_probe_exchange.cpp",
          "_probe_tables.cpp", "_probe_target.cpp")
_SOURCES = _UNITS + ("_probe.hpp",)
_FLAGS = ["-std=c++17", "-O1", "-g0", "-shared", "-fPIC", "-fvisibility=hidden"]


class UsageError(Exception):
    """Something the user must fix before the kit can run (exit status 2)."""


def include_dir():
    """dlpackpp's headers: $DLPACKPP_CONFORMANCE_INCLUDE when set, else the checkout's when
    this file is in one, else the wheel's."""
    chosen = os.environ.get("DLPACKPP_CONFORMANCE_INCLUDE")
    if chosen:
        if not os.path.isfile(os.path.join(chosen, "dlpackpp", "python.hpp")):
            raise UsageError("DLPACKPP_CONFORMANCE_INCLUDE=%s holds no dlpackpp/python.hpp"
                             % chosen)
        return os.path.abspath(chosen)
    checkout = os.path.normpath(os.path.join(_HERE, "..", "..", "..", "include"))
    if os.path.isfile(os.path.join(checkout, "dlpackpp", "python.hpp")):
        return checkout
    import dlpackpp
    try:
        return dlpackpp.get_include()
    except FileNotFoundError as e:
        raise UsageError(str(e)) from None


def cache_dir():
    """Where compiled probes are cached."""
    root = os.environ.get("DLPACKPP_CONFORMANCE_CACHE")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "dlpackpp-conformance")
    return root


def _compiler():
    cxx = os.environ.get("CXX") or "c++"
    words = shlex.split(cxx)
    if not words or shutil.which(words[0]) is None:
        raise UsageError("no C++ compiler found (%s); install one (apt-get install g++) or set "
                         "CXX: the kit compiles a small probe against this Python" % cxx)
    return words


def _digest(parts, include, sources=_SOURCES):
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() + b"\0")
    for name in sources:
        with open(os.path.join(_HERE, name), "rb") as f:
            h.update(f.read())
    for folder, dirs, files in os.walk(os.path.join(include, "dlpackpp")):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(folder, name), "rb") as f:
                h.update(name.encode() + f.read())
    return h.hexdigest()[:20]


def _python_include():
    py_include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(py_include, "Python.h")):
        raise UsageError("no Python.h in %s; install this Python's headers "
                         "(apt-get install python3-dev)" % py_include)
    return py_include


def build():
    """The path of the compiled probe, compiling it when the cache has none."""
    py_include = _python_include()
    cxx = _compiler()
    include = include_dir()
    command = cxx + _FLAGS + ["-I" + py_include, "-I" + include, "-I" + _HERE] + [
        os.path.join(_HERE, name) for name in _UNITS]
    key = _digest(cxx + _FLAGS + [sys.executable, sys.version, py_include, include], include)
    return _cached(MODULE, key, command, "the probe")


def _cached(module, key, command, what):
    """The path of `module` compiled by `command` (+ ["-o", path]) under cache key `key`,
    compiling it when the cache has none."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    folder = os.path.join(cache_dir(), key)
    target = os.path.join(folder, module + suffix)
    if os.path.isfile(target):
        return target
    partial = "%s.%d.tmp" % (target, os.getpid())
    try:
        os.makedirs(folder, exist_ok=True)
        with open(partial, "wb"):
            pass
    except OSError as e:
        raise UsageError("cannot write the probe's cache folder %s: %s (set "
                         "DLPACKPP_CONFORMANCE_CACHE to a writable folder)"
                         % (folder, e.strerror or e)) from None
    command = command + ["-o", partial]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if done.returncode != 0:
        raise UsageError("compiling %s failed: %s\n%s" % (what, " ".join(command), done.stdout))
    os.replace(partial, target)  # atomic: children may look at the same time
    return target


# ---- the dlpackpp target's GPU hooks (_probe_cuda.cu), compiled with nvcc -------------------
CUDA_MODULE = "_dlpackpp_conformance_cuda"
_CUDA_FLAGS = ["-std=c++17", "--expt-relaxed-constexpr", "-O1", "-shared",
               "-Xcompiler=-fPIC,-fvisibility=hidden"]


def nvcc():
    """nvcc: $NVCC, else on PATH, else under $CUDA_HOME / $CUDA_PATH or /usr/local/cuda;
    UsageError when none is found."""
    chosen = os.environ.get("NVCC")
    if chosen:
        return shlex.split(chosen)
    found = shutil.which("nvcc")
    homes = (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
    for home in homes:
        if found is None and home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            found = os.path.join(home, "bin", "nvcc")
    if found is None:
        raise UsageError("no nvcc found: the dlpackpp target's GPU hooks compile a small CUDA "
                         "module (_probe_cuda.cu); put nvcc on PATH or set NVCC or CUDA_HOME")
    return [found]


def cuda_build():
    """The path of the compiled GPU hooks module, compiling it with nvcc when the cache has
    none (on first use: only where a GPU check asks for a CUDA array)."""
    py_include = _python_include()
    compiler = nvcc()
    include = include_dir()
    command = compiler + _CUDA_FLAGS + ["-I" + py_include, "-I" + include,
                                        os.path.join(_HERE, "_probe_cuda.cu")]
    key = _digest(compiler + _CUDA_FLAGS + [sys.executable, sys.version, py_include, include],
                  include, ("_probe_cuda.cu",))
    return _cached(CUDA_MODULE, key, command, "the GPU hooks")


_loaded = {}


def _load(name, path_of):
    if name not in _loaded:
        spec = importlib.util.spec_from_file_location(name, path_of())
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]


def probe():
    """The probe module, built if needed and imported once per process."""
    return _load(MODULE, build)


def cuda_probe():
    """The dlpackpp target's GPU hooks module, built with nvcc if needed, imported once."""
    return _load(CUDA_MODULE, cuda_build)
