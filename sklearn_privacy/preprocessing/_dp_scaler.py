"""Standardisation with a differentially private mean and variance of bounded columns."""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..privacy._tradeoff import RiskTarget
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._validation import validate_named
from ..utils.fixes import Interval, StrOptions, _fit_context
from ._bounded import resolve_bounds
from ._rules import numeric_frame

__all__ = ["DPStandardScaler"]


def moment_sensitivities(lower, upper, n):
    """Replace-one sensitivities of the clipped mean and the centred second moment.

    With every value of column ``j`` in ``[l_j, u_j]`` (width ``w_j``) and midpoint
    ``c_j``, the mean ``(1/n) sum x_ij`` and the second moment about the midpoint
    ``(1/n) sum (x_ij - c_j)^2`` (each term in ``[0, w_j^2 / 4]``) change by at most
    ``w_j / n`` and ``w_j^2 / (4 n)`` when one row is replaced.

    Returns
    -------
    mean_coords, moment_coords : ndarray of shape (n_features,)
        The per-column bounds; their L2 (L1) norms are the L2 (L1) sensitivities.
    """
    w = np.asarray(upper, float) - np.asarray(lower, float)
    return w / n, w ** 2 / (4.0 * n)


def joint_sensitivity(lower, upper, n, s_mean, s_moment, *, norm="l2"):
    """Exact replace-one sensitivity of the noise-scaled pair (mean, second moment).

    The release is ``(mean / s_mean, moment / s_moment)`` (one noise scale per block)
    with noise of unit scale. Replacing a row's value ``a`` by ``b`` in column ``j``
    (centred on the midpoint, ``|a|, |b| <= h_j = w_j / 2``) moves the mean by ``u / n``
    and the second moment about the midpoint by ``(b^2 - a^2) / n = u v / n``, with
    ``u = b - a`` and ``v = a + b``; the reachable pairs are ``|u| + |v| <= 2 h_j``. The
    two changes cannot both be at their maxima (the mean moves most when ``v = 0``,
    which leaves the moment unchanged), so the joint sensitivity is below what a split
    of the budget between the two blocks pays.

    * ``norm="l2"`` (Gaussian noise): the squared change of column ``j`` is
      ``u^2 (A + v^2 B) / n^2`` with ``A = 1 / s_mean^2``, ``B = 1 / s_moment^2``;
      for ``u >= 0`` it is largest at ``v = 2 h - u``, and ``phi(u) = u^2 (A + (2h -
      u)^2 B)`` has its interior stationary points at ``2h - u = h/2 +- sqrt(h^2 / 4 -
      A / (2B))``; the maximum is over those and the end point ``u = 2h``. Columns are
      independent, so the squared sensitivity is the sum of the column maxima.
    * ``norm="l1"`` (Laplace noise): ``u (A + (2h - u) B) / n`` with ``A = 1 / s_mean``,
      ``B = 1 / s_moment``, largest at ``u = clip(h + A / (2B), 0, 2h)``; summed over
      columns.

    With one column and the noise scales of an even split (each block alone at
    sensitivity ``1/sqrt(2)``, or at ``1/2`` in L1), the joint sensitivity is
    ``sqrt(max_t t^2/2 + 8 t^2 (1 - t)^2) = 0.8019`` (L2, at ``t = u / 2h = 0.573``) and
    ``25/32 = 0.78125`` (L1, at ``t = 5/8``) of the split's.

    Returns
    -------
    sensitivity : float
    """
    h = (np.asarray(upper, float) - np.asarray(lower, float)) / 2.0
    if norm == "l1":
        A, B = 1.0 / s_mean, 1.0 / s_moment
        u = np.clip(h + A / (2.0 * B), 0.0, 2.0 * h)
        return float(np.sum(u * (A + (2.0 * h - u) * B)) / n)
    A, B = 1.0 / s_mean ** 2, 1.0 / s_moment ** 2
    disc = np.sqrt(np.maximum(h ** 2 / 4.0 - A / (2.0 * B), 0.0))
    best = (2.0 * h) ** 2 * A  # u = 2h, v = 0
    for r in (h / 2.0 + disc, h / 2.0 - disc):
        u = np.clip(2.0 * h - r, 0.0, 2.0 * h)
        best = np.maximum(best, u ** 2 * (A + (2.0 * h - u) ** 2 * B))
    return float(np.sqrt(np.sum(best)) / n)


class DPStandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise with a differentially private mean and standard deviation.

    Every column is clipped to declared ``bounds``; the scaler releases a noisy mean
    ``mean_`` and a noisy second moment about the bounds' midpoint, from which
    ``var_ = moment - (mean_ - midpoint)^2`` is derived (post-processing, then clipped to
    ``[(1e-3 w)^2, (w / 2)^2]``, ``w`` the width of the bounds). ``transform`` clips to
    the bounds and returns ``(x - mean_) / scale_``.

    **Threat model.** The adversary sees the fitted scaler (``mean_``, ``var_``,
    ``scale_``), knows every other row, the bounds, ``n`` and the schema, and tries to
    tell apart two data sets that differ in the values of one row.

    **Guarantee.** For the replace-one-row relation (``n`` public), with values in
    ``[l_j, u_j]`` (width ``w_j``), replacing one row moves column ``j``'s mean by at
    most ``w_j / n`` and its second moment about the midpoint by at most ``w_j^2 /
    (4 n)``. ``mechanism="gaussian"``: both vectors get Gaussian noise calibrated so
    that the scaled release ``(mean / sigma_mean, moment / sigma_moment)`` has L2
    sensitivity ``mu`` (split equally between the two), which is exactly ``mu``-GDP and
    ``(epsilon, delta)``-DP at the analytic Gaussian calibration (Balle & Wang 2018);
    :func:`~sklearn_privacy.privacy_claim` composes it with a Gaussian model through
    ``mu``. ``mechanism="laplace"``: Laplace noise with L1 sensitivities, ``(epsilon,
    0)``-DP. In both, the two blocks are **one** release accounted with its exact joint
    sensitivity (``joint_sensitivity`` in this module): a row that moves the mean by its maximum
    ``w / n`` leaves the second moment about the midpoint unchanged, so the noise that
    a split of the budget between the blocks would need is scaled down by the joint
    sensitivity over the split's -- 0.802 (Gaussian) and 0.781 (Laplace) for one
    column, never above 1. The fitted attributes (``mean_``, ``var_``,
    ``scale_``) are the release; the bounds, ``n`` and the schema are public.
    Not guaranteed: anything with a fixed ``random_state`` (reproducible noise: not
    private), bounds chosen by looking at the private rows, and the floating-point
    sampling of the noise.

    Parameters
    ----------
    bounds : (low, high), list of (low, high) or dict
        Public bounds of every column (see :class:`BoundedScaler`); values outside are
        clipped in ``fit`` and ``transform``, a missing entry (NaN) takes the middle of
        its column's bounds, and a non-numeric column is read by :class:`PublicSchema`'s
        numeric rule first (a stray string is missing): no value of a row makes ``fit``
        fail.
    epsilon : float > 0 or RiskTarget, default=1.0
        Privacy budget of the release, or the risk a user accepts as a
        :class:`~sklearn_privacy.privacy.RiskTarget`: Gaussian noise then has exactly
        ``mu = target.gaussian_mu()``, Laplace noise the largest pure epsilon that meets
        the target.
    delta : float in (0, 1), default=1e-5
        Delta of the Gaussian mechanism (ignored with ``mechanism="laplace"``).
    mechanism : {"gaussian", "laplace"}, default="gaussian"
        The noise distribution.
    random_state : None, int, RandomState or Generator, default=None
        Noise source (:func:`~sklearn_privacy.utils.noise_generator`): ``None`` draws
        fresh OS entropy, required for a private release; a seed is for tests.
    clip : float > 0 or None, default=None
        Clip every standardised output to ``[-clip, clip]`` (post-processing: no change
        to the guarantee). Standardised values are not within ``[-1, 1]``: a column
        bounded in ``[l, u]`` reaches ``(u - mean_) / scale_`` (4.7 for an age in
        ``[15, 100]``), and how far depends on the noisy ``scale_``. A downstream step
        that needs a data-independent row norm (``data_norm`` of the FIL estimators)
        then rescales a varying number of rows on every fit (700 to all 4,320 rows of
        a 4,320-row Adult sample with ``data_norm=sqrt(10)``). With ``clip=c`` every
        output is within ``[-c, c]``, so ``k`` such columns contribute at most ``k c^2``
        to the squared row norm, whatever the noise.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The noisy mean of every clipped column.
    second_moment_ : ndarray of shape (n_features,)
        The noisy mean of ``(x - midpoint)^2`` of every clipped column.
    var_ : ndarray of shape (n_features,)
        The derived variance (post-processing of the noisy moments).
    scale_ : ndarray of shape (n_features,)
        ``sqrt(var_)``.
    lower_, upper_ : ndarray of shape (n_features,)
        The bounds.
    noise_scale_ : tuple of float
        ``(mean noise, moment noise)``: standard deviations (Gaussian) or Laplace scales.
    gaussian_mu_ : float or None
        ``mu`` of the Gaussian release (None for Laplace).
    epsilon_ : float
        The release's epsilon (``epsilon``; for a risk target, the epsilon of its noise
        at ``delta``).
    delta_ : float
        Its delta (0 for Laplace).
    epsilon_reason_ : str
        What the claim covers (the noisy mean and second moment of the clipped columns).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string column names.

    See Also
    --------
    BoundedScaler : Scaling with declared bounds and no release at all.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).normal(40, 10, size=(5000, 1))
    >>> sc = DPStandardScaler(bounds=(0, 100), epsilon=1.0, random_state=0).fit(X)
    >>> bool(abs(sc.mean_[0] - 40) < 1 and abs(sc.scale_[0] - 10) < 1.5)
    True
    >>> round(sc.epsilon_, 3), sc.delta_
    (1.0, 1e-05)
    """

    #: fit records fit_provenance_: a missing record makes the claim inf
    _records_fit_provenance = True

    _parameter_constraints: dict = {
        "bounds": ["array-like", dict],
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "mechanism": [StrOptions({"gaussian", "laplace"})],
        "random_state": ["random_state", np.random.Generator],
        "clip": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, bounds=(0.0, 1.0), *, epsilon=1.0, delta=1e-5, mechanism="gaussian",
                 random_state=None, clip=None):
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.random_state = random_state
        self.clip = clip

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the noisy mean and second moment of the clipped columns.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Numeric columns (missing entries take the middle of their bounds).
        y : None
            Ignored.

        Returns
        -------
        self : DPStandardScaler
        """
        from ..mechanisms._gaussian import analytic_gaussian_sigma

        X = validate_named(self, numeric_frame(X), dtype=np.float64,
                           ensure_all_finite=False)
        n = X.shape[0]
        lower, upper = resolve_bounds(self.bounds, X.shape[1],
                                      getattr(self, "feature_names_in_", None))
        mid, width = (lower + upper) / 2.0, upper - lower
        Xc = np.clip(np.where(np.isnan(X), mid, X), lower, upper)
        mean = Xc.mean(axis=0)
        moment = np.mean((Xc - mid) ** 2, axis=0)
        d_mean, d_moment = moment_sensitivities(lower, upper, n)
        rng = noise_generator(self.random_state)
        if self.mechanism == "gaussian":
            mu = (self.epsilon.gaussian_mu() if isinstance(self.epsilon, RiskTarget) else
                  1.0 / analytic_gaussian_sigma(float(self.epsilon), float(self.delta), 1.0))
            # the split's noise ratio (each block alone at sensitivity mu / sqrt(2)),
            # scaled so that the joint sensitivity of the pair is exactly mu
            s_mean = float(np.linalg.norm(d_mean)) * np.sqrt(2.0) / mu
            s_moment = float(np.linalg.norm(d_moment)) * np.sqrt(2.0) / mu
            shrink = joint_sensitivity(lower, upper, n, s_mean, s_moment) / mu
            s_mean, s_moment = s_mean * shrink, s_moment * shrink
            noise_mean = s_mean * rng.standard_normal(mean.shape)
            noise_moment = s_moment * rng.standard_normal(moment.shape)
            self.gaussian_mu_, self.delta_ = float(mu), float(self.delta)
        else:
            eps = (self.epsilon.epsilon(0.0) if isinstance(self.epsilon, RiskTarget)
                   else float(self.epsilon))
            s_mean = float(np.sum(d_mean)) / (eps / 2.0)
            s_moment = float(np.sum(d_moment)) / (eps / 2.0)
            shrink = joint_sensitivity(lower, upper, n, s_mean, s_moment, norm="l1") / eps
            s_mean, s_moment = s_mean * shrink, s_moment * shrink
            noise_mean = rng.laplace(0.0, s_mean, mean.shape)
            noise_moment = rng.laplace(0.0, s_moment, moment.shape)
            self.gaussian_mu_, self.delta_ = None, 0.0
        self.noise_scale_ = (s_mean, s_moment)
        self.mean_ = mean + noise_mean
        self.second_moment_ = moment + noise_moment
        var = self.second_moment_ - (self.mean_ - mid) ** 2
        self.var_ = np.clip(var, (1e-3 * width) ** 2, (width / 2.0) ** 2)
        self.scale_ = np.sqrt(self.var_)
        self.lower_, self.upper_ = lower, upper
        if isinstance(self.epsilon, RiskTarget):
            from ..mechanisms._gaussian import analytic_gaussian_epsilon
            self.epsilon_ = (eps if self.gaussian_mu_ is None else analytic_gaussian_epsilon(
                delta=self.delta_, sigma=1.0, sensitivity=self.gaussian_mu_))
        else:
            self.epsilon_ = float(self.epsilon)
        self.epsilon_reason_ = self.__sklearn_privacy_claim__().reason
        record_fit_provenance(self)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True    # NaN takes the middle of the bounds
        tags.input_tags.string = True       # non-numeric columns: the numeric rule
        return tags

    def transform(self, X):
        """Clip to the bounds and standardise with the released mean and scale.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_named(self, numeric_frame(X), dtype=np.float64, reset=False,
                           ensure_all_finite=False)
        X = np.where(np.isnan(X), (self.lower_ + self.upper_) / 2.0, X)
        out = (np.clip(X, self.lower_, self.upper_) - self.mean_) / self.scale_
        return out if self.clip is None else np.clip(out, -self.clip, self.clip)

    def inverse_transform(self, X):
        """Undo the standardisation (clipped values stay clipped).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_orig : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        return np.asarray(X, dtype=np.float64) * self.scale_ + self.mean_

    def __sklearn_privacy_attributes__(self):
        """Noisy statistics (and their post-processing); the rest from parameters."""
        return {"mean_": "dp", "second_moment_": "dp", "var_": "dp", "scale_": "dp",
                "gaussian_mu_": "constant", "delta_": "constant",
                "noise_scale_": "constant", "lower_": "constant", "upper_": "constant",
                "epsilon_": "constant"}

    def __sklearn_privacy_claim__(self):
        """``dp`` with ``(epsilon_, delta_)`` (and ``gaussian_mu`` for the Gaussian noise)."""
        from ..privacy import StepClaim
        check_is_fitted(self)
        if self.gaussian_mu_ is not None:
            how = (f"Gaussian noise on the mean and the second moment of the columns "
                   f"clipped to the declared bounds, one release with the exact joint "
                   f"replace-one L2 sensitivity of the noise-scaled pair, mu = "
                   f"{self.gaussian_mu_:.6g}")
        else:
            how = ("Laplace noise on the mean and the second moment of the clipped columns, "
                   "one release with the exact joint replace-one L1 sensitivity of the "
                   "noise-scaled pair")
        return StepClaim("", type(self).__name__, "dp", self.epsilon_, self.delta_,
                         how + "; var_ and scale_ are post-processing",
                         gaussian_mu=self.gaussian_mu_)
