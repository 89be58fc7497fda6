# SPDX-License-Identifier: Apache-2.0
"""The check registry and the report entry.

A check returns Findings (each a rule applied to one case, with its level) or raises Skip.
The verdict is `fail` when a MUST or SHOULD finding failed (INFO findings are only told);
the check's level is then the highest level that failed and its rule that finding's rule, so
a report names the rule each verdict rests on. A passing check reports its nominal level.
Every entry of a report, whoever makes it (a check, the runner for a child that died), is
made by entry() here."""

import os
import traceback

from ._kit import NAME_RULE, BadCapsule, Findings, Skip

ORDER = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8", "P9", "P10", "L1", "L2", "L3", "L4",
         "L5", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "X1", "X2",
         "X3", "X4", "X5", "M1")
ROLES = {"P": "producer", "L": "lifetime", "C": "consumer", "X": "exchange", "M": "matrix"}
_RANK = {"INFO": 0, "SHOULD": 1, "MUST": 2}
# What an exception a check did not expect breaks: the framework refused (or failed) with a
# class the spec does not name. The spec names classes without a must: SHOULD, whatever the
# class (a crash or a hang is MUST: the runner says so).
UNEXPECTED = "Python spec: a refusal raises BufferError (TypeError for a malformed argument)"
CRASHED = "Python spec: a producer or consumer never crashes or hangs the interpreter"

REGISTRY = {}
_MODULES = ("_checks_producer", "_checks_stream", "_checks_lifetime", "_checks_consumer",
            "_checks_exchange", "_matrix")


def check(check_id, level, rule):
    """Registers a check function f(target) -> Findings under its pinned ID."""
    if check_id not in ORDER or check_id in REGISTRY:
        raise AssertionError("check %s is not a pinned ID or is registered twice" % check_id)

    def register(f):
        """Records f under check_id."""
        REGISTRY[check_id] = (f, level, rule)
        return f
    return register


def registry():
    """Every check, imported and registered: an ID without a check is an error here, not a
    check that silently never runs."""
    import importlib
    for name in _MODULES:
        importlib.import_module("." + name, __package__)
    missing = [i for i in ORDER if i not in REGISTRY]
    if missing:
        raise AssertionError("pinned check IDs without a check: %s" % ", ".join(missing))
    return REGISTRY


def _clip(text, limit=600):
    return text if len(text) <= limit else text[:limit - 3] + "..."


def entry(check_id, verdict, detail, level=None, rule=None):
    """The report entry of a check (level and rule default to the check's nominal ones)."""
    _, nominal, nominal_rule = registry()[check_id]
    return {"id": check_id, "role": ROLES[check_id[0]], "level": level or nominal,
            "verdict": verdict, "rule": rule or nominal_rule, "detail": _clip(detail)}


def verdict(check_id, findings):
    """The report entry for a check's findings."""
    failed = [f for f in findings if not f.ok and f.level != "INFO"]
    # The same note from many cases is told once.
    notes = list(dict.fromkeys(f.text for f in findings if not f.ok and f.level == "INFO"))
    if failed:
        worst = max(failed, key=lambda f: _RANK[f.level])
        shown = [f.text for f in sorted(failed, key=lambda f: -_RANK[f.level])]
        return entry(check_id, "fail", "; ".join(shown + notes), worst.level, worst.rule)
    passed = sum(1 for f in findings if f.ok)
    return entry(check_id, "pass", "; ".join(["%d case%s as the spec says" % (
        passed, "" if passed == 1 else "s")] + notes))


def run_check(check_id, target):
    """Runs one registered check on a target (in the child process) and returns its entry."""
    f = registry()[check_id][0]
    try:
        findings = f(target)
    except Skip as s:
        return entry(check_id, "skip", str(s))
    except BadCapsule as e:
        return entry(check_id, "fail", str(e), "MUST", NAME_RULE)
    except Exception as e:  # noqa: BLE001 - what the framework raised unexpectedly
        tail = traceback.extract_tb(e.__traceback__)[-1]
        return entry(check_id, "fail", "raised %s (at %s:%d)" % (
            describe(e), os.path.basename(tail.filename), tail.lineno), "SHOULD", UNEXPECTED)
    if not findings:
        return entry(check_id, "skip", "no case applied to this target")
    return verdict(check_id, findings)


def new():
    """An empty list of findings for a check to fill."""
    return Findings()


def describe(exc):
    """An exception as the reports show it: its class and message, short."""
    return _clip("%s: %s" % (type(exc).__name__, exc), 160)
