# SPDX-License-Identifier: Apache-2.0
"""The check registry and how a check's findings become one verdict.

A check returns Findings (each a rule applied to one case, with its level) or raises Skip.
The verdict is `fail` when a MUST or SHOULD finding failed (INFO findings are only told);
the check's level is then the highest level that failed and its rule that finding's rule, so
a report names the rule each verdict rests on. A passing check reports its nominal level."""

from ._kit import Findings, Skip

ORDER = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10", "L1", "L2", "L3", "L4",
         "L5", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "X1", "X2",
         "X3", "X4", "X5", "M1")
ROLES = {"P": "producer", "L": "lifetime", "C": "consumer", "X": "exchange", "M": "matrix"}
_RANK = {"INFO": 0, "SHOULD": 1, "MUST": 2}

REGISTRY = {}


def check(check_id, level, rule):
    """Registers a check function f(target) -> Findings under its pinned ID."""
    def register(f):
        REGISTRY[check_id] = (f, level, rule)
        return f
    return register


def _clip(text, limit=600):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def verdict(check_id, findings, level, rule):
    """The report entry for a check's findings."""
    entry = {"id": check_id, "role": ROLES[check_id[0]], "level": level, "verdict": "pass",
             "rule": rule, "detail": ""}
    failed = [f for f in findings if not f.ok and f.level != "INFO"]
    notes = [f.text for f in findings if not f.ok and f.level == "INFO"]
    if failed:
        worst = max(failed, key=lambda f: _RANK[f.level])
        entry.update(verdict="fail", level=worst.level, rule=worst.rule)
        shown = [f.text for f in sorted(failed, key=lambda f: -_RANK[f.level])]
        entry["detail"] = _clip("; ".join(shown + notes))
    else:
        passed = sum(1 for f in findings if f.ok)
        entry["detail"] = _clip("; ".join(["%d case%s as the spec says" %
                                           (passed, "" if passed == 1 else "s")] + notes))
    return entry


def run_check(check_id, target):
    """Runs one registered check on a target (in the child process) and returns its entry."""
    f, level, rule = REGISTRY[check_id]
    try:
        findings = f(target)
    except Skip as s:
        return {"id": check_id, "role": ROLES[check_id[0]], "level": level, "verdict": "skip",
                "rule": rule, "detail": str(s)}
    if not findings:
        return {"id": check_id, "role": ROLES[check_id[0]], "level": level, "verdict": "skip",
                "rule": rule, "detail": "no case applied to this target"}
    return verdict(check_id, findings, level, rule)


def new():
    return Findings()


def describe(exc):
    """An exception as the reports show it: its class and message, short."""
    return _clip("%s: %s" % (type(exc).__name__, exc), 160)
