"""The report as an HTML page: headline, decision, sections, footer."""

from __future__ import annotations

import base64
import html

import numpy as np

from . import _verdicts as V
from ._common import _fmt
from ._shared import COST_KEYS, COST_LABELS

#: what the default page shows, stated in its footer (kept true by ``PageLedger``)
PAGE_RULE = (
    "figures from the published object, the population rows (treated as public) and the "
    "parameters, shown as computed; figures from the training rows only as sums of "
    "bounded per-row quantities released with Laplace noise (budget in the headline), "
    "AUCs printed at three decimals and counts as whole numbers; no figure from fewer "
    "than {min_group_size} people; no per-person identifier or figure, no timing. "
    "Everything else computed from the training rows is in the report's private channel "
    "(PrivacyReport.private_details), never on this page and never pickled")


class _HTMLPage:
    """The HTML rendering of :class:`~sklearn_privacy.PrivacyReport` (a mixin)."""

    def _headline(self, private=False) -> list[str]:
        s = self.summary
        eps = s.get("claimed_epsilon", np.inf)
        out = [("claimed epsilon of the model", _fmt(eps) + (
            "" if np.isinf(eps) else f" (delta {_fmt(s.get('claimed_delta'))})"))]
        if s.get("page_epsilon") is not None:
            total = s.get("total_epsilon", np.inf)
            out.append(("claimed epsilon of the model and this page together",
                        _fmt(total) + ("" if np.isinf(total) else
                                       f" (delta {_fmt(s.get('claimed_delta'))})")
                        + f"; this page's own budget {_fmt(s['page_epsilon'])}"))
        if s.get("tpr_bound") is not None:   # the claim as a bound on attacks (public)
            text = f"at most {s['tpr_bound']:.3g} (proven)"
            emp = s.get("empirical_tpr")   # attacks on the training rows: private page only
            if private and emp is not None:
                text += (f"; the strongest attack run reached {emp['tpr']:.3g} "
                         f"[{emp['tpr_low']:.3g}, {emp['tpr_high']:.3g}]")
                if emp["refuted"]:
                    text += ": ABOVE THE PROVEN BOUND, the claim is refuted"
            out.append(("an attacker's TPR at 1% FPR", text))
        if s.get("utility"):
            metric, value, base, outcome = s["utility"]
            out.append((f"{metric} on population rows (baseline)",
                        f"{value:.3g} ({base:.3g})"
                        + ("" if outcome == "above_baseline" else ": flagged")))
        tail = s.get("tpr_at_low_fpr")
        if tail:
            out.append((f"TPR at FPR 1 % / 0.1 %, {tail['attack']} (noisy counts; "
                        "intervals include the noise)",
                        " / ".join("not resolved" if r is None else
                                   f"{r['tpr']:.3g} [{r['low']:.3g}, {r['high']:.3g}]"
                                   for r in (tail["levels"]["0.01"],
                                             tail["levels"]["0.001"]))))
        if s.get("empirical_epsilon") is not None:
            source = s.get("empirical_epsilon_source")
            out.append((f"empirical epsilon lower bound ({s.get('confidence', 0.95):.0%}; "
                        + (f"{source}; " if source else "")
                        + "audits retrain the recipe on the population rows)",
                        _fmt(s["empirical_epsilon"])))
        p = (self.private_details or {}).get("summary") or {}
        if private and p.get("empirical_epsilon") is not None:
            out.append(("private: empirical epsilon lower bound with the membership tests "
                        f"on training rows ({p.get('empirical_epsilon_source')})",
                        _fmt(p["empirical_epsilon"])))
        tail = p.get("tpr_at_low_fpr") if private else None
        if tail:
            out.append((f"private: exact TPR at FPR 1 % / 0.1 %, strongest attack "
                        f"({tail['attack']})",
                        " / ".join("not resolved" if r is None else
                                   f"{r['tpr']:.3g} [{r['low']:.3g}, {r['high']:.3g}]"
                                   for r in (tail["levels"]["0.01"],
                                             tail["levels"]["0.001"]))))
        return out

    def _html(self, *, private, dated):
        e = html.escape
        parts = [
            "<!DOCTYPE html><html><head><meta charset='utf-8'>",
            f"<title>Privacy report: {e(self.name)}</title>",
            "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;"
            "padding:0 1em;color:#222}h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;"
            "padding-bottom:.2em;margin-top:1.6em}table{border-collapse:collapse;"
            "margin:.5em 0}td{border:1px solid #ddd;padding:.25em .6em}"
            "td:first-child{color:#555}.verdict{background:#f4f7fb;border-left:4px solid "
            "#3465a4;padding:.4em .8em;margin:.4em 0}.head td{font-size:1.15em}"
            "img{max-width:100%}.time{color:#888;font-size:.85em}.flag{border-left-color:#c00;"
            "background:#fbf1f1}.meta td{font-size:.85em}</style></head><body>",
            f"<h1>Privacy report: {e(self.name)}</h1>",
            "<table class='head'>",
        ]
        for k, v in self._headline(private):
            parts.append(f"<tr><td>{e(k)}</td><td><b>{e(v)}</b></td></tr>")
        parts.append("</table>")
        parts += self._decision_html(private)
        flags = self.summary.get("flags") or []
        if flags:
            parts.append("<h2>Findings to act on before publishing</h2>")
            parts += [f"<div class='verdict flag'>{e(v)}</div>" for v in flags]
        private_flags = (self.private_details or {}).get("flags") or []
        if private and private_flags:
            parts.append("<h2>Findings from private figures (do not publish)</h2>")
            parts += [f"<div class='verdict flag'>{e(v)}</div>" for v in private_flags]
        for s in self.sections:
            if s.key == "private" and not private:
                continue
            parts.append(f"<h2>{e(s.title)}</h2>")
            parts += self._block(s.verdicts, s.outcomes, s.table, s.figure_png, s.title)
            if private and (s.private_verdicts or s.private_table or s.private_figure_png):
                parts.append(f"<h3>{e(s.title)}: private details (do not publish)</h3>")
                parts += self._block(s.private_verdicts, s.private_outcomes,
                                     s.private_table, s.private_figure_png, s.title)
            if private:
                parts.append(f"<div class='time'>computed in {s.seconds:.1f} s "
                             "(private: timings depend on the rows)</div>")
        parts += self._footer(dated=dated)
        parts.append("</body></html>")
        return "\n".join(parts)

    @staticmethod
    def _block(verdicts, outcomes, table, figure_png, title):
        e = html.escape
        out = []
        outcomes = list(outcomes) + [""] * (len(verdicts) - len(outcomes))
        for v, o in zip(verdicts, outcomes, strict=False):
            cls = " flag" if o in V.FLAGS or o == "private" else ""
            out.append(f"<div class='verdict{cls}'>{e(v)}</div>")
        if table:
            out.append("<table>")
            for k, v in table:
                out.append(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>")
            out.append("</table>")
        if figure_png:
            b64 = base64.b64encode(figure_png).decode("ascii")
            out.append(f"<img alt='{e(title)}' src='data:image/png;base64,{b64}'>")
        return out

    def _decision_html(self, private=False) -> list[str]:
        out = self._decision_block(self._decision(), "Recommendation", "recommendation")
        rec = (self.private_details or {}).get("recommendation")
        if private and rec is not None:
            out += self._decision_block(rec, "Recommendation from the private figures too "
                                             "(do not publish)", "private-recommendation")
        return out

    @staticmethod
    def _decision_block(rec, title, anchor) -> list[str]:
        e = html.escape
        words = rec["decision"].replace("_", " ")
        cls = "" if rec["decision"] == "support_release" else " flag"
        out = [f"<div class='verdict{cls}' id='{anchor}'><b>{e(title)}: {e(words)}"
               "</b> (under the declared policy: "
               + e(", ".join(f"{k} = {v}" for k, v in rec["policy"].items())) + ")<ul>"]
        out += [f"<li>{e(r)}</li>" for r in rec["reasons"][:20]]
        if len(rec["reasons"]) > 20:
            out.append(f"<li>... and {len(rec['reasons']) - 20} more (see to_json())</li>")
        out.append("</ul></div>")
        return out

    def _footer(self, dated=True) -> list[str]:
        e = html.escape
        m = self.metadata
        if not m:
            return []
        rows = [("sklearn_privacy version", m.get("version"))]
        if dated:
            rows.append(("date", m.get("date")))
        rows.append(("random_state (pass it back to reproduce this page's public figures)",
                     m.get("random_state")))
        rows += [(k, v) for k, v in (m.get("parameters") or {}).items()]
        cost = self.summary.get("cost") or {}
        rows += [(f"cost: {COST_LABELS[k]}", f"{cost[k]:,}") for k in COST_KEYS if k in cost]
        params = m.get("parameters") or {}
        rows.append(("what this page shows", PAGE_RULE.format(
            min_group_size=params.get("min_group_size", "?"))))
        out = ["<h2>How this page was made</h2>", "<table class='meta'>"]
        out += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in rows]
        out.append("</table>")
        return out
