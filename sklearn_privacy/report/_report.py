"""One view of a model's privacy: claimed, per-example and empirical, side by side."""

from __future__ import annotations

import base64
import html
import io
import pickle
import time
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.utils.validation import check_is_fitted

from ..attacks._validation import (
    check_bool,
    check_fraction,
    check_positive_int,
    check_same_columns,
    check_target,
    is_frame,
    n_rows,
    take_rows,
)
from ..exceptions import PrivacyWarning, UncertifiedMinimumError
from ..utils import noise_generator
from ..utils._columns import frame_codes
from ..utils._intervals import auc_delong, paired_difference
from ..utils._random import child_seeds
from . import _verdicts as V
from ._record import ReleasePolicy, from_record, recommend, schema, to_record
from ._structural import structural_section
from ._tail import tail_rows


@dataclass
class ReportSection:
    """One section of a :class:`~sklearn_privacy.PrivacyReport`.

    The report's ``sections`` list holds one per applicable part, in the order of the
    page; each carries its conclusions, its figures and the time it took.

    Parameters
    ----------
    key : str
        Identifier (``"claim"``, ``"utility"``, ``"release"``, ``"structural"``, ``"fil"``,
        ``"membership"``, ``"inversion"``, ``"audits"``, ``"private"``).
    title : str
        Heading.
    verdicts : list of str
        Plain-language conclusions, each made by one rule of
        ``sklearn_privacy.report._verdicts`` from the numbers and their uncertainty.
    table : list of tuple
        Rows ``(label, value)`` of the section's figures.
    figure_png : bytes or None
        The section's figure (PNG), when matplotlib is installed.
    seconds : float
        Time the section took to compute.
    outcomes : list of str
        The outcome key of each verdict (e.g. ``"leaks"``, ``"cannot_tell"``,
        ``"not_checked"``), in the order of ``verdicts``.

    See Also
    --------
    sklearn_privacy.PrivacyReport : The report these sections make up.

    Examples
    --------
    >>> from sklearn_privacy.report import ReportSection
    >>> s = ReportSection("claim", "What is claimed", verdicts=["No guarantee is claimed."])
    >>> s.key, s.verdicts[0]
    ('claim', 'No guarantee is claimed.')
    """

    key: str
    title: str
    verdicts: list = field(default_factory=list)
    table: list = field(default_factory=list)
    figure_png: bytes | None = field(default=None, repr=False)
    seconds: float = 0.0
    outcomes: list = field(default_factory=list)

    def __post_init__(self):
        # sentences given without a rule's outcome (e.g. a hand-built section) are notes
        self.outcomes = list(self.outcomes) + ["note"] * (len(self.verdicts)
                                                          - len(self.outcomes))

    def add(self, verdict):
        """Append a verdict: the sentence of one rule and its outcome key.

        Parameters
        ----------
        verdict : object with ``outcome`` and ``text``
            The conclusion to append.
        """
        self.verdicts.append(str(verdict))
        self.outcomes.append(getattr(verdict, "outcome", ""))


def _fmt(x, digits=3):
    if isinstance(x, (float, np.floating)):
        return "inf" if np.isinf(x) else f"{x:.{digits}g}"
    return str(x)


def _figure_png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def _have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


class PrivacyReport:
    """Can I publish this model? Its claimed, per-example and empirical privacy in one view.

    Build it with :meth:`from_estimator`; render it with :meth:`save_html` (one
    self-contained HTML page, figures embedded, no network), ``_repr_html_`` (notebooks)
    or :meth:`plot` (a matplotlib summary figure). Each section is present when it
    applies to the model:

    * **claim** -- what is claimed for the object as published
      (:func:`sklearn_privacy.privacy_claim`: every step with its reason);
    * **utility** -- the model's score on the population rows (accuracy, or mean squared
      error for a regressor) against the trivial baseline (the majority class, or the
      mean), with a paired ``confidence`` interval of the difference; a release not shown
      to beat the baseline is flagged;
    * **release** -- what the pickled object holds (size, fitted attributes, whether
      :func:`~sklearn_privacy.utils.strip_for_release` accepts it, and how many training
      rows it holds: every fitted array with one column per input of its pipeline step --
      support vectors, stored samples -- is compared with the training rows as that step
      sees them, so rows kept behind a scaler are found);
    * **structural** -- disclosure checks of the model's family, each with what a finding
      proves (trees, forests and boosting: leaves under k training rows, pure small leaves,
      thresholds on training values or their midpoints, columns whose values the
      thresholds recover; instance-based models: stored rows; naive-Bayes-style models:
      statistics of small classes; linear models and MLPs: parameters against rows). A
      finding that is a membership test is fed to
      :func:`~sklearn_privacy.attacks.epsilon_lower_bound` and counts in the headline;
    * **fil** -- per-example Fisher information loss (the distribution of ``eta``,
      per-attribute eta of the sensitive columns) for FIL models, or for scikit-learn
      GLMs through :func:`sklearn_privacy.fil.audit` at a given ``sigma``;
    * **membership** -- a threshold membership attack (members: the training rows;
      non-members: the population rows) and, with reference models, LiRA; AUC with
      DeLong's ``confidence`` interval against the chance level 0.5 (the same interval in
      the table and in the figure's legend), per group of each categorical sensitive
      column, and a classifier two-sample test of whether the population rows resemble
      the training rows (an AUC below chance means they do not);
    * **inversion** -- attribute inversion of each sensitive column: categorical columns
      by accuracy (white-box for FIL models, black-box Fredrikson otherwise) with a
      Wilson interval and the exact binomial p-value against the prior baseline; numeric
      columns by :func:`~sklearn_privacy.attacks.regression_inversion`, in the column's
      units against predicting the median. With ``sigma`` (a scikit-learn GLM or MLP
      audited through :func:`sklearn_privacy.fil.audit`), the categorical columns are
      also attacked white-box under the audit's hypothetical release -- the audited
      minimiser released with Gaussian noise of ``sigma``, an adversary who knows every
      other training row and the row's other values -- on 20 simulated releases, with
      the same interval, test and baseline (200 rows when every row and candidate is a
      refit: an MLP or a multinomial model); the black-box row stays the attack on the
      published, noise-free model;
    * **audits** -- empirical lower bounds on epsilon: the one-run audit (any model,
      one extra fit) and, for the library's DP mechanisms with a finite claim, a canary
      audit on the worst-case neighbouring pair (for a pipeline, on its final step through
      its own preprocessing); an audit that cannot run says why;
    * **private** -- only with ``include_private_details=True``: the most exposed rows by
      the caller's index with exact figures, under a heading saying the page is private.

    Every sentence comes from one rule of ``sklearn_privacy.report._verdicts`` applied to
    the figures and their uncertainty; a "no" is said only by a check that could have
    found a "yes" ("not checked" or "cannot tell" otherwise). The default page holds no
    per-person identifier: distributions, quantiles at two significant digits, and counts
    (groups under 10 rows shown as "< 10"); it states the library version, the date, the
    parameters and the seed.

    Attacks and audits are lower bounds on what leaks: a model they cannot break may
    still leak to a stronger adversary. Only the claim (when finite) is a guarantee.

    Cost: the model is queried in chunks of 100,000 rows, the figures draw at most 20,000
    rows a side, the two-sample test and the attribute attacks use at most 5,000 and
    1,000 rows; 1,000,000 training rows of 20 features take well under a minute
    (``benchmarks/bench_report.py``). The white-box attack under ``sigma`` refits an MLP
    (or a multinomial model) once per row and other candidate, on 200 rows: under 7 CPU
    seconds for a whole report of a small network on 2,000-5,000 rows of Adult
    (``benchmarks/bench_report_inversion.py``).

    Parameters
    ----------
    sections : list of ReportSection
        The computed sections.
    name : str
        Name shown in the title.
    summary : dict
        ``claimed_epsilon``, ``claimed_delta``, ``max_eta`` (or None),
        ``empirical_epsilon`` (the best audit bound, structural membership tests
        included) with ``empirical_epsilon_source`` (which one), ``confidence``,
        ``utility`` (``(metric, value, baseline, outcome)`` or None),
        ``tpr_at_low_fpr`` (the strongest attack's TPR at 0.1 % and 1 % FPR with exact
        intervals) and ``flags`` (the verdicts a reader must act on before publishing).
        A report from :meth:`from_estimator` also has ``structural`` (the structural
        checks as dictionaries) and ``recommendation`` (the decision under its policy).
    metadata : dict
        ``version``, ``date``, ``parameters`` and ``random_state`` (the seed the report's
        randomness was drawn from; pass it back to reproduce the page).

    See Also
    --------
    sklearn_privacy.privacy_claim : The claim of a published object.
    sklearn_privacy.attacks.one_run_audit : Audit with one training run.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_privacy.report import PrivacyReport
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 3)); y = (X[:, 0] > 0).astype(int)
    >>> model = LogisticRegression().fit(X[:300], y[:300])
    >>> report = PrivacyReport.from_estimator(model, X[:300], y[:300], X[300:], y[300:],
    ...                                       n_canaries=100, random_state=0)
    >>> [s.key for s in report.sections]
    ['claim', 'utility', 'release', 'structural', 'membership', 'audits']
    >>> report.sections[1].outcomes
    ['above_baseline']
    >>> report.summary["claimed_epsilon"]
    inf
    """

    def __init__(self, sections, *, name="model", summary=None, metadata=None):
        self.sections = list(sections)
        for section in self.sections:
            if not isinstance(section, ReportSection):
                raise TypeError(f"sections must be ReportSection objects; got "
                                f"{type(section).__name__}.")
        self.name = name
        self.summary = dict(summary or {})
        self.metadata = dict(metadata or {})

    # ------------------------------------------------------------------ building
    @classmethod
    def from_estimator(cls, estimator, X_train, y_train, X_population=None,
                       y_population=None, *, sensitive_features=None, sigma=None,
                       n_reference_models: int = 0, n_canaries: int = 1000,
                       canary_releases: int = 20_000, top_k: int = 10,
                       confidence: float = 0.95, n_jobs=None, verbose: int = 0,
                       random_state=None, name: str | None = None,
                       include_private_details: bool = False,
                       policy: ReleasePolicy | None = None) -> PrivacyReport:
        """Compute every applicable section for a fitted model and its training data.

        Parameters
        ----------
        estimator : fitted estimator or Pipeline
            The model to publish, fitted on ``(X_train, y_train)``.
        X_train : array-like, DataFrame or sparse matrix
            Its training rows (passed to the model untouched).
        y_train : array-like of shape (n_train,)
            Their labels / targets.
        X_population, y_population : optional
            Rows of the same population that were not used for training: the
            non-members of the membership attacks and the pool of the one-run canaries.
            Without them, the membership section is skipped.
        sensitive_features : str, int or list, optional
            Input features (names of a frame, or positions) for per-attribute eta and
            attribute inversion.
        sigma : float, optional
            For a scikit-learn GLM (``LogisticRegression``, ``Ridge``, ...) or MLP
            (``tanh`` / ``logistic`` units, ``alpha > 0``), alone or ending a pipeline:
            the noise of a hypothetical output-perturbed release, audited through
            :func:`sklearn_privacy.fil.audit` (the FIL section) and attacked white-box on
            simulated releases (the inversion section).
        n_reference_models : int, default=0
            Reference models for LiRA (0: the threshold attack only).
        n_canaries : int, default=1000
            Canaries of the one-run audit (0 skips it).
        canary_releases : int, default=20000
            Releases per side of the canary audit of a FIL DP release (0 skips it).
        top_k : int, default=10
            Most exposed rows listed in the private section (only with
            ``include_private_details=True``).
        confidence : float, default=0.95
            Confidence of the audit bounds.
        n_jobs : int or None
            Joblib parallelism of the reference models.
        verbose : int, default=0
            Print progress of the long parts.
        random_state : int, RandomState, Generator or None
            The report's own randomness (attacks, canaries); ``None``: fresh OS entropy.
        name : str, optional
            Model name for the title (default: the class name).
        include_private_details : bool, default=False
            Add a section listing the most exposed training rows by the caller's index
            with their exact figures, under a heading that says the page is private.
            By default the page holds no per-person identifier or exact per-person
            figure and can be shared with those allowed to see aggregate results.
        policy : ReleasePolicy, optional
            The thresholds of the recommendation (``reject``, ``support_rejection`` or
            ``support_release``, in ``recommendation``, on the page and in
            :meth:`to_json`) and the k of the structural checks; default
            ``ReleasePolicy()`` (its defaults are documented there).

        Returns
        -------
        report : PrivacyReport
            The computed report.
        """
        check_is_fitted(estimator)
        n = n_rows(X_train, "X_train")
        y_train = check_target(y_train, n, param="y_train", x_param="X_train")
        if X_population is not None:
            m = n_rows(X_population, "X_population")
            y_population = check_target(y_population, m, param="y_population",
                                        x_param="X_population")
            check_same_columns(X_population, X_train, "X_population", x_param="X_train")
        if sensitive_features is not None and not isinstance(sensitive_features, list | tuple):
            sensitive_features = [sensitive_features]
        _check_sensitive_columns(sensitive_features or [], X_train)
        if sigma is not None and (isinstance(sigma, (bool, np.bool_)) or not isinstance(
                sigma, Real) or not (np.isfinite(sigma) and sigma > 0)):
            raise (ValueError if isinstance(sigma, Real) else TypeError)(
                f"sigma must be a positive finite number or None; got {sigma!r}.")
        for param, value in (("n_reference_models", n_reference_models),
                             ("n_canaries", n_canaries), ("canary_releases", canary_releases),
                             ("top_k", top_k)):
            check_positive_int(value, param, minimum=0)
        if 0 < n_reference_models < 4:
            raise ValueError(
                f"n_reference_models must be 0 (no LiRA) or at least 4 (LiRA's per-example "
                f"variances need 2 models with and 2 without each row); got "
                f"{n_reference_models}.")
        check_fraction(confidence, "confidence")
        if policy is None:
            policy = ReleasePolicy()
        elif not isinstance(policy, ReleasePolicy):
            raise TypeError(f"policy must be a ReleasePolicy or None; got "
                            f"{type(policy).__name__}.")
        include_private_details = check_bool(include_private_details,
                                            "include_private_details")
        # the seed of the report's own randomness, stated on the page (reproducible)
        seed = (int(random_state) if isinstance(random_state, int)
                and not isinstance(random_state, bool)
                else int(child_seeds(noise_generator(random_state), 1)[0]))
        rng = np.random.default_rng(int(child_seeds(noise_generator(seed), 1)[0]))
        name = name or type(estimator).__name__
        ctx = dict(estimator=estimator, X=X_train, y=y_train, Xp=X_population,
                   yp=y_population, cols=sensitive_features or [], sigma=sigma,
                   n_ref=n_reference_models, n_canaries=n_canaries,
                   canary_releases=canary_releases, top_k=top_k, confidence=confidence,
                   n_jobs=n_jobs, verbose=verbose, rng=rng, summary={},
                   private=include_private_details, min_rows=policy.min_rows,
                   # a stream of its own, so that adding a section leaves the others' draws
                   structural_rng=np.random.default_rng([seed, 1]))
        from .. import __version__

        metadata = {
            "version": __version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "random_state": seed,
            "parameters": {
                "n_train": n, "n_population": (None if X_population is None
                                               else n_rows(X_population)),
                "sensitive_features": list(sensitive_features or []), "sigma": sigma,
                "n_reference_models": n_reference_models, "n_canaries": n_canaries,
                "canary_releases": canary_releases, "confidence": confidence,
                "include_private_details": include_private_details},
        }
        sections = []
        for builder in (_claim_section, _utility_section, _release_section,
                        structural_section, _fil_section,
                        _membership_section, _inversion_section, _audit_section,
                        _private_section):
            t = time.perf_counter()
            if verbose:
                step = builder.__name__.strip("_").removesuffix("_section")
                print(f"[PrivacyReport] {step} ...", flush=True)
            section = builder(ctx)
            if section is not None:
                section.seconds = time.perf_counter() - t
                if verbose:
                    print(f"[PrivacyReport] {section.key} done in {section.seconds:.1f} s",
                          flush=True)
                sections.append(section)
        ctx["summary"]["flags"] = [v for sec in sections
                                   for v, o in zip(sec.verdicts, sec.outcomes, strict=True)
                                   if o in V.FLAGS]
        report = cls(sections, name=name, summary=ctx["summary"], metadata=metadata)
        report.structural = [{k: v for k, v in vars(c).items() if k != "membership"}
                             for c in ctx.get("structural_checks", [])]
        report.recommendation = recommend(report, policy)
        return report

    # ------------------------------------------------------------------ the record
    #: structural checks as dictionaries (name, family, proves, ran, found, total, detail,
    #: reason); empty for a report built by hand
    structural = ()
    #: the decision under the report's policy: ``{"decision", "reasons", "policy"}``
    recommendation = None

    def _decision(self):
        if self.recommendation is None:
            self.recommendation = recommend(self, ReleasePolicy())
        return self.recommendation

    def to_json(self, indent: int | None = 2) -> str:
        """The report as a JSON record an output-checking process can file.

        The record follows the schema ``sklearn_privacy.privacy_report`` (version
        ``"1.0"``, :meth:`json_schema`): the claim, every conclusion of the page with its
        section and outcome, the structural checks (ran or why not, what they found and
        what a finding proves), every section's table, and the recommendation with its
        reasons and the policy it was made under. Non-finite numbers are the strings
        ``"inf"``, ``"-inf"`` and ``"nan"``; figures are not included (the page renders
        them). :meth:`from_json` reads it back.

        Parameters
        ----------
        indent : int or None, default=2
            Indentation of ``json.dumps``.

        Returns
        -------
        text : str
            The JSON text.
        """
        import json

        self._decision()
        return json.dumps(to_record(self), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> PrivacyReport:
        """Rebuild a report from :meth:`to_json` (without figures).

        Parameters
        ----------
        text : str
            A record of schema major version 1.

        Returns
        -------
        report : PrivacyReport
            The report; its :meth:`to_json` returns the same record.
        """
        import json

        return from_record(cls, json.loads(text))

    @staticmethod
    def json_schema() -> dict:
        """The JSON Schema (draft 2020-12) of :meth:`to_json`'s record.

        Returns
        -------
        schema : dict
            The schema shipped with the package (``privacy_report.schema.json``).
        """
        return schema()

    # ------------------------------------------------------------------ rendering
    @property
    def timings(self) -> dict:
        """Seconds spent on each section."""
        return {s.key: s.seconds for s in self.sections}

    def _headline(self) -> list[str]:
        s = self.summary
        eps = s.get("claimed_epsilon", np.inf)
        out = [("claimed epsilon", _fmt(eps) + ("" if np.isinf(eps)
                                               else f" (delta {_fmt(s.get('claimed_delta'))})"))]
        if s.get("utility"):
            metric, value, base, outcome = s["utility"]
            out.append((f"{metric} on population rows (baseline)",
                        f"{value:.3g} ({base:.3g})"
                        + ("" if outcome == "above_baseline" else ": flagged")))
        if s.get("max_eta") is not None:
            out.append(("largest per-example eta", _fmt(s["max_eta"])))
        tail = s.get("tpr_at_low_fpr")
        if tail:
            out.append((f"TPR at FPR 1 % / 0.1 %, strongest attack ({tail['attack']})",
                        " / ".join("not resolved" if r is None else
                                   f"{r['tpr']:.3g} [{r['low']:.3g}, {r['high']:.3g}]"
                                   for r in (tail["levels"]["0.01"],
                                             tail["levels"]["0.001"]))))
        if s.get("empirical_epsilon") is not None:
            out.append((f"empirical epsilon lower bound ({s.get('confidence', 0.95):.0%})",
                        _fmt(s["empirical_epsilon"])))
        return out

    def to_html(self) -> str:
        """The report as one self-contained HTML page (figures embedded as PNG).

        Returns
        -------
        page : str
            HTML text with no external resource.
        """
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
        for k, v in self._headline():
            parts.append(f"<tr><td>{e(k)}</td><td><b>{e(v)}</b></td></tr>")
        parts.append("</table>")
        parts += self._decision_html()
        flags = self.summary.get("flags") or []
        if flags:
            parts.append("<h2>Findings to act on before publishing</h2>")
            parts += [f"<div class='verdict flag'>{e(v)}</div>" for v in flags]
        for s in self.sections:
            parts.append(f"<h2>{e(s.title)}</h2>")
            outcomes = s.outcomes or [""] * len(s.verdicts)
            for v, o in zip(s.verdicts, outcomes, strict=False):
                cls = " flag" if o in V.FLAGS or o == "private" else ""
                parts.append(f"<div class='verdict{cls}'>{e(v)}</div>")
            if s.table:
                parts.append("<table>")
                for k, v in s.table:
                    parts.append(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>")
                parts.append("</table>")
            if s.figure_png:
                b64 = base64.b64encode(s.figure_png).decode("ascii")
                parts.append(f"<img alt='{e(s.title)}' src='data:image/png;base64,{b64}'>")
            parts.append(f"<div class='time'>computed in {s.seconds:.1f} s</div>")
        parts += self._footer()
        parts.append("</body></html>")
        return "\n".join(parts)

    def _decision_html(self) -> list[str]:
        e = html.escape
        rec = self._decision()
        words = rec["decision"].replace("_", " ")
        cls = "" if rec["decision"] == "support_release" else " flag"
        out = [f"<div class='verdict{cls}' id='recommendation'><b>Recommendation: {e(words)}"
               "</b> (under the declared policy: "
               + e(", ".join(f"{k} = {v}" for k, v in rec["policy"].items())) + ")<ul>"]
        out += [f"<li>{e(r)}</li>" for r in rec["reasons"][:20]]
        if len(rec["reasons"]) > 20:
            out.append(f"<li>... and {len(rec['reasons']) - 20} more (see to_json())</li>")
        out.append("</ul></div>")
        return out

    def _footer(self) -> list[str]:
        e = html.escape
        m = self.metadata
        if not m:
            return []
        rows = [("sklearn_privacy version", m.get("version")), ("date", m.get("date")),
                ("random_state (pass it back to reproduce this page)",
                 m.get("random_state"))]
        rows += [(k, v) for k, v in (m.get("parameters") or {}).items()]
        rows.append(("time to compute this page", "; ".join(
            [f"{sum(s.seconds for s in self.sections):.1f} s in all"]
            + [f"{s.key} {s.seconds:.1f} s" for s in self.sections])))
        rows.append(("coarseness of the default page",
                     "no per-person identifier or figure; quantiles at two significant "
                     "digits; group counts under 10 shown as '< 10'"))
        out = ["<h2>How this page was made</h2>", "<table class='meta'>"]
        out += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in rows]
        out.append("</table>")
        return out

    def _repr_html_(self) -> str:
        return self.to_html()

    def save_html(self, path) -> None:
        """Write :meth:`to_html` to ``path`` (UTF-8).

        Parameters
        ----------
        path : str or path-like
            Destination file.
        """
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())

    def __repr__(self) -> str:
        head = "; ".join(f"{k} {v}" for k, v in self._headline())
        return (f"PrivacyReport({self.name}: {head}; sections "
                f"{[s.key for s in self.sections]})")

    def plot(self):
        """A matplotlib summary figure: one panel per section figure, headline on top.

        Returns
        -------
        fig : matplotlib.figure.Figure
            The figure.
        """
        import matplotlib.pyplot as plt

        figs = [s for s in self.sections if s.figure_png]
        ncol = 2
        nrow = max(1, int(np.ceil(len(figs) / ncol)))
        fig, axes = plt.subplots(nrow, ncol, figsize=(12, 4.6 * nrow), squeeze=False)
        for ax in axes.ravel():
            ax.axis("off")
        for ax, s in zip(axes.ravel(), figs, strict=False):
            ax.imshow(plt.imread(io.BytesIO(s.figure_png)))
            ax.set_title(s.title, fontsize=11)
        fig.suptitle(f"{self.name}: " + "; ".join(
            f"{k} {v}" for k, v in self._headline()), fontsize=12)
        fig.tight_layout()
        return fig


# ---------------------------------------------------------------------- sections
#: rows per chunk when the model is queried on many rows (bounded memory)
_CHUNK = 100_000
#: most rows per side drawn in a figure (the figure is a picture; the tables use every row)
_FIGURE_ROWS = 20_000
#: most rows per side of the two-sample test and of the attribute attacks
_TEST_ROWS = 5_000
#: a categorical column with more levels is not split into membership groups
_MAX_GROUPS = 20
#: a numeric column with more distinct values is attacked by regression, not by levels
_MAX_LEVELS = 20


def _coarse(x):
    """A per-person figure shown on the default page: two significant digits."""
    return f"{float(x):.2g}"


def _claim_section(ctx):
    est = ctx["estimator"]
    try:
        from ..privacy import privacy_claim
    except ImportError:  # pragma: no cover
        privacy_claim = None
    sec = ReportSection("claim", "What is claimed")
    if privacy_claim is not None:
        claim = privacy_claim(est)
        eps, dlt = float(claim.epsilon), float(claim.delta)
        for st in claim.steps:
            sec.table.append((st.name, f"{st.kind}: {st.reason}"))
    else:  # pragma: no cover
        eps = float(getattr(est, "epsilon_", np.inf))
        dlt = float(getattr(est, "delta", 0.0) or 0.0)
    ctx["summary"]["claimed_epsilon"] = eps
    ctx["summary"]["claimed_delta"] = dlt
    sec.add(V.claim_verdict(eps, dlt))
    return sec


def _predict_chunks(est, X, method="predict"):
    """``est.<method>`` on the rows of ``X`` in chunks of ``_CHUNK`` (bounded memory)."""
    n = n_rows(X)
    fn = getattr(est, method)
    out = [np.asarray(fn(take_rows(X, np.arange(i, min(i + _CHUNK, n)))))
           for i in range(0, n, _CHUNK)]
    return np.concatenate(out) if out else np.zeros(0)


def _utility_section(ctx):
    """The release's score on the population rows against the trivial baseline."""
    sec = ReportSection("utility", "Utility next to privacy")
    est, y, Xp, yp, conf = (ctx[k] for k in ("estimator", "y", "Xp", "yp", "confidence"))
    if Xp is None:
        sec.add(V.Verdict("not_checked", "Utility was not checked: pass X_population and "
                                         "y_population (rows not used for training)."))
        ctx["summary"]["utility"] = None
        return sec
    pred = _predict_chunks(est, Xp)
    if is_classifier(est):
        labels, counts = np.unique(y, return_counts=True)
        majority = labels[np.argmax(counts)]
        majority = majority.item() if hasattr(majority, "item") else majority
        correct = (pred == yp).astype(float)
        base = (yp == majority).astype(float)
        metric, value, base_value = "accuracy", correct.mean(), base.mean()
        base_name = f"always predicting the majority class ({majority!r})"
        diff = correct - base
    else:
        yf, pf = yp.astype(float), pred.astype(float)
        mean = float(np.mean(y.astype(float)))
        err, base_err = (yf - pf) ** 2, (yf - mean) ** 2
        metric, value, base_value = "mean squared error", err.mean(), base_err.mean()
        base_name = "always predicting the training mean"
        diff = base_err - err
    d, lo, hi, p = paired_difference(diff, conf)
    v = V.utility_verdict(metric, value, base_name, base_value, lo, hi, p, yp.size, conf)
    sec.add(v)
    sec.table += [(metric, f"{value:.4g} on {yp.size:,} population rows"),
                  (f"baseline: {base_name}", f"{base_value:.4g}"),
                  (f"improvement over the baseline, {conf:.0%} paired t interval",
                   f"{d:.4g} [{lo:.4g}, {hi:.4g}], one-sided p = {p:.3g}")]
    ctx["summary"]["utility"] = (metric, float(value), float(base_value), v.outcome)
    return sec


def _row_arrays(obj, width, path, out, depth=0, seen=None):
    """Every 2-D float array of ``width`` columns held by ``obj`` (attributes, nested)."""
    from sklearn.base import BaseEstimator

    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 3:
        return out
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if obj.ndim == 2 and obj.dtype.kind == "f" and obj.shape[1] == width and obj.size:
            out.append((path, obj))
        return out
    if hasattr(obj, "tocsr") and getattr(obj, "ndim", 0) == 2:
        if obj.shape[1] == width and obj.dtype.kind == "f" and obj.shape[0] <= 200_000:
            out.append((path, obj.toarray()))
        return out
    if isinstance(obj, BaseEstimator):
        for k, v in vars(obj).items():
            _row_arrays(v, width, f"{path}.{k}" if path else k, out, depth + 1, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj[:1000]):
            _row_arrays(v, width, f"{path}[{i}]", out, depth + 1, seen)
    elif isinstance(obj, dict):
        for k, v in list(obj.items())[:1000]:
            _row_arrays(v, width, f"{path}[{k!r}]", out, depth + 1, seen)
    return out


def _row_hash(A):
    """A 64-bit hash of every row of a float array (exact bits; -0.0 read as 0.0)."""
    A = np.ascontiguousarray(np.asarray(A, dtype=np.float64) + 0.0)
    bits = A.view(np.uint64)
    mult = (np.arange(1, A.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            | np.uint64(1))
    with np.errstate(over="ignore"):
        return (bits * mult[None, :]).sum(axis=1, dtype=np.uint64) ^ (bits[:, 0] >> np.uint64(7))


def _verbatim_search(est, X):
    """Training rows that the published object holds, in any space it can be read in.

    Every step of a pipeline sees the training rows transformed by the steps before it;
    a fitted attribute of that step that has one column per input of the step (support
    vectors, stored samples, ...) is compared row by row (exact bits, float32 storage
    included) with the transformed training rows. A match is a training row the pickle
    reconstructs (through the inverse transforms of the steps before, when they are
    invertible, as a scaler's is). Returns ``(n_found, searched, reason)``.
    """
    steps = list(est.steps) if hasattr(est, "steps") else [("model", est)]
    n = n_rows(X)
    found = np.zeros(n, bool)
    held = []
    current = X
    for i, (name, step) in enumerate(steps):
        if step is None or step == "passthrough":
            continue
        try:
            width = (current.shape[1] if hasattr(current, "shape")
                     else np.asarray(current).shape[1])
        except (IndexError, AttributeError):
            return 0, "", f"the input of step '{name}' has no column count"
        arrays = _row_arrays(step, width, name, [])
        numeric_input = not is_frame(current) or all(
            str(t).startswith(("float", "int", "uint", "bool")) for t in current.dtypes)
        if arrays and not numeric_input:
            return 0, "", (f"step '{name}' holds row-shaped arrays but its input has "
                           "non-numeric columns")
        for path, A in arrays:
            held.append(f"{path} ({A.shape[0]:,} row{'s' if A.shape[0] != 1 else ''})")
            single = A.dtype == np.float32          # compare at the stored precision
            stored = _row_hash(np.asarray(A, dtype=np.float64))
            for start in range(0, n, _CHUNK):
                rows = take_rows(current, np.arange(start, min(start + _CHUNK, n)))
                R = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows,
                                                                               dtype=float)
                if single:
                    R = R.astype(np.float32)
                found[start:start + R.shape[0]] |= np.isin(_row_hash(R), stored)
        if i == len(steps) - 1:
            break
        try:
            current = step.transform(current)
        except Exception as exc:  # noqa: BLE001 - the step's refusal ends the search
            return 0, "", (f"the training rows could not be pushed through step '{name}' "
                           f"({type(exc).__name__}: {exc})")
    where = (", ".join(held) if held else
             "no fitted attribute has one column per input of its step")
    searched = (f"every fitted array with one column per input of its step, compared with "
                f"the training rows as that step sees them: {where}")
    return int(found.sum()), searched, None


def _release_section(ctx):
    from ..utils import strip_for_release

    est = ctx["estimator"]
    sec = ReportSection("release", "What the pickled release holds")
    blob = pickle.dumps(est)
    sec.table.append(("pickle size", f"{len(blob):,} bytes"))
    fitted = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))
    sec.table.append(("fitted attributes", ", ".join(fitted) if fitted else "(pipeline)"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strip_for_release(est)
        sec.table.append(("strip_for_release", "accepted"))
    except Exception as exc:  # noqa: BLE001 - its refusal is the finding
        sec.table.append(("strip_for_release", f"refused: {exc}"))
    X = ctx["X"]
    n = n_rows(X)
    try:
        found, searched, reason = _verbatim_search(est, X)
    except (TypeError, ValueError, MemoryError) as exc:
        found, searched, reason = 0, "", f"the search failed ({exc})"
    # the raw rows' bytes, as a second route (a copy kept outside any estimator)
    if reason is None and not is_frame(X) and not hasattr(X, "tocsr") \
            and len(blob) < 50_000_000:
        A = np.asarray(X)
        if A.dtype.kind == "f":
            rows = ctx["rng"].choice(n, size=min(50, n), replace=False)
            raw = sum(np.ascontiguousarray(A[i], dtype=np.float64).tobytes() in blob
                      for i in rows)
            sec.table.append(("raw training rows found byte for byte in the pickle",
                              f"{raw} of {rows.size} sampled"))
            searched += f"; and the bytes of {rows.size} sampled raw rows"
            if raw and not found:
                found = int(round(raw / rows.size * n))
                searched += " (count extrapolated from the sample)"
    if reason is None:
        sec.table.append(("training rows the pickle holds", f"{found:,} of {n:,}"))
    sec.add(V.verbatim_verdict(found, n, searched=searched, not_checked_reason=reason))
    return sec


def _final_fil(est):
    from ..fil._base import BaseFILEstimator

    final = est.steps[-1][1] if hasattr(est, "steps") else est
    return final if isinstance(final, BaseFILEstimator) else None


def _fil_model(ctx):
    """The FIL view of the model: itself, or fil.audit of a scikit-learn GLM at sigma."""
    est = ctx["estimator"]
    if _final_fil(est) is not None:
        return est, None
    if ctx["sigma"] is None:
        return None, None
    if "fil_view" not in ctx:   # computed once for the FIL and inversion sections
        ctx["fil_view"] = _audit_view(ctx)
    return ctx["fil_view"]


def _check_sensitive_columns(columns, X):
    """Each entry names a column of ``X`` (a frame's name) or is a position in it."""
    d = np.shape(X)[1] if len(np.shape(X)) == 2 else None
    for c in columns:
        if isinstance(c, str):
            if not is_frame(X):
                raise ValueError(f"sensitive_features: {c!r} is a column name, but X_train has "
                                 "no column names; pass a DataFrame or column positions.")
            if c not in X.columns:
                raise ValueError(f"sensitive_features: {c!r} is not a column of X_train.")
        elif isinstance(c, Integral) and not isinstance(c, (bool, np.bool_)):
            if is_frame(X) and c in X.columns:
                continue
            if d is not None and not -d <= c < d:
                raise ValueError(f"sensitive_features: {c} is out of range for the {d} "
                                 "columns of X_train.")
        else:
            raise TypeError(f"sensitive_features must hold column names or positions; got "
                            f"{c!r}.")


def _audit_view(ctx):
    est = ctx["estimator"]
    try:
        from ..fil import audit
    except ImportError:  # pragma: no cover
        return None, "fil.audit is not available"
    try:
        return audit(est, ctx["X"], ctx["y"], sigma=ctx["sigma"]), None
    except (TypeError, ValueError) as exc:
        return None, str(exc)


def _eta_view(model):
    """What the report's eta is about, and in which units, for a model or pipeline."""
    if getattr(model, "_fmap", None) is not None:  # an MLP audit through a pipeline
        return ("the raw inputs (each numeric column in its own units, each encoded "
                "categorical column as its one-hot values), through the derivative of the "
                "preprocessing", "in the units of the raw columns")
    if not hasattr(model, "steps") or len(model.steps) < 2:
        return "the model's inputs", "in the units of the model's inputs"
    from ..fil._audit import raw_refusals
    from ..fil._feature_maps import feature_map

    refusals = raw_refusals(feature_map(model), model.steps[-1][1])
    if refusals:
        return ("the features entering the final step (not the raw inputs: "
                + "; ".join(refusals) + ")",
                "in the units of the features entering the final step")
    return ("the raw inputs (each numeric column in its own units, each encoded "
            "categorical column as its one-hot values), through the derivative of the "
            "preprocessing", "in the units of the raw columns")


def _fil_section(ctx):
    from .. import fil

    model, why = _fil_model(ctx)
    if model is None:
        if why:
            sec = ReportSection("fil", "Per-example Fisher information loss")
            sec.add(V.Verdict("not_checked", f"Not computed: {why}"))
            return sec
        return None
    sec = ReportSection("fil", "Per-example Fisher information loss")
    if model is not ctx["estimator"] and hasattr(model, "hessian_min_eigenvalue_"):
        sec.table.append(("audited through", (  # a scikit-learn MLP, through fil.audit
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this network would leak about "
            "each row's raw values if its weights were released with that noise, locally "
            "at the released local minimum (an attribute-inference bound, not a membership "
            f"score); its parameters were polished by {model.polish_distance_:.3g} to a "
            "local minimum certified by the smallest Hessian eigenvalue "
            f"{model.hessian_min_eigenvalue_:.3g}")))
    elif model is not ctx["estimator"]:   # a scikit-learn GLM, through fil.audit
        final = model.steps[-1][1] if hasattr(model, "steps") else model
        sec.table.append(("audited through", (
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this model would leak if its "
            "coefficients were released with that noise (the published model has none); "
            f"its coefficients were polished by {getattr(final, 'polish_distance_', 0.0):.3g} "
            "to the exact minimiser")))
    X = ctx["X"]
    wrt, units = _eta_view(model)
    sec.table.append(("eta with respect to", wrt))
    with warnings.catch_warnings():
        # the view is stated in the table; published rows are flagged below (eta inf)
        warnings.simplefilter("ignore", PrivacyWarning)
        eta = np.asarray(fil.eta(model, per_example=True, X=X))
    published = np.isinf(eta)
    if published.any():
        sec.add(V.published_rows_verdict(int(published.sum())))
        eta = eta[~published]
    ctx["summary"]["max_eta"] = float(eta.max())
    ctx["eta"] = eta
    qs = np.quantile(eta, [0.5, 0.9, 0.99])
    sec.table += [("rows", f"{eta.size:,}"), ("median eta", _coarse(qs[0])),
                  ("90th percentile", _coarse(qs[1])), ("99th percentile", _coarse(qs[2])),
                  ("largest eta", _coarse(eta.max()))]
    per_attr = {}
    for c in ctx["cols"]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                v = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
            per_attr[c] = v[np.isfinite(v)]
            sec.table.append((f"eta of '{c}' (median / max)",
                              f"{_coarse(np.median(per_attr[c]))} / "
                              f"{_coarse(per_attr[c].max())}"))
        except (TypeError, ValueError) as exc:
            sec.table.append((f"eta of '{c}'", f"not computed: {exc}"))
    sec.add(V.fil_verdict(float(eta.max()), float(np.median(eta)), units=units))
    if _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.hist(eta, bins=40, color="#3465a4", alpha=0.85, label="every feature and label")
        for c, v in per_attr.items():
            ax.hist(v, bins=40, alpha=0.5, label=f"'{c}'")
        ax.set_xlabel("per-example eta")
        ax.set_ylabel("rows")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        sec.figure_png = _figure_png(fig)
    return sec


def _scores(est, X, y, idx):
    """Membership scores of the rows ``idx`` of ``X``, queried in chunks (bounded memory)."""
    from ..attacks import membership_scores

    attack = "loss" if not (is_classifier(est) and hasattr(est, "predict_proba")) \
        else "confidence"
    out = [membership_scores(est, take_rows(X, idx[i:i + _CHUNK]), y[idx[i:i + _CHUNK]],
                             attack=attack) for i in range(0, idx.size, _CHUNK)]
    return np.concatenate(out), attack


def _encode_rows(X, ref_frame=None):
    """Rows as a float matrix for the two-sample test (categories as codes)."""
    if is_frame(X):
        return frame_codes(X, ref_frame)
    if hasattr(X, "tocsr"):
        return X.toarray().astype(float), []
    return np.asarray(X, dtype=float), []


def _two_sample_test(X, Xp, rng, confidence):
    """Classifier two-sample test: held-out AUC of telling training from population rows.

    Equal numbers of rows from each side (at most ``_TEST_ROWS``), half of each to fit a
    gradient-boosted classifier, half to score it; under "same distribution" the held-out
    AUC is that of exchangeable scores (Mann-Whitney null), which gives the p-value.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    from ..utils._intervals import auc_p_value

    k = min(n_rows(X), n_rows(Xp), _TEST_ROWS)
    if k < 20:
        return None
    a = take_rows(X, np.sort(rng.choice(n_rows(X), size=k, replace=False)))
    b = take_rows(Xp, np.sort(rng.choice(n_rows(Xp), size=k, replace=False)))
    if hasattr(a, "tocsr") and a.shape[1] > 2000:
        return None
    A, cat = _encode_rows(a, a)
    B, _ = _encode_rows(b, a)
    half = k // 2
    Z = np.vstack([A[:half], B[:half]])
    t = np.r_[np.ones(half), np.zeros(half)]
    clf = HistGradientBoostingClassifier(max_iter=100, categorical_features=cat or None,
                                         random_state=int(rng.integers(2**31 - 1)))
    # one OpenMP thread: a few thousand rows need no more, and on a busy machine the
    # default thread pool spins (146 s instead of 0.5 s for 5,000 rows at load 20)
    with threadpool_limits(limits=1, user_api="openmp"):
        clf.fit(Z, t)
        s_a = clf.predict_proba(A[half:])[:, 1]
        s_b = clf.predict_proba(B[half:])[:, 1]
    auc, lo, hi, _ = auc_delong(s_a, s_b, confidence)
    return auc, lo, hi, auc_p_value(auc, s_a.size, s_b.size, "greater"), s_a.size + s_b.size


def _column_of(X, c):
    if is_frame(X):
        return X[c].to_numpy() if c in X.columns else X.iloc[:, int(c)].to_numpy()
    if hasattr(X, "tocsr"):
        return X[:, [int(c)]].toarray().ravel()
    return np.asarray(X)[:, int(c)]


def _membership_section(ctx):
    if ctx["Xp"] is None:
        return None
    est, X, y, Xp, yp, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "Xp", "yp",
                                                     "rng", "confidence"))
    sec = ReportSection("membership", "Membership inference")
    # equal-size evaluation sets: a random subset of the larger side
    k = min(n_rows(X), n_rows(Xp))
    i_in = np.sort(rng.choice(n_rows(X), size=k, replace=False))
    i_out = np.sort(rng.choice(n_rows(Xp), size=k, replace=False))
    s_in, attack = _scores(est, X, y, i_in)
    s_out, _ = _scores(est, Xp, yp, i_out)
    auc, lo, hi, _ = auc_delong(s_in, s_out, conf)
    curves = [(f"threshold ({attack})", s_in, s_out, auc, lo, hi)]
    sec.table.append((f"threshold attack ({attack}) AUC, {conf:.0%} interval (DeLong)",
                      f"{auc:.3f} [{lo:.3f}, {hi:.3f}] (chance 0.5; {k:,} members, "
                      f"{k:,} non-members)"))
    results = [(f"threshold ({attack})", auc, lo, hi)]
    if ctx["n_ref"]:
        from ..attacks import lira

        m = min(k, _TEST_ROWS)
        Xall = _concat(take_rows(X, i_in[:m]), take_rows(Xp, i_out[:m]))
        yall = np.r_[y[i_in[:m]], yp[i_out[:m]]]
        members = np.r_[np.ones(m, bool), np.zeros(m, bool)]
        res = lira(est, Xall, yall, members, n_reference_models=int(ctx["n_ref"]),
                   n_jobs=ctx["n_jobs"], verbose=ctx["verbose"], random_state=rng)
        a_in, a_out = res.scores_members, res.scores_nonmembers
        auc2, lo2, hi2, _ = auc_delong(a_in, a_out, conf)
        sec.table.append((f"LiRA ({ctx['n_ref']} reference models) AUC, {conf:.0%} "
                          "interval (DeLong)", f"{auc2:.3f} [{lo2:.3f}, {hi2:.3f}] ({m:,} "
                                               f"members, {m:,} non-members)"))
        curves.append((f"LiRA ({ctx['n_ref']} refs)", a_in, a_out, auc2, lo2, hi2))
        results.append((f"LiRA ({ctx['n_ref']} reference models)", auc2, lo2, hi2))
    best = max(results, key=lambda t: t[2])
    low = min(results, key=lambda t: t[3])
    pick = best if best[2] > 0.5 or low[3] >= 0.5 else low
    v = V.membership_verdict(pick[0], pick[1], pick[2], pick[3], conf, n_members=k,
                             n_nonmembers=k)
    sec.add(v)
    # do the population rows resemble the training rows?
    test = _two_sample_test(X, Xp, rng, conf)
    if test is None:
        sec.add(V.Verdict("not_checked", "Whether the population rows resemble the training "
                                         "rows was not checked (fewer than 20 rows a side, "
                                         "or too many sparse columns)."))
    else:
        t_auc, t_lo, t_hi, t_p, t_n = test
        sec.table.append(("two-sample test: held-out AUC of a classifier telling training "
                          "from population rows", f"{t_auc:.3f} [{t_lo:.3f}, {t_hi:.3f}], "
                                                  f"one-sided p = {t_p:.3g} ({t_n:,} rows)"))
        sec.add(V.population_verdict(t_auc, t_lo, t_hi, t_p, conf, t_n))
    # membership by sensitive group
    for c in ctx["cols"]:
        try:
            g_in, g_out = _column_of(X, c)[i_in], _column_of(Xp, c)[i_out]
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        levels = np.unique(np.r_[g_in.astype(str), g_out.astype(str)])
        if levels.size > _MAX_GROUPS:
            sec.table.append((f"membership by '{c}'", f"not split: {levels.size} distinct "
                                                       "values"))
            continue
        groups = []
        for lev in levels:
            a, b = s_in[g_in.astype(str) == lev], s_out[g_out.astype(str) == lev]
            if a.size and b.size:
                ga, glo, ghi, _ = auc_delong(a, b, conf)
                groups.append((lev, ga, glo, ghi, a.size, b.size))
                sec.table.append((f"AUC where '{c}' = {lev}",
                                  f"{ga:.3f} [{glo:.3f}, {ghi:.3f}] ({_count(a.size)} "
                                  f"members, {_count(b.size)} non-members)"))
        sec.add(V.group_membership_verdict(c, groups, conf))
    tail_rows(ctx, sec, curves)
    if _have_matplotlib():
        sec.figure_png = _roc_figure(curves, conf, rng)
    return sec


def _count(n):
    """A count on the default page: exact from 10 up, '< 10' below (small groups)."""
    return f"{n:,}" if n >= 10 else "< 10"


def _roc_figure(curves, conf, rng):
    """The ROC curves with the tables' AUC intervals in the legend.

    Up to ``_FIGURE_ROWS`` rows per side the curve and its bootstrap band are drawn from
    every row; beyond, the curve is drawn from a random subsample of that size (stated in
    the title) while the legend keeps the AUC and interval of every row, as in the table.
    """
    import matplotlib.pyplot as plt

    from ..attacks import MembershipROCDisplay

    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    sub = False
    for i, (label, a, b, auc, lo, hi) in enumerate(curves):
        if max(a.size, b.size) > _FIGURE_ROWS:
            sub = True
            a = a[np.sort(rng.choice(a.size, size=min(a.size, _FIGURE_ROWS), replace=False))]
            b = b[np.sort(rng.choice(b.size, size=min(b.size, _FIGURE_ROWS), replace=False))]
        y_true = np.r_[np.ones(a.size), np.zeros(b.size)]
        disp = MembershipROCDisplay.from_predictions(
            y_true, np.r_[a, b], name=label, ax=ax, plot_chance_level=(i == 0),
            confidence=conf, n_resamples=200, random_state=0)
        if sub:  # the legend states the figures of every row (the table's)
            disp.roc_auc, disp.roc_auc_interval = auc, (lo, hi)
            disp.line_.set_label(disp._label(label))
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="lower right")
    if sub:
        ax.set_title(f"membership ROC (curve and band drawn from {_FIGURE_ROWS:,} rows a "
                     "side; legend: every row)", fontsize=9)
    return _figure_png(fig)


def _concat(A, B):
    if is_frame(A):
        import pandas as pd

        return pd.concat([A, B], axis=0, ignore_index=True)
    if hasattr(A, "tocsr"):
        import scipy.sparse as sp

        return sp.vstack([A, B], format="csr")
    return np.concatenate([np.asarray(A), np.asarray(B)])


def _is_numeric_attribute(values):
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        return False
    return np.unique(v[np.isfinite(v)]).size > _MAX_LEVELS


def _inversion_section(ctx):
    if not ctx["cols"]:
        return None
    from ..attacks import (
        fredrikson_inversion,
        prior_baseline,
        regression_inversion,
        whitebox_inversion,
    )

    est, X, y, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "rng", "confidence"))
    sec = ReportSection("inversion", "Attribute inversion of the sensitive columns")
    fil_model, _ = _fil_model(ctx)
    rows = np.sort(rng.choice(n_rows(X), size=min(1000, n_rows(X)), replace=False))
    Xr = take_rows(X, rows)
    bars = []
    for c in ctx["cols"]:
        try:
            values = _column_of(Xr, c)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            sec.table.append((f"'{c}'", f"not attacked: {exc}"))
            continue
        if _is_numeric_attribute(values):
            if ctx["Xp"] is None:
                sec.add(V.Verdict("not_checked", f"'{c}' is numeric: the regression attack "
                                                 "needs X_population to learn from; not "
                                                 "checked."))
                continue
            m = min(n_rows(ctx["Xp"]), _TEST_ROWS)
            ip = np.sort(rng.choice(n_rows(ctx["Xp"]), size=m, replace=False))
            try:
                res = regression_inversion(est, Xr, y[rows], sensitive_features=c,
                                           X_population=take_rows(ctx["Xp"], ip),
                                           y_population=ctx["yp"][ip], confidence=conf,
                                           random_state=int(rng.integers(2**31 - 1)))
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}'", f"not attacked: {exc}"))
                continue
            lo_i, hi_i = res.improvement_interval
            sec.table.append((f"'{c}' regression attack, mean absolute error",
                              f"{res.mae:.3g} vs {res.baseline_mae:.3g} for the median "
                              f"({res.baseline:.3g}); improvement {res.improvement:.3g} "
                              f"[{lo_i:.3g}, {hi_i:.3g}] ({rows.size:,} rows)"))
            g_lo, g_hi = res.model_gain_interval
            sec.table.append((f"'{c}' same attack without querying the model",
                              f"{res.without_model_mae:.3g}; the model's answers lower the "
                              f"error by [{g_lo:.3g}, {g_hi:.3g}], one-sided p = "
                              f"{res.model_gain_p_value:.3g}"))
            sec.add(V.numeric_inversion_verdict(
                c, res.mae, res.baseline_mae, lo_i, hi_i, res.p_value, rows.size, conf,
                without_model_mae=res.without_model_mae, gain_low=g_lo, gain_high=g_hi,
                gain_p_value=res.model_gain_p_value))
            continue
        try:
            base = prior_baseline(Xr, sensitive_features=c).accuracy
        except (TypeError, ValueError) as exc:
            sec.table.append((f"'{c}'", f"not attacked: {exc}"))
            continue
        res = None
        if fil_model is not None and fil_model is est:
            try:
                res = whitebox_inversion(est, X, sensitive_features=c, rows=rows,
                                         prior="empirical", random_state=rng)
                kind = "white-box (release + all other values)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}' white-box", f"not attacked: {exc}"))
        if res is None:
            try:
                res = fredrikson_inversion(est, Xr, y[rows], sensitive_features=c)
                kind = "black-box (Fredrikson)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}'", f"not attacked: {exc}"))
                continue
        lo_a, hi_a = res.confidence_interval(conf)
        p = res.p_value(base)
        sec.table.append((f"'{c}' {kind} accuracy, {conf:.0%} Wilson interval",
                          f"{res.accuracy:.3f} [{lo_a:.3f}, {hi_a:.3f}] vs prior baseline "
                          f"{base:.3f}, exact binomial p = {p:.3g} ({rows.size:,} rows)"))
        bars.append((str(c), res.accuracy, lo_a, hi_a, base))
        sec.add(V.inversion_verdict(c, kind, res.accuracy, lo_a, hi_a, base, p, rows.size,
                                    conf))
    if fil_model is not None and fil_model is not est:   # fil.audit at sigma
        for c in ctx["cols"]:
            _release_inversion(ctx, fil_model, c, rows, sec, bars)
    if bars and _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.2, 3.4))
        xs = np.arange(len(bars))
        acc = np.array([b[1] for b in bars])
        err = np.clip([[b[1] - b[2] for b in bars], [b[3] - b[1] for b in bars]], 0, None)
        ax.bar(xs - 0.2, acc, 0.4, yerr=err, capsize=4,
               label=f"attack ({conf:.0%} Wilson interval)")
        ax.bar(xs + 0.2, [b[4] for b in bars], 0.4, label="prior baseline")
        ax.set_xticks(xs, [b[0] for b in bars])
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=8)
        sec.figure_png = _figure_png(fig)
    return sec


#: attacked rows of the white-box attack on a hypothetical release when every (row,
#: candidate) is a refit: an MLP (certified Newton refit, 0.007-0.03 CPU s each at
#: 2,000-5,000 training rows of Adult) or a multinomial GLM
_REFIT_ROWS = 200
#: simulated releases of the white-box attack on a hypothetical release
_RELEASE_DRAWS = 20


def _release_inversion(ctx, model, c, rows, sec, bars):
    """White-box inversion of ``c`` under the audit's threat model, on simulated releases.

    ``model`` is ``fil.audit(estimator, X, y, sigma=sigma)``: the audited minimiser
    released with Gaussian noise of ``sigma`` (hypothetical: the published model has no
    noise); the adversary knows every other training row and the row's other values.
    """
    from ..attacks import prior_baseline, whitebox_inversion

    X, rng, conf, sigma = (ctx[k] for k in ("X", "rng", "confidence", "sigma"))
    mlp = hasattr(model, "hessian_min_eigenvalue_")
    what = "weights" if mlp else "coefficients"
    label = f"'{c}' white-box if the {what} were released with noise sigma = {sigma:.4g}"
    try:
        values = _column_of(take_rows(X, rows), c)
    except (KeyError, IndexError, ValueError, TypeError):
        return
    if _is_numeric_attribute(values):
        sec.table.append((label, "not attacked: a numeric column (the white-box attack "
                                 "chooses among levels; its eta is in the FIL section)"))
        return
    final = _final_fil(model)
    refits = mlp or len(getattr(final, "classes_", ())) > 2
    if refits and rows.size > _REFIT_ROWS:
        rows = np.sort(rng.choice(rows, size=_REFIT_ROWS, replace=False))

    def attack(rows):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return whitebox_inversion(model, sensitive_features=c, rows=rows, prior="empirical",
                                      n_draws=_RELEASE_DRAWS, X=X, random_state=rng)

    sampled = rows.size
    try:
        try:
            res = attack(rows)
        except UncertifiedMinimumError:
            # a row whose candidate minimum is not certified (its likelihood is undefined)
            # is left out, and counted in the table and the sentence
            rows = rows[[_certified(model, c, i) for i in rows]]
            if not rows.size:
                raise
            res = attack(rows)
        base = prior_baseline(take_rows(X, rows), sensitive_features=c).accuracy
    except (TypeError, ValueError) as exc:
        sec.table.append((label, f"not attacked: {exc}"))
        sec.add(V.Verdict("not_checked", f"If the {what} were released with Gaussian noise "
                                         f"of sigma = {sigma:.4g}, what the white-box "
                                         f"attack recovers of '{c}' was not checked (the "
                                         "attack could not run: see the table)."))
        return
    lo_a, hi_a = res.confidence_interval(conf)
    p = res.p_value(base)
    cost = (f"; {rows.size:,} rows: each row and candidate is a refit" if refits
            else f"; {rows.size:,} rows")
    if rows.size < sampled:
        cost += (f"; {sampled - rows.size:,} of the {sampled:,} sampled rows left out: a "
                 "candidate minimum of theirs is not certified")
    sec.table.append((f"{label} (hypothetical: the published model has none), accuracy, "
                      f"{conf:.0%} Wilson interval",
                      f"{res.accuracy:.3f} [{lo_a:.3f}, {hi_a:.3f}] vs prior baseline "
                      f"{base:.3f}, exact binomial p = {p:.3g} ({_RELEASE_DRAWS} simulated "
                      f"releases{cost})"))
    bars.append((f"{c} (sigma {sigma:.2g})", res.accuracy, lo_a, hi_a, base))
    sec.add(V.release_inversion_verdict(c, sigma, what, res.accuracy, lo_a, hi_a, base, p,
                                        rows.size, conf, n_draws=_RELEASE_DRAWS,
                                        n_left_out=sampled - rows.size))


def _certified(model, c, i):
    """Whether every candidate minimum of training row ``i`` is certified."""
    from ..attacks import candidate_minimisers

    try:
        candidate_minimisers(model, sensitive_features=c, rows=[int(i)])
    except UncertifiedMinimumError:
        return False
    return True


def _audit_section(ctx):
    from ..attacks import canary_audit, one_run_audit, worst_case_neighbours

    est, X, y, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "rng", "confidence"))
    sec = ReportSection("audits", "Empirical lower bounds on epsilon")
    bounds = []
    fil = _final_fil(est)
    dense = not is_frame(X) and not hasattr(X, "tocsr")
    claimed = ctx["summary"].get("claimed_epsilon", np.inf)
    if ctx["n_canaries"]:
        template = clone(est)
        if fil is not None and fil is est and dense:
            kw = dict(canaries="fil_worst", attack="whitebox")
        else:
            kw = dict(canaries="mislabel", X_canaries=ctx["Xp"], y_canaries=ctx["yp"],
                      n_canaries=int(ctx["n_canaries"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = one_run_audit(template, X, y, confidence=conf, random_state=rng, **kw)
        bounds.append(("one-run audit", res.epsilon_lower_bound))
        sec.table.append(("one-run audit (Steinke, Nasr & Jagielski 2023; add/remove-one "
                          "canaries)",
                          f"{res.epsilon_lower_bound:.3g} ({res.n_correct}/{res.n_guesses} "
                          f"guesses correct, {res.n_canaries} canaries, attack {res.attack})"))
    else:
        sec.table.append(("one-run audit", "not run: n_canaries=0"))
    canary, why_not = _canary_target(ctx, fil, claimed)
    if canary is not None:
        target, Xf, on = canary
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pair = worst_case_neighbours(clone(target), Xf, y, random_state=rng)
            res = canary_audit(clone(target), Xf, y, pair.index, pair.x_replacement,
                               pair.y_replacement, attack=pair.statistic(),
                               n_releases=int(ctx["canary_releases"]), refit=False,
                               confidence=conf, random_state=rng)
        bounds.append(("canary audit (worst-case pair)", res.epsilon_lower_bound))
        sec.table.append(("canary audit on the worst pair found (replace-one)",
                          f"{res.epsilon_lower_bound:.3g} ({ctx['canary_releases']:,} "
                          f"releases per side; the pair moves the minimiser "
                          f"{pair.ratio:.2f} of sensitivity_; {on})"))
    else:
        sec.table.append(("canary audit on the worst-case pair", f"not run: {why_not}"))
        sec.add(V.Verdict("not_checked", f"The worst-case canary audit did not run: "
                                         f"{why_not}."))
    bounds += ctx.get("structural_bounds", [])
    if not bounds:
        sec.add(V.audit_verdict(claimed, bounds, conf))
        return sec
    best = max(b[1] for b in bounds)
    ctx["summary"]["empirical_epsilon"] = float(best)
    ctx["summary"]["empirical_epsilon_source"] = max(bounds, key=lambda b: b[1])[0]
    ctx["summary"]["confidence"] = conf
    sec.add(V.audit_verdict(claimed, bounds, conf))
    if _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.2, 1.2 + 0.55 * len(bounds)))
        names = [b[0] for b in bounds]
        vals = [b[1] for b in bounds]
        ax.barh(names, vals, color="#73a33f", label="audited lower bound")
        if np.isfinite(claimed):
            ax.axvline(claimed, color="#c00", lw=2, label=f"claimed {claimed:.3g}")
        ax.set_xlabel("epsilon")
        ax.legend(fontsize=8, loc="lower right")
        sec.figure_png = _figure_png(fig)
    return sec


def _canary_target(ctx, fil, claimed):
    """What the worst-case canary audit runs on, or why it cannot run.

    A bare FIL estimator is audited on the training rows; a pipeline ending in one is
    audited on its final step, on the rows as the pipeline's own (fitted, held fixed)
    preprocessing outputs them: the final step's DP guarantee is over those rows, and the
    claim of the whole object is at least the final step's.
    Returns ``((estimator, rows, where), None)`` or ``(None, reason)``.
    """
    est, X = ctx["estimator"], ctx["X"]
    if not ctx["canary_releases"]:
        return None, "canary_releases=0"
    if fil is None:
        return None, ("it audits the library's output-perturbed FIL estimators; this model "
                      "is not one")
    if not np.isfinite(claimed):
        return None, "no finite claim to audit (epsilon = inf)"
    if len(getattr(fil, "classes_", ())) > 2:
        return None, "the worst-case search supports binary and least-squares FIL models"
    if fil is est:
        if is_frame(X) or hasattr(X, "tocsr"):
            try:
                Xf = np.asarray(X.toarray() if hasattr(X, "tocsr") else X, dtype=float)
            except (TypeError, ValueError):
                return None, "the training rows have non-numeric columns"
            return (est, Xf, "on the training rows"), None
        return (est, np.asarray(X, dtype=float), "on the training rows"), None
    try:
        Xf = est[:-1].transform(X)
        Xf = np.asarray(Xf.toarray() if hasattr(Xf, "toarray") else Xf, dtype=float)
    except Exception as exc:  # noqa: BLE001 - the refusal is the reason
        return None, f"the rows could not be pushed through the preprocessing ({exc})"
    return (fil, Xf, "on the final step, on the rows as the pipeline's preprocessing "
                     "outputs them"), None


def _private_section(ctx):
    """Per-person figures, only when asked for: the page is then not for publication."""
    if not ctx["private"]:
        return None
    sec = ReportSection("private", "Private details: do not publish this page")
    sec.add(V.Verdict("private", "This section lists individual training rows by the "
                                 "caller's index with exact figures. The page must not be "
                                 "shared beyond those allowed to see the training data."))
    eta = ctx.get("eta")
    if eta is not None:
        X = ctx["X"]
        labels = np.asarray(X.index) if is_frame(X) else np.arange(eta.size)
        order = np.argsort(-eta)[: ctx["top_k"]]
        sec.table.append(("most exposed rows (index: eta)",
                          ", ".join(f"{labels[i]}: {eta[i]:.6g}" for i in order)))
    else:
        sec.table.append(("most exposed rows", "no per-example figure was computed"))
    return sec
