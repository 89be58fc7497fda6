# SPDX-License-Identifier: Apache-2.0
"""The child process: runs a list of cases for the runner, one JSON line per event, so that
when it dies (a signal, a hang) the runner knows which case it was in.

    python -m dlpackpp.conformance._child '<job json>'

A job is {"target": spec, "checks": [id, ...]} or {"matrix": [spec, ...], "cells":
[[producer, consumer, case], ...]}. Lines: `KIT {"start": key}`, then `KIT {"result": entry}`
or `KIT {"cell": ...}`; the first line is `KIT {"version": ...}`."""

import gc
import json
import os
import sys
import traceback

PREFIX = "KIT "


def emit(event):
    sys.stdout.write(PREFIX + json.dumps(event) + "\n")
    sys.stdout.flush()


def main(argv):
    job = json.loads(argv[1])
    # JAX takes most of a GPU's memory when it starts; children share the GPU.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    # Frameworks print: keep their output off the protocol's stream.
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = protocol
    from . import _checks, _checks_consumer, _checks_exchange, _checks_lifetime  # noqa: F401
    from . import _checks_producer  # noqa: F401
    from ._kit import _progress
    from ._targets import importable, load, version_of
    _progress[0] = lambda label: emit({"case": label})
    if "matrix" in job:
        from ._matrix import cell
        adapters = {spec: load(spec) for spec in job["matrix"]}
        for adapter in adapters.values():
            version_of(adapter)  # imports the framework
        gc.freeze()
        emit({"version": ""})
        for producer, consumer, case in job["cells"]:
            emit({"start": [producer, consumer, case]})
            try:
                result = cell(adapters[producer], adapters[consumer], case)
            except Exception as e:  # noqa: BLE001 - a check that raised is a failed cell
                result = {"outcome": "refuse", "detail": _checks.describe(e)}
            emit({"cell": [producer, consumer, case, result]})
        return 0
    target = load(job["target"])
    why = importable(job["target"])
    if why is not None:
        emit({"version": "", "name": target.NAME})
        for check_id in job["checks"]:
            emit({"start": check_id})
            emit({"result": {"id": check_id, "role": _checks.ROLES[check_id[0]],
                             "level": _checks.REGISTRY[check_id][1], "verdict": "skip",
                             "rule": _checks.REGISTRY[check_id][2], "detail": why}})
        return 0
    version = version_of(target)  # imports the framework
    # The framework's own objects never hold a case's capsule: out of the collector's way,
    # so that collecting after each case is cheap (with PyTorch loaded, a full collection
    # takes a quarter of a second).
    gc.freeze()
    emit({"version": version, "name": target.NAME})
    for check_id in job["checks"]:
        emit({"start": check_id})
        try:
            entry = _checks.run_check(check_id, target)
        except Exception as e:  # noqa: BLE001 - what the framework raised unexpectedly
            tail = traceback.extract_tb(e.__traceback__)[-1]
            entry = {"id": check_id, "role": _checks.ROLES[check_id[0]],
                     "level": _checks.REGISTRY[check_id][1], "verdict": "fail",
                     "rule": _checks.REGISTRY[check_id][2],
                     "detail": "raised %s (at %s:%d)" % (_checks.describe(e),
                                                         os.path.basename(tail.filename),
                                                         tail.lineno)}
        emit({"result": entry})
    return 0


if __name__ == "__main__":
    status = main(sys.argv)
    emit({"done": status})
    # Some frameworks take seconds to shut down (threads, atexit hooks): nothing is left to
    # do here, so skip that.
    sys.stderr.flush()
    os._exit(status)
