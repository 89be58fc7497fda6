# SPDX-License-Identifier: Apache-2.0
"""The HTML report: one self-contained page (no network, no script, no external asset). It
opens with a banner per target (MUST failures, SHOULD failures, passes, skips), then the
environment, the producer x consumer matrix whose cells open (<details>) to their cases, and
a table per target coloured by level, each failure with the command that reruns it."""

import html

from ._report import (OUTCOMES, banner, baseline_lines, counts, environment_lines,
                      matrix_grid, summary)

COLOURS = {"pass": "#2e7d32", "copy": "#7cb342", "refuse": "#f9a825", "wrong": "#c62828",
           "crash": "#6a1b9a"}
# A verdict's colour by level: a MUST failure is red, a SHOULD failure amber.
VERDICT_COLOURS = {"MUST": "#c62828", "SHOULD": "#ef6c00", "pass": "#2e7d32", "skip": "#9e9e9e"}

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #212121; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #bdbdbd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #eeeeee; }
td.v { color: #fff; font-weight: 600; text-align: center; }
td.cell { padding: 0; min-width: 110px; }
td.cell summary { color: #fff; font-weight: 600; padding: 4px 8px; cursor: pointer; }
td.cell ul { margin: 4px 8px 6px 8px; padding-left: 14px; font-size: 12px; }
.banner { display: flex; gap: 8px; align-items: center; margin: 4px 0; }
.banner b { min-width: 160px; }
.banner span { color: #fff; padding: 2px 10px; border-radius: 3px; }
.legend span { display: inline-block; color: #fff; padding: 2px 8px; margin-right: 6px; }
code { background: #f5f5f5; padding: 1px 4px; font-size: 12px; }
pre.env { background: #f5f5f5; padding: 8px; }
small { color: #616161; }
"""


def _banners(report):
    e = html.escape
    rows = ["<div id='banners'>"]
    for t in report["targets"]:
        n = counts(t)
        parts = [("MUST", "%d MUST failed" % n["MUST"]), ("SHOULD", "%d SHOULD failed" %
                 n["SHOULD"]), ("pass", "%d passed" % n["pass"]), ("skip", "%d skipped" %
                                                                    n["skip"])]
        rows.append("<div class='banner' title='%s'><b>%s <small>%s</small></b>%s</div>" % (
            e(banner(t)), e(t["name"]), e(t["version"]), "".join(
                "<span style='background:%s'>%s</span>" % (
                VERDICT_COLOURS[k] if n[k] else "#bdbdbd", e(label)) for k, label in parts)))
    return rows + ["</div>"]


def _worst(cells):
    for outcome in ("crash", "wrong"):
        if any(c["outcome"] == outcome for c in cells):
            return COLOURS[outcome]
    if not cells:
        return "#e0e0e0"
    n = {o: sum(1 for c in cells if c["outcome"] == o) for o in OUTCOMES}
    return COLOURS[max(n, key=lambda o: (n[o], -OUTCOMES.index(o)))]


def _matrix(report):
    e = html.escape
    grid, names = matrix_grid(report)
    if not grid:
        return []
    consumers = [n for n in names if any(n in row for row in grid.values())]
    rows = ["<h2 id='matrix'>M1: producer (row) &times; consumer (column)</h2>",
            "<p class='legend'>%s <small>(open a cell for its cases)</small></p>" % "".join(
                "<span style='background:%s'>%s</span>" % (COLOURS[o], o) for o in OUTCOMES),
            "<table><tr><th>producer \\ consumer</th>%s</tr>" % "".join(
                "<th>%s</th>" % e(c) for c in consumers)]
    for p in names:
        if p not in grid:
            continue
        row = ["<tr><th>%s</th>" % e(p)]
        for c in consumers:
            cells = grid[p].get(c, [])
            cases = "".join("<li><span style='color:%s'>%s</span> %s%s</li>" % (
                COLOURS[x["outcome"]], e(x["outcome"]), e(x["case"]),
                ": " + e(x["detail"]) if x.get("detail") else "") for x in cells)
            row.append("<td class='cell'><details><summary style='background:%s'>%s</summary>"
                       "<ul>%s</ul></details></td>" % (_worst(cells), e(summary(cells) or "-"),
                                                       cases))
        rows.append("".join(row) + "</tr>")
    return rows + ["</table>"]


def _target(t):
    e = html.escape
    n = counts(t)
    rows = ["<h2 class=\"target\">%s <small>%s &middot; %d MUST failed, %d SHOULD failed</small>"
            "</h2>" % (e(t["name"]), e(t["version"]), n["MUST"], n["SHOULD"]),
            "<table><tr><th>ID</th><th>role</th><th>level</th><th>verdict</th><th>rule</th>"
            "<th>detail</th></tr>"]
    for c in t["checks"]:
        key = c["level"] if c["verdict"] == "fail" else c["verdict"]
        detail = e(c["detail"])
        if "rerun" in c:
            detail += "<br><small>rerun:</small> <code>%s</code>" % e(c["rerun"])
        rows.append("<tr><td>%s</td><td>%s</td><td>%s</td><td class='v' style='background:%s'>"
                    "%s</td><td>%s</td><td>%s</td></tr>" % (
                        e(c["id"]), e(c["role"]), e(c["level"]), VERDICT_COLOURS[key],
                        e(c["verdict"]), e(c["rule"]), detail))
    return rows + ["</table>"]


def page(report):
    """The whole page."""
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             "<title>DLPack conformance</title><style>%s</style></head><body>" % _STYLE,
             "<h1>DLPack %s conformance <small>dlpackpp %s</small></h1>" % (
                 e(report["dlpack"]), e(report["kit"]))]
    parts += _banners(report)
    parts += ["<p class='baseline'>%s</p>" % e(line) for line in baseline_lines(report)]
    parts.append("<h2 id='environment'>Environment</h2><pre class='env'>%s</pre>"
                 % e("\n".join(environment_lines(report))))
    parts += _matrix(report)
    for t in report["targets"]:
        parts += _target(t)
    parts.append("</body></html>\n")
    return "\n".join(parts)
