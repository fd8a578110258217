"""Iteratively reweighted Fisher information loss (IRFIL): equal leakage across individuals."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..exceptions import PrivacyWarning
from ..utils._warnings import warn_user
from ..utils.fixes import Interval
from ._base import BaseFILEstimator
from ._classification import FILLogisticRegression
from ._eta._engine import check_sigma_scaled
from ._params import DP_ATTRS_DOC, DP_PARAMS_DOC, DP_PARAMS_LSQ_DOC
from ._regression import FILLinearRegression

_IRFIL_DOC = """
    IRFIL (Hannun, Guo & van der Maaten, 2021, Algorithm 1) reweights the examples
    up to ``eta_max_iter`` times. Starting from weights :math:`\\omega^0` (1, or ``sample_weight``),
    iteration :math:`t` fits :math:`\\theta^t = \\arg\\min \\sum_i \\omega^{{t-1}}_i
    \\ell_i(\\theta) + n\\alpha/2 \\lVert w \\rVert^2` (warm-started from
    :math:`\\theta^{{t-1}}`), computes the weighted per-example FIL :math:`\\eta_i`
    (Hessian with the weights, :math:`J_i` with the factor :math:`\\omega_i`) and updates
    :math:`\\omega_i \\leftarrow n (\\omega_i/\\eta_i) / \\sum_j (\\omega_j/\\eta_j)`.
    The fixed point has every :math:`\\eta_i` equal. After the last update one more fit
    with the final weights :math:`\\omega^T` is made (so ``sample_weight_``, ``eta_`` and
    the released model agree; the paper's listing computes :math:`\\omega^T` and releases
    the fit of :math:`\\omega^{{T-1}}`). The released model is that fit plus one draw of
    :math:`\\mathcal N(0, \\sigma^2 I)`; noise is drawn once.

    ``sample_weight`` counts individuals: a row of weight :math:`s_i` stands for
    :math:`s_i` identical people, so the quantity equalised is the per-individual eta
    :math:`\\eta_i / s_i` and :math:`n = \\sum_i s_i` (with unit weights this is exactly the
    paper's algorithm; with integer weights it equals IRFIL on the duplicated rows). Rows
    of weight 0 keep weight 0.

    Parameters
    ----------
    sigma : float, default=1.0
        Standard deviation of the Gaussian noise added to every released parameter.
    alpha : float, default={alpha_default}
        L2 penalty, the FIL paper's :math:`\\lambda` (penalty ``n alpha / 2 ||w||^2``).
        The penalty is per-sample: the objective is the (weighted) mean loss plus
        ``alpha / 2 ||w||^2``, so ``FILLinearRegression(alpha=a)`` has the minimiser of
        ``Ridge(alpha=n_samples * a)``, ``FILLogisticRegression(alpha=a)`` that of
        ``LogisticRegression(C=1 / (n_samples * a))`` and ``FILPoissonRegressor(alpha=a)``
        that of ``PoissonRegressor(alpha=a)`` (``n_samples``: the total sample weight).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (it is perturbed too).
{extra_params}    eta_max_iter : int, default=10
        Maximum number of reweighting iterations :math:`T` (at least 1); at most
        ``T + 1`` weighted fits.
    eta_tol : float or None, default=None
        Equalisation tolerance: stop the reweighting early once the coefficient of
        variation std(eta)/mean(eta) of the equalised eta is at most ``eta_tol``
        (``None``: run all ``eta_max_iter`` iterations).
    sensitive_features : None, int, str or array-like of int / str, default=None
        ``None`` equalises the example-level eta (all features and the label). A set of
        column indices (``n_features_in_`` is the label) or names of
        ``feature_names_in_`` (``"label"`` for the label; resolved at fit) equalises the
        attribute-level eta of those columns, e.g. a one-hot sensitive attribute. As the
        last step of a pipeline with ``set_output(transform="pandas")``, an original
        feature name (``"sex"``) resolves to its encoded columns
        (``"onehotencoder__sex_Female"``, ...), checked to be one feature's one-hot
        encoding; see ``sensitive_feature_indices_``.
    constrained : bool, default=False
        With a one-hot ``sensitive_features`` block: use the constrained attribute eta (changes
        that move an individual between the encoded levels).
    store_eta : bool, default=False
        Keep the full per-example eta array of every iteration in ``eta_history_``.
    weight_bounds : None or (float, float), default=None
        Floor and cap ``(low, high)`` on every individual's weight, as multiples of the
        mean weight (``0 <= low <= 1 <= high``), enforced after every reweighting (clip,
        rescale to the same total, repeat). Equalising eta can otherwise drive the weights
        of whole groups to zero or pile them on a few people, so that one person's
        whole-row eta grows by orders of magnitude while the equalised one shrinks (on
        2,000 Adult rows with ``sensitive_features`` the race columns, the largest whole-row eta
        grew about 500 times; see ``benchmarks/RESULTS.md``); bounds such as ``(0.1,
        10)`` trade exact equalisation for that. ``None``: no bound (the paper's
        algorithm). With ``sensitive_features``, a fit whose largest whole-row eta grows
        more than 1.1 times over the unweighted fit, or whose attribute eta's std/mean
        ends above ``eta_tol`` (without it: above half the unweighted fit's; not
        equalised, e.g. because the bounds bind), warns with those figures
        (:class:`~sklearn_privacy.exceptions.PrivacyWarning`).
{dp_params}    verbose : int, default=0
        ``1`` or more prints one line per iteration: the equalised eta's mean and maximum
        (at ``sigma``) and its coefficient of variation std/mean.
    random_state : int, RandomState instance, Generator or None, default=None
        Source of the noise. ``None`` draws from fresh OS entropy (required for a private
        release); a fixed seed makes the release reproducible and non-private. An
        instance is copied by :func:`~sklearn.base.clone`, so clones draw the same noise:
        fitting with one emits a :class:`~sklearn_privacy.exceptions.PrivacyWarning`.
{tol_param}
    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Released (noise-perturbed) coefficients of the last fit.
    intercept_ : float
        Released intercept (0.0 when ``fit_intercept=False``).
    sample_weight_ : ndarray of shape (n_samples,)
        Final weights :math:`\\omega` (those of the released model).
    sensitive_feature_indices_ : ndarray of int or None
        The columns ``sensitive_features`` resolved to (indices of the input; ``n_features_in_``
        is the label), None without ``sensitive_features``. An original feature name behind a
        pandas-output ColumnTransformer (``"sex"``) resolves to its encoded columns.
    effective_sample_size_ : float
        Kish's effective sample size of the final weights, :math:`(\\sum_i \\omega_i)^2
        / \\sum_i \\omega_i^2 / s_i` (``n`` for equal weights; small when a few
        people carry the weight).
    max_weight_share_ : float
        The largest individual's share of the total weight (``1 / n`` for equal
        weights).
    max_eta_ratio_ : float
        Largest whole-row eta of the released model over that of the unweighted fit:
        above 1, reweighting made someone more exposed. A fit whose effective sample
        size is under a tenth of ``n``, whose largest individual weighs more than 100
        average ones, or whose ``max_eta_ratio_`` exceeds 10 warns with these figures
        (:class:`~sklearn_privacy.exceptions.PrivacyWarning`); ``weight_bounds`` limits
        them. Audit state, removed by :func:`~sklearn_privacy.utils.strip_for_release`.
    n_iter_ : int
        Number of reweighting iterations run (fewer than ``eta_max_iter`` when
        ``eta_tol`` stopped the loop: then data-dependent). Audit state: not pickled,
        removed by :func:`~sklearn_privacy.utils.strip_for_release`.
    eta_history_ : dict of ndarray
        ``"mean"``, ``"std"``, ``"max"``, ``"min"`` and ``"cv"`` (std/mean) of the
        equalised per-individual eta, one entry per fit (entry ``t`` describes the fit with
        :math:`\\omega^{{t}}`: entry 0 is the unweighted model, the last entry the released
        one), and ``"eta"`` of shape ``(n_iter_ + 1, n_samples)`` when ``store_eta``.
    eta_ : ndarray of shape (n_samples,)
        Per-example (all attributes and label) Fisher information loss of the released
        model (audit state, not serialised).
{dp_attrs}    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    {base} : The unweighted estimator.
    sklearn_privacy.fil.EtaDisplay : Plots ``eta_history_`` and the eta distribution.

    Notes
    -----
    **What IRFIL guarantees.** The reported eta are those of the released model, under the
    FIL threat model of :class:`{base}` (unbiased adversary who knows every other training
    value; Cramér-Rao bound :math:`\\mathrm{{Var}} \\geq 1/\\eta^2`). IRFIL makes them
    equal across individuals (up to ``eta_tol`` or the iteration budget, see
    ``eta_history_["cv"]``); it does not lower the largest eta by itself -- pick ``sigma``
    for that (:meth:`sigma_for_eta`).

    **What it does not guarantee.** The weights are a function of the data. As in the
    paper, the eta of the released model are computed treating the final weights as
    fixed constants; the information the data leak *through the weights* (a change of
    one row changes every weight) is not accounted for, so the reported eta are not a
    bound for an adversary who differentiates through the reweighting. For the same
    reason there is no (epsilon, delta)-DP guarantee: ``epsilon_`` is always ``inf``
    (``data_norm`` still scales the rows). The audit state
    (training data, weights, minimiser, Hessian) is never serialised; ``sample_weight_``
    is part of the fitted estimator and *is* data-dependent -- drop it before releasing a
    model if the weights themselves are sensitive.
"""


class _IRFILMixin:
    """Algorithm 1 on top of a FIL estimator (shared by both models)."""

    _data_dependent_weights = True

    # no epsilon (the reweighting has no DP view), a numeric sigma and alpha, delta in (0, 1)
    _base_noise_constraints: dict = {
        k: BaseFILEstimator._parameter_constraints[k] for k in ("sigma", "alpha", "delta")}

    _irfil_constraints: dict = {
        "eta_max_iter": [Interval(Integral, 1, None, closed="left")],
        "eta_tol": [Interval(Real, 0, None, closed="left"), None],
        "sensitive_features": ["array-like", str, Integral, None],
        "constrained": ["boolean"],
        "store_eta": ["boolean"],
        "weight_bounds": [tuple, list, None],
        "verbose": ["verbose"],
    }

    def _fit(self, X, y, sample_weight):
        theta, _ = self._irfil_fit(X, y, sample_weight)
        return theta

    def _check_sensitive_features(self, X=None):
        """Resolve ``sensitive_features`` (indices or names of ``feature_names_in_``) at fit."""
        if self.sensitive_features is None:
            if self.constrained:
                raise ValueError(
                    "constrained=True needs sensitive_features: pass the one-hot columns of the "
                    "attribute to equalise."
                )
            self._sensitive_columns = self.sensitive_feature_indices_ = None
            return
        self._sensitive_columns = self._resolve_columns(self.sensitive_features,
                                                        param="sensitive_features",
                                                        X=X)
        self.sensitive_feature_indices_ = self._sensitive_columns

    def _history_scaled(self, values):
        with np.errstate(over="ignore", under="ignore"):
            out = values / self.sigma
        return check_sigma_scaled(out, np.max(values, initial=0.0), self.sigma,
                                  "eta_history_")

    def _check_weight_bounds(self):
        if self.weight_bounds is None:
            return None
        try:
            low, high = (float(v) for v in self.weight_bounds)
        except (TypeError, ValueError):
            raise ValueError(
                f"weight_bounds must be None or a pair (low, high) of multiples of the mean "
                f"weight; got {self.weight_bounds!r}.") from None
        if not (0.0 <= low <= 1.0 <= high and np.isfinite(high)):
            raise ValueError(
                f"weight_bounds=(low, high) needs 0 <= low <= 1 <= high < inf (multiples of "
                f"the mean weight, so that equal weights are allowed); got "
                f"{self.weight_bounds!r}.")
        return low, high

    @staticmethod
    def _bounded_weights(omega, s, pos, total, bounds):
        """Weights clipped to ``bounds`` times the mean individual weight, same total."""
        if bounds is None:
            return omega
        low, high = bounds
        mean = total / s[pos].sum()
        w = omega.copy()
        for _ in range(200):
            per = np.zeros_like(w)
            per[pos] = np.clip(w[pos] / s[pos], low * mean, high * mean)
            w = per * s
            w *= total / w.sum()
            inside = (w[pos] / s[pos] >= low * mean * (1 - 1e-9)) & (
                w[pos] / s[pos] <= high * mean * (1 + 1e-9))
            if np.all(inside):
                break
        return w

    @staticmethod
    def _whole_max(engine, eta_row, columns, s, pos):
        """Largest per-individual whole-row eta (all features and the label)."""
        whole = eta_row if columns is None else np.sqrt(engine.per_example_sq_norms())
        return float(np.max(whole[pos] / s[pos]))

    def _weight_diagnostics(self, omega, s, pos, eta_first, eta_last):
        """Fitted concentration figures, and a warning when the weights concentrate."""
        ind = omega[pos] / s[pos]
        total = omega.sum()
        n = s[pos].sum()
        self.effective_sample_size_ = float(total**2 / np.sum(ind**2 * s[pos]))
        self.max_weight_share_ = float(ind.max() / total)
        self.max_eta_ratio_ = float(eta_last / eta_first) if eta_first > 0 else 1.0
        reasons = []
        if self.effective_sample_size_ < 0.1 * n:
            reasons.append(f"effective sample size {self.effective_sample_size_:.3g} of "
                           f"{n:.0f}")
        if self.max_weight_share_ > 100.0 / n:
            reasons.append(f"one individual carries {self.max_weight_share_:.1%} of the "
                           f"total weight ({self.max_weight_share_ * n:.3g} times the mean)")
        if self.max_eta_ratio_ > 10.0:
            reasons.append(f"the largest whole-row eta grew {self.max_eta_ratio_:.3g} times "
                           "over the unweighted fit")
        if reasons:
            warn_user(
                f"{type(self).__name__}: the reweighting concentrates: " + "; ".join(reasons)
                + ". Equalising eta this way trades some people's privacy for the others'. "
                "Bound the weights with weight_bounds=(low, high), e.g. (0.1, 10), or "
                "equalise fewer columns.", PrivacyWarning)

    def _attribute_diagnostics(self, cv, n_iter, omega, s, pos, bounds):
        """Warn when equalising an attribute's eta raised the whole-row eta, or did not
        equalise the attribute (within ``weight_bounds``), with the figures."""
        reasons = []
        if _ATTRIBUTE_GROWTH < self.max_eta_ratio_ <= 10.0:   # above 10: said already
            reasons.append(f"the largest whole-row eta (every feature and the label) grew "
                           f"{self.max_eta_ratio_:.3g} times over the unweighted fit")
        target = (float(self.eta_tol) if self.eta_tol is not None
                  else _ATTRIBUTE_SHRINK * cv[0])
        if cv[-1] > target:
            goal = ("eta_tol" if self.eta_tol is not None
                    else f"{_ATTRIBUTE_SHRINK:g} of where it started")
            text = (f"the attribute's eta is not equalised: its std/mean went from "
                    f"{cv[0]:.3g} to {cv[-1]:.3g} in {n_iter} iteration(s), above "
                    f"{target:.3g} ({goal})")
            if bounds is not None:
                ind = omega[pos] / s[pos]
                mean = omega.sum() / s[pos].sum()
                at = int(np.sum(ind <= bounds[0] * mean * (1 + 1e-6))
                         + np.sum(ind >= bounds[1] * mean * (1 - 1e-6)))
                text += (f"; {at} of {int(pos.sum())} individuals' weights are at "
                         f"weight_bounds=({bounds[0]:g}, {bounds[1]:g})")
            reasons.append(text)
        if reasons:
            warn_user(
                f"{type(self).__name__} with sensitive_features: " + "; ".join(reasons)
                + ". Equalising one attribute this way does not protect the whole row: "
                "compare eta_ with the unweighted fit's, raise eta_max_iter, widen or drop "
                "weight_bounds, or equalise the whole-row eta (sensitive_features=None).",
                PrivacyWarning)

    def _irfil_fit(self, X, y, s):
        """Run Algorithm 1; ``s`` are the validated user weights (individual counts)."""
        self._check_sensitive_features(X)
        bounds = self._check_weight_bounds()
        self.__dict__.pop("_eta_cache", None)
        pos = s > 0
        n_ind = s.sum()
        omega = s.copy()
        theta = None
        columns = None if self.sensitive_features is None else self._sensitive_columns
        verbose = getattr(self, "verbose", 0)
        stats = {k: [] for k in ("mean", "std", "max", "min", "cv")}
        etas = []
        for t in range(int(self.eta_max_iter) + 1):
            # Newton warm-started from the previous minimiser (the eigenvalue solver
            # starts from Rayleigh-Ritz bounds, closer than the previous iteration's eta)
            theta, n_newton, engine = self._fit_exact(X, y, omega, theta_init=theta)
            eta_row = np.sqrt(engine.per_example_sq_norms(columns,
                                                          constrained=self.constrained))
            if t == 0:
                first_whole_max = self._whole_max(engine, eta_row, columns, s, pos)
            eta_ind = np.zeros_like(eta_row)
            eta_ind[pos] = eta_row[pos] / s[pos]
            e = eta_ind[pos]
            w_ind = s[pos]
            mean = np.average(e, weights=w_ind)
            std = np.sqrt(np.average((e - mean) ** 2, weights=w_ind))
            cv = std / mean if mean > 0 else 0.0
            for key, value in (("mean", mean), ("std", std), ("max", e.max()),
                               ("min", e.min()), ("cv", cv)):
                stats[key].append(value)
            if self.store_eta:
                etas.append(self._history_scaled(eta_ind))
            if verbose:
                scale = 1.0 / self.sigma
                print(f"[{type(self).__name__}] iteration {t}/{int(self.eta_max_iter)}: eta mean "
                      f"{mean * scale:.6g}, max {e.max() * scale:.6g}, cv {cv:.4g}"
                      + (f", Newton steps {n_newton}" if n_newton else ""), flush=True)
            if t == int(self.eta_max_iter) or (self.eta_tol is not None
                                     and stats["cv"][-1] <= self.eta_tol):
                break
            if np.any(e <= 0):
                raise ValueError(
                    "Some examples have zero Fisher information loss for the equalised "
                    "columns, so IRFIL cannot reweight them (the update divides by eta). "
                    "Choose sensitive_features that every example's fit depends on."
                )
            ratio = np.zeros_like(omega)
            ratio[pos] = omega[pos] / eta_ind[pos]
            omega = self._bounded_weights(n_ind * ratio / ratio.sum(), s, pos, n_ind, bounds)
        self._weight_diagnostics(omega, s, pos, first_whole_max,
                                 self._whole_max(engine, eta_row, columns, s, pos))
        if columns is not None:
            self._attribute_diagnostics(stats["cv"], t, omega, s, pos, bounds)
        self._audit = engine
        self.sample_weight_ = omega
        self.n_iter_ = t
        history = {k: (self._history_scaled(np.asarray(v)) if k != "cv" else np.asarray(v))
                   for k, v in stats.items()}
        if self.store_eta:
            history["eta"] = np.vstack(etas)
        self.eta_history_ = history
        return theta, n_newton


#: in attribute mode, a growth of the largest whole-row eta above this factor warns
_ATTRIBUTE_GROWTH = 1.1
#: in attribute mode, a final std/mean of the attribute's eta above ``eta_tol`` or, without
#: it, above this fraction of the unweighted fit's warns: the attribute was not equalised
_ATTRIBUTE_SHRINK = 0.5


class IRFILLinearRegression(_IRFILMixin, FILLinearRegression):
    _parameter_constraints: dict = {
        **{k: v for k, v in FILLinearRegression._parameter_constraints.items() if k != "epsilon"},
        **_IRFILMixin._base_noise_constraints, **_IRFILMixin._irfil_constraints,
    }

    def __init__(self, sigma=1.0, *, alpha=1e-3, fit_intercept=True, eta_max_iter=10,
                 eta_tol=None, sensitive_features=None, constrained=False, store_eta=False,
                 weight_bounds=None, data_norm=None, target_bound=None, delta=1e-5, verbose=0,
                 random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.eta_max_iter = eta_max_iter
        self.eta_tol = eta_tol
        self.sensitive_features = sensitive_features
        self.constrained = constrained
        self.store_eta = store_eta
        self.weight_bounds = weight_bounds
        self.data_norm = data_norm
        self.target_bound = target_bound
        self.delta = delta
        self.verbose = verbose
        self.random_state = random_state


class IRFILLogisticRegression(_IRFILMixin, FILLogisticRegression):
    _parameter_constraints: dict = {
        **{k: v for k, v in FILLogisticRegression._parameter_constraints.items() if k != "epsilon"},
        **_IRFILMixin._base_noise_constraints, **_IRFILMixin._irfil_constraints,
    }

    def __init__(self, sigma=1.0, *, alpha=1e-3, fit_intercept=True, tol=1e-12, max_iter=100,
                 eta_max_iter=10, eta_tol=None, sensitive_features=None, constrained=False,
                 store_eta=False, weight_bounds=None, data_norm=None, delta=1e-5, verbose=0,
                 random_state=None):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.eta_max_iter = eta_max_iter
        self.eta_tol = eta_tol
        self.sensitive_features = sensitive_features
        self.constrained = constrained
        self.store_eta = store_eta
        self.weight_bounds = weight_bounds
        self.data_norm = data_norm
        self.delta = delta
        self.verbose = verbose
        self.random_state = random_state


_LINEAR_EXTRA = ""
_LOGISTIC_EXTRA = """    tol : float, default=1e-12
        Tolerance of each Newton solve, as in :class:`FILLogisticRegression`.
    max_iter : int, default=100
        Maximum Newton iterations per fit.
"""
_LINEAR_TOL = ""
_LOGISTIC_TOL = ""

IRFILLinearRegression.__doc__ = (
    """Least squares with iteratively reweighted FIL: equal leakage for every individual.
""" + _IRFIL_DOC.format(alpha_default="1e-3", extra_params=_LINEAR_EXTRA,
                        tol_param=_LINEAR_TOL, base="FILLinearRegression",
                        dp_params=DP_PARAMS_LSQ_DOC, dp_attrs=DP_ATTRS_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import FILLinearRegression, IRFILLinearRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 4))
    >>> y = X @ [1.0, -1.0, 0.5, 0.0] + 0.1 * rng.normal(size=300)
    >>> plain = FILLinearRegression(random_state=0).fit(X, y)
    >>> fair = IRFILLinearRegression(eta_max_iter=10, random_state=0).fit(X, y)
    >>> cv = lambda e: e.std() / e.mean()
    >>> bool(cv(fair.eta_) < 0.01 < cv(plain.eta_))
    True
    >>> fair.eta_history_["cv"].round(3)[[0, -1]]
    array([0.274, 0.   ])
    """
)

IRFILLogisticRegression.__doc__ = (
    """Logistic regression (binary or multinomial) with iteratively reweighted FIL.

    With more than two classes the model is the multinomial one of
    :class:`FILLogisticRegression` and the equalised eta is that of the whole
    ``K x (d + 1)`` release (the label as ``K - 1`` sum-zero coordinates).
""" + _IRFIL_DOC.format(alpha_default="1e-3", extra_params=_LOGISTIC_EXTRA,
                        tol_param=_LOGISTIC_TOL, base="FILLogisticRegression",
                        dp_params=DP_PARAMS_DOC, dp_attrs=DP_ATTRS_DOC) + """
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy import IRFILLogisticRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 3))
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    >>> clf = IRFILLogisticRegression(alpha=1e-2, eta_max_iter=10, random_state=0).fit(X, y)
    >>> bool(clf.eta_history_["cv"][-1] < 1e-3 * clf.eta_history_["cv"][0])
    True
    >>> clf.sample_weight_.shape, round(float(clf.sample_weight_.sum()))
    ((300,), 300)
    """
)
