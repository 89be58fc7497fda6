# SPDX-License-Identifier: Apache-2.0
"""The child process: loads an adapter or runs a list of cases for the runner, and tells
the runner what happens on a channel of its own (_channel.py), so that when it dies (a
signal, a hang) the runner knows which case it was in, and nothing it prints is mistaken
for a result.

    python -m dlpackpp.conformance._child '<job json>'

A job is {"load": spec}, {"target": spec, "checks": [id, ...]} or {"matrix": [spec, ...],
"cells": [[producer, consumer, case], ...]}. Events: `{"adapter": ...}` or `{"error": ...}`
for a load; else `{"version": ...}` first, then per key `{"start": key}`, `{"case": label}`
for each sub-case, and `{"result": entry}` or `{"cell": ...}`; `{"done": 0}` last."""

import gc
import json
import os
import sys

from . import _channel
from ._build import UsageError


def _load(spec):
    from ._targets import load, sides
    try:
        _channel.emit({"adapter": sides(load(spec))})
    except UsageError as e:
        _channel.emit({"error": str(e)})


def _matrix(job):
    from ._checks import describe
    from ._matrix import cell
    from ._targets import load, version_of
    adapters = {spec: load(spec) for spec in job["matrix"]}
    for adapter in adapters.values():
        version_of(adapter)  # imports the framework
    gc.freeze()
    _channel.emit({"version": ""})
    for producer, consumer, case in job["cells"]:
        _channel.emit({"start": [producer, consumer, case]})
        try:
            result = cell(adapters[producer], adapters[consumer], case)
        except Exception as e:  # noqa: BLE001 - a cell that raised is a refused cell
            result = {"outcome": "refuse", "detail": describe(e)}
        _channel.emit({"cell": [producer, consumer, case, result]})


def _checks(job):
    from ._checks import entry, run_check
    from ._targets import importable, load, version_of
    target = load(job["target"])
    why = importable(job["target"])
    if why is not None:  # an installed framework that does not import is skipped
        _channel.emit({"version": ""})
        for check_id in job["checks"]:
            _channel.emit({"start": check_id})
            _channel.emit({"result": entry(check_id, "skip", why)})
        return
    version = version_of(target)  # imports the framework
    # The framework's own objects never hold a case's capsule: out of the collector's way,
    # so that collecting after each case is cheap (with PyTorch loaded, a full collection
    # takes a quarter of a second).
    gc.freeze()
    _channel.emit({"version": version})
    for check_id in job["checks"]:
        _channel.emit({"start": check_id})
        _channel.emit({"result": run_check(check_id, target)})


def main(argv):
    """Runs the job in argv[1]; returns the exit status."""
    _channel.open_from_environment()
    job = json.loads(argv[1])
    # JAX takes most of a GPU's memory when it starts; children share the GPU.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if "load" in job:
        _load(job["load"])
    elif "matrix" in job:
        _matrix(job)
    else:
        _checks(job)
    return 0


if __name__ == "__main__":
    status = main(sys.argv)
    _channel.emit({"done": status})
    # Some frameworks take seconds to shut down (threads, atexit hooks): nothing is left to
    # do here, so skip that; what the adapter printed is flushed first.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream has nothing to flush
            pass
    os._exit(status)
