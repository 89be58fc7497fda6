# SPDX-License-Identifier: Apache-2.0
"""What the callgrind scripts here (icount_guard.py, torch2_callgrind.py, caster_callgrind.py)
share: the tools they need on PATH, and the option that marks a phase."""
import shutil

TOOLS = ("valgrind", "callgrind_annotate")


def missing():
    """The first of valgrind and callgrind_annotate not on PATH, or None."""
    return next((tool for tool in TOOLS if shutil.which(tool) is None), None)


def dump_before(function):
    """callgrind's option that dumps (and zeroes) its counters at each call of one of
    bench_dlpackpp's METH_O/METH_NOARGS functions, named by its exact symbol."""
    return "--dump-before=(anonymous namespace)::%s(_object*, _object*)" % function
