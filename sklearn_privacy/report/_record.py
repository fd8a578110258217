"""The report as a record an output-checking process can file: JSON, schema, policy, decision.

The record (schema ``sklearn_privacy.privacy_report``, version :data:`SCHEMA_VERSION`,
shipped as ``privacy_report.schema.json`` next to this module) holds the claim, every
check's outcome and evidence, and a recommendation made against a declared
:class:`ReleasePolicy`. The HTML page renders the same record: its decision line is the
record's.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from importlib import resources
from numbers import Integral, Real

import numpy as np

#: version of the JSON record; a change that removes or renames a field bumps the major part
#: (2.0: the record holds only what the default page shows, private details under
#: ``"private"``; no timings); an added field bumps the minor part (2.1: ``summary.cost``,
#: the counts of what the report computed)
SCHEMA_VERSION = "2.1"
SCHEMA_NAME = "sklearn_privacy.privacy_report"

#: the decisions, strongest first (the vocabulary of output checking in trusted research
#: environments: reject, support rejection, support release)
DECISIONS = ("reject", "support_rejection", "support_release")

#: outcomes whose finding proves disclosure from the published object itself
_PROOF = frozenset({"verbatim", "refuted"})
#: structural checks whose finding proves disclosure (the rest are risk indicators)
_PROOF_CHECKS = frozenset({"stored_rows", "class_disclosure"})


@dataclass(frozen=True)
class ReleasePolicy:
    """The thresholds a release is judged against (set by the output checker).

    A report's recommendation is one of ``"reject"``, ``"support_rejection"`` and
    ``"support_release"``, each with its reasons:

    * **reject** -- the published object itself proves disclosure: training rows stored
      in it (found by the release section or the structural stored-rows check), pure
      leaves of fewer than ``min_rows`` rows (the label of everyone in their region), or a
      claim refuted by an audit;
    * **support rejection** -- any other finding flagged on the page (an attack that
      leaks (an audit's lower bound is judged by ``max_empirical_epsilon`` instead), a
      structural finding such as small leaves, thresholds on training values,
      recoverable column values or too few degrees of freedom, a release
      not shown to beat its baseline), a finite claim above ``max_claimed_epsilon``, an
      empirical epsilon above ``max_empirical_epsilon``, or the strongest attack's TPR at
      1 % FPR shown (its interval's lower end) above ``max_tpr_at_1pct_fpr``;
    * **support release** -- none of these, with the checks that could not run listed:
      a checker reads them before releasing.

    Parameters
    ----------
    max_claimed_epsilon : float, default=10.0
        Largest acceptable finite claim (epsilon at the claim's delta). 10 is the upper end
        of the budgets deployed in practice; ``inf`` accepts any finite claim.
    max_empirical_epsilon : float, default=1.0
        Largest acceptable empirical lower bound (the page's headline): above it an attack
        or audit has shown a leak larger than a strong guarantee would allow.
    max_tpr_at_1pct_fpr : float, default=0.05
        Largest acceptable TPR at 1 % FPR (lower end of its interval) of the strongest
        attack: 5 times the chance level of 0.01.
    min_rows : int, default=10
        The k of the structural checks (leaves, classes, residual degrees of freedom under
        k rows are findings); 10 is the usual threshold count of statistical disclosure
        control.
    false_alarm : float, default=0.001
        The default page's false-alarm level: the findings decided from the page's noisy
        figures (membership leaks of the attack and of each group, an AUC below chance,
        training rows read back from the pickle or stored in the model) are one family,
        tested by Holm's step-down procedure at this family-wise level. When no training
        row is stored and members score like non-members, a page shows any such finding
        with probability at most ``false_alarm`` (a stored-rows finding means
        ``"reject"``, so a false one is costly: at 0.001 one honest page in a thousand).

    See Also
    --------
    sklearn_privacy.PrivacyReport.from_estimator : Takes the policy (``policy=``).
    sklearn_privacy.PrivacyReport.to_json : The record with the recommendation.

    Examples
    --------
    >>> from sklearn_privacy.report import ReleasePolicy
    >>> ReleasePolicy(max_empirical_epsilon=0.5).min_rows
    10
    """

    max_claimed_epsilon: float = 10.0
    max_empirical_epsilon: float = 1.0
    max_tpr_at_1pct_fpr: float = 0.05
    min_rows: int = 10
    false_alarm: float = 1e-3

    def __post_init__(self):
        for name in ("max_claimed_epsilon", "max_empirical_epsilon", "max_tpr_at_1pct_fpr"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Real) or not v >= 0 or math.isnan(v):
                raise ValueError(f"ReleasePolicy: {name} must be a number >= 0; got {v!r}.")
        fa = self.false_alarm
        if isinstance(fa, bool) or not isinstance(fa, Real) or not 0 < fa < 1:
            raise ValueError(f"ReleasePolicy: false_alarm must be a number in (0, 1), the "
                             f"page's family-wise false-alarm level; got {fa!r}.")
        if isinstance(self.min_rows, bool) or not isinstance(self.min_rows, Integral) \
                or self.min_rows < 1:
            raise ValueError(f"ReleasePolicy: min_rows must be an integer >= 1; got "
                             f"{self.min_rows!r}.")


def recommend(record, policy) -> dict:
    """The decision on a report's record (:func:`to_record`) under ``policy``.

    Made from the record alone -- what the page it is shown on holds -- so that a checker
    who reads the record can reproduce it: ``{"decision", "reasons", "policy"}``. A
    structural check of the private channel (no figures in the record) is listed as a
    check whose outcome is on the private page.
    """
    from . import _verdicts as V

    if not isinstance(record, dict):      # a report: its record
        record = to_record(record, private=bool(getattr(record, "_show_private", False)))
    s = {k: _number(v) for k, v in record["summary"].items()}
    pairs = [(sec["key"], v["text"], v["outcome"]) for sec in record["sections"]
             for v in sec["verdicts"]]
    structural = record.get("structural", [])
    priv = record.get("private")
    if priv:
        # the private record: its private figures and conclusions count too
        s.update({k: _number(v) for k, v in (priv.get("summary") or {}).items()})
        pairs += [(sec["key"], v["text"], v["outcome"]) for sec in priv.get("sections", [])
                  for v in sec.get("private_verdicts", [])]
        structural = priv.get("structural") or structural
    reject, support, notes, private_notes = [], [], [], []
    for key, text, outcome in pairs:
        if outcome in _PROOF:
            reject.append(f"[{key}] {text}")
        elif outcome == "not_checked":
            notes.append(f"[{key}] {text}")
    for c in structural:
        if c.get("channel") == "private" and c.get("found") is None and not priv:
            private_notes.append(f"[structural] {c['name']}: computed from the training "
                                 "rows; its outcome is on the private page")
        elif c.get("ran") and c.get("found"):
            line = f"[structural] {c['name']}: {c['detail']}"
            (reject if c["name"] in _PROOF_CHECKS else support).append(line)
    for key, text, outcome in pairs:
        # the audits' lower bound is judged by max_empirical_epsilon (below)
        if outcome in V.FLAGS and outcome not in _PROOF and key != "structural" \
                and not (key == "audits" and outcome == "leaks"):
            support.append(f"[{key}] {text}")
    eps = s.get("claimed_epsilon")
    if eps is not None and math.isfinite(eps) and eps > policy.max_claimed_epsilon:
        support.append(f"the claimed epsilon {eps:.3g} is above the policy's "
                       f"max_claimed_epsilon = {policy.max_claimed_epsilon:g}")
    emp = s.get("empirical_epsilon")
    if emp is not None and emp > policy.max_empirical_epsilon:
        support.append(f"the empirical epsilon lower bound {emp:.3g} "
                       f"({s.get('empirical_epsilon_source', 'best audit')}) is above the "
                       f"policy's max_empirical_epsilon = {policy.max_empirical_epsilon:g}")
    tail = (s.get("tpr_at_low_fpr") or {}).get("levels", {}).get("0.01")
    if tail is not None and tail["low"] > policy.max_tpr_at_1pct_fpr:
        support.append(f"the strongest attack ({s['tpr_at_low_fpr']['attack']}) finds "
                       f"{tail['tpr']:.3g} of members at 1 % FPR (interval from "
                       f"{tail['low']:.3g}), above the policy's max_tpr_at_1pct_fpr = "
                       f"{policy.max_tpr_at_1pct_fpr:g}")
    if reject:
        decision, reasons = "reject", reject + support
    elif support:
        decision, reasons = "support_rejection", support
    else:
        decision = "support_release"
        reasons = ["no check that ran found disclosure or a leak above the policy's "
                   "thresholds"] + [f"could not run: {n}" for n in notes]
    reasons += [f"not on this page: {n}" for n in private_notes]
    return {"decision": decision, "reasons": reasons, "policy": asdict(policy)}


# ---------------------------------------------------------------------- JSON
def _jsonable(x):
    """Plain JSON values; non-finite floats as the strings 'inf', '-inf', 'nan'."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, Integral):
        return int(x)
    if isinstance(x, Real):
        x = float(x)
        if math.isfinite(x):
            return x
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if x is None or isinstance(x, str):
        return x
    return str(x)


def _number(x):
    """The inverse of :func:`_jsonable` for one number."""
    if isinstance(x, str) and x in ("inf", "-inf", "nan"):
        return float(x)
    return x


#: summary keys of the default page's record (the rest of ``summary`` is not shown)
_PAGE_SUMMARY = ("claimed_epsilon", "claimed_delta", "tpr_bound", "page_epsilon", "total_epsilon",
                 "page_queries", "empirical_epsilon", "empirical_epsilon_source",
                 "confidence", "utility", "tpr_at_low_fpr", "flags", "cost")


def _section_record(s, private):
    rec = {"key": s.key, "title": s.title,
           "verdicts": [{"outcome": o, "text": v}
                        for v, o in zip(s.verdicts, s.outcomes, strict=False)],
           "table": [[str(k), str(v)] for k, v in s.table]}
    if private:
        rec["private_verdicts"] = [{"outcome": o, "text": v} for v, o in zip(
            s.private_verdicts, s.private_outcomes, strict=False)]
        rec["private_table"] = [[str(k), str(v)] for k, v in s.private_table]
        rec["seconds"] = s.seconds
    return rec


def to_record(report, private=False) -> dict:
    """The report as a JSON-ready dictionary: what its default page shows.

    With ``private=True`` (a report built with ``include_private_details=True``) the
    record adds ``"private"``: the private channel, marked ``"do_not_publish": true``.
    """
    page = [s for s in report.sections if s.key != "private"]
    record = {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "name": report.name,
        "metadata": report.metadata,
        "claim": {"epsilon": report.summary.get("claimed_epsilon"),
                  "delta": report.summary.get("claimed_delta")},
        "summary": {k: v for k, v in report.summary.items() if k in _PAGE_SUMMARY},
        "checks": [{"section": s.key, "outcome": o, "statement": v}
                   for s in page
                   for v, o in zip(s.verdicts, s.outcomes, strict=False)],
        "structural": list(getattr(report, "structural", [])),
        "sections": [_section_record(s, False) for s in page],
        "recommendation": report.recommendation,
    }
    if private:
        d = report.private_details or {}
        record["private"] = {
            "do_not_publish": True,
            "summary": d.get("summary", {}),
            "flags": d.get("flags", []),
            "structural": d.get("structural", []),
            "figures": [[str(label), value] for label, value in d.get("figures", [])],
            "seconds": d.get("seconds", {}),
            "sections": [_section_record(s, True) for s in report.sections],
            "recommendation": d.get("recommendation"),
        }
    return _jsonable(record)


def from_record(cls, record):
    """A report rebuilt from :func:`to_record`'s dictionary (figures are not kept)."""
    from ._section import ReportSection

    if record.get("schema") != SCHEMA_NAME:
        raise ValueError(f"not a privacy report record: schema {record.get('schema')!r}.")
    major = str(record.get("schema_version", "")).split(".")[0]
    if major != SCHEMA_VERSION.split(".")[0]:
        raise ValueError(f"privacy report record of schema version "
                         f"{record.get('schema_version')!r}; this version reads "
                         f"{SCHEMA_VERSION.split('.')[0]}.x.")
    sections = [ReportSection(s["key"], s["title"],
                              verdicts=[v["text"] for v in s["verdicts"]],
                              outcomes=[v["outcome"] for v in s["verdicts"]],
                              table=[tuple(r) for r in s["table"]])
                for s in record["sections"]]
    summary = {k: _number(v) for k, v in record["summary"].items()}
    rep = cls(sections, name=record["name"], summary=summary, metadata=record["metadata"])
    rep.structural = list(record["structural"])
    rep.recommendation = record["recommendation"]
    if "private" in record:
        priv = record["private"]
        rep.private_details = {k: priv.get(k) for k in ("summary", "flags", "structural",
                                                       "seconds", "recommendation")}
        rep.private_details["figures"] = [tuple(f) for f in priv.get("figures", [])]
        by = {s["key"]: s for s in priv.get("sections", [])}
        for sec in sections:
            p = by.get(sec.key, {})
            sec.private_verdicts = [v["text"] for v in p.get("private_verdicts", [])]
            sec.private_outcomes = [v["outcome"] for v in p.get("private_verdicts", [])]
            sec.private_table = [tuple(r) for r in p.get("private_table", [])]
            sec.seconds = p.get("seconds", 0.0)
        extra = [s for s in priv.get("sections", []) if s["key"] == "private"]
        for s in extra:
            sections.append(ReportSection(s["key"], s["title"],
                                          verdicts=[v["text"] for v in s["verdicts"]],
                                          outcomes=[v["outcome"] for v in s["verdicts"]],
                                          table=[tuple(r) for r in s["table"]],
                                          seconds=s.get("seconds", 0.0)))
        rep.sections = sections
        rep._show_private = True
    return rep


def schema() -> dict:
    """The JSON Schema of the record (``privacy_report.schema.json``)."""
    text = resources.files(__package__).joinpath("privacy_report.schema.json").read_text(
        encoding="utf-8")
    return json.loads(text)
