# SPDX-License-Identifier: Apache-2.0
"""An adapter for the kit's robustness test: the reference framework with fault P10, whose
every call prints to stdout without a newline and floods stderr, as some frameworks and
adapters do. No check may vanish: P10 still fails at MUST and the exit status is 1."""
import sys

from _reference import adapter

_names = adapter("P10")
NAME, VERSION = "noisy", "1"


def _noisy(f):
    def call(*args, **kwargs):
        """The wrapped call, after printing."""
        sys.stdout.write('KIT {"result": "not from the kit"}')  # no newline, and a lookalike
        sys.stderr.write("x" * 70000)  # more than a pipe holds
        return f(*args, **kwargs)
    return call


from_numpy, read_only, from_dlpack, to_numpy = (_noisy(_names[n]) for n in (
    "from_numpy", "read_only", "from_dlpack", "to_numpy"))
