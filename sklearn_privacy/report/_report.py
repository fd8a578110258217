"""One view of a model's privacy: claimed, per-example and empirical, side by side."""

from __future__ import annotations

import io
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._version import __version__
from ..attacks._validation import (
    check_bool,
    check_fraction,
    check_positive_int,
    check_same_columns,
    check_target,
    is_frame,
    n_rows,
)
from ..utils import noise_generator
from ..utils._random import child_seeds
from . import _verdicts as V
from ._audits import _audit_section
from ._claim import _claim_section, _page_claim
from ._common import _figure_png, _have_matplotlib
from ._disclosure import PageLedger, finish_tests, mark_reconciled
from ._fil import _fil_section
from ._html import _HTMLPage
from ._inversion import _inversion_section
from ._membership import _membership_section
from ._private import _private_section
from ._record import ReleasePolicy, from_record, recommend, schema, to_record
from ._release import _release_section
from ._section import ReportSection
from ._shared import COST_KEYS
from ._structural import planned_queries as _structural_queries
from ._structural import structural_section
from ._tail import FPR_LEVELS
from ._utility import _utility_section

__all__ = ["PrivacyReport", "ReportSection"]

#: most rows per side drawn in a figure (the figure is a picture; the tables use every row)
_FIGURE_ROWS = 20_000


class PrivacyReport(_HTMLPage):
    """Can I publish this model? Its claimed, per-example and empirical privacy in one view.

    Build it with :meth:`from_estimator`; render it with :meth:`save_html` (one
    self-contained HTML page, figures embedded, no network), ``_repr_html_`` (notebooks)
    or :meth:`plot` (a matplotlib summary figure). Each section is present when it
    applies to the model:

    **The default page is a release with its own claim.** Every data-dependent figure
    goes through one helper (``sklearn_privacy.report._disclosure.PageLedger``) that
    classes it as *public* (a function of the published object, the population rows --
    which the page treats as public -- the parameters and the report's seed), *accounted*
    (a sum over training rows of a per-row quantity bounded given the published model and
    the population rows, released with Laplace noise at an even share of
    ``page_epsilon``, from fresh OS entropy) or *private* (anything else computed from the
    training rows: kept in the private channel, ``private_details`` and the sections'
    ``private_*`` fields, shown only on the private page of
    ``include_private_details=True``, never pickled). The headline states the claim of
    the model and of the model and the page together (basic composition: the page's
    figures are computed given the published model). Sections:

    * **claim** -- what is claimed for the object as published
      (:func:`sklearn_privacy.privacy_claim`: every step with its reason); public;
    * **utility** -- the model's score on the population rows (accuracy, or mean squared
      error for a regressor) against the trivial baseline read from the population rows
      (their majority class, or their mean), with a paired ``confidence`` interval of the
      difference; a release not shown to beat the baseline is flagged; public;
    * **release** -- what the pickled object holds (size, fitted attributes, whether
      :func:`~sklearn_privacy.utils.strip_for_release` accepts it: public) and how many
      training rows it holds (accounted: a noisy count, with the threshold below which a
      count is within the noise): every fitted array with one column per input of its
      pipeline step -- support vectors, stored samples -- is compared with the training
      rows as that step sees them, so rows kept behind a scaler are found;
    * **structural** -- disclosure checks of the model's family, each with what a finding
      proves (trees, forests and boosting: leaves under k training rows, pure small leaves,
      thresholds on training values or their midpoints, columns whose values the
      thresholds recover; instance-based models: stored rows; naive-Bayes-style models:
      statistics of small classes; linear models and MLPs: parameters against rows).
      Public (read from the pickle): leaves and pure leaves under k rows, per-class
      counts, parameters against ``n_train``; accounted: how many training rows the model
      stores (a noisy count), and the exact-match test's empirical epsilon read from it
      and the population rows stored (it counts in the headline); private: the threshold
      checks (they compare the thresholds with the training values) and every other
      membership test of a finding (it scores training rows), with the empirical epsilon
      it proves -- the default page says they ran in the private section. With
      ``include_private_details=True`` that epsilon counts in the private page's
      headline;
    * **fil** -- per-example Fisher information loss for FIL models, or for scikit-learn
      GLMs and MLPs through :func:`sklearn_privacy.fil.audit` at a given ``sigma``: what
      was computed is public; every eta is private (quantiles, the largest, per-attribute
      eta, and the leakage sentence in each raw column's own units);
    * **membership** -- a threshold membership attack (members: a sample of the training
      rows; non-members: population rows). Default page: the members' rank sum among the
      non-members (each member adds a value in [0, 1]) released with Laplace noise, so the
      AUC is noisy and its interval conservative (van Dantzig's variance bound plus the
      noise); per group of each categorical sensitive column (groups defined by the
      population's levels), noisy rank sums and noisy member counts, a group shown only
      when its noisy count and its population count reach ``min_group_size``. Every
      membership test of the page (the attack and every shown group) is one family under
      Holm's step-down procedure at level ``1 - confidence``; the p-values include the
      noise. Private: the exact AUC with DeLong's interval, LiRA and RMIA (both from one
      set of reference models, trained once), a
      classifier two-sample test of whether the population rows resemble the training rows
      (an AUC below chance is attributed to a population shift only on a page where that
      test finds one), and the ROC figure;
    * **inversion** -- attribute inversion of each sensitive column (private; computed
      only with ``include_private_details=True``): categorical columns by accuracy
      (white-box for FIL models, black-box Fredrikson otherwise) with a Wilson interval
      and the exact binomial p-value against the prior baseline; numeric columns by
      :func:`~sklearn_privacy.attacks.regression_inversion`, in the column's units against
      predicting the median. With ``sigma`` (a scikit-learn GLM or MLP audited through
      :func:`sklearn_privacy.fil.audit`), the categorical columns are also attacked
      white-box under the audit's hypothetical release -- the audited minimiser released
      with Gaussian noise of ``sigma``, an adversary who knows every other training row
      and the row's other values -- on 20 simulated releases, with the same interval, test
      and baseline (200 rows when every row and candidate is a refit: an MLP or a
      multinomial model);
    * **audits** -- empirical lower bounds on epsilon of the training recipe (a clone of
      the model), retrained on the population rows (public): the one-run audit (any
      model, one extra fit) and, for the library's DP mechanisms with a finite claim, a
      canary audit on the worst-case neighbouring pair (for a pipeline, on its final step
      through its own preprocessing); an audit that cannot run says why;
    * **private** -- only with ``include_private_details=True``: the most exposed rows by
      the caller's index with exact figures, under a heading saying the page is private.

    Every sentence comes from one rule of ``sklearn_privacy.report._verdicts`` applied to
    the figures and their uncertainty; a "no" is said only by a check that could have
    found a "yes" ("not checked" or "cannot tell" otherwise); no finding is contradicted by
    another section of the same page. The default page states the library version, the
    date, the parameters and the seed; :meth:`default_page` renders it deterministically
    (given ``random_state`` and ``noise_random_state``).

    Attacks and audits are lower bounds on what leaks: a model they cannot break may
    still leak to a stronger adversary. Only the claim (when finite) is a guarantee.

    Cost: every section runs once, and what several attacks need is computed once and
    shared: the reference models (trained once; LiRA and RMIA read the same models' scores,
    so the private page's two attacks cost ``n_reference_models`` fits, not twice that, and
    the target model is queried once for both) and :func:`sklearn_privacy.fil.audit`'s
    view (the FIL and inversion sections). The page states the cost as counts
    (``summary["cost"]``: reference models trained, fits of the recipe by the audits,
    canary releases drawn), functions of the parameters and of what ran only; the
    seconds of each section are private (``timings``). The model is queried in
    chunks of 100,000 rows, the figures draw at most 20,000
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
        What the default page may show: ``claimed_epsilon``, ``claimed_delta`` (the
        model's claim), ``page_epsilon``, ``total_epsilon`` (the model and the page
        together), ``page_queries`` (``(label, sensitivity, epsilon)`` of each accounted
        figure), ``empirical_epsilon`` (the best audit bound, the stored-rows test from
        its noisy count included) with ``empirical_epsilon_source``, ``confidence``,
        ``utility`` (``(metric, value, baseline, outcome)`` or None),
        ``tpr_at_low_fpr`` (the threshold attack's TPR at 0.1 % and 1 % FPR: the members
        above a threshold set on the population rows, an accounted noisy count, with
        intervals that include the noise) and ``flags`` (the verdicts a reader must act
        on before publishing). A report from :meth:`from_estimator` also has
        ``structural`` (the structural checks as dictionaries, private ones without
        their figures), ``cost`` (counts: ``reference_models``, ``audit_refits``,
        ``canary_releases``) and ``recommendation`` (the decision under its policy, made from
        the record :meth:`to_json` holds).
    metadata : dict
        ``version``, ``date``, ``parameters`` and ``random_state`` (the seed the report's
        randomness was drawn from; pass it back to reproduce the page's public figures).

    Attributes
    ----------
    private_details : dict
        The private channel: ``summary`` (``max_eta``), ``figures`` (every figure the
        ledger kept private, by label), ``seconds``, ``eta``, ``flags`` (findings made
        from private figures), ``structural`` (every structural check with its exact
        figures) and, for a report built with ``include_private_details=True``,
        ``recommendation`` (the decision made from the private record). The private
        ``summary`` also holds the empirical epsilon and the exact TPR at low FPR with the
        membership tests on training rows (structural findings, LiRA). Never on the
        default page; empty after unpickling.
    structural : list of dict
        The structural checks as the default page shows them (a private check without
        its figures).
    recommendation : dict
        The decision under ``policy``, made from the default page's record.

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
        #: the private channel: figures computed from the training rows without an
        #: accounted mechanism; never on the default page, never pickled
        self.private_details = {}
        self._show_private = any(s.key == "private" for s in self.sections)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_estimator(cls, estimator, X_train, y_train, X_population=None,
                       y_population=None, *, sensitive_features=None, sigma=None,
                       n_reference_models: int = 0, n_canaries: int = 1000,
                       canary_releases: int = 20_000, top_k: int = 10,
                       confidence: float = 0.95, n_jobs=None, verbose: int = 0,
                       random_state=None, name: str | None = None,
                       include_private_details: bool = False, page_epsilon: float = 1.0,
                       min_group_size: int = 20,
                       noise_random_state=None,
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
            Reference models for LiRA and RMIA (0: the threshold attack only), trained
            once and shared by both attacks. They train on member rows, so the attacks
            run only with ``include_private_details=True`` (private channel).
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
            Print progress: each section as it starts and ends, each reference model
            (``reference models 3/8``), the audits' fits and canary releases.
        random_state : int, RandomState, Generator or None
            The report's own randomness (attacks, canaries); ``None``: fresh OS entropy.
        name : str, optional
            Model name for the title (default: the class name).
        include_private_details : bool, default=False
            Add a section listing the most exposed training rows by the caller's index
            with their exact figures, under a heading that says the page is private.
            By default the page holds no per-person identifier and no figure computed
            from the training rows outside an accounted mechanism (see ``page_epsilon``).
        page_epsilon : float, default=1.0
            The default page's own budget. Its figures computed from the training rows
            (the membership AUC and its per-group figures, how many training rows the
            pickle holds) are sums of per-row quantities bounded given the published
            model and the population rows, each released with Laplace noise at an even
            share of ``page_epsilon``; the page states the claim of the model and the
            page together (basic composition). Everything else on the default page comes
            from the published object, the population rows (treated as public) and the
            parameters; the rest is in the private channel.
        min_group_size : int, default=20
            No figure from fewer people: a group of a sensitive column is shown only
            when its noisy member count and its population count reach it.
        noise_random_state : int, Generator or None, default=None
            Source of the page's Laplace noise. ``None``: fresh OS entropy, independent
            of ``random_state`` (which the page prints). A seed makes the noisy figures
            reproducible and the page's claim ``inf`` (for tests and audits only).
        policy : ReleasePolicy, optional
            The thresholds of the recommendation (``reject``, ``support_rejection`` or
            ``support_release``, in ``recommendation``, on the page and in
            :meth:`to_json`) and the k of the structural checks; default
            ``ReleasePolicy()`` (its defaults are documented there). The recommendation
            is made from the record of the page it is shown on.

        Returns
        -------
        report : PrivacyReport
            The computed report.
        """
        opts = dict(sensitive_features=sensitive_features, sigma=sigma,
                    n_reference_models=n_reference_models, n_canaries=n_canaries,
                    canary_releases=canary_releases, top_k=top_k, confidence=confidence,
                    n_jobs=n_jobs, verbose=verbose, random_state=random_state,
                    include_private_details=include_private_details,
                    page_epsilon=page_epsilon, min_group_size=min_group_size,
                    noise_random_state=noise_random_state, policy=policy)
        y_train, y_population = _validate_inputs(estimator, X_train, y_train, X_population,
                                                 y_population, opts)
        ctx, metadata = _context(estimator, X_train, y_train, X_population, y_population,
                                 opts)
        sections = _run_sections(ctx)
        return _finish(cls, sections, ctx, metadata, name or type(estimator).__name__,
                       opts["policy"])

    # ------------------------------------------------------------------ the record
    #: structural checks as dictionaries (name, family, proves, ran, found, total, detail,
    #: reason, channel); a check of the private channel has no figures here; empty for a
    #: report built by hand
    structural = ()
    #: the decision under the report's policy, made from the default page's record:
    #: ``{"decision", "reasons", "policy"}``
    recommendation = None
    #: the policy of the recommendation
    policy = None

    def _decision(self):
        if self.recommendation is None:
            self.recommendation = recommend(to_record(self, private=False),
                                            self.policy or ReleasePolicy())
        return self.recommendation

    def to_json(self, indent: int | None = 2) -> str:
        """The report as a JSON record an output-checking process can file.

        The record follows the schema ``sklearn_privacy.privacy_report`` (version
        ``"2.1"``, :meth:`json_schema`) and holds exactly what the default page shows:
        the claim (of the model, and of the model and the page together), every
        conclusion of the page with its section and outcome, the structural checks (ran
        or why not, what they found and what a finding proves; a check of the private
        channel is listed without its figures), every section's table, and the
        recommendation with its reasons and the policy it was made under (made from
        this record). A report built with ``include_private_details=True`` adds the
        member ``"private"`` (``"do_not_publish": true``): the private figures,
        conclusions, structural figures and the recommendation made from them.
        Non-finite numbers are the strings ``"inf"``, ``"-inf"`` and ``"nan"``; figures
        are not included (the page renders them); timings are private.
        :meth:`from_json` reads it back.

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
        return json.dumps(to_record(self, private=self._show_private), indent=indent,
                          allow_nan=False)

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
        """Seconds spent on each section.

        Private channel: wall-clock times depend on the rows, so they are not on the
        default page, and a pickled report has 0 for every section.
        """
        return {s.key: s.seconds for s in self.sections}

    def default_page(self, *, dated: bool = True) -> str:
        """The default (shareable) page as HTML: no private channel, no timings.

        A deterministic function of the report's public figures and its noisy figures:
        two reports built with the same ``random_state`` and ``noise_random_state`` on
        the same inputs give the same page (``dated=False`` leaves out the date).

        Parameters
        ----------
        dated : bool, default=True
            Whether the footer states the date the report was made.

        Returns
        -------
        page : str
            HTML text with no external resource.
        """
        return self._html(private=False, dated=dated)

    def page_template(self) -> str:
        """The default page with a placeholder for each element read from noisy figures.

        Every figure the default page computes from the training rows is released by
        the page's ledger with Laplace noise, and every sentence, table cell, finding,
        headline row and recommendation read from such figures is recorded by the ledger
        as derived from them (post-processing). This is :meth:`default_page` (undated)
        with each derived element replaced by a typed placeholder such as
        ``[[D3 sentence from A1 A2]]`` (``A1``, ``A2``: the released figures, listed by
        :meth:`page_accounting`). Whatever is not a placeholder is a function of public
        inputs only, so two training sets that differ in one row give the same template
        (:func:`sklearn_privacy.privacy.neighbour_invariance` compares it exactly).

        Returns
        -------
        template : str
            HTML text.
        """
        from ._template import page_template

        return page_template(self)

    def page_accounting(self) -> dict | None:
        """What the placeholders of :meth:`page_template` stand for.

        Returns
        -------
        record : dict or None
            ``epsilon`` (the page's budget), ``n_queries`` (planned), ``released`` (each
            accounted figure: ``id``, ``label``, ``sensitivity``, ``epsilon``, ``scale``,
            ``mechanism``; not its value) and ``items`` (each derived element: ``id``,
            ``kind``, ``section``, ``part``, ``index``, ``inputs``). None for a report
            rebuilt from JSON.
        """
        from ._template import page_accounting

        return page_accounting(self)

    def to_html(self) -> str:
        """The report as one self-contained HTML page (figures embedded as PNG).

        The default page (:meth:`default_page`), or, for a report built with
        ``include_private_details=True``, the private page: the default page plus every
        figure of the private channel, under headings that say it is private.

        Returns
        -------
        page : str
            HTML text with no external resource.
        """
        return self._html(private=self._show_private, dated=True)

    def __getstate__(self):
        # the private channel is never pickled: a pickled report is its default page
        state = dict(self.__dict__)
        sections = []
        for s in self.sections:
            if s.key == "private":
                continue
            s = ReportSection(s.key, s.title, list(s.verdicts), list(s.table),
                              s.figure_png, 0.0, list(s.outcomes))
            sections.append(s)
        state["sections"] = sections
        state["private_details"] = {}
        state["_show_private"] = False
        return state

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


# ---------------------------------------------------------------------- building
def _validate_inputs(estimator, X_train, y_train, X_population, y_population, opts):
    """Check the inputs of :meth:`PrivacyReport.from_estimator` (``opts``: its keyword
    arguments, normalised in place). Returns the checked ``(y_train, y_population)``."""
    check_is_fitted(estimator)
    n = n_rows(X_train, "X_train")
    y_train = check_target(y_train, n, param="y_train", x_param="X_train")
    if X_population is not None:
        m = n_rows(X_population, "X_population")
        y_population = check_target(y_population, m, param="y_population",
                                    x_param="X_population")
        check_same_columns(X_population, X_train, "X_population", x_param="X_train")
    sensitive_features = opts["sensitive_features"]
    if sensitive_features is not None and not isinstance(sensitive_features, list | tuple):
        sensitive_features = [sensitive_features]
    opts["sensitive_features"] = sensitive_features
    _check_sensitive_columns(sensitive_features or [], X_train)
    sigma = opts["sigma"]
    if sigma is not None and (isinstance(sigma, (bool, np.bool_)) or not isinstance(
            sigma, Real) or not (np.isfinite(sigma) and sigma > 0)):
        raise (ValueError if isinstance(sigma, Real) else TypeError)(
            f"sigma must be a positive finite number or None; got {sigma!r}.")
    for param in ("n_reference_models", "n_canaries", "canary_releases", "top_k"):
        check_positive_int(opts[param], param, minimum=0)
    n_reference_models = opts["n_reference_models"]
    if 0 < n_reference_models < 4:
        raise ValueError(
            f"n_reference_models must be 0 (no LiRA) or at least 4 (LiRA's per-example "
            f"variances need 2 models with and 2 without each row); got "
            f"{n_reference_models}.")
    check_fraction(opts["confidence"], "confidence")
    page_epsilon = opts["page_epsilon"]
    if isinstance(page_epsilon, (bool, np.bool_)) or not isinstance(page_epsilon, Real):
        raise TypeError(f"page_epsilon must be a positive finite number; got "
                        f"{page_epsilon!r}.")
    if not (np.isfinite(page_epsilon) and page_epsilon > 0):
        raise ValueError(f"page_epsilon must be a positive finite number; got "
                         f"{page_epsilon!r}.")
    check_positive_int(opts["min_group_size"], "min_group_size", minimum=1)
    policy = opts["policy"]
    if policy is None:
        opts["policy"] = ReleasePolicy()
    elif not isinstance(policy, ReleasePolicy):
        raise TypeError(f"policy must be a ReleasePolicy or None; got "
                        f"{type(policy).__name__}.")
    opts["include_private_details"] = check_bool(opts["include_private_details"],
                                                 "include_private_details")
    return y_train, y_population


def _context(estimator, X_train, y_train, X_population, y_population, opts):
    """The sections' shared state and the page's metadata, from the checked inputs."""
    random_state = opts["random_state"]
    sensitive_features = opts["sensitive_features"]
    # the seed of the report's own randomness, stated on the page (reproducible)
    seed = (int(random_state) if isinstance(random_state, int)
            and not isinstance(random_state, bool)
            else int(child_seeds(noise_generator(random_state), 1)[0]))
    rng = np.random.default_rng(int(child_seeds(noise_generator(seed), 1)[0]))
    # the page's noise never comes from the printed seed (that would make it public)
    seeded_noise = opts["noise_random_state"] is not None
    ledger = PageLedger(float(opts["page_epsilon"]),
                        _planned_queries(estimator, X_population,
                                         sensitive_features or []),
                        int(opts["min_group_size"]),
                        noise_generator(opts["noise_random_state"]))
    ctx = dict(estimator=estimator, X=X_train, y=y_train, Xp=X_population,
               yp=y_population, cols=sensitive_features or [], sigma=opts["sigma"],
               n_ref=opts["n_reference_models"], n_canaries=opts["n_canaries"],
               canary_releases=opts["canary_releases"], top_k=opts["top_k"],
               confidence=opts["confidence"], n_jobs=opts["n_jobs"],
               verbose=opts["verbose"], rng=rng, summary={},
               private=opts["include_private_details"], ledger=ledger,
               min_rows=opts["policy"].min_rows, seeded_noise=seeded_noise,
               figures=_have_matplotlib(), cost=dict.fromkeys(COST_KEYS, 0))
    metadata = {
        "version": __version__,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "random_state": seed,
        "parameters": {
            "n_train": n_rows(X_train), "n_population": (None if X_population is None
                                                         else n_rows(X_population)),
            "sensitive_features": list(sensitive_features or []), "sigma": opts["sigma"],
            "n_reference_models": opts["n_reference_models"],
            "n_canaries": opts["n_canaries"],
            "canary_releases": opts["canary_releases"], "confidence": opts["confidence"],
            "include_private_details": opts["include_private_details"],
            "page_epsilon": float(opts["page_epsilon"]),
            "min_group_size": int(opts["min_group_size"]),
            "noise_random_state": "fresh OS entropy" if not seeded_noise
            else "seeded (the page's claim is inf)"},
    }
    return ctx, metadata


#: the sections in the order of the page
_BUILDERS = (_claim_section, _utility_section, _release_section, structural_section,
             _fil_section, _membership_section, _inversion_section, _audit_section,
             _private_section)


def _run_sections(ctx):
    """Compute every applicable section in page order (then draw its deferred figure)."""
    sections = []
    verbose = ctx["verbose"]
    # one generator per section, from the seed: how many draws one section makes
    # (which can depend on the rows, in a private computation) never moves another's
    section_seeds = child_seeds(np.random.default_rng(int(ctx["rng"].integers(2**63 - 1))),
                                len(_BUILDERS))
    for builder, section_seed in zip(_BUILDERS, section_seeds, strict=True):
        ctx["rng"] = np.random.default_rng(int(section_seed))
        t = time.perf_counter()
        if verbose:
            step = builder.__name__.strip("_").removesuffix("_section")
            print(f"[PrivacyReport] {step} ...", flush=True)
        section = builder(ctx)
        roc = ctx.pop("roc_figure", None)   # the membership ROC, drawn here
        if section is not None and roc is not None:
            section.private_figure_png = _roc_figure(*roc)
        if section is not None:
            section.seconds = time.perf_counter() - t
            if verbose:
                print(f"[PrivacyReport] {section.key} done in {section.seconds:.1f} s",
                      flush=True)
            sections.append(section)
    return sections


def _finish(cls, sections, ctx, metadata, name, policy):
    """The report from its computed sections: the page's claim, flags, private channel
    and the recommendation."""
    ledger = ctx["ledger"]
    finish_tests(ctx, policy.false_alarm)
    _page_claim(ctx, ledger, ctx["seeded_noise"])
    _reconcile(sections)
    mark_reconciled(sections, ledger)
    ctx["summary"]["cost"] = dict(ctx["cost"])     # counts only: public
    ctx["summary"]["flags"] = [v for sec in sections
                               for v, o in zip(sec.verdicts, sec.outcomes, strict=True)
                               if o in V.FLAGS]
    report = cls(sections, name=name, summary=ctx["summary"], metadata=metadata)
    report.private_details = {
        "summary": {k: ctx[k] for k in ("max_eta",) if k in ctx},
        "figures": list(ledger.private),
        "seconds": {s.key: s.seconds for s in sections},
        "eta": ctx.get("eta"),
        "flags": [v for sec in sections for v, o in zip(
            sec.private_verdicts, sec.private_outcomes, strict=True) if o in V.FLAGS],
    }
    report.private_details["summary"].update(ctx.get("private_summary", {}))
    report.structural = [c.record() for c in ctx.get("structural_checks", [])]
    report.private_details["structural"] = [
        c.record(private=True) for c in ctx.get("structural_checks", [])]
    include_private_details = ctx["private"]
    report._show_private = include_private_details
    report._page_ledger = ledger.record()
    report.policy = policy
    report.recommendation = recommend(to_record(report, private=False), policy)
    if include_private_details:
        report.private_details["recommendation"] = recommend(
            to_record(report, private=True), policy)
    return report


def _planned_queries(estimator, X_population, cols):
    """Accounted queries of the default page, from public facts only (before any runs).

    One for how many training rows the pickle holds; one for how many the final model
    stores when it has fitted arrays of stored rows (structural checks); with population
    rows, one for the threshold attack's rank sum, one per false-positive rate of its
    tail (members above the threshold) and two per sensitive column (per-group rank sums
    and per-group member counts).
    """
    return (1 + _structural_queries(estimator)
            + (0 if X_population is None else 1 + len(FPR_LEVELS) + 2 * len(cols)))


def _reconcile(sections):
    """No finding that another section of the same page contradicts.

    The audit's "no evidence of leakage" is reworded when the membership section of the
    same page finds leakage (the audit is then the weaker test, not evidence of safety).
    """
    by = {s.key: s for s in sections}
    memb, audit = by.get("membership"), by.get("audits")
    if memb is None or audit is None or "leaks" not in memb.outcomes:
        return
    for i, o in enumerate(audit.outcomes):
        if o == "cannot_tell":
            audit.verdicts[i] = (audit.verdicts[i].rstrip(".")
                                 + ". The membership section of this page does find "
                                 "leakage: this audit is the weaker test here.")


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


def _roc_figure(curves, conf, rng, bound=None):
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
    if bound is not None:   # the claim's worst-case ROC on the same axes
        disp.plot_bound(bound)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="lower right")
    if sub:
        ax.set_title(f"membership ROC (curve and band drawn from {_FIGURE_ROWS:,} rows a "
                     "side; legend: every row)", fontsize=9)
    return _figure_png(fig)
