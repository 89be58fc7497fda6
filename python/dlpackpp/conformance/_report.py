# SPDX-License-Identifier: Apache-2.0
"""The report in its four forms: a table for the terminal, JSON (the pinned schema),
Markdown, and one self-contained HTML page (no network, no external asset) with a table per
target and the producer x consumer matrix coloured by outcome."""

import html
import json

OUTCOMES = ("pass", "copy", "refuse", "wrong", "crash")
_COLOURS = {"pass": "#2e7d32", "copy": "#7cb342", "refuse": "#f9a825", "wrong": "#c62828",
            "crash": "#6a1b9a", "fail": "#c62828", "skip": "#9e9e9e"}


def as_json(report):
    return json.dumps(report, indent=2) + "\n"


def _matrix_grid(report):
    """{producer: {consumer: {outcome: count}}} and the ordered names."""
    names = [t["name"] for t in report["targets"]]
    for cell in report["matrix"]:
        for n in (cell["producer"], cell["consumer"]):
            if n not in names:
                names.append(n)
    grid = {}
    for cell in report["matrix"]:
        counts = grid.setdefault(cell["producer"], {}).setdefault(cell["consumer"], {})
        counts[cell["outcome"]] = counts.get(cell["outcome"], 0) + 1
    return grid, names


def _summary(counts):
    return " ".join("%d %s" % (counts[o], o) for o in OUTCOMES if counts.get(o))


def text(report):
    lines = ["DLPack %s conformance (dlpackpp %s)" % (report["dlpack"], report["kit"])]
    for t in report["targets"]:
        lines.append("")
        lines.append("%s %s" % (t["name"], t["version"]))
        for c in t["checks"]:
            lines.append("  %-4s %-8s %-6s %-4s %s" % (c["id"], c["role"], c["level"],
                                                        c["verdict"], c["detail"]))
            if c["verdict"] == "fail":
                lines.append("       rule: %s" % c["rule"])
    grid, names = _matrix_grid(report)
    if grid:
        lines += ["", "M1 producer x consumer (rows produce):"]
        for p in names:
            if p in grid:
                for c in names:
                    if c in grid[p]:
                        lines.append("  %-10s -> %-10s %s" % (p, c, _summary(grid[p][c])))
    return "\n".join(lines) + "\n"


def markdown(report):
    out = ["# DLPack %s conformance (dlpackpp %s)" % (report["dlpack"], report["kit"])]
    for t in report["targets"]:
        out += ["", "## %s %s" % (t["name"], t["version"]), "",
                "| ID | role | level | verdict | rule | detail |", "|---|---|---|---|---|---|"]
        for c in t["checks"]:
            out.append("| %s |" % " | ".join(str(c[k]).replace("|", "\\|") for k in
                                             ("id", "role", "level", "verdict", "rule",
                                              "detail")))
    grid, names = _matrix_grid(report)
    if grid:
        consumers = [n for n in names if any(n in row for row in grid.values())]
        out += ["", "## M1: producer (row) x consumer (column)", "",
                "| producer | %s |" % " | ".join(consumers),
                "|---|%s" % ("---|" * len(consumers))]
        for p in names:
            if p in grid:
                out.append("| %s | %s |" % (p, " | ".join(_summary(grid[p].get(c, {})) or "-"
                                                          for c in consumers)))
    return "\n".join(out) + "\n"


_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #212121; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #bdbdbd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eeeeee; }
td.v { color: #fff; font-weight: 600; text-align: center; }
td.cell { color: #fff; font-weight: 600; min-width: 90px; text-align: center; }
.legend span { display: inline-block; color: #fff; padding: 2px 8px; margin-right: 6px; }
small { color: #616161; }
"""


def _cell_colour(counts):
    for outcome in ("crash", "wrong", "refuse", "copy", "pass"):
        if counts.get(outcome) and outcome in ("crash", "wrong"):
            return _COLOURS[outcome]
    if not counts:
        return "#e0e0e0"
    return _COLOURS[max(counts, key=lambda o: (counts[o], -OUTCOMES.index(o)))]


def html_page(report):
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             "<title>DLPack conformance</title><style>%s</style></head><body>" % _STYLE,
             "<h1>DLPack %s conformance <small>dlpackpp %s</small></h1>" % (
                 e(report["dlpack"]), e(report["kit"]))]
    grid, names = _matrix_grid(report)
    if grid:
        consumers = [n for n in names if any(n in row for row in grid.values())]
        parts.append("<h2 id='matrix'>M1: producer (row) &times; consumer (column)</h2>")
        parts.append("<p class='legend'>%s</p>" % "".join(
            "<span style='background:%s'>%s</span>" % (_COLOURS[o], o) for o in OUTCOMES))
        parts.append("<table><tr><th>producer \\ consumer</th>%s</tr>" % "".join(
            "<th>%s</th>" % e(c) for c in consumers))
        for p in names:
            if p not in grid:
                continue
            row = ["<tr><th>%s</th>" % e(p)]
            for c in consumers:
                counts = grid[p].get(c, {})
                row.append("<td class='cell' style='background:%s' title='%s'>%s</td>" % (
                    _cell_colour(counts), e(_summary(counts)), e(_summary(counts) or "-")))
            parts.append("".join(row) + "</tr>")
        parts.append("</table>")
    for t in report["targets"]:
        fails = sum(1 for c in t["checks"] if c["verdict"] == "fail")
        parts.append("<h2 class='target'>%s <small>%s &middot; %d failed</small></h2>" % (
            e(t["name"]), e(t["version"]), fails))
        parts.append("<table><tr><th>ID</th><th>role</th><th>level</th><th>verdict</th>"
                     "<th>rule</th><th>detail</th></tr>")
        for c in t["checks"]:
            parts.append("<tr><td>%s</td><td>%s</td><td>%s</td><td class='v' style='background:"
                         "%s'>%s</td><td>%s</td><td>%s</td></tr>" % (
                             e(c["id"]), e(c["role"]), e(c["level"]),
                             _COLOURS.get(c["verdict"], "#2e7d32"), e(c["verdict"]),
                             e(c["rule"]), e(c["detail"])))
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
