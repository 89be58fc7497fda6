# SPDX-License-Identifier: Apache-2.0
"""The child process: runs a list of cases for the runner, one JSON line per event, so that
when it dies (a signal, a hang) the runner knows which case it was in.

    python -m dlpackpp.conformance._child '<job json>'

A job is {"target": spec, "checks": [id, ...]} or {"producer": spec, "consumers": [spec, ...],
"cells": [[consumer, case], ...]}. Lines: `KIT {"start": key}`, then `KIT {"result": entry}`
or `KIT {"cell": ...}`; the first line is `KIT {"version": ...}`."""

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
    # Frameworks print: keep their output off the protocol's stream.
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = protocol
    from . import _checks, _checks_consumer, _checks_exchange, _checks_lifetime  # noqa: F401
    from . import _checks_producer  # noqa: F401
    from ._kit import _progress
    from ._targets import load, version_of
    _progress[0] = lambda label: emit({"case": label})
    if "producer" in job:
        from ._matrix import cell
        producer = load(job["producer"])
        consumers = {spec: load(spec) for spec in job["consumers"]}
        emit({"version": version_of(producer)})
        for spec, case in job["cells"]:
            emit({"start": [spec, case]})
            try:
                result = cell(producer, consumers[spec], case)
            except Exception as e:  # noqa: BLE001 - a check that raised is a failed cell
                result = {"outcome": "refuse", "detail": _checks.describe(e)}
            emit({"cell": [spec, case, result]})
        return 0
    target = load(job["target"])
    emit({"version": version_of(target), "name": target.NAME})
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
    sys.exit(main(sys.argv))
