"""The default page as a template: every element derived from accounted figures a placeholder.

A privacy report's default page mixes figures that are functions of public inputs (the
published model, the population rows, the parameters, the report's seed) with figures
released through the page's ledger (:class:`~sklearn_privacy.report._disclosure.PageLedger`)
and with what is read from those: sentences, findings, the headline, the recommendation.
:func:`page_template` renders the page with each such element replaced by a typed
placeholder ``[[D3 sentence from A1 A2]]`` (``D``: a derived item; ``A``: an accounted
figure the ledger released). Two training sets that differ in one row must give the same
template; what the placeholders stand for is accounted by the ledger's record
(:func:`page_accounting`), which states each released figure's sensitivity, budget and
noise scale.
"""

from __future__ import annotations

import copy

from . import _verdicts as V


def placeholder(item) -> str:
    """The typed placeholder of one derived item (no characters HTML escapes)."""
    return f"[[{item['id']} {item['kind']} from {' '.join(item['inputs'])}]]"


def page_accounting(report) -> dict | None:
    """The ledger's record of the default page (None for a report without one)."""
    record = getattr(report, "_page_ledger", None)
    return None if record is None else copy.deepcopy(record)


def page_template(report) -> str:
    """The default page (undated) with every derived item a typed placeholder."""
    record = getattr(report, "_page_ledger", None)
    if not record:
        return report.default_page(dated=False)
    items = record["items"]
    tmpl = copy.copy(report)
    tmpl.sections = [copy.copy(s) for s in report.sections]
    for s in tmpl.sections:
        s.verdicts, s.outcomes, s.table = list(s.verdicts), list(s.outcomes), list(s.table)
    by = {s.key: s for s in tmpl.sections}
    derived_verdicts = []
    headline = []
    summary = dict(report.summary)
    for item in items:
        ph = placeholder(item)
        sec = by.get(item["section"])
        if item["part"] == "verdict" and sec is not None:
            sec.verdicts[item["index"]] = ph
            sec.outcomes[item["index"]] = "derived"
            derived_verdicts.append(ph)
        elif item["part"] == "cell" and sec is not None:
            sec.table[item["index"]] = (sec.table[item["index"]][0], ph)
        elif item["part"] == "figure" and sec is not None:
            sec.figure_png = None
            sec.verdicts.append(ph)
            sec.outcomes.append("derived")
        elif item["part"] == "headline":
            summary.pop(item["index"], None)
            headline.append((ph, ""))
    # findings to act on: the public ones as shown, each derived sentence a placeholder
    # (it is one when its outcome is a flag)
    summary["flags"] = [v for s in tmpl.sections for v, o in zip(s.verdicts, s.outcomes,
                                                                  strict=True)
                        if o in V.FLAGS] + derived_verdicts
    tmpl.summary = summary
    rec = report._decision()
    if items:
        every = sorted({f for it in items for f in it["inputs"]},
                       key=lambda f: int(f[1:]))
        tmpl.recommendation = {"decision": f"[[R recommendation from {' '.join(every)}]]",
                               "reasons": [], "policy": rec["policy"]}
    else:
        tmpl.recommendation = rec
    base = type(report)

    class _Template(base):
        def _headline(self, private=False):
            return base._headline(self, private) + headline

    tmpl.__class__ = _Template
    return tmpl.default_page(dated=False)
