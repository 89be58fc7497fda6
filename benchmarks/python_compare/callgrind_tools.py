# SPDX-License-Identifier: Apache-2.0
"""What the callgrind scripts here (icount_guard.py, torch2_callgrind.py) need on PATH."""
import shutil

TOOLS = ("valgrind", "callgrind_annotate")


def missing():
    """The first of valgrind and callgrind_annotate not on PATH, or None."""
    return next((tool for tool in TOOLS if shutil.which(tool) is None), None)
