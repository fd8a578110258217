"""One view of a model's privacy: claimed, per-example and empirical, side by side."""

from __future__ import annotations

import base64
import html
import io
import pickle
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone, is_classifier
from sklearn.metrics import roc_auc_score
from sklearn.utils.validation import check_is_fitted

from ..attacks._validation import check_target, is_frame, n_rows, take_rows
from ..exceptions import PrivacyWarning
from ..utils import noise_generator
from ..utils._random import child_seeds


@dataclass
class ReportSection:
    """One section of a :class:`~sklearn_privacy.PrivacyReport`.

    The report's ``sections`` list holds one per applicable part, in the order of the
    page; each carries its conclusions, its figures and the time it took.

    Parameters
    ----------
    key : str
        Identifier (``"claim"``, ``"release"``, ``"fil"``, ``"membership"``,
        ``"inversion"``, ``"audits"``).
    title : str
        Heading.
    verdicts : list of str
        Plain-language conclusions computed from the numbers.
    table : list of tuple
        Rows ``(label, value)`` of the section's figures.
    figure_png : bytes or None
        The section's figure (PNG), when matplotlib is installed.
    seconds : float
        Time the section took to compute.

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


def _auc_interval(s_in, s_out, level=0.95):
    """AUC of the scores with the normal interval of Hanley & McNeil (1982)."""
    from scipy.stats import norm

    y = np.r_[np.ones(s_in.size), np.zeros(s_out.size)]
    auc = float(roc_auc_score(y, np.r_[s_in, s_out]))
    n1, n2 = s_in.size, s_out.size
    q1, q2 = auc / (2 - auc), 2 * auc**2 / (1 + auc)
    var = (auc * (1 - auc) + (n1 - 1) * (q1 - auc**2) + (n2 - 1) * (q2 - auc**2)) / (n1 * n2)
    half = float(norm.ppf(0.5 + level / 2) * np.sqrt(max(var, 0.0)))
    return auc, max(0.0, auc - half), min(1.0, auc + half)


class PrivacyReport:
    """Can I publish this model? Its claimed, per-example and empirical privacy in one view.

    Build it with :meth:`from_estimator`; render it with :meth:`save_html` (one
    self-contained HTML page, figures embedded, no network), ``_repr_html_`` (notebooks)
    or :meth:`plot` (a matplotlib summary figure). Each section is present when it
    applies to the model:

    * **claim** -- what is claimed for the object as published
      (:func:`sklearn_privacy.privacy_claim`: every step with its reason);
    * **release** -- what the pickled object holds (size, fitted attributes, whether
      :func:`~sklearn_privacy.utils.strip_for_release` accepts it, whether training rows
      appear verbatim in the pickle);
    * **fil** -- per-example Fisher information loss (the distribution of ``eta``, the
      most exposed rows by the caller's index, per-attribute eta of the sensitive
      columns) for FIL models, or for scikit-learn GLMs through
      :func:`sklearn_privacy.fil.audit` at a given ``sigma``;
    * **membership** -- a threshold membership attack (members: the training rows;
      non-members: the population rows) and, with reference models, LiRA; AUC with its
      normal ``confidence`` interval (Hanley & McNeil) against the chance level 0.5, ROC
      on log axes with a bootstrap band and the resolution limit ``1 / n_nonmembers``
      marked;
    * **inversion** -- attribute inversion of each sensitive column (white-box for FIL
      models, black-box Fredrikson otherwise) against the prior baseline;
    * **audits** -- empirical lower bounds on epsilon: the one-run audit (any model,
      one extra fit) and, for the library's DP mechanisms with a finite claim, a canary
      audit on the worst-case neighbouring pair.

    Attacks and audits are lower bounds on what leaks: a model they cannot break may
    still leak to a stronger adversary. Only the claim (when finite) is a guarantee.

    Parameters
    ----------
    sections : list of ReportSection
        The computed sections.
    estimator_name : str
        Name shown in the title.
    summary : dict
        ``claimed_epsilon``, ``claimed_delta``, ``max_eta`` (or None),
        ``empirical_epsilon`` (the best audit bound) and ``confidence``.

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
    ['claim', 'release', 'membership', 'audits']
    >>> report.summary["claimed_epsilon"]
    inf
    """

    def __init__(self, sections, *, estimator_name="model", summary=None):
        self.sections = list(sections)
        self.estimator_name = estimator_name
        self.summary = dict(summary or {})

    # ------------------------------------------------------------------ building
    @classmethod
    def from_estimator(cls, estimator, X_train, y_train, X_population=None,
                       y_population=None, *, sensitive_columns=None, sigma=None,
                       n_reference_models: int = 0, n_canaries: int = 1000,
                       canary_releases: int = 20_000, top_k: int = 10,
                       confidence: float = 0.95, n_jobs=None, verbose: int = 0,
                       random_state=None, name: str | None = None) -> PrivacyReport:
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
        sensitive_columns : str, int or list, optional
            Input features (names of a frame, or positions) for per-attribute eta and
            attribute inversion.
        sigma : float, optional
            For a scikit-learn GLM (``LogisticRegression``, ``Ridge``, ...): the noise
            of a hypothetical output-perturbed release, audited through
            :func:`sklearn_privacy.fil.audit`.
        n_reference_models : int, default=0
            Reference models for LiRA (0: the threshold attack only).
        n_canaries : int, default=1000
            Canaries of the one-run audit (0 skips it).
        canary_releases : int, default=20000
            Releases per side of the canary audit of a FIL DP release (0 skips it).
        top_k : int, default=10
            Most exposed rows listed.
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
        if sensitive_columns is not None and not isinstance(sensitive_columns, list | tuple):
            sensitive_columns = [sensitive_columns]
        rng = np.random.default_rng(int(child_seeds(noise_generator(random_state), 1)[0]))
        name = name or type(estimator).__name__
        ctx = dict(estimator=estimator, X=X_train, y=y_train, Xp=X_population,
                   yp=y_population, cols=sensitive_columns or [], sigma=sigma,
                   n_ref=n_reference_models, n_canaries=n_canaries,
                   canary_releases=canary_releases, top_k=top_k, confidence=confidence,
                   n_jobs=n_jobs, verbose=verbose, rng=rng, summary={})
        sections = []
        for builder in (_claim_section, _release_section, _fil_section,
                        _membership_section, _inversion_section, _audit_section):
            t = time.perf_counter()
            if verbose:
                print(f"[PrivacyReport] {builder.__name__[1:-8]} ...", flush=True)
            section = builder(ctx)
            if section is not None:
                section.seconds = time.perf_counter() - t
                sections.append(section)
        return cls(sections, estimator_name=name, summary=ctx["summary"])

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
        if s.get("max_eta") is not None:
            out.append(("largest per-example eta", _fmt(s["max_eta"])))
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
            f"<title>Privacy report: {e(self.estimator_name)}</title>",
            "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;"
            "padding:0 1em;color:#222}h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;"
            "padding-bottom:.2em;margin-top:1.6em}table{border-collapse:collapse;"
            "margin:.5em 0}td{border:1px solid #ddd;padding:.25em .6em}"
            "td:first-child{color:#555}.verdict{background:#f4f7fb;border-left:4px solid "
            "#3465a4;padding:.4em .8em;margin:.4em 0}.head td{font-size:1.15em}"
            "img{max-width:100%}.time{color:#888;font-size:.85em}</style></head><body>",
            f"<h1>Privacy report: {e(self.estimator_name)}</h1>",
            "<table class='head'>",
        ]
        for k, v in self._headline():
            parts.append(f"<tr><td>{e(k)}</td><td><b>{e(v)}</b></td></tr>")
        parts.append("</table>")
        for s in self.sections:
            parts.append(f"<h2>{e(s.title)}</h2>")
            for v in s.verdicts:
                parts.append(f"<div class='verdict'>{e(v)}</div>")
            if s.table:
                parts.append("<table>")
                for k, v in s.table:
                    parts.append(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>")
                parts.append("</table>")
            if s.figure_png:
                b64 = base64.b64encode(s.figure_png).decode("ascii")
                parts.append(f"<img alt='{e(s.title)}' src='data:image/png;base64,{b64}'>")
            parts.append(f"<div class='time'>computed in {s.seconds:.1f} s</div>")
        parts.append("</body></html>")
        return "\n".join(parts)

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
        return (f"PrivacyReport({self.estimator_name}: {head}; sections "
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
        fig.suptitle(f"{self.estimator_name}: " + "; ".join(
            f"{k} {v}" for k, v in self._headline()), fontsize=12)
        fig.tight_layout()
        return fig


# ---------------------------------------------------------------------- sections
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
    if np.isfinite(eps):
        sec.verdicts.append(f"The published object is claimed ({eps:.3g}, {dlt:.2g})-"
                            "differentially private with respect to one training row.")
    else:
        sec.verdicts.append("No differential-privacy guarantee is claimed for the published "
                            "object (epsilon = inf); the sections below measure what leaks.")
    return sec


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
    found = 0
    if not is_frame(X) and not hasattr(X, "tocsr"):
        A = np.asarray(X)
        if A.dtype.kind == "f":
            rows = ctx["rng"].choice(A.shape[0], size=min(50, A.shape[0]), replace=False)
            found = sum(np.ascontiguousarray(A[i], dtype=np.float64).tobytes() in blob
                        for i in rows)
            sec.table.append(("training rows found verbatim in the pickle",
                              f"{found} of {rows.size} sampled"))
    if found:
        sec.verdicts.append(f"{found} sampled training rows appear byte for byte in the "
                            "pickle: publishing it publishes them.")
    else:
        sec.verdicts.append("No sampled training row appears verbatim in the pickle.")
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
    from ..fil._feature_maps import feature_map

    fmap = feature_map(model)
    if fmap.refusals:
        return ("the features entering the final step (not the raw inputs: "
                + "; ".join(fmap.refusals) + ")",
                "in the units of the features entering the final step")
    return ("the raw inputs (each numeric column in its own units, each encoded "
            "categorical column as its one-hot values), through the derivative of the "
            "preprocessing", "in the units of the raw columns")


def _fil_section(ctx):
    from .. import fil

    model, why = _fil_model(ctx)
    if model is None:
        if why:
            return ReportSection("fil", "Per-example Fisher information loss",
                                 verdicts=[f"Not computed: {why}"])
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
        # the view is stated in the table; a published row is flagged below (eta inf)
        warnings.simplefilter("ignore", PrivacyWarning)
        eta = np.asarray(fil.eta(model, per_example=True, X=X))
    published = np.flatnonzero(np.isinf(eta))
    if published.size:
        sec.verdicts.append(
            f"The preprocessing publishes {published.size} training rows verbatim "
            "(Nystroem components_): their eta is infinite whatever the noise.")
    ctx["summary"]["max_eta"] = float(eta.max())
    labels = np.asarray(X.index) if is_frame(X) else np.arange(eta.size)
    order = np.argsort(-eta)[: ctx["top_k"]]
    sec.table += [("rows", eta.size), ("median eta", _fmt(float(np.median(eta)))),
                  ("95th percentile", _fmt(float(np.quantile(eta, 0.95)))),
                  ("largest eta", _fmt(float(eta.max())))]
    sec.table.append(("most exposed rows (index: eta)",
                      ", ".join(f"{labels[i]}: {eta[i]:.3g}" for i in order)))
    per_attr = {}
    for c in ctx["cols"]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyWarning)
                per_attr[c] = np.asarray(fil.eta(model, columns=c, per_example=True, X=X))
            sec.table.append((f"eta of '{c}' (median / max)",
                              f"{np.median(per_attr[c]):.3g} / {per_attr[c].max():.3g}"))
        except (TypeError, ValueError) as exc:
            sec.table.append((f"eta of '{c}'", f"not computed: {exc}"))
    sec.verdicts.append(
        f"An unbiased adversary who knows every other training value estimates a row's "
        f"values with standard deviation at least 1/eta: for the most exposed row "
        f"1/{eta.max():.3g} = {1 / eta.max():.3g} ({units}); "
        f"half of the rows have eta below {np.median(eta):.3g}.")
    if _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        ax.hist(eta, bins=60, color="#3465a4", alpha=0.85, label="every feature and label")
        for c, v in per_attr.items():
            ax.hist(v, bins=60, alpha=0.5, label=f"'{c}'")
        ax.set_xlabel("per-example eta")
        ax.set_ylabel("rows")
        ax.legend(fontsize=8)
        sec.figure_png = _figure_png(fig)
    return sec


def _scores(est, X, y):
    from ..attacks import membership_scores

    attack = "loss" if not (is_classifier(est) and hasattr(est, "predict_proba")) \
        else "confidence"
    return membership_scores(est, X, y, attack=attack), attack


def _membership_section(ctx):
    if ctx["Xp"] is None:
        return None
    est, X, y, Xp, yp, rng = (ctx[k] for k in ("estimator", "X", "y", "Xp", "yp", "rng"))
    sec = ReportSection("membership", "Membership inference")
    # equal-size evaluation sets: a random subset of the larger side
    k = min(n_rows(X), n_rows(Xp))
    i_in = rng.choice(n_rows(X), size=k, replace=False)
    i_out = rng.choice(n_rows(Xp), size=k, replace=False)
    s_in, attack = _scores(est, take_rows(X, i_in), y[i_in])
    s_out, _ = _scores(est, take_rows(Xp, i_out), yp[i_out])
    auc, lo, hi = _auc_interval(s_in, s_out, ctx["confidence"])
    curves = [(f"threshold ({attack})", s_in, s_out)]
    sec.table.append((f"threshold attack ({attack}) AUC, {ctx['confidence']:.0%} interval",
                      f"{auc:.3f} [{lo:.3f}, {hi:.3f}] (chance 0.5; {k} members, "
                      f"{k} non-members)"))
    verdict_auc = [(auc, lo, hi, "threshold")]
    if ctx["n_ref"]:
        from ..attacks import lira

        Xall = _concat(take_rows(X, i_in), take_rows(Xp, i_out))
        yall = np.r_[y[i_in], yp[i_out]]
        members = np.r_[np.ones(k, bool), np.zeros(k, bool)]
        res = lira(est, Xall, yall, members, n_shadow=int(ctx["n_ref"]),
                   n_jobs=ctx["n_jobs"], verbose=ctx["verbose"], random_state=rng)
        a_in, a_out = res.scores_members, res.scores_nonmembers
        auc2, lo2, hi2 = _auc_interval(a_in, a_out, ctx["confidence"])
        sec.table.append((f"LiRA ({ctx['n_ref']} reference models) AUC",
                          f"{auc2:.3f} [{lo2:.3f}, {hi2:.3f}]"))
        curves.append((f"LiRA ({ctx['n_ref']} refs)", a_in, a_out))
        verdict_auc.append((auc2, lo2, hi2, "LiRA"))
    best = max(verdict_auc, key=lambda t: t[1])
    if best[1] > 0.5:
        sec.verdicts.append(f"Membership leaks: the {best[3]} attack's AUC {best[0]:.3f} "
                            f"is above chance (interval [{best[1]:.3f}, {best[2]:.3f}]).")
    else:
        sec.verdicts.append(f"No attack tried here tells members from non-members better "
                            f"than chance at this sample size (best AUC {best[0]:.3f}, "
                            f"interval [{best[1]:.3f}, {best[2]:.3f}] contains 0.5).")
    if _have_matplotlib():
        import matplotlib.pyplot as plt

        from ..attacks import MembershipROCDisplay

        fig, ax = plt.subplots(figsize=(6.4, 4.6))
        for i, (label, a, b) in enumerate(curves):
            # log-log ROC with its 95 % bootstrap band, the chance level (once) and the
            # FPRs below 1 / n_nonmembers shaded as unresolved
            MembershipROCDisplay.from_predictions(
                np.r_[np.ones(a.size), np.zeros(b.size)], np.r_[a, b], name=label, ax=ax,
                plot_chance_level=(i == 0), confidence=ctx["confidence"], n_resamples=200,
                random_state=0)
        sec.figure_png = _figure_png(fig)
    return sec


def _concat(A, B):
    if is_frame(A):
        import pandas as pd

        return pd.concat([A, B], axis=0, ignore_index=True)
    if hasattr(A, "tocsr"):
        import scipy.sparse as sp

        return sp.vstack([A, B], format="csr")
    return np.concatenate([np.asarray(A), np.asarray(B)])


def _inversion_section(ctx):
    if not ctx["cols"]:
        return None
    from ..attacks import fredrikson_inversion, prior_baseline, whitebox_inversion

    est, X, y, rng = ctx["estimator"], ctx["X"], ctx["y"], ctx["rng"]
    sec = ReportSection("inversion", "Attribute inversion of the sensitive columns")
    fil_model, _ = _fil_model(ctx)
    rows = rng.choice(n_rows(X), size=min(1000, n_rows(X)), replace=False)
    bars = []
    for c in ctx["cols"]:
        try:
            base = prior_baseline(take_rows(X, rows), c).accuracy
        except (TypeError, ValueError) as exc:
            sec.table.append((f"'{c}'", f"not attacked: {exc}"))
            continue
        res = None
        if fil_model is not None and fil_model is est:
            try:
                res = whitebox_inversion(est, c, rows=rows, prior="empirical", X=X,
                                         random_state=rng)
                kind = "white-box (release + all other values)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}' white-box", f"not attacked: {exc}"))
        if res is None:
            try:
                res = fredrikson_inversion(est, take_rows(X, rows), y[rows], c)
                kind = "black-box (Fredrikson)"
            except (TypeError, ValueError) as exc:
                sec.table.append((f"'{c}'", f"not attacked: {exc}"))
                continue
        sec.table.append((f"'{c}' {kind} accuracy",
                          f"{res.accuracy:.3f} vs prior baseline {base:.3f} "
                          f"({rows.size} rows)"))
        bars.append((str(c), res.accuracy, base))
        gain = res.accuracy - base
        sec.verdicts.append(
            f"'{c}': the attack {'beats' if gain > 0.01 else 'does not beat'} guessing the "
            f"most frequent value ({res.accuracy:.3f} vs {base:.3f}).")
    if bars and _have_matplotlib():
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.2, 3.4))
        xs = np.arange(len(bars))
        ax.bar(xs - 0.2, [b[1] for b in bars], 0.4, label="attack")
        ax.bar(xs + 0.2, [b[2] for b in bars], 0.4, label="prior baseline")
        ax.set_xticks(xs, [b[0] for b in bars])
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=8)
        sec.figure_png = _figure_png(fig)
    return sec


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
            kw = dict(canaries="fil_worst", score="whitebox")
        else:
            kw = dict(canaries="mislabel", X_canaries=ctx["Xp"], y_canaries=ctx["yp"],
                      n_canaries=int(ctx["n_canaries"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = one_run_audit(template, X, y, confidence=conf, random_state=rng, **kw)
        bounds.append(("one-run audit", res.epsilon_lower_bound))
        sec.table.append(("one-run audit (Steinke, Nasr & Jagielski 2023)",
                          f"{res.epsilon_lower_bound:.3g} ({res.n_correct}/{res.n_guesses} "
                          f"guesses correct, {res.n_canaries} canaries, score {res.score})"))
    if fil is not None and fil is est and dense and np.isfinite(claimed) \
            and ctx["canary_releases"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pair = worst_case_neighbours(clone(est), X, y, random_state=rng)
            res = canary_audit(clone(est), X, y, pair.index, pair.x_replacement,
                               pair.y_replacement, statistic=pair.statistic(),
                               n_releases=int(ctx["canary_releases"]), refit=False,
                               confidence=conf, random_state=rng)
        bounds.append(("canary audit (worst-case pair)", res.epsilon_lower_bound))
        sec.table.append(("canary audit on the worst pair found",
                          f"{res.epsilon_lower_bound:.3g} ({ctx['canary_releases']:,} "
                          f"releases per side; the pair moves the minimiser "
                          f"{pair.ratio:.2f} of sensitivity_)"))
    if not bounds:
        return None
    best_name, best = max(bounds, key=lambda t: t[1])
    ctx["summary"]["empirical_epsilon"] = float(best)
    ctx["summary"]["confidence"] = conf
    if np.isfinite(claimed):
        word = "is refuted" if best > claimed else "is not refuted"
        sec.verdicts.append(f"The claimed epsilon = {claimed:.3g} {word}: best audit "
                            f"{best:.3g} at {conf:.0%} ({best_name}).")
    elif best > 0:
        sec.verdicts.append(f"Without a claim, the audits show the training is not "
                            f"epsilon-DP for any epsilon below {best:.3g} "
                            f"(at {conf:.0%}, {best_name}).")
    else:
        sec.verdicts.append(f"The audits found no evidence of leakage at {conf:.0%} (lower "
                            "bound 0): this proves nothing about privacy, and nothing is "
                            "claimed.")
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
