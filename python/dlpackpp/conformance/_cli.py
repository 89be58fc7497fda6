# SPDX-License-Identifier: Apache-2.0
"""The command line pinned in docs/conformance.md: targets, --json/--markdown/--html, --only,
--timeout, --repro, --baseline; exit 0 (no MUST failed, or none new against the baseline),
1 (a MUST failed), 2 (usage error: one line on stderr, never a traceback)."""

import argparse
import importlib.util
import math
import os
import platform
import sys

from . import kit_version
from ._build import UsageError, build
from ._checks import ORDER
from ._report import as_json, finish, html_page, markdown, text
from ._targets import BUILTIN, check_spec, present

PROG = "python -m dlpackpp.conformance"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """Raises UsageError (exit 2, one line) instead of printing usage and exiting."""
        raise UsageError(message)


def _parse(argv):
    parser = _Parser(prog=PROG, description="DLPack conformance of frameworks' producers, "
                     "consumers and exchange tables")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="built-in (%s) or an adapter file (.py)" % ", ".join(BUILTIN))
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--markdown", metavar="FILE")
    parser.add_argument("--html", metavar="FILE")
    parser.add_argument("--only", metavar="ID,ID,...")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    parser.add_argument("--repro", metavar="DIR", help="a standalone script per failed case")
    parser.add_argument("--baseline", metavar="FILE", help="an earlier JSON report: exit 1 "
                        "only for MUST failures it lacks")
    return parser.parse_intermixed_args(argv)


def main(argv=None):
    """Runs the kit as the command line does; returns the exit status."""
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        lines = str(e).strip().splitlines() or ["usage error"]
        sys.stderr.write("%s: %s\n" % (PROG, lines[0]))
        if lines[1:]:  # a compiler's output, after the one line
            sys.stderr.write("\n".join(lines[1:][-20:]) + "\n")
        return 2


def _only(text):
    if not text:
        return None
    only = [i.strip().upper() for i in text.split(",") if i.strip()]
    unknown = [i for i in only if i not in ORDER]
    if unknown:
        raise UsageError("unknown check ID %s (known: %s)" % (", ".join(unknown),
                                                             ",".join(ORDER)))
    return only


def writable(path, what):
    """Raises UsageError unless `path` can be written (tried now, before any case runs)."""
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as e:
        raise UsageError("cannot write the %s file %s: %s" % (what, path, e.strerror or e))
    if not existed:
        os.remove(path)


def _repro_dir(path):
    try:
        os.makedirs(path, exist_ok=True)
        writable(os.path.join(path, ".dlpackpp-kit-write-test"), "--repro")
    except OSError as e:
        raise UsageError("cannot make the --repro folder %s: %s" % (path, e.strerror or e))


def environment(argv):
    """The environment block of the report: where and how it ran."""
    return {"python": "%s (%s)" % (platform.python_version(), sys.executable),
            "os": platform.platform(), "command": " ".join([PROG] + list(argv))}


def _main(argv):
    args = _parse(argv)
    only = _only(args.only)
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise UsageError("--timeout takes a finite number of seconds above 0, not %s"
                         % args.timeout)
    for path, what in ((args.json, "--json"), (args.markdown, "--markdown"),
                       (args.html, "--html")):
        if path:
            writable(path, what)
    if args.repro:
        _repro_dir(args.repro)
    from ._baseline import compare, read_baseline
    baseline = read_baseline(args.baseline) if args.baseline else None
    specs = list(dict.fromkeys(args.targets)) or [n for n in BUILTIN if present(n)]
    for spec in specs:
        check_spec(spec)
    if importlib.util.find_spec("numpy") is None:  # the source arrays of every case
        raise UsageError("the kit needs numpy in this interpreter (pip install numpy)")
    build()  # once here, so children do not race to compile it
    from . import _runner
    kinds = _runner.adapters(specs, args.timeout)
    targets, matrix = _runner.run(specs, kinds, only, args.timeout)
    env = environment(argv)
    env["frameworks"] = {t["name"]: t["version"] for t in targets}
    report = finish({"dlpack": "1.3", "kit": kit_version(), "targets": targets,
                     "matrix": matrix, "environment": env})
    status = compare(report, baseline) if baseline is not None else _must_failed(targets)
    _write(report, args)
    return status


def _must_failed(targets):
    return 1 if any(c["verdict"] == "fail" and c["level"] == "MUST"
                    for t in targets for c in t["checks"]) else 0


def _write(report, args):
    outputs = ((args.json, as_json), (args.markdown, markdown), (args.html, html_page))
    try:
        for path, render in outputs:
            if path:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(render(report))
        if args.repro:
            from ._repro import write_all
            write_all(report, args.repro)
    except OSError as e:
        raise UsageError("cannot write %s: %s" % (e.filename or "a report", e.strerror or e))
    if not any(path for path, _ in outputs):
        sys.stdout.write(text(report))
