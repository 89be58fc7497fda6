# SPDX-License-Identifier: Apache-2.0
"""The command line pinned in docs/conformance.md: targets, --json/--markdown/--html, --only,
--timeout; exit 0 (no MUST failed), 1 (a MUST failed), 2 (usage error, one line on stderr)."""

import argparse
import importlib.util
import sys

from . import kit_version
from ._build import UsageError, build
from ._checks import ORDER
from ._report import as_json, html_page, markdown, text
from ._targets import BUILTIN, load, present


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _parse(argv):
    parser = _Parser(prog="python -m dlpackpp.conformance",
                     description="DLPack conformance of frameworks' producers, consumers and "
                     "exchange tables")
    parser.add_argument("targets", nargs="*", metavar="TARGET",
                        help="built-in (%s) or an adapter file (.py)" % ", ".join(BUILTIN))
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--markdown", metavar="FILE")
    parser.add_argument("--html", metavar="FILE")
    parser.add_argument("--only", metavar="ID,ID,...")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS")
    return parser.parse_args(argv)


def main(argv=None):
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else "usage error"
        sys.stderr.write("python -m dlpackpp.conformance: %s\n" % first)
        rest = str(e).strip().splitlines()[1:]
        if rest:  # a compiler's output, after the one line
            sys.stderr.write("\n".join(rest[-20:]) + "\n")
        return 2


def _main(argv):
    args = _parse(argv)
    only = None
    if args.only:
        only = [i.strip().upper() for i in args.only.split(",") if i.strip()]
        unknown = [i for i in only if i not in ORDER]
        if unknown:
            raise UsageError("unknown check ID %s (known: %s)" % (", ".join(unknown),
                                                                 ",".join(ORDER)))
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    specs = list(dict.fromkeys(args.targets)) or [n for n in BUILTIN if present(n)]
    names = []
    for spec in specs:
        names.append(load(spec).NAME)  # usage errors now, before any child
    if importlib.util.find_spec("numpy") is None:  # the source arrays of every case
        raise UsageError("the kit needs numpy in this interpreter (pip install numpy)")
    build()  # once here, so children do not race to compile it
    from . import _runner
    matrix_specs = [s for s, n in zip(specs, names)]
    targets, matrix = _runner.run(specs, names, only, args.timeout, matrix_specs)
    report = {"dlpack": "1.3", "kit": kit_version(), "targets": targets, "matrix": matrix}
    for path, render in ((args.json, as_json), (args.markdown, markdown), (args.html, html_page)):
        if path:
            with open(path, "w", encoding="utf-8") as f:
                f.write(render(report))
    if not (args.json or args.markdown or args.html):
        sys.stdout.write(text(report))
    failed = any(c["verdict"] == "fail" and c["level"] == "MUST"
                 for t in targets for c in t["checks"])
    return 1 if failed else 0
