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
from ._disclosure import PageLedger, holm, noisy_sum_upper_p
from ._record import ReleasePolicy, from_record, recommend, schema, to_record
from ._structural import _row_hash, structural_section
from ._structural import planned_queries as _structural_queries
from ._tail import FPR_LEVELS, noisy_tail_rows, tail_rows


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
    private_table, private_verdicts, private_outcomes : list
        The section's figures and conclusions computed from the training rows without an
        accounted mechanism: the report's private channel, shown only on the private page
        (``include_private_details=True``) and never pickled.
    private_figure_png : bytes or None
        A figure drawn from the training rows (private channel).

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
    private_table: list = field(default_factory=list, repr=False)
    private_verdicts: list = field(default_factory=list, repr=False)
    private_outcomes: list = field(default_factory=list, repr=False)
    private_figure_png: bytes | None = field(default=None, repr=False)

    def __post_init__(self):
        # sentences given without a rule's outcome (e.g. a hand-built section) are notes
        self.outcomes = list(self.outcomes) + ["note"] * (len(self.verdicts)
                                                          - len(self.outcomes))

    def __getstate__(self):
        # the private channel is never pickled
        state = dict(self.__dict__)
        state.update(private_table=[], private_verdicts=[], private_outcomes=[],
                     private_figure_png=None)
        return state

    def add_private(self, verdict):
        """Append a verdict made from private figures (the private channel).

        Parameters
        ----------
        verdict : object with ``outcome`` and ``text``
            The conclusion to append.
        """
        self.private_verdicts.append(str(verdict))
        self.private_outcomes.append(getattr(verdict, "outcome", ""))

    def forget_private(self):
        """Drop the private channel (what a pickle of the report leaves out)."""
        self.private_table, self.private_verdicts, self.private_outcomes = [], [], []
        self.private_figure_png = None

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
      noise. Private: the exact AUC with DeLong's interval, LiRA with reference models, a
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
        their figures) and ``recommendation`` (the decision under its policy, made from
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
            Reference models for LiRA (0: the threshold attack only). LiRA's reference
            models train on member rows, so it runs only with
            ``include_private_details=True`` (private channel).
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
        if isinstance(page_epsilon, (bool, np.bool_)) or not isinstance(page_epsilon, Real):
            raise TypeError(f"page_epsilon must be a positive finite number; got "
                            f"{page_epsilon!r}.")
        if not (np.isfinite(page_epsilon) and page_epsilon > 0):
            raise ValueError(f"page_epsilon must be a positive finite number; got "
                             f"{page_epsilon!r}.")
        check_positive_int(min_group_size, "min_group_size", minimum=1)
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
        # the page's noise never comes from the printed seed (that would make it public)
        seeded_noise = noise_random_state is not None
        ledger = PageLedger(float(page_epsilon),
                            _planned_queries(estimator, X_population,
                                             sensitive_features or []),
                            int(min_group_size), noise_generator(noise_random_state))
        ctx = dict(estimator=estimator, X=X_train, y=y_train, Xp=X_population,
                   yp=y_population, cols=sensitive_features or [], sigma=sigma,
                   n_ref=n_reference_models, n_canaries=n_canaries,
                   canary_releases=canary_releases, top_k=top_k, confidence=confidence,
                   n_jobs=n_jobs, verbose=verbose, rng=rng, summary={},
                   private=include_private_details, ledger=ledger,
                   min_rows=policy.min_rows)
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
                "include_private_details": include_private_details,
                "page_epsilon": float(page_epsilon), "min_group_size": int(min_group_size),
                "noise_random_state": "fresh OS entropy" if not seeded_noise
                else "seeded (the page's claim is inf)"},
        }
        sections = []
        builders = (_claim_section, _utility_section, _release_section,
                    structural_section, _fil_section,
                    _membership_section, _inversion_section, _audit_section,
                    _private_section)
        # one generator per section, from the seed: how many draws one section makes
        # (which can depend on the rows, in a private computation) never moves another's
        section_seeds = child_seeds(np.random.default_rng(int(rng.integers(2**63 - 1))),
                                    len(builders))
        for builder, section_seed in zip(builders, section_seeds, strict=True):
            ctx["rng"] = np.random.default_rng(int(section_seed))
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
        _page_claim(ctx, ledger, seeded_noise)
        _reconcile(sections)
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
        report._show_private = include_private_details
        report.policy = policy
        report.recommendation = recommend(to_record(report, private=False), policy)
        if include_private_details:
            report.private_details["recommendation"] = recommend(
                to_record(report, private=True), policy)
        return report

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
        ``"2.0"``, :meth:`json_schema`) and holds exactly what the default page shows:
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
        params = m.get("parameters") or {}
        rows.append(("what this page shows", PAGE_RULE.format(
            min_group_size=params.get("min_group_size", "?"))))
        out = ["<h2>How this page was made</h2>", "<table class='meta'>"]
        out += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in rows]
        out.append("</table>")
        return out

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


#: what the default page shows, stated in its footer (kept true by ``PageLedger``)
PAGE_RULE = (
    "figures from the published object, the population rows (treated as public) and the "
    "parameters, shown as computed; figures from the training rows only as sums of "
    "bounded per-row quantities released with Laplace noise (budget in the headline), "
    "AUCs printed at three decimals and counts as whole numbers; no figure from fewer "
    "than {min_group_size} people; no per-person identifier or figure, no timing. "
    "Everything else computed from the training rows is in the report's private channel "
    "(PrivacyReport.private_details), never on this page and never pickled")


def _coarse(x):
    """A per-person figure (private page only): two significant digits."""
    return f"{float(x):.2g}"


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


def _page_claim(ctx, ledger, seeded_noise):
    """The claim of the model and its default page together (basic composition)."""
    from ..privacy import PrivacyClaim, StepClaim
    from ..privacy._compose import compose

    model = ctx.get("claim")
    if model is None:  # pragma: no cover - privacy_claim is always importable
        model = PrivacyClaim(ctx["summary"].get("claimed_epsilon", np.inf), 0.0, [], "none")
    page = ledger.step_claim()
    if seeded_noise:
        page = StepClaim(page.name, page.estimator, "non_private", np.inf, 0.0,
                         "the page's noise was seeded (noise_random_state): its noisy "
                         "figures are reproducible")
    steps = list(model.steps)
    if not steps and not model.is_private:  # pragma: no cover
        steps = [StepClaim("model", "?", "non_private", np.inf, 0.0, "no claim")]
    total = compose(steps + [page])
    ctx["summary"]["page_epsilon"] = float(page.epsilon)
    ctx["summary"]["total_epsilon"] = float(total.epsilon)
    ctx["summary"]["page_queries"] = [(label, sens, eps) for label, sens, eps
                                      in ledger.answered]


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


def _claim_section(ctx):
    est = ctx["estimator"]
    try:
        from ..privacy import privacy_claim
    except ImportError:  # pragma: no cover
        privacy_claim = None
    sec = ReportSection("claim", "What is claimed")
    if privacy_claim is not None:
        claim = privacy_claim(est)
        ctx["claim"] = claim
        eps, dlt = float(claim.epsilon), float(claim.delta)
        for st in claim.steps:
            sec.table.append((st.name, f"{st.kind}: {st.reason}"))
    else:  # pragma: no cover
        eps = float(getattr(est, "epsilon_", np.inf))
        dlt = float(getattr(est, "delta", 0.0) or 0.0)
    ctx["summary"]["claimed_epsilon"] = eps
    ctx["summary"]["claimed_delta"] = dlt
    if privacy_claim is not None and np.isfinite(eps):
        curve = ctx["curve"] = claim.tradeoff
        ctx["summary"]["tpr_bound"] = float(curve.max_tpr(0.01))
        sec.table.append(("largest TPR of any membership attack at 1% FPR (the claim's "
                          "trade-off curve)", f"{float(curve.max_tpr(0.01)):.4g} "
                                              f"[{curve.label}]"))
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
    # the baseline is read from the population rows (public), never from the training rows
    if is_classifier(est):
        labels, counts = ctx["ledger"].figure(
            "majority class", np.unique(yp, return_counts=True), source="public")
        majority = labels[np.argmax(counts)]
        majority = majority.item() if hasattr(majority, "item") else majority
        correct = (pred == yp).astype(float)
        base = (yp == majority).astype(float)
        metric, value, base_value = "accuracy", correct.mean(), base.mean()
        base_name = (f"always predicting the majority class of the population rows "
                     f"({majority!r})")
        diff = correct - base
    else:
        yf, pf = yp.astype(float), pred.astype(float)
        mean = ctx["ledger"].figure("baseline mean", float(np.mean(yf)), source="public")
        err, base_err = (yf - pf) ** 2, (yf - mean) ** 2
        metric, value, base_value = "mean squared error", err.mean(), base_err.mean()
        base_name = "always predicting the mean of the population rows"
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


def _verbatim_search(est, X):
    """Training rows that the published object holds, in any space it can be read in.

    Every step of a pipeline sees the training rows transformed by the steps before it;
    a fitted attribute of that step that has one column per input of the step (support
    vectors, stored samples, ...) is compared row by row (exact bits, float32 storage
    included) with the transformed training rows. A match is a training row the pickle
    reconstructs (through the inverse transforms of the steps before, when they are
    invertible, as a scaler's is). Returns ``(found, searched, reason)``, ``found`` a
    boolean mask over the training rows (None when the search could not run).
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
            return None, "", f"the input of step '{name}' has no column count"
        arrays = _row_arrays(step, width, name, [])
        numeric_input = not is_frame(current) or all(
            str(t).startswith(("float", "int", "uint", "bool")) for t in current.dtypes)
        if arrays and not numeric_input:
            return None, "", (f"step '{name}' holds row-shaped arrays but its input has "
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
            # the exception's text can quote a training value: its type only on the page
            return None, "", (f"the training rows could not be pushed through step '{name}' "
                              f"({type(exc).__name__}; the message is in the private "
                              "channel)", f"{type(exc).__name__}: {exc}")
    where = (", ".join(held) if held else
             "no fitted attribute has one column per input of its step")
    searched = (f"every fitted array with one column per input of its step, compared with "
                f"the training rows as that step sees them: {where}")
    return found, searched, None


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
        found, searched, reason = None, "", (f"the search failed ({type(exc).__name__}; "
                                             "the message is in the private channel)",
                                             str(exc))
    if isinstance(reason, tuple):   # (what the page says, the exception: private)
        reason, detail = reason
        sec.private_table.append(("why the search could not run", detail))
    # the raw rows' bytes, as a second route (a copy kept outside any estimator)
    if reason is None and not is_frame(X) and not hasattr(X, "tocsr") \
            and len(blob) < 50_000_000:
        A = np.asarray(X)
        if A.dtype.kind == "f":
            rows = ctx["rng"].choice(n, size=min(50, n), replace=False)
            for i in rows:
                found[i] |= np.ascontiguousarray(A[i], dtype=np.float64).tobytes() in blob
            searched += f"; and the bytes of {rows.size} sampled raw rows"
    if reason is not None:
        sec.add(V.verbatim_verdict(0, n, searched=searched, not_checked_reason=reason))
        return sec
    # a count of training rows: each row adds 0 or 1 given the pickle (accounted)
    count = ctx["ledger"].figure("training rows the pickle holds", int(found.sum()),
                                 source="training", bound=1)
    level = 1.0 - ctx["confidence"]
    threshold = count.tail(2 * level) if count is not None else 0.0
    shown = max(0, int(round(count.value)))
    sec.table.append(("training rows the pickle holds (Laplace noise of scale "
                      f"{count.scale:.3g}; counts up to {threshold:.0f} are within the "
                      f"noise at {ctx['confidence']:.0%})", f"about {shown:,} of {n:,}"))
    sec.private_table.append(("training rows the pickle holds (exact)",
                              f"{int(found.sum()):,} of {n:,}"))
    sec.add(V.verbatim_verdict(shown if count.value > threshold else 0, n,
                               searched=searched, noise_threshold=threshold,
                               confidence=ctx["confidence"]))
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
        msg = str(exc)
        if "pass rows=[...]" in msg:
            # the audit's own advice names its parameter; the report audits every row
            msg = msg.split("; pass rows=[...]")[0] + (
                "; the report audits every row, so it did not run this one: call "
                "sklearn_privacy.fil.audit(model, X_train, y_train, sigma=..., "
                "rows=[...]) with the rows to audit")
        return None, msg


def _eta_view(model):
    """What the report's eta is about, and in which units, for a model or pipeline."""
    if getattr(model, "_fmap", None) is not None:  # an MLP audit through a pipeline
        return ("the raw inputs (each numeric column in its own units, each encoded "
                "categorical column as its one-hot values), through the derivative of the "
                "preprocessing", "in the units of the raw columns")
    if not hasattr(model, "steps") or len(model.steps) < 2:
        return "the model's inputs", "in the units of the model's inputs"
    from ..fil._audits._pipeline import raw_refusals
    from ..fil._raw._feature_maps import feature_map

    refusals = raw_refusals(feature_map(model), model.steps[-1][1])
    if refusals:
        return ("the features entering the final step (not the raw inputs: "
                + "; ".join(refusals) + ")",
                "in the units of the features entering the final step")
    return ("the raw inputs (each numeric column in its own units, each encoded "
            "categorical column as its one-hot values), through the derivative of the "
            "preprocessing", "in the units of the raw columns")


#: at most this many raw columns get their own leakage figure (private channel)
_MAX_COLUMN_ETAS = 20


def _raw_columns(X, cols):
    """The raw columns whose leakage is stated one by one: the sensitive ones first."""
    names = list(X.columns) if is_frame(X) else list(range(np.shape(X)[1]))
    order = [c for c in cols if c in names] + [c for c in names if c not in cols]
    return order[:_MAX_COLUMN_ETAS], len(names)


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
    # every eta is a function of individual training rows (and of all of them through the
    # Hessian): the figures are private; the page says what was computed and where
    if model is not ctx["estimator"] and hasattr(model, "hessian_min_eigenvalue_"):
        sec.table.append(("audited through", (
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this network would leak about "
            "each row's raw values if its weights were released with that noise, locally "
            "at the released local minimum (an attribute-inference bound, not a membership "
            "score)")))
        sec.private_table.append(("audit certificate", (
            f"parameters polished by {model.polish_distance_:.3g} to a local minimum "
            f"certified by the smallest Hessian eigenvalue "
            f"{model.hessian_min_eigenvalue_:.3g}")))
    elif model is not ctx["estimator"]:   # a scikit-learn GLM, through fil.audit
        final = model.steps[-1][1] if hasattr(model, "steps") else model
        sec.table.append(("audited through", (
            f"fil.audit at sigma = {ctx['sigma']:.4g}: what this model would leak if its "
            "coefficients were released with that noise (the published model has none)")))
        sec.private_table.append(("audit certificate", (
            f"coefficients polished by {getattr(final, 'polish_distance_', 0.0):.3g} to "
            "the exact minimiser")))
    X = ctx["X"]
    wrt, units = _eta_view(model)
    sec.table.append(("eta with respect to", wrt))
    sec.add(V.Verdict("note", "The per-example figures (eta of each training row, their "
                                 "quantiles and the largest) are functions of individual "
                                 "training rows, so they are in the report's private "
                                 "channel: build the report with include_private_details="
                                 "True to see them on a private page."))
    with warnings.catch_warnings():
        # the view is stated in the table; published rows are flagged below (eta inf)
        warnings.simplefilter("ignore", PrivacyWarning)
        eta = np.asarray(fil.eta(model, per_example=True, X=X))
    published = np.isinf(eta)
    if published.any():
        sec.add(V.published_rows_verdict(int(published.sum())))
        eta = eta[~published]
    ctx["max_eta"] = float(eta.max())
    ctx["ledger"].figure("per-example eta", eta, source="training")
    ctx["eta"] = eta
    qs = np.quantile(eta, [0.5, 0.9, 0.99])
    sec.private_table += [("rows", f"{eta.size:,}"), ("median eta", _coarse(qs[0])),
                          ("90th percentile", _coarse(qs[1])),
                          ("99th percentile", _coarse(qs[2])),
                          ("largest eta", _coarse(eta.max()))]
    per_attr = {}
    for c in ctx["cols"] if ctx["private"] else []:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                v = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
            per_attr[c] = v[np.isfinite(v)]
            sec.private_table.append((f"eta of '{c}' (median / max)",
                                      f"{_coarse(np.median(per_attr[c]))} / "
                                      f"{_coarse(per_attr[c].max())}"))
        except (TypeError, ValueError) as exc:
            sec.private_table.append((f"eta of '{c}'", f"not computed: {exc}"))
    # the leakage in each raw column's own units (one-hot blocks: their one-hot values)
    per_column, skipped = [], []
    columns, n_columns = _raw_columns(X, list(ctx["cols"]))
    for c in columns if ctx["private"] else []:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                v = per_attr.get(c)
                if v is None:
                    v = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
                    v = v[np.isfinite(v)]
            if v.size:
                per_column.append((c, float(v.max())))
        except (TypeError, ValueError):
            skipped.append(c)
    if ctx["private"]:
        sec.add_private(V.fil_verdict(float(eta.max()), float(np.median(eta)), units=units,
                                      per_column=per_column, n_columns=n_columns,
                                      skipped=skipped))
    if ctx["private"] and _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.hist(eta, bins=40, color="#3465a4", alpha=0.85, label="every feature and label")
        for c, v in per_attr.items():
            ax.hist(v, bins=40, alpha=0.5, label=f"'{c}'")
        ax.set_xlabel("per-example eta")
        ax.set_ylabel("rows")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        sec.private_figure_png = _figure_png(fig)
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
    return auc, lo, hi, auc_p_value(s_a, s_b, "greater"), s_a.size + s_b.size


def _column_of(X, c):
    if is_frame(X):
        return X[c].to_numpy() if c in X.columns else X.iloc[:, int(c)].to_numpy()
    if hasattr(X, "tocsr"):
        return X[:, [int(c)]].toarray().ravel()
    return np.asarray(X)[:, int(c)]


def _ranks(s_in, s_out):
    """Each member's normalised rank among the non-members (Mann-Whitney, ties half).

    ``u_i`` in ``[0, 1]`` depends on member ``i``'s score and the non-members' scores only,
    so a sum of ``u`` over members changes by at most 1 when one member row is replaced;
    the AUC is their mean.
    """
    out = np.sort(s_out)
    lo = np.searchsorted(out, s_in, side="left")
    hi = np.searchsorted(out, s_in, side="right")
    return (lo + 0.5 * (hi - lo)) / max(1, out.size)


def _mw_null_var(k_in, k_out):
    """Variance of the Mann-Whitney rank sum ``sum u_i`` under exchangeable scores."""
    return k_in * (k_in + k_out + 1) / (12.0 * k_out)


def _noisy_auc_interval(auc, k_in, k_out, noise_tail, confidence):
    """A conservative interval for an AUC released with noise.

    The sampling part uses the distribution-free bound Var(AUC) <= AUC (1 - AUC) /
    min(k_in, k_out) (van Dantzig) at the AUC in the noise band closest to 0.5, at level
    ``(1 - confidence) / 2``; ``noise_tail`` (on the AUC scale) covers the noise at the
    other half of the level (union bound).
    """
    from scipy.stats import norm

    a = float(np.clip(auc, 0.0, 1.0))
    closest = 0.5 if abs(a - 0.5) <= noise_tail else (a - noise_tail if a > 0.5
                                                      else a + noise_tail)
    z = norm.ppf(1 - (1 - confidence) / 4)
    half = z * np.sqrt(closest * (1 - closest) / max(1, min(k_in, k_out))) + noise_tail
    return max(0.0, a - half), min(1.0, a + half)


def _membership_section(ctx):
    if ctx["Xp"] is None:
        return None
    est, X, y, Xp, yp, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "Xp", "yp",
                                                     "rng", "confidence"))
    ledger = ctx["ledger"]
    level = 1.0 - conf
    sec = ReportSection("membership", "Membership inference")
    # equal-size evaluation sets: a random subset of the larger side (positions drawn from
    # the seed: which rows are evaluated does not depend on their values)
    k = min(n_rows(X), n_rows(Xp))
    if k < ledger.min_group_size:
        sec.add(V.Verdict("not_checked", f"Membership was not checked: {k} members and "
                                         f"{k} non-members, fewer than min_group_size = "
                                         f"{ledger.min_group_size} (no figure on this page "
                                         "comes from fewer people)."))
        return sec
    i_in = np.sort(rng.choice(n_rows(X), size=k, replace=False))
    i_out = np.sort(rng.choice(n_rows(Xp), size=k, replace=False))
    s_in, attack = _scores(est, X, y, i_in)
    s_out, _ = _scores(est, Xp, yp, i_out)
    label = f"threshold ({attack})"
    # --- default page: the rank sum of the members, released with Laplace noise
    u = _ranks(s_in, s_out)
    total = ledger.figure("membership rank sum", float(u.sum()), source="training", bound=1)
    auc_n = total.value / k
    tail = total.tail(level / 2) / k
    lo_n, hi_n = _noisy_auc_interval(auc_n, k, k, tail, conf)
    p_all = noisy_sum_upper_p(total.value, 0.5 * k, _mw_null_var(k, k), [total.scale])
    sec.table.append((f"threshold attack ({attack}) AUC, released with Laplace noise of "
                      f"scale {total.scale / k:.2g}; conservative {conf:.0%} interval",
                      f"{auc_n:.3f} [{lo_n:.3f}, {hi_n:.3f}] (chance 0.5; {k:,} members, "
                      f"{k:,} non-members; one-sided p = {p_all:.3g})"))
    tests = [("attack", label, auc_n, lo_n, hi_n, p_all)]
    # --- the tail: members above thresholds set on the population rows (noisy counts)
    noisy_tail_rows(ctx, sec, f"threshold attack ({attack})", s_in, s_out)
    # --- groups of each sensitive column, defined on the population rows (public)
    group_rows = []
    for c in ctx["cols"]:
        try:
            g_in, g_out = _column_of(X, c)[i_in], _column_of(Xp, c)[i_out]
        except (KeyError, IndexError, ValueError, TypeError):
            continue
        g_in, g_out = g_in.astype(str), g_out.astype(str)
        levels = np.unique(g_out)
        if levels.size > _MAX_GROUPS:
            sec.table.append((f"membership by '{c}'", f"not split: {levels.size} distinct "
                                                       "values in the population rows"))
            continue
        sums, counts, n_out = [], [], []
        for lev in levels:
            b = s_out[g_out == lev]
            a = s_in[g_in == lev]
            sums.append(_ranks(a, b).sum() if a.size else 0.0)
            counts.append(a.size)
            n_out.append(b.size)
        # a member row moves from one group to another: L1 sensitivity 2 per vector
        S = ledger.figure(f"per-group rank sums of '{c}'", np.array(sums), source="training",
                          bound=1, vector=True)
        K = ledger.figure(f"per-group member counts of '{c}'", np.array(counts, float),
                          source="training", bound=1, vector=True)
        shown, hidden = [], 0
        for j, lev in enumerate(levels):
            k_g, m_g = float(K.value[j]), int(n_out[j])
            if k_g < ledger.min_group_size or m_g < ledger.min_group_size:
                hidden += 1
                continue
            # the count's upper band makes the null variance conservative
            k_hi = k_g + K.tail(level / 2)
            p_g = noisy_sum_upper_p(S.value[j] - 0.5 * k_g, 0.0, _mw_null_var(k_hi, m_g),
                                    [S.scale, 0.5 * K.scale])
            auc_g = float(np.clip(S.value[j] / k_g, 0.0, 1.0))
            noise_g = (S.tail(level / 4) + K.tail(level / 4)) / max(k_g - K.tail(level / 4),
                                                                    1.0)
            glo, ghi = _noisy_auc_interval(auc_g, k_g, m_g, noise_g, conf)
            shown.append((lev, auc_g, glo, ghi, int(round(k_g)), m_g, p_g))
            sec.table.append((f"AUC where '{c}' = {lev}",
                              f"{auc_g:.3f} [{glo:.3f}, {ghi:.3f}] (about {int(round(k_g)):,}"
                              f" members (noisy count), {m_g:,} non-members; one-sided "
                              f"p = {p_g:.3g})"))
        if hidden:
            sec.table.append((f"groups of '{c}' not shown",
                              f"{hidden}: fewer than {ledger.min_group_size} members (noisy "
                              "count) or non-members"))
        group_rows.append((c, shown, hidden))
        tests += [("group", (c, g[0]), g[1], g[2], g[3], g[6]) for g in shown]
    # --- one family: the attack and every group, Holm's step-down at 1 - confidence
    rejected, adjusted = holm([t[5] for t in tests], level)
    method = (f"Holm's step-down correction over the {len(tests)} membership tests of "
              "this page" if len(tests) > 1 else "a single test")
    # the population-shift wording needs this page's own two-sample test (private here)
    sec.add(V.membership_verdict(label, auc_n, lo_n, hi_n, conf, n_members=k,
                                 n_nonmembers=k, leaks=bool(rejected[0]),
                                 p_value=float(adjusted[0]), method=method,
                                 population_differs=None, noisy=True))
    pos = 1
    for c, shown, hidden in group_rows:
        n_g = len(shown)
        sec.add(V.group_membership_verdict(
            c, [g[:6] for g in shown], conf, rejected=list(rejected[pos:pos + n_g]),
            adjusted=list(adjusted[pos:pos + n_g]), method=method, hidden=hidden,
            min_group_size=ledger.min_group_size))
        pos += n_g
    # --- private channel: exact AUCs, LiRA, the two-sample test, exact groups, the figure
    auc, lo, hi, _ = auc_delong(s_in, s_out, conf)
    ledger.figure("exact threshold AUC", auc, source="training")
    curves = [(label, s_in, s_out, auc, lo, hi)]
    sec.private_table.append((f"threshold attack ({attack}) AUC, exact, {conf:.0%} "
                              "interval (DeLong)", f"{auc:.3f} [{lo:.3f}, {hi:.3f}]"))
    private_tests = [(label, auc, lo, hi)]
    if ctx["n_ref"] and not ctx["private"]:
        sec.add(V.Verdict("note", "LiRA was not run: its reference models train on the "
                                  "member rows, so its figures belong to the private "
                                  "channel; build the report with include_private_details="
                                  "True to run it."))
    if ctx["n_ref"] and ctx["private"]:
        from ..attacks import lira

        m = min(k, _TEST_ROWS)
        Xall = _concat(take_rows(X, i_in[:m]), take_rows(Xp, i_out[:m]))
        yall = np.r_[y[i_in[:m]], yp[i_out[:m]]]
        members = np.r_[np.ones(m, bool), np.zeros(m, bool)]
        res = lira(est, Xall, yall, members, n_reference_models=int(ctx["n_ref"]),
                   n_jobs=ctx["n_jobs"], verbose=ctx["verbose"], random_state=rng)
        a_in, a_out = res.scores_members, res.scores_nonmembers
        auc2, lo2, hi2, _ = auc_delong(a_in, a_out, conf)
        ledger.figure("LiRA AUC", auc2, source="training")   # reference models saw the rows
        sec.private_table.append((f"LiRA ({ctx['n_ref']} reference models) AUC, "
                                  f"{conf:.0%} interval (DeLong)",
                                  f"{auc2:.3f} [{lo2:.3f}, {hi2:.3f}] ({m:,} members, "
                                  f"{m:,} non-members)"))
        curves.append((f"LiRA ({ctx['n_ref']} refs)", a_in, a_out, auc2, lo2, hi2))
        private_tests.append((f"LiRA ({ctx['n_ref']} reference models)", auc2, lo2, hi2))
    test = _two_sample_test(X, Xp, rng, conf) if ctx["private"] else None
    differs = None
    if not ctx["private"]:
        pass
    elif test is None:
        sec.add_private(V.Verdict("not_checked", "Whether the population rows resemble the "
                                                 "training rows was not checked (fewer than "
                                                 "20 rows a side, or too many sparse "
                                                 "columns)."))
    else:
        t_auc, t_lo, t_hi, t_p, t_n = test
        ledger.figure("two-sample test", t_auc, source="training")
        sec.private_table.append(("two-sample test: held-out AUC of a classifier telling "
                                  "training from population rows",
                                  f"{t_auc:.3f} [{t_lo:.3f}, {t_hi:.3f}], one-sided p = "
                                  f"{t_p:.3g} ({t_n:,} rows)"))
        pv = V.population_verdict(t_auc, t_lo, t_hi, t_p, conf, t_n)
        differs = pv.outcome == "population_differs"
        sec.add_private(pv)
    # per-attack verdicts of the private page: Bonferroni over the attacks (two-sided
    # intervals at level / number of attacks)
    from scipy.stats import norm

    for name, a_, lo_, hi_ in private_tests:
        se = (hi_ - lo_) / (2 * norm.ppf(1 - level / 2))
        z = norm.ppf(1 - level / (2 * len(private_tests)))
        sec.add_private(V.membership_verdict(
            name, a_, a_ - z * se, a_ + z * se, conf, n_members=k, n_nonmembers=k,
            population_differs=differs,
            method=(f"Bonferroni over the {len(private_tests)} attacks of this page"
                    if len(private_tests) > 1 else None)))
    if ctx["private"]:
        tail_rows(ctx, sec, curves)
    if ctx["private"] and ctx.get("curve") is not None:   # strongest attack vs the bound
        from ..privacy._tradeoff import empirical_point, refutes
        points = [(c[0], empirical_point(c[1], c[2], fpr=0.01, confidence=conf))
                  for c in curves]
        name, point = max(points, key=lambda t: t[1]["tpr"])
        ctx["summary"]["empirical_tpr"] = dict(point, attack=name,
                                               refuted=refutes(ctx["curve"], point))
    if ctx["private"] and _have_matplotlib():
        sec.private_figure_png = _roc_figure(curves, conf, rng, ctx.get("curve"))
    return sec


def _count(n):
    """A count on the default page: exact from 10 up, '< 10' below (small groups)."""
    return f"{n:,}" if n >= 10 else "< 10"


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
    """Attribute inversion: every figure goes to the private channel.

    The attacks score training rows with statistics that depend on other training rows
    (the adversary's prior and the model's confusion rates are read from the attacked
    rows; the white-box and regression attacks use every other row), so no per-row bound
    makes their sums accountable; the default page says so.
    """
    if not ctx["cols"]:
        return None
    if not ctx["private"]:
        sec = ReportSection("inversion", "Attribute inversion of the sensitive columns")
        sec.add(V.Verdict("note", "Attribute-inversion figures would be computed on "
                                  "training rows by attacks whose result for one row "
                                  "depends on the other rows, so they belong to the "
                                  "report's private channel, which this report did not "
                                  "compute: build the report with include_private_details"
                                  "=True to run them and see them on a private page."))
        return sec
    sec = _inversion_figures(ctx)
    if sec is None:
        return None
    ctx["ledger"].figure("attribute inversion", sec.table, source="training")
    sec.private_table, sec.table = sec.table, []
    sec.private_verdicts, sec.verdicts = sec.verdicts, []
    sec.private_outcomes, sec.outcomes = sec.outcomes, []
    sec.private_figure_png, sec.figure_png = sec.figure_png, None
    sec.add(V.Verdict("note", "Attribute-inversion figures are computed on training rows "
                              "by attacks whose result for one row depends on the other "
                              "rows, so they are in the report's private channel: build "
                              "the report with include_private_details=True to see them "
                              "on a private page."))
    return sec


def _inversion_figures(ctx):
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

    est, rng, conf = (ctx[k] for k in ("estimator", "rng", "confidence"))
    # the audits retrain the recipe (a clone: hyperparameters only) on the population
    # rows, which the page treats as public: an audit tests the training algorithm, and a
    # DP claim holds for every data set, so the bound needs no training row
    X, y = ctx["Xp"], ctx["yp"]
    sec = ReportSection("audits", "Empirical lower bounds on epsilon")
    if X is None:
        if not ctx["n_canaries"] and not ctx["canary_releases"]:
            return None
        sec.add(V.Verdict("not_checked", "No audit was run: the audits retrain the model's "
                                         "recipe on the population rows (so that the page "
                                         "uses no training row); pass X_population and "
                                         "y_population."))
        return sec
    sec.table.append(("data the audits train on", f"the {n_rows(X):,} population rows "
                                                  "(a clone of the model: its "
                                                  "hyperparameters, not its fit)"))
    bounds = []
    fil = _final_fil(est)
    dense = not is_frame(X) and not hasattr(X, "tocsr")
    claimed = ctx["summary"].get("claimed_epsilon", np.inf)
    if ctx["n_canaries"]:
        template = clone(est)
        if fil is not None and fil is est and dense:
            kw = dict(canaries="fil_worst", attack="whitebox")
        else:
            kw = dict(canaries="mislabel", n_canaries=int(ctx["n_canaries"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = one_run_audit(template, X, y, confidence=conf, random_state=rng, **kw)
        audit_results = [res]
        bounds.append(("one-run audit", res.epsilon_lower_bound))
        sec.table.append(("one-run audit (Steinke, Nasr & Jagielski 2023; add/remove-one "
                          "canaries)",
                          f"{res.epsilon_lower_bound:.3g} ({res.n_correct}/{res.n_guesses} "
                          f"guesses correct, {res.n_canaries} canaries, attack {res.attack})"))
    else:
        audit_results = []
        sec.table.append(("one-run audit", "not run: n_canaries=0"))
    canary_res = None
    canary, why_not = _canary_target(ctx, fil, claimed, X)
    if canary is not None:
        target, Xf, on = canary
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pair = worst_case_neighbours(clone(target), Xf, y, random_state=rng)
            res = canary_audit(clone(target), Xf, y, pair.index, pair.x_replacement,
                               pair.y_replacement, attack=pair.statistic(),
                               n_releases=int(ctx["canary_releases"]), refit=False,
                               confidence=conf, random_state=rng)
        canary_res = res
        audit_results.append(res)
        bounds.append(("canary audit (worst-case pair)", res.epsilon_lower_bound))
        curve = ctx.get("curve")
        if curve is not None:   # the audit's point against the claim's proven curve
            point = res.tpr_at(0.01, confidence=conf)
            above = float(curve.max_tpr(point["fpr_high"])) < point["tpr_low"]
            sec.table.append((
                "canary audit: TPR at 1% FPR against the proven bound",
                f"{point['tpr']:.3g} [{point['tpr_low']:.3g}, {point['tpr_high']:.3g}] "
                f"against at most {float(curve.max_tpr(0.01)):.3g}"
                + (" -- above the proven curve: the claim is refuted" if above else "")))
            if above:
                sec.add(V.Verdict("refuted", "Flag: the canary audit's TPR at 1% FPR lies "
                                             "above the claim's proven trade-off curve at "
                                             f"{conf:.0%} confidence: the claim is "
                                             "refuted."))
        sec.table.append(("canary audit on the worst pair found (replace-one)",
                          f"{res.epsilon_lower_bound:.3g} ({ctx['canary_releases']:,} "
                          f"releases per side; the pair moves the minimiser "
                          f"{pair.ratio:.2f} of sensitivity_; {on})"))
    else:
        sec.table.append(("canary audit on the worst-case pair", f"not run: {why_not}"))
        sec.add(V.Verdict("not_checked", f"The worst-case canary audit did not run: "
                                         f"{why_not}."))
    # the stored-rows test from the page's noisy count is public; the other structural
    # membership tests score training rows: their bounds are private, and the private
    # page's headline counts them
    bounds += ctx.get("structural_public_bounds", [])
    structural = ctx.get("structural_bounds", [])
    if structural:
        every = bounds + structural
        top = max(every, key=lambda b: b[1])
        ctx.setdefault("private_summary", {}).update(
            empirical_epsilon=float(top[1]), empirical_epsilon_source=top[0])
        sec.add_private(V.audit_verdict(claimed, every, conf))
        sec.private_table += [(f"{name} (from the training rows)", f"{eps:.3g}")
                              for name, eps in structural]
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

        curve = ctx.get("curve")
        if canary_res is not None and curve is not None:   # audits against the bound
            from ..attacks import MembershipROCDisplay

            fig, (ax, ax_roc) = plt.subplots(1, 2, figsize=(10.4, max(3.2, 1.2 + 0.55
                                                                        * len(bounds))))
            disp = MembershipROCDisplay.from_canary_audit(
                canary_res, ax=ax_roc, confidence=conf, random_state=0,
                name="canary audit (releases)")
            disp.plot_bound(curve, audits=audit_results)
            ax_roc.legend(fontsize=7, loc="lower right")
        else:
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


def _canary_target(ctx, fil, claimed, X):
    """What the worst-case canary audit runs on, or why it cannot run.

    The audit retrains the recipe on ``X`` (the population rows: public). A bare FIL
    estimator is audited on those rows; a pipeline ending in one is audited on its final
    step, on the rows as the pipeline's own (fitted, held fixed) preprocessing outputs
    them: the final step's DP guarantee is over those rows, and the claim of the whole
    object is at least the final step's.
    Returns ``((estimator, rows, where), None)`` or ``(None, reason)``.
    """
    est = ctx["estimator"]
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
        try:
            Xf = np.asarray(X.toarray() if hasattr(X, "tocsr") else X, dtype=float)
        except (TypeError, ValueError):
            return None, "the population rows have non-numeric columns"
        return (est, Xf, "on the population rows"), None
    try:
        Xf = est[:-1].transform(X)
        Xf = np.asarray(Xf.toarray() if hasattr(Xf, "toarray") else Xf, dtype=float)
    except Exception as exc:  # noqa: BLE001 - the refusal is the reason
        return None, f"the population rows could not be pushed through the preprocessing " \
                     f"({exc})"
    return (fil, Xf, "on the final step, on the population rows as the pipeline's "
                     "preprocessing outputs them"), None


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
