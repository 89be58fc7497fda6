# SPDX-License-Identifier: Apache-2.0
"""--baseline FILE: a framework's CI gates on "no new failures". The exit status is 1 only
for a MUST check that fails now and did not fail in the earlier report for the same target;
the checks that failed there and pass now are listed as fixed (stderr and the report)."""

import json
import sys

from ._build import UsageError


def read_baseline(path):
    """{target name: {check ID: verdict}} of an earlier JSON report; UsageError when the file
    cannot be read or is not a report of this kit."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        return {t["name"]: {c["id"]: c["verdict"] for c in t["checks"]}
                for t in report["targets"]}
    except OSError as e:
        raise UsageError("cannot read the --baseline file %s: %s" % (path, e.strerror or e))
    except (ValueError, KeyError, TypeError) as e:
        raise UsageError("the --baseline file %s is not a JSON report of this kit (%s: %s)"
                         % (path, type(e).__name__, e))


def compare(report, baseline):
    """The exit status against `baseline`; adds report["baseline"] = {"new": [...], "fixed":
    [...]} (each "target ID") and lists both on stderr."""
    new, fixed = [], []
    for t in report["targets"]:
        before = baseline.get(t["name"], {})
        for c in t["checks"]:
            was = before.get(c["id"])
            if c["verdict"] == "fail" and c["level"] == "MUST" and was != "fail":
                new.append("%s %s" % (t["name"], c["id"]))
            elif c["verdict"] == "pass" and was == "fail":
                fixed.append("%s %s" % (t["name"], c["id"]))
    report["baseline"] = {"new": new, "fixed": fixed}
    for label, items in (("new MUST failure", new), ("fixed since the baseline", fixed)):
        for item in items:
            sys.stderr.write("%s: %s\n" % (label, item))
    return 1 if new else 0
