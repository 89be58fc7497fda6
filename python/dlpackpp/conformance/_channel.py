# SPDX-License-Identifier: Apache-2.0
"""The child's result channel: one JSON object a line on a pipe of its own (the fd the
runner passed), never the child's stdout or stderr, which belong to the framework and the
adapter: whatever they print, with or without a newline, cannot reach the runner's parser."""

import json
import os

_FD_VARIABLE = "DLPACKPP_CONFORMANCE_FD"
_stream = []  # the open channel of this process, when it is a child of the runner


def open_from_environment():
    """Opens the channel the runner named in the environment (a child's first act)."""
    fd = int(os.environ.pop(_FD_VARIABLE))
    # Not inherited by what the framework starts: the runner sees the channel close (and the
    # child's death) when the child itself ends.
    os.set_inheritable(fd, False)
    _stream.append(os.fdopen(fd, "w", encoding="utf-8"))


def child_environment(fd):
    """The variables that tell a child which fd is its channel."""
    return {_FD_VARIABLE: str(fd)}


def emit(event):
    """Sends one event to the runner (nothing outside a child)."""
    if _stream:
        _stream[0].write(json.dumps(event) + "\n")
        _stream[0].flush()


def progress(label):
    """Tells the runner which case of a check runs now (named if the child dies in it)."""
    emit({"case": label})
