# SPDX-License-Identifier: Apache-2.0
"""The report in its forms: a table for the terminal, JSON (the pinned schema, plus the
environment, a rerun command per failed check and the baseline comparison), Markdown, and
one self-contained HTML page (_html.py)."""

import json
import shlex

OUTCOMES = ("pass", "copy", "refuse", "wrong", "crash")
PROG = "python -m dlpackpp.conformance"


def rerun(spec, check_id):
    """The command that runs one check of one target again."""
    return "%s %s --only %s" % (PROG, shlex.quote(spec), check_id)


def finish(report):
    """Adds what every form shows: a rerun command to each failed check. Returns report."""
    for t in report["targets"]:
        for c in t["checks"]:
            if c["verdict"] == "fail":
                c["rerun"] = rerun(t.get("spec", t["name"]), c["id"])
    return report


def counts(target):
    """{"MUST": n, "SHOULD": n, "pass": n, "skip": n}: a target's failures by level, passes
    and skips (what its banner says)."""
    out = {"MUST": 0, "SHOULD": 0, "pass": 0, "skip": 0}
    for c in target["checks"]:
        out[c["level"] if c["verdict"] == "fail" else c["verdict"]] += 1
    return out


def banner(target):
    """One line for a target: its name, version and counts."""
    n = counts(target)
    return "%s %s: %d MUST failed, %d SHOULD failed, %d passed, %d skipped" % (
        target["name"], target["version"], n["MUST"], n["SHOULD"], n["pass"], n["skip"])


def matrix_grid(report):
    """{producer: {consumer: [cells]}} and the ordered names."""
    names = [t["name"] for t in report["targets"]]
    grid = {}
    for cell in report["matrix"]:
        for n in (cell["producer"], cell["consumer"]):
            if n not in names:
                names.append(n)
        grid.setdefault(cell["producer"], {}).setdefault(cell["consumer"], []).append(cell)
    return grid, names


def summary(cells):
    """'7 pass 2 refuse' for a list of cells."""
    n = {}
    for cell in cells:
        n[cell["outcome"]] = n.get(cell["outcome"], 0) + 1
    return " ".join("%d %s" % (n[o], o) for o in OUTCOMES if n.get(o))


def baseline_lines(report):
    """What --baseline found: new MUST failures and fixed checks (none without --baseline)."""
    found = report.get("baseline")
    if not found:
        return []
    return ["new MUST failures since the baseline: %s" % (", ".join(found["new"]) or "none"),
            "fixed since the baseline: %s" % (", ".join(found["fixed"]) or "none")]


def environment_lines(report):
    """The environment block as lines (Python, OS, frameworks, kit, command)."""
    env = report.get("environment", {})
    lines = ["Python %s" % env.get("python", "?"), "OS %s" % env.get("os", "?"),
             "dlpackpp conformance kit %s (DLPack %s)" % (report["kit"], report["dlpack"])]
    lines += ["%s %s" % (t["name"], t["version"] or "(version unknown)")
              for t in report["targets"]]
    lines.append("command: %s" % env.get("command", PROG))
    return lines


def as_json(report):
    """The JSON report."""
    return json.dumps(report, indent=2) + "\n"


def text(report):
    """The table the terminal shows when no report file is asked for."""
    lines = ["DLPack %s conformance (dlpackpp %s)" % (report["dlpack"], report["kit"])]
    lines += baseline_lines(report)
    for t in report["targets"]:
        lines += ["", banner(t)]
        for c in t["checks"]:
            lines.append("  %-4s %-8s %-6s %-4s %s" % (c["id"], c["role"], c["level"],
                                                        c["verdict"], c["detail"]))
            if c["verdict"] == "fail":
                lines.append("       rule: %s" % c["rule"])
                lines.append("       rerun: %s" % c["rerun"])
    grid, names = matrix_grid(report)
    if grid:
        lines += ["", "M1 producer x consumer (rows produce):"]
        for p in names:
            for c in names:
                if c in grid.get(p, {}):
                    lines.append("  %-10s -> %-10s %s" % (p, c, summary(grid[p][c])))
    return "\n".join(lines + [""] + environment_lines(report)) + "\n"


def _md(value):
    return str(value).replace("|", "\\|")


def markdown(report):
    """The Markdown report: a banner and a table per target, then the matrix."""
    out = ["# DLPack %s conformance (dlpackpp %s)" % (report["dlpack"], report["kit"]), ""]
    out += ["- " + line for line in [banner(t) for t in report["targets"]] +
            baseline_lines(report)]
    for t in report["targets"]:
        out += ["", "## %s %s" % (t["name"], t["version"]), "",
                "| ID | role | level | verdict | rule | detail |", "|---|---|---|---|---|---|"]
        for c in t["checks"]:
            detail = c["detail"] + (" (rerun: `%s`)" % c["rerun"] if "rerun" in c else "")
            out.append("| %s |" % " | ".join(_md(v) for v in (
                c["id"], c["role"], c["level"], c["verdict"], c["rule"], detail)))
    grid, names = matrix_grid(report)
    if grid:
        consumers = [n for n in names if any(n in row for row in grid.values())]
        out += ["", "## M1: producer (row) x consumer (column)", "",
                "| producer | %s |" % " | ".join(consumers),
                "|---|%s" % ("---|" * len(consumers))]
        for p in names:
            if p in grid:
                out.append("| %s | %s |" % (p, " | ".join(summary(grid[p].get(c, [])) or "-"
                                                          for c in consumers)))
    out += ["", "## Environment", ""] + ["- " + _md(line) for line in environment_lines(report)]
    return "\n".join(out) + "\n"


def html_page(report):
    """The self-contained HTML page (see _html.py)."""
    from ._html import page
    return page(report)
