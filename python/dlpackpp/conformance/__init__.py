# SPDX-License-Identifier: Apache-2.0
"""The DLPack conformance kit: ``python -m dlpackpp.conformance [TARGET ...]``.

Checks a framework's DLPack producer (``__dlpack__``, ``__dlpack_device__``), consumer
(``from_dlpack``), lifetimes and exchange table against the spec, each case in a child
process, and runs every installed producer into every installed consumer. The command line,
report and adapter files are described in docs/conformance.md.

For adapter authors: host_copy(y) reads a framework array's values without its consumer
(to_numpy for bfloat16, fp8, or a framework with no way to NumPy); probe() returns the kit's
C helper (compiled on first use), which makes and reads capsules field by field.
"""

import os

__all__ = ["main", "probe", "kit_version", "host_copy"]


def probe():
    """The kit's compiled probe module (see _probe.cpp for what it offers)."""
    from ._build import probe as _probe
    return _probe()


def host_copy(y):
    """A NumPy copy of any DLPack host array's values and dtype, read field by field through
    y.__dlpack__ (bfloat16 and fp8 as ml_dtypes' types where installed, else unsigned
    integers of their width): an adapter's to_numpy for a framework without its own way."""
    from ._host import host_copy as _host_copy
    return _host_copy(y)


def kit_version():
    """The dlpackpp version of the headers the kit runs on."""
    from ._build import include_dir
    path = os.path.join(include_dir(), "dlpackpp", "version.hpp")
    parts = {}
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) == 3 and words[0] == "#define" and words[1].startswith(
                    "DLPACKPP_VERSION_"):
                parts[words[1][len("DLPACKPP_VERSION_"):]] = words[2]
    return ".".join(parts.get(k, "?") for k in ("MAJOR", "MINOR", "PATCH"))


def main(argv=None):
    """Runs the kit as the command line does; returns the exit status."""
    from ._cli import main as _main
    return _main(argv)
