# SPDX-License-Identifier: Apache-2.0
"""--repro DIR: one standalone script per failed check of a target, which needs only the
framework (with NumPy, the source of every case) and the standard library: no dlpackpp. It
runs the check's cases again through ctypes (_repro_toolkit.py), prints what it expected and
what it got, and exits 1 while the defect is there, 0 once it is gone: what a maintainer
pastes into an upstream issue. A built-in target's adapter is copied in; an adapter file is
loaded from its path. DIR/README.txt lists the scripts and, for the failures no script
reproduces yet (a check without a body in _repro_cases.py, the dlpackpp target itself), the
command that reruns them with the kit."""

import inspect
import os
import re

from . import _kit, _repro_cases, _repro_toolkit, _targets

_HEADER = '''#!/usr/bin/env python3
"""Reproduces a DLPack conformance failure without dlpackpp: {target} {version}, check {id}
({level}).

Rule: {rule}
The kit saw: {detail}

Needs only {framework} (with NumPy) and the standard library. Prints what it expected and
what it got; exits 1 while the defect is there, 0 once it is gone. Written by
`python -m dlpackpp.conformance --repro` (dlpackpp {kit})."""
import ctypes
import sys
'''

_MAIN = '''

def main():
    bad = {body}(target)
    for case, expected, got in bad:
        print("{id} {{}}: expected {{}}, got {{}}".format(case, expected, got))
    if bad:
        print("{target}: {id} fails ({level}): {rule}")
        return 1
    print("{target}: {id} as the spec says: the defect is gone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def _adapter_source(spec):
    """Source that defines `target` in the script, or None where no standalone one exists."""
    if _targets.is_builtin(spec):
        if spec == "dlpackpp":
            return None  # the project's own target runs through the kit's probe
        cls = _targets.load(spec)
        return "\n\n".join([inspect.getsource(_targets._refuse), inspect.getsource(cls),
                            "target = %s" % cls.__name__])
    path = os.path.abspath(spec)
    return '''import importlib.util
import os

_PATH = {path!r}  # the adapter file the kit ran
sys.path.insert(0, os.path.dirname(_PATH))
_spec = importlib.util.spec_from_file_location("adapter", _PATH)
target = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(target)'''.format(path=path)


def _toolkit_source():
    text = inspect.getsource(_repro_toolkit)
    return text.split('"""', 2)[2].replace("import ctypes\n", "", 1).strip()


def script(kit, target, check):
    """The text of the script for one failed check (`kit`: the kit's version), or None where
    none reproduces it."""
    body = getattr(_repro_cases, "repro_" + check["id"].lower(), None)
    adapter = _adapter_source(target.get("spec", target["name"]))
    if body is None or adapter is None:
        return None
    fields = dict(target=target["name"], version=target["version"], id=check["id"],
                  level=check["level"], rule=check["rule"].replace('"', "'"),
                  detail=check["detail"].replace('"', "'"), kit=kit,
                  framework=target["name"], body=body.__name__)
    parts = [_HEADER.format(**fields), _toolkit_source()]
    parts += [inspect.getsource(getattr(_kit, n)) for n in _repro_cases.NEEDS.get(
        check["id"], ())]
    helpers = [f for n, f in vars(_repro_cases).items() if n.startswith("_") and callable(f)]
    parts += [inspect.getsource(f) for f in helpers] + [inspect.getsource(body), adapter]
    return "\n\n".join(p.strip("\n") for p in parts) + "\n" + _MAIN.format(**fields)


def write_all(report, folder):
    """Writes a script per failed check of `report` into `folder`, and README.txt; returns
    the scripts' paths."""
    written, without = [], []
    for t in report["targets"]:
        for c in t["checks"]:
            if c["verdict"] != "fail":
                continue
            text = script(report["kit"], t, c)
            if text is None:
                without.append("%s %s: %s" % (t["name"], c["id"], c.get("rerun", "")))
                continue
            name = re.sub(r"[^A-Za-z0-9_.-]", "_", "%s_%s.py" % (t["name"], c["id"]))
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(path, 0o755)
            written.append(path)
    lines = ["Standalone reproductions (python3 FILE: exit 1 while the defect is there):"]
    lines += ["  " + os.path.basename(p) for p in written] or ["  (none)"]
    if without:
        lines += ["", "Failures without a standalone script (rerun them with the kit):"]
        lines += ["  " + w for w in without]
    with open(os.path.join(folder, "README.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return written
