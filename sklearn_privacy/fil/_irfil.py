"""Iteratively reweighted Fisher information loss (IRFIL): equal leakage across individuals."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from ..utils.fixes import Hidden, Interval, StrOptions
from ._base import DP_ATTRS_DOC, DP_PARAMS_DOC, DP_PARAMS_LSQ_DOC, BaseFILEstimator
from ._classification import FILLogisticRegression
from ._engine import check_sigma_scaled
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
    fit_intercept : bool, default=True
        Fit an unpenalised intercept (it is perturbed too).
{extra_params}    eta_max_iter : int, default=10
        Maximum number of reweighting iterations :math:`T` (at least 1); at most
        ``T + 1`` weighted fits. Called ``n_iter`` before 0.2.
    eta_tol : float or None, default=None
        Equalisation tolerance: stop the reweighting early once the coefficient of
        variation std(eta)/mean(eta) of the equalised eta is at most ``eta_tol``
        (``None``: run all ``eta_max_iter`` iterations). Called ``cv_tol`` before 0.2.
    attributes : None, int, str or array-like of int / str, default=None
        ``None`` equalises the example-level eta (all features and the label). A set of
        column indices (``n_features_in_`` is the label) or names of
        ``feature_names_in_`` (``"label"`` for the label; resolved at fit) equalises the
        attribute-level eta of those columns, e.g. a one-hot sensitive attribute. As the
        last step of a pipeline with ``set_output(transform="pandas")``, an original
        feature name (``"sex"``) resolves to its encoded columns
        (``"onehotencoder__sex_Female"``, ...), checked to be one feature's one-hot
        encoding; see ``attribute_columns_``.
    constrained : bool, default=False
        With a one-hot ``attributes`` block: use the constrained attribute eta (changes
        that move an individual between the encoded levels).
    store_eta : bool, default=False
        Keep the full per-example eta array of every iteration in ``eta_history_``.
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
    attribute_columns_ : ndarray of int or None
        The columns ``attributes`` resolved to (indices of the input; ``n_features_in_``
        is the label), None without ``attributes``. An original feature name behind a
        pandas-output ColumnTransformer (``"sex"``) resolves to its encoded columns.
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
        "n_iter": [Interval(Integral, 1, None, closed="left"),
                   Hidden(StrOptions({"deprecated"}))],
        "cv_tol": [Interval(Real, 0, None, closed="left"), None,
                   Hidden(StrOptions({"deprecated"}))],
        "attributes": ["array-like", str, Integral, None],
        "constrained": ["boolean"],
        "store_eta": ["boolean"],
        "verbose": ["verbose"],
    }

    def _newton_tol(self):
        return self._tolerances()[0]

    def _tolerances(self):
        """``(Newton tolerance, reweighting stop)`` (see ``_resolve_tolerances``)."""
        return self.__dict__.get("_tols", (1e-12, self.eta_tol))

    def _renamed(self):
        """``(eta_max_iter, eta_tol)`` honouring the names deprecated in 0.2."""
        name = type(self).__name__
        max_iter, eta_tol = self.eta_max_iter, self.eta_tol
        if not (isinstance(self.n_iter, str) and self.n_iter == "deprecated"):
            warnings.warn(
                f"{name}(n_iter=...) is deprecated since 0.2 and will be removed in 0.4: the "
                "cap on reweighting iterations is now eta_max_iter (max_iter and tol "
                "belong to the solver, as in scikit-learn). "
                f"Use eta_max_iter={self.n_iter!r}.", FutureWarning, stacklevel=5)
            max_iter = self.n_iter
        if not (isinstance(self.cv_tol, str) and self.cv_tol == "deprecated"):
            warnings.warn(
                f"{name}(cv_tol=...) is deprecated since 0.2 and will be removed in 0.4: the "
                "equalisation tolerance is now eta_tol (cv read as cross-validation). "
                f"Use eta_tol={self.cv_tol!r}.", FutureWarning, stacklevel=5)
            if eta_tol is not None:
                raise ValueError(f"{name}: pass only eta_tol; cv_tol is its deprecated name.")
            eta_tol = self.cv_tol
        return int(max_iter), eta_tol

    def _eta_tol_given(self):
        """Whether an equalisation tolerance was passed (eta_tol or the deprecated cv_tol)."""
        return self.eta_tol is not None or not (
            isinstance(self.cv_tol, str) and self.cv_tol == "deprecated")

    def _fit(self, X, y, sample_weight):
        self._eta_max_iter, self._eta_tol = self._renamed()
        self._tols = self._resolve_tolerances()
        self._cv_tol = self._tols[1]
        theta, _ = self._irfil_fit(X, y, sample_weight)
        return theta

    def _equalised_sq_norms(self, engine):
        columns = None if self.attributes is None else self._attribute_columns
        return engine.per_example_sq_norms(columns, constrained=self.constrained)

    def _check_attributes(self, X=None):
        """Resolve ``attributes`` (indices or names of ``feature_names_in_``) at fit."""
        if self.attributes is None:
            if self.constrained:
                raise ValueError(
                    "constrained=True needs attributes: pass the one-hot columns of the "
                    "attribute to equalise."
                )
            self._attribute_columns = self.attribute_columns_ = None
            return
        self._attribute_columns = self._resolve_columns(self.attributes, param="attributes",
                                                        X=X)
        self.attribute_columns_ = self._attribute_columns

    def _history_scaled(self, values):
        with np.errstate(over="ignore", under="ignore"):
            out = values / self.sigma
        return check_sigma_scaled(out, np.max(values, initial=0.0), self.sigma,
                                  "eta_history_")

    def _irfil_fit(self, X, y, s):
        """Run Algorithm 1; ``s`` are the validated user weights (individual counts)."""
        self._check_attributes(X)
        self.__dict__.pop("_eta_cache", None)
        pos = s > 0
        n_ind = s.sum()
        omega = s.copy()
        theta = None
        columns = None if self.attributes is None else self._attribute_columns
        verbose = getattr(self, "verbose", 0)
        stats = {k: [] for k in ("mean", "std", "max", "min", "cv")}
        etas = []
        for t in range(self._eta_max_iter + 1):
            # Newton warm-started from the previous minimiser (the eigenvalue solver
            # starts from Rayleigh-Ritz bounds, closer than the previous iteration's eta)
            theta, n_newton, engine = self._fit_exact(X, y, omega, theta_init=theta)
            eta_row = np.sqrt(engine.per_example_sq_norms(columns,
                                                          constrained=self.constrained))
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
                print(f"[{type(self).__name__}] iteration {t}/{self._eta_max_iter}: eta mean "
                      f"{mean * scale:.6g}, max {e.max() * scale:.6g}, cv {cv:.4g}"
                      + (f", Newton steps {n_newton}" if n_newton else ""), flush=True)
            if t == self._eta_max_iter or (self._cv_tol is not None
                                     and stats["cv"][-1] <= self._cv_tol):
                break
            if np.any(e <= 0):
                raise ValueError(
                    "Some examples have zero Fisher information loss for the equalised "
                    "columns, so IRFIL cannot reweight them (the update divides by eta). "
                    "Choose attributes that every example's fit depends on."
                )
            ratio = np.zeros_like(omega)
            ratio[pos] = omega[pos] / eta_ind[pos]
            omega = n_ind * ratio / ratio.sum()
        self._audit = engine
        self.sample_weight_ = omega
        self.n_iter_ = t
        history = {k: (self._history_scaled(np.asarray(v)) if k != "cv" else np.asarray(v))
                   for k, v in stats.items()}
        if self.store_eta:
            history["eta"] = np.vstack(etas)
        self.eta_history_ = history
        return theta, n_newton


class IRFILLinearRegression(_IRFILMixin, FILLinearRegression):
    _parameter_constraints: dict = {
        **{k: v for k, v in FILLinearRegression._parameter_constraints.items() if k != "epsilon"},
        **_IRFILMixin._base_noise_constraints, **_IRFILMixin._irfil_constraints,
        "tol": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(self, sigma=1.0, *, alpha=1e-3, fit_intercept=True, eta_max_iter=10,
                 eta_tol=None, attributes=None, constrained=False, store_eta=False,
                 data_norm=None, target_bound=None, delta=1e-5, verbose=0, random_state=None,
                 tol=None, n_iter="deprecated", cv_tol="deprecated"):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.eta_max_iter = eta_max_iter
        self.eta_tol = eta_tol
        self.n_iter = n_iter
        self.cv_tol = cv_tol
        self.attributes = attributes
        self.constrained = constrained
        self.store_eta = store_eta
        self.data_norm = data_norm
        self.target_bound = target_bound
        self.delta = delta
        self.verbose = verbose
        self.random_state = random_state
        self.tol = tol

    def _resolve_tolerances(self):
        """Least squares is solved exactly; ``tol`` is the deprecated name of ``eta_tol``."""
        if self.tol is None:
            return 1e-12, self._eta_tol
        if self._eta_tol_given():
            raise ValueError(
                "IRFILLinearRegression: pass only eta_tol (the reweighting stop); tol is its "
                "deprecated name."
            )
        warnings.warn(
            "IRFILLinearRegression(tol=...) is deprecated since 0.2 and will be removed in "
            "0.4: it is the reweighting stop, now called eta_tol (least squares is solved "
            f"exactly and has no optimisation tolerance). Use eta_tol={self.tol!r}.",
            FutureWarning,
            stacklevel=5,
        )
        return 1e-12, self.tol


class IRFILLogisticRegression(_IRFILMixin, FILLogisticRegression):
    _parameter_constraints: dict = {
        **{k: v for k, v in FILLogisticRegression._parameter_constraints.items() if k != "epsilon"},
        **_IRFILMixin._base_noise_constraints, **_IRFILMixin._irfil_constraints,
        "tol": [Interval(Real, 0, None, closed="neither"), None],
        "newton_tol": [Interval(Real, 0, None, closed="neither"),
                       Hidden(StrOptions({"deprecated"}))],
    }

    def __init__(self, sigma=1.0, *, alpha=1e-3, fit_intercept=True, tol=None, max_iter=100,
                 eta_max_iter=10, eta_tol=None, attributes=None, constrained=False,
                 store_eta=False, data_norm=None, delta=1e-5, verbose=0, random_state=None,
                 newton_tol="deprecated", n_iter="deprecated", cv_tol="deprecated"):
        self.sigma = sigma
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.eta_max_iter = eta_max_iter
        self.eta_tol = eta_tol
        self.n_iter = n_iter
        self.cv_tol = cv_tol
        self.attributes = attributes
        self.constrained = constrained
        self.store_eta = store_eta
        self.data_norm = data_norm
        self.delta = delta
        self.verbose = verbose
        self.random_state = random_state
        self.newton_tol = newton_tol

    def _resolve_tolerances(self):
        """``(Newton tolerance, reweighting stop)`` under the deprecation rules of 0.2.

        ``tol`` is the Newton tolerance (as in :class:`FILLogisticRegression`) whenever
        ``eta_tol`` is given. A ``tol`` given *without* ``eta_tol`` keeps its 0.1 meaning
        (the reweighting stop) until 0.4, with a FutureWarning, so that no result changes
        silently; ``newton_tol`` is the deprecated name of the Newton tolerance.
        """
        newton = None if self.newton_tol == "deprecated" else float(self.newton_tol)
        if newton is not None:
            warnings.warn(
                "IRFILLogisticRegression(newton_tol=...) is deprecated since 0.2 and will be "
                "removed in 0.4: the Newton tolerance is tol, as in FILLogisticRegression "
                "(give the reweighting stop as eta_tol, possibly None, to use the new "
                f"meaning of tol now). Use tol={self.newton_tol!r}.",
                FutureWarning,
                stacklevel=5,
            )
        if self.tol is not None and not self._eta_tol_given():
            warnings.warn(
                f"IRFILLogisticRegression(tol={self.tol!r}) without eta_tol keeps its 0.1 "
                "meaning until 0.4: the reweighting stop (coefficient of variation of "
                "eta). From 0.4, tol is only the Newton tolerance, as in "
                f"FILLogisticRegression. Pass eta_tol={self.tol!r} for the reweighting stop "
                "(and tol only for the Newton tolerance).",
                FutureWarning,
                stacklevel=5,
            )
            return (1e-12 if newton is None else newton), self.tol
        if self.tol is not None and newton is not None:
            raise ValueError(
                "IRFILLogisticRegression: pass only tol (the Newton tolerance); newton_tol is "
                "its deprecated name."
            )
        tol = self.tol if self.tol is not None else newton
        return (1e-12 if tol is None else tol), self._eta_tol


_LINEAR_EXTRA = ""
_LOGISTIC_EXTRA = """    tol : float or None, default=None
        Tolerance of each Newton solve, as in :class:`FILLogisticRegression` (``None``:
        ``1e-12``). Transition until 0.4: a ``tol`` given without ``eta_tol`` keeps its
        0.1 meaning (the reweighting stop) with a FutureWarning; give ``eta_tol`` too to
        use the new meaning now (``eta_tol=0.0`` stops only when every eta is equal).
    max_iter : int, default=100
        Maximum Newton iterations per fit.
"""
_LINEAR_TOL = """    tol : float or None, default=None
        Deprecated in 0.2 (removed in 0.4): the old name of ``eta_tol`` (least squares
        is solved exactly, so there is no optimisation tolerance). Setting it warns and
        acts as ``eta_tol``.
    n_iter : int, default="deprecated"
        Deprecated in 0.2 (removed in 0.4): the old name of ``eta_max_iter``.
    cv_tol : float or None, default="deprecated"
        Deprecated in 0.2 (removed in 0.4): the old name of ``eta_tol``.
"""
_LOGISTIC_TOL = """    newton_tol : float, default="deprecated"
        Deprecated in 0.2 (removed in 0.4): the old name of ``tol``.
    n_iter : int, default="deprecated"
        Deprecated in 0.2 (removed in 0.4): the old name of ``eta_max_iter``.
    cv_tol : float or None, default="deprecated"
        Deprecated in 0.2 (removed in 0.4): the old name of ``eta_tol``.
"""

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
