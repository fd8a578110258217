"""Private bounds: DP quantiles of the columns, and of the row norms, for clipping.

**Mechanism** (the exponential mechanism over a public range, Smith 2011; as in
Gillenwater et al. 2021 for one quantile). The values of one column, clipped to a
public range ``[a, b]`` and sorted, ``a = z_0 <= z_1 <= ... <= z_n <= z_{n+1} = b``, cut
the range into ``n + 1`` intervals; interval ``i`` (between ``z_i`` and ``z_{i+1}``) has
utility ``u_i = -|i - q n|``: it holds the points with exactly ``i`` values below them.
The release draws interval ``i`` with probability proportional to ``(z_{i+1} - z_i)
exp(eps u_i / 2)`` and a point uniformly inside it. Its density at ``x`` is ``exp(eps
u(x) / 2) / Z`` with ``u(x) = -|#{z_j < x} - q n|``. Replacing one value changes the
count below any ``x`` by at most 1, so ``u(x)`` by at most 1, and ``Z = integral of
exp(eps u / 2)`` by a factor at most ``exp(eps / 2)``: the density ratio is at most
``exp(eps)``, pure ``eps``-DP. ``n`` is public (replace-one).

Several quantiles (two per column, ``d`` columns) compose by basic composition: each gets
``epsilon / (2 d)``. The row-norm clipper releases one quantile of the row norms.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..privacy._tradeoff import RiskTarget, epsilon_value
from ..utils import noise_generator
from ..utils._provenance import record_fit_provenance
from ..utils._validation import validate_named
from ..utils.fixes import Interval, _fit_context
from ._bounded import resolve_bounds


def quantile_intervals(values, low, high, q):
    """``(edges, log_weights)``: the ``n + 1`` intervals of the clipped, sorted values
    and the log of each interval's probability up to a constant, per unit ``eps``:
    ``log(width) + eps * u / 2`` is ``log(width) + log_weights * eps``."""
    z = np.sort(np.clip(np.asarray(values, dtype=np.float64), low, high))
    n = z.size
    edges = np.concatenate([[low], z, [high]])
    ranks = np.arange(n + 1)
    utility = -np.abs(ranks - q * n)
    return edges, utility / 2.0


def dp_quantile(values, low, high, q, epsilon, rng) -> float:
    """One pure ``epsilon``-DP quantile of ``values`` within the public ``[low, high]``."""
    edges, half_u = quantile_intervals(values, low, high, q)
    width = np.diff(edges)
    with np.errstate(divide="ignore"):
        logw = np.log(width) + epsilon * half_u
    logw -= np.max(logw)
    p = np.exp(logw)
    p /= p.sum()
    i = int(rng.choice(p.size, p=p))
    return float(edges[i] + rng.uniform() * width[i])


class DPQuantileScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Clip every column to private quantiles and map it onto a fixed range.

    For users who cannot declare bounds from a codebook: each column's ``quantiles``
    (default the 2nd and 98th percentiles) are released by the exponential mechanism
    inside a wide public range ``bounds`` (pure DP), then the column is clipped to them
    and mapped linearly onto ``feature_range`` as
    :class:`~sklearn_privacy.preprocessing.BoundedScaler` does. The output range, hence
    the bound on the rows' norm a model after it needs, is ``feature_range``: it does
    not depend on the rows
    (:func:`~sklearn_privacy.linear_model.with_declared_bounds` reads it).

    **Threat model and guarantee.** Replace-one neighbours, ``n`` public. Each quantile
    is ``epsilon / (2 d)``-DP (``d`` columns, two quantiles each; derivation in
    ``sklearn_privacy/preprocessing/_dp_quantile.py``, checked against the exact output
    density over brute-force neighbours in the tests); the fitted scaler is pure
    ``epsilon``-DP, and :func:`~sklearn_privacy.privacy_claim` composes it with the
    model after it. Not guaranteed: a public range chosen by looking at the rows.

    Parameters
    ----------
    bounds : (low, high), list of (low, high) or dict, default=(0.0, 1.0)
        Wide public range of each column (the quantiles are searched inside it; values
        outside are clipped to it first). The same forms as ``BoundedScaler``.
    quantiles : tuple (low, high), default=(0.02, 0.98)
        Levels of the released lower and upper bounds.
    epsilon : float > 0 or RiskTarget, default=1.0
        Privacy budget of the whole fit (all columns), or a
        :class:`~sklearn_privacy.privacy.RiskTarget` (the largest pure epsilon meeting it).
    feature_range : tuple (min, max), default=(-1.0, 1.0)
        Output range.
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise (``None``: fresh OS entropy; anything else is for tests).

    Attributes
    ----------
    lower_ : ndarray of shape (n_features,)
        Released lower bounds.
    upper_ : ndarray of shape (n_features,)
        Released upper bounds (at least the lower bound plus a tiny width).
    epsilon_ : float
        ``epsilon``.
    delta_ : float
        ``0.0``.
    epsilon_reason_ : str
        What the guarantee covers.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    See Also
    --------
    BoundedScaler : Declared bounds, no privacy cost.
    DPRowNormClipper : A private quantile of the row norms.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.preprocessing import DPQuantileScaler
    >>> X = np.random.default_rng(0).normal(50, 10, size=(2000, 2))
    >>> sc = DPQuantileScaler([(0, 1000), (0, 1000)], epsilon=1.0, random_state=0).fit(X)
    >>> bool(np.all(sc.lower_ < 40)), bool(np.all(sc.upper_ > 60))
    (True, True)
    >>> float(np.abs(sc.transform(X)).max())
    1.0
    """

    _parameter_constraints: dict = {
        "bounds": ["array-like", dict],
        "quantiles": [tuple],
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "feature_range": [tuple],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, bounds=(0.0, 1.0), *, quantiles=(0.02, 0.98), epsilon=1.0,
                 feature_range=(-1.0, 1.0), random_state=None):
        self.bounds = bounds
        self.quantiles = quantiles
        self.epsilon = epsilon
        self.feature_range = feature_range
        self.random_state = random_state

    def _check_levels(self):
        q = self.quantiles
        if len(q) != 2 or not (0.0 <= float(q[0]) < float(q[1]) <= 1.0):
            raise ValueError(f"quantiles must be (low, high) with 0 <= low < high <= 1; "
                             f"got {q!r}.")
        lo, hi = self.feature_range
        if not float(lo) < float(hi):
            raise ValueError(f"feature_range must be (min, max) with min < max; got "
                             f"{self.feature_range!r}.")

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the quantiles of every column.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Finite numeric columns.
        y : None
            Ignored.

        Returns
        -------
        self : DPQuantileScaler
        """
        self._check_levels()
        X = validate_named(self, X, dtype=np.float64)
        d = X.shape[1]
        low, high = resolve_bounds(self.bounds, d, getattr(self, "feature_names_in_", None))
        rng = noise_generator(self.random_state)
        eps_q = epsilon_value(self.epsilon, 0.0) / (2.0 * d)
        q_lo, q_hi = (float(v) for v in self.quantiles)
        lower = np.empty(d)
        upper = np.empty(d)
        for j in range(d):  # one pair of draws per column (d is small; n is vectorised)
            a = dp_quantile(X[:, j], low[j], high[j], q_lo, eps_q, rng)
            b = dp_quantile(X[:, j], low[j], high[j], q_hi, eps_q, rng)
            a, b = min(a, b), max(a, b)
            tiny = 1e-9 * max(high[j] - low[j], 1e-300)
            lower[j], upper[j] = a, max(b, a + tiny)
        self.lower_, self.upper_ = lower, upper
        self.epsilon_, self.delta_ = epsilon_value(self.epsilon, 0.0), 0.0
        self.epsilon_reason_ = self._reason()
        record_fit_provenance(self)
        return self

    def _reason(self):
        return (f"pure epsilon-DP for replacing one row (n public): the quantiles "
                f"{tuple(float(v) for v in self.quantiles)} of each of the "
                f"{self.n_features_in_} columns by the exponential mechanism inside the "
                f"declared range, each at epsilon / {2 * self.n_features_in_} (basic "
                "composition); the clipping and scaling are post-processing")

    def transform(self, X):
        """Clip to the released bounds and map onto ``feature_range``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False)
        lo, hi = (float(v) for v in self.feature_range)
        unit = (np.clip(X, self.lower_, self.upper_) - self.lower_) / (self.upper_
                                                                         - self.lower_)
        return lo + unit * (hi - lo)

    def __sklearn_privacy_attributes__(self):
        """The released bounds are the mechanism's output; the rest are constants."""
        return {"lower_": "dp", "upper_": "dp", "epsilon_": "constant",
                "delta_": "constant", "epsilon_reason_": "constant"}

    def __sklearn_privacy_claim__(self):
        """``dp`` with ``(epsilon_, 0)``."""
        from ..privacy import StepClaim
        check_is_fitted(self)
        return StepClaim("", type(self).__name__, "dp", self.epsilon_, 0.0,
                         self.epsilon_reason_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags


class DPRowNormClipper(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale rows to a private quantile of their norms, then to the unit ball.

    For clipping without a declared bound on the rows: the ``quantile`` of the rows' L2
    norms is released by the exponential mechanism inside the public range ``[0,
    max_norm]`` (pure ``epsilon``-DP, derivation in
    ``sklearn_privacy/preprocessing/_dp_quantile.py``), every row above it is scaled to
    it, and all rows are divided by it. Output rows have norm at most 1 whatever the
    data, so a model after it takes ``data_norm = 1`` (plus its intercept column;
    :func:`~sklearn_privacy.linear_model.with_declared_bounds` reads this).

    **Threat model and guarantee.** Replace-one neighbours, ``n`` public; the norm of a
    row is a function of that row alone, so one replaced row changes one norm; the
    release is pure ``epsilon``-DP and :func:`~sklearn_privacy.privacy_claim` composes it.
    Not guaranteed: a ``max_norm`` chosen by looking at the rows; rows above the released
    norm lose their length (their direction is kept).

    Parameters
    ----------
    max_norm : float > 0, default=1.0
        Public upper end of the range searched (norms above it count as ``max_norm``).
    quantile : float in (0, 1], default=0.9
        Level of the released clipping norm.
    epsilon : float > 0 or RiskTarget, default=1.0
        Privacy budget, or a :class:`~sklearn_privacy.privacy.RiskTarget` (the largest
        pure epsilon meeting it).
    random_state : None, int, RandomState or Generator, default=None
        Source of the noise (``None``: fresh OS entropy; anything else is for tests).

    Attributes
    ----------
    clip_norm_ : float
        The released clipping norm.
    epsilon_ : float
    delta_ : float
    epsilon_reason_ : str
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has string feature names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.preprocessing import DPRowNormClipper
    >>> X = np.random.default_rng(0).normal(size=(3000, 4))
    >>> clip = DPRowNormClipper(max_norm=100.0, random_state=0).fit(X)
    >>> bool(2.0 < clip.clip_norm_ < 4.0)
    True
    >>> bool(np.linalg.norm(clip.transform(X), axis=1).max() <= 1.0 + 1e-12)
    True
    """

    _parameter_constraints: dict = {
        "max_norm": [Interval(Real, 0, None, closed="neither")],
        "quantile": [Interval(Real, 0, 1, closed="right")],
        "epsilon": [Interval(Real, 0, None, closed="neither"), RiskTarget],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(self, max_norm=1.0, *, quantile=0.9, epsilon=1.0, random_state=None):
        self.max_norm = max_norm
        self.quantile = quantile
        self.epsilon = epsilon
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the clipping norm.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        self : DPRowNormClipper
        """
        X = validate_named(self, X, dtype=np.float64)
        norms = np.linalg.norm(X, axis=1)
        rng = noise_generator(self.random_state)
        c = dp_quantile(norms, 0.0, float(self.max_norm), float(self.quantile),
                        epsilon_value(self.epsilon, 0.0), rng)
        self.clip_norm_ = max(c, 1e-12 * float(self.max_norm))
        self.epsilon_, self.delta_ = epsilon_value(self.epsilon, 0.0), 0.0
        self.epsilon_reason_ = (
            f"pure epsilon-DP for replacing one row (n public): the {self.quantile!r} "
            "quantile of the row norms by the exponential mechanism inside [0, max_norm]; "
            "the scaling is post-processing")
        record_fit_provenance(self)
        return self

    def transform(self, X):
        """Rows scaled to norm at most ``clip_norm_``, then divided by it.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features)
            Rows of norm at most 1.
        """
        check_is_fitted(self)
        X = validate_named(self, X, dtype=np.float64, reset=False)
        norms = np.linalg.norm(X, axis=1)
        factor = np.minimum(1.0, self.clip_norm_ / np.maximum(norms, 1e-300))
        return X * (factor / self.clip_norm_)[:, None]

    def __sklearn_privacy_attributes__(self):
        """The clipping norm is the mechanism's output."""
        return {"clip_norm_": "dp", "epsilon_": "constant", "delta_": "constant",
                "epsilon_reason_": "constant"}

    def __sklearn_privacy_claim__(self):
        """``dp`` with ``(epsilon_, 0)``."""
        from ..privacy import StepClaim
        check_is_fitted(self)
        return StepClaim("", type(self).__name__, "dp", self.epsilon_, 0.0,
                         self.epsilon_reason_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = True
        return tags
