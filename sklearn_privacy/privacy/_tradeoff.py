"""Privacy as a bound on attacks: f-DP trade-off curves, risk targets and their conversion.

A release ``M`` and two neighbouring data sets (one row replaced) give two output
distributions ``P`` (without the row) and ``Q`` (with it). A membership test reads the
output and says "member" or not; its false-positive rate is its type-I error under ``P``
and its true-positive rate one minus its type-II error under ``Q``. The **trade-off
curve** ``T(alpha)`` of ``M`` (Dong, Roth & Su 2022) is the lowest type-II error of any test
whose type-I error is at most ``alpha``, over every pair of neighbours, so

    largest TPR any attacker reaches at FPR ``alpha`` = ``1 - T(alpha)``.

This is what ``TradeoffCurve.max_tpr`` returns. How each curve is obtained:

* **Gaussian** steps (L2 sensitivity ``Delta``, noise ``sigma``) are exactly ``mu``-GDP with
  ``mu = Delta / sigma``: ``TPR(alpha) = Phi(Phi^-1(alpha) + mu)``; composing them adds
  ``mu ** 2`` (Dong, Roth & Su, Corollary 3.3). Exact.
* **Pure epsilon** and **(epsilon, delta)** claims: the curve of an (epsilon, delta)-DP
  mechanism is at least ``f_{eps,delta}``, i.e. ``TPR(alpha) <= min(1, delta + e^eps
  alpha, 1 - e^-eps (1 - delta - alpha))`` (Kairouz, Oh & Viswanath 2015), and randomised
  response attains it, so this is the exact curve *of the claim*. For a mechanism whose
  claim is only an (epsilon, delta) pair (objective perturbation, a random-stopping
  search), the mechanism itself may be safer: the curve is labelled ``conservative``.
* **Compositions** of different kinds are computed numerically from privacy-loss
  distributions (PLDs): each kind of step is replaced by its dominating pair (the Gaussian
  pair, randomised response for an (epsilon, delta) claim), identical steps are composed
  exactly (a binomial for randomised response, ``sqrt(sum mu^2)`` for Gaussians), and the
  groups are convolved on a grid of privacy-loss values of step ``h``. Rounding every
  loss *up* to the grid (and the far upper tail to ``+inf``) increases every hockey-stick
  divergence ``H_{e^eps}(Q || P)`` for every real ``eps``, and since ``1 - TPR(alpha) =
  sup_eps (1 - H_{e^eps}(Q || P) - e^eps alpha)``, the curve read from the rounded
  distribution is **pessimistic**: it never states a TPR below the true one. Rounding
  *down* gives an optimistic curve; the largest gap between the two is the certified
  numerical error ``error``; the grid is refined until it is below ``max_error``.

The conversion the other way, a curve to (epsilon, delta), is
``delta(eps) = H_{e^eps}(Q || P)`` (``TradeoffCurve.delta``) and its inverse
(``TradeoffCurve.epsilon``); a risk target to noise is ``RiskTarget``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri
from scipy.stats import binom

from ..utils.fixes import NumberInterval

__all__ = ["RiskTarget", "TradeoffCurve"]

_PROB = NumberInterval(Real, 0, 1, closed="neither")
#: tail mass of a step's loss distribution left out of the grid (moved pessimistically)
_TAIL = 1e-14
#: largest grid a composition may use (points)
_MAX_GRID = 1 << 22


# ------------------------------------------------------------------------ closed forms
def _gaussian_tpr(alpha, mu):
    # ndtri(0) = -inf and ndtri(1) = inf give TPR 0 and 1 at the ends
    with np.errstate(divide="ignore"):
        return ndtr(ndtri(alpha) + mu)


def _approx_tpr(alpha, epsilon, delta):
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)
    if math.isinf(epsilon):
        return np.where(alpha >= 0, 1.0, 0.0) * np.ones_like(alpha)
    e = math.exp(epsilon)
    tpr = np.minimum(delta + e * alpha, 1.0 - (1.0 - delta - alpha) / e)
    return np.clip(tpr, 0.0, 1.0)


def _approx_tpr_pairs(alpha, epsilons, deltas):
    """``_approx_tpr`` of every pair: shape ``(alpha.size, epsilons.size)``."""
    alpha = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)[:, None]
    with np.errstate(over="ignore"):
        e = np.exp(np.asarray(epsilons, dtype=float))[None, :]
        d = np.asarray(deltas, dtype=float)[None, :]
        tpr = np.minimum(d + e * alpha, 1.0 - (1.0 - d - alpha) / e)
    return np.clip(tpr, 0.0, 1.0)


# -------------------------------------------------------------------- discrete PLDs
def _gaussian_pmf(mu, h, pessimistic):
    """Loss of the Gaussian pair under Q (``N(mu^2/2, mu^2)``) on the grid ``k h``.

    Returns ``(first_index, masses, inf_mass)``.
    """
    m, s = mu * mu / 2.0, mu
    t = -ndtri(_TAIL)
    lo, hi = m - t * s, m + t * s
    k0, k1 = math.floor(lo / h), math.ceil(hi / h)
    edges = np.arange(k0, k1 + 1) * h
    cdf = ndtr((edges - m) / s)
    inner = np.diff(cdf)                               # mass of (edges[i], edges[i+1]]
    below, above = cdf[0], 1.0 - cdf[-1]
    if pessimistic:   # (l_{k-1}, l_k] -> l_k; below -> first point; above -> +inf
        masses = np.concatenate([[below], inner])
        return k0, masses, above
    # (l_k, l_{k+1}] -> l_k; above -> last point; below: dropped (lowers every H)
    masses = np.concatenate([inner, [above]])
    return k0, masses, 0.0


def _rr_pmf(epsilon, delta, count, h, pessimistic):
    """``count`` compositions of randomised response with (epsilon, delta), under Q."""
    p = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    j_lo = int(max(0, binom.ppf(_TAIL, count, p) - 1))
    j_hi = int(min(count, binom.isf(_TAIL, count, p) + 1))
    j = np.arange(j_lo, j_hi + 1)
    finite = (1.0 - delta) ** count
    pmf = binom.pmf(j, count, p) * finite
    below = binom.cdf(j_lo - 1, count, p) * finite if j_lo > 0 else 0.0
    above = binom.sf(j_hi, count, p) * finite
    loss = (2.0 * j - count) * epsilon
    idx = np.ceil(loss / h - 1e-12) if pessimistic else np.floor(loss / h + 1e-12)
    idx = idx.astype(np.int64)
    k0 = int(idx[0])
    masses = np.zeros(int(idx[-1]) - k0 + 1)
    np.add.at(masses, idx - k0, pmf)
    inf_mass = 1.0 - finite
    if pessimistic:   # below -> the lowest point (rounded up), above -> +inf
        masses[0] += below
        inf_mass += above
    else:             # above -> the highest point (rounded down), below dropped
        masses[-1] += above
    return k0, masses, inf_mass


def _compose_pmfs(pmfs, h, pessimistic):
    """Convolve the groups' loss distributions (offsets add, +inf masses combine).

    FFT round-off leaves values of about 1e-17 everywhere; a mass ``q`` at loss ``l`` has
    P-mass ``q e^-l``, which such noise at a very negative loss would inflate. So masses
    below ``1e-15`` and the part of any mass above ``e^l`` (impossible for a
    distribution pair) are removed: to ``+inf`` for the pessimistic curve (which only
    raises it), dropped for the optimistic one (which only lowers it).
    """
    from scipy.signal import fftconvolve  # scipy.signal costs 0.15 s: imported on first use

    k0, masses, keep = 0, np.ones(1), 1.0
    for k, m, inf_mass in pmfs:
        k0 += k
        masses = fftconvolve(masses, m) if min(masses.size, m.size) > 64 \
            else np.convolve(masses, m)
        keep *= 1.0 - inf_mass
    total = masses.sum()
    loss = (k0 + np.arange(masses.size)) * h
    cap = np.exp(np.minimum(loss, 0.0))
    masses = np.where(masses < 1e-15, 0.0, np.minimum(masses, cap))
    inf_mass = 1.0 - keep
    if pessimistic:
        inf_mass = min(1.0, inf_mass + max(total - masses.sum(), 0.0))
    return k0, masses, inf_mass


def _roc(k0, masses, inf_mass, h):
    """Neyman--Pearson ROC of the discrete pair: (fpr, tpr) from the highest loss down."""
    nz = np.flatnonzero(masses > 0)
    if nz.size == 0:
        return np.array([0.0, 1.0]), np.array([min(inf_mass, 1.0), 1.0])
    masses = masses[nz[0]:nz[-1] + 1]
    loss = (k0 + nz[0] + np.arange(masses.size)) * h
    with np.errstate(divide="ignore"):
        p = np.exp(np.log(masses) - loss)
    q, p = masses[::-1], p[::-1]
    fpr = np.concatenate([[0.0], np.cumsum(p)])
    tpr = np.minimum(inf_mass + np.concatenate([[0.0], np.cumsum(q)]), 1.0)
    if fpr[-1] < 1.0:
        fpr, tpr = np.append(fpr, 1.0), np.append(tpr, 1.0)
    return fpr, tpr


def _interp(alpha, fpr, tpr):
    return np.interp(np.clip(alpha, 0.0, 1.0), fpr, tpr)


_CHECK_ALPHAS = np.unique(np.concatenate([np.geomspace(1e-6, 1e-2, 60),
                                          np.linspace(0.01, 1.0, 100)]))


_PROFILE_ALPHAS = np.unique(np.concatenate([[0.0], np.geomspace(1e-12, 1.0, 3000),
                                            np.linspace(0.0, 1.0, 3001)]))


def _concave_sup(x, g):
    """An upper bound of ``sup g`` over ``[x[0], x[-1]]`` for a concave ``g`` known at the
    increasing points ``x``: on ``[x_j, x_{j+1}]``, ``g`` lies below the extension of the
    chord on ``[x_{j-1}, x_j]`` (concavity), so ``g <= g_j + max(s_{j-1}, 0) (x_{j+1} -
    x_j)``; the first interval is bounded by the chord on its right extended backwards."""
    dx = np.diff(x)
    s = np.diff(g) / dx
    best = float(np.max(g))
    if s.size >= 2:
        best = max(best, float(np.max(g[1:-1] + np.maximum(s[:-1], 0.0) * dx[1:])))
        best = max(best, float(g[1] + max(-s[1], 0.0) * dx[0]))
    return best


# ---------------------------------------------------------------------------- curve
class TradeoffCurve:
    """The f-DP trade-off curve of a release: the largest TPR of any membership attack.

    Build one with :meth:`gaussian`, :meth:`epsilon_delta` or :meth:`compose`, or read it
    from a published object with :func:`~sklearn_privacy.privacy.tradeoff_curve`
    (``privacy_claim(obj).tradeoff``).
    The threat model is that of the claim it comes from: the attacker sees the release,
    knows every other row and tests whether one row's values are present (replace-one
    neighbours); ``max_tpr(fpr)`` bounds the true-positive rate of *every* such test at
    false-positive rate ``fpr``, for every row.

    Parameters
    ----------
    mu : float, default=0.0
        The Gaussian part: ``mu``-GDP (``sqrt(sum mu_i^2)`` of the Gaussian steps).
    steps : sequence of (epsilon, delta, count), default=()
        Groups of ``count`` steps whose only known guarantee is ``(epsilon, delta)``-DP
        (``delta=0``: pure epsilon-DP). Each is replaced by randomised response with the
        same (epsilon, delta), the least private mechanism with that claim.
    conservative : bool, default=False
        Whether some step may be safer than its (epsilon, delta) says (the curve is then
        a valid bound, possibly loose); printed with the curve.
    max_error : float, default=1e-3
        Largest certified numerical error (absolute TPR) of a numerical composition.

    Attributes
    ----------
    method : str
        ``"gaussian"`` (closed form), ``"epsilon_delta"`` (closed form of one claim),
        ``"pld"`` (numerical composition, pessimistic) or ``"none"`` (no step).
    error : float
        Certified bound on how much ``max_tpr`` may exceed the exact curve of the
        dominating pairs (0 for the closed forms). ``max_tpr`` is never below it.

    Examples
    --------
    >>> from sklearn_privacy.privacy import TradeoffCurve
    >>> g = TradeoffCurve.gaussian(1.0)
    >>> round(float(g.max_tpr(0.01)), 4), round(g.max_advantage(), 4)
    (0.0924, 0.3829)
    >>> round(float(TradeoffCurve.epsilon_delta(4.0, 1e-5).max_tpr(0.01)), 3)
    0.546
    >>> mixed = TradeoffCurve.compose([g, TradeoffCurve.epsilon_delta(0.5, 0.0)])
    >>> mixed.method, bool(mixed.max_tpr(0.01) >= g.max_tpr(0.01)), mixed.error < 1e-3
    ('pld', True, True)
    """

    def __init__(self, mu: float = 0.0, steps=(), *, conservative: bool = False,
                 max_error: float = 1e-3):
        mu = float(mu)
        if not (mu >= 0 and math.isfinite(mu)):
            raise ValueError(f"TradeoffCurve: mu must be a finite number >= 0; got {mu!r}.")
        groups: dict[tuple[float, float], int] = {}
        for item in steps:
            eps, delta, count = (tuple(item) + (1,))[:3]
            eps, delta, count = float(eps), float(delta), int(count)
            if not (eps >= 0 and 0 <= delta <= 1 and count >= 1):
                raise ValueError("TradeoffCurve: each step is (epsilon >= 0, delta in [0, 1],"
                                 f" count >= 1); got {item!r}.")
            if eps == 0 and delta == 0:
                continue
            groups[(eps, delta)] = groups.get((eps, delta), 0) + count
        self.mu = mu
        self.steps = tuple(sorted((e, d, c) for (e, d), c in groups.items()))
        self.conservative = bool(conservative)
        self.max_error = float(max_error)
        self.error = 0.0
        self._roc = None
        if any(math.isinf(e) or d >= 1 for e, d, _ in self.steps):
            self.method = "infinite"
        elif not self.steps:
            self.method = "gaussian" if mu > 0 else "none"
        elif mu == 0 and len(self.steps) == 1 and self.steps[0][2] == 1:
            self.method = "epsilon_delta"
        else:
            self.method = "pld"
            self._roc = self._numerical()

    # ----------------------------------------------------------------- constructors
    @classmethod
    def gaussian(cls, mu: float) -> TradeoffCurve:
        """The exact curve of ``mu``-GDP (a Gaussian mechanism with sensitivity/sigma = mu)."""
        return cls(mu)

    @classmethod
    def epsilon_delta(cls, epsilon: float, delta: float, *,
                      conservative: bool = False) -> TradeoffCurve:
        """The curve of an (epsilon, delta)-DP claim (exact for the claim)."""
        return cls(0.0, [(epsilon, delta, 1)], conservative=conservative)

    @classmethod
    def from_profile(cls, epsilons, deltas, *, claim=None) -> TradeoffCurve:
        """The curve of a mechanism known by a privacy profile: (epsilon_i, delta_i)-DP for
        every ``i`` (conservative).

        A mechanism that is (epsilon_i, delta_i)-DP for every ``i`` (replace-one
        neighbours, so both orders of a pair) lets no attack exceed ``min_i
        min(delta_i + e^eps_i fpr, 1 - e^-eps_i (1 - delta_i - fpr))`` (Kairouz, Oh &
        Viswanath 2015, for each pair of the family); :meth:`max_advantage` and
        :meth:`delta` take the smallest of the pairs' values, an upper bound of the
        curve's. A profile derived from a Renyi-DP bound (random-stopping selection) is
        a bound on the mechanism, not its exact curve: the curve is labelled
        ``conservative``. Composed with other releases (:meth:`compose`), the curve
        enters through its ``claim`` pair alone (randomised response with that pair), a
        valid and looser summary.

        Parameters
        ----------
        epsilons, deltas : array-like of float
            The profile: ``deltas[i]`` in [0, 1] at ``epsilons[i] >= 0``.
        claim : (epsilon, delta) or None, default=None
            The pair that stands for the curve in compositions; ``None``: the pair whose
            curve is lowest at FPR 1 %.

        Returns
        -------
        curve : TradeoffCurve
            With ``method="profile"``.
        """
        eps = np.asarray(epsilons, dtype=float).ravel()
        dlt = np.asarray(deltas, dtype=float).ravel()
        keep = np.isfinite(eps) & (eps >= 0) & (dlt >= 0) & (dlt < 1)
        if eps.shape != dlt.shape or not np.any(keep):
            raise ValueError("from_profile needs epsilons and deltas of the same length "
                             "with at least one pair epsilon >= 0, delta in [0, 1).")
        eps, dlt = eps[keep], dlt[keep]
        if claim is None:
            i = int(np.argmin(_approx_tpr_pairs(np.array([0.01]), eps, dlt)[0]))
            claim = (eps[i], dlt[i])
        out = cls(0.0, [(float(claim[0]), float(claim[1]), 1)], conservative=True)
        if out.method == "epsilon_delta":
            eps, dlt = np.append(eps, claim[0]), np.append(dlt, claim[1])
            out.method = "profile"
            out.profile = (eps, dlt)
        return out

    @classmethod
    def compose(cls, curves, *, max_error: float = 1e-3) -> TradeoffCurve:
        """The curve of the adaptive composition of releases with these curves."""
        curves = list(curves)
        for c in curves:
            if not isinstance(c, TradeoffCurve):
                raise TypeError("TradeoffCurve.compose takes TradeoffCurve objects; got "
                                f"{type(c).__name__}.")
        mu = math.sqrt(sum(c.mu ** 2 for c in curves))
        steps = [s for c in curves for s in c.steps]
        return cls(mu, steps, conservative=any(c.conservative for c in curves),
                   max_error=max_error)

    # ------------------------------------------------------------------- numerics
    def _pmfs(self, h, pessimistic):
        out = []
        if self.mu > 0:
            out.append(_gaussian_pmf(self.mu, h, pessimistic))
        for eps, delta, count in self.steps:
            out.append(_rr_pmf(eps, delta, count, h, pessimistic))
        return out

    def _span(self):
        span = 2 * (-ndtri(_TAIL)) * self.mu
        for eps, _, count in self.steps:
            p = math.exp(eps) / (1 + math.exp(eps))
            sd = math.sqrt(count * p * (1 - p))
            span += 2 * eps * min(count, 2 * (-ndtri(_TAIL)) * sd + 4)
        return max(span, 1e-3)

    def _numerical(self):
        span = self._span()
        h = min(span / 2048, 0.02)
        while True:
            pess = _roc(*_compose_pmfs(self._pmfs(h, True), h, True), h)
            opt = _roc(*_compose_pmfs(self._pmfs(h, False), h, False), h)
            grid = np.union1d(_CHECK_ALPHAS, pess[0][pess[0] <= 1][:: max(1, pess[0].size
                                                                            // 2000)])
            gap = float(np.max(_interp(grid, *pess) - _interp(grid, *opt)))
            if gap <= self.max_error or span / h >= _MAX_GRID:
                self.error = max(gap, 0.0)
                self.grid_step = h
                return pess
            h /= 2

    # ------------------------------------------------------------------------ reading
    def max_tpr(self, fpr):
        """Largest true-positive rate of any membership attack at false-positive rate ``fpr``.

        Parameters
        ----------
        fpr : float or array-like of float in [0, 1]

        Returns
        -------
        tpr : ndarray (0-d for a scalar)
            ``1 - T(fpr)``; pessimistic (never below the exact value) for a numerical
            composition.
        """
        alpha = np.asarray(fpr, dtype=float)
        if not (alpha.min(initial=0.0) >= 0 and alpha.max(initial=0.0) <= 1):
            raise ValueError(f"fpr must be in [0, 1]; got {fpr!r}.")
        if self.method == "infinite":
            return np.ones_like(alpha)
        if self.method == "none":
            return alpha.copy()
        if self.method == "gaussian":
            return _gaussian_tpr(alpha, self.mu)
        if self.method == "epsilon_delta":
            (eps, delta, _), = self.steps
            return _approx_tpr(alpha, eps, delta)
        if self.method == "profile":
            return np.maximum(_approx_tpr_pairs(alpha.ravel(), *self.profile).min(axis=1)
                              .reshape(alpha.shape), alpha)
        out = _interp(alpha, *self._roc)
        # basic composition is valid too: never state more than it allows
        basic = self._basic()
        if basic is not None:
            out = np.minimum(out, _approx_tpr(alpha, *basic))
        return np.maximum(out, alpha)

    def _basic(self):
        if self.mu > 0:
            return None
        eps = sum(e * c for e, _, c in self.steps)
        delta = min(1.0, sum(d * c for _, d, c in self.steps))
        return eps, delta

    def type2_error(self, fpr):
        """``T(fpr)``: the lowest type-II error at type-I error ``fpr`` (``1 - max_tpr``)."""
        return 1.0 - self.max_tpr(fpr)

    def max_advantage(self) -> float:
        """Largest membership advantage ``TPR - FPR`` of any attack (at its best threshold)."""
        if self.method == "none":
            return 0.0
        if self.method == "infinite":
            return 1.0
        if self.method == "gaussian":
            return float(2 * ndtr(self.mu / 2) - 1)
        if self.method == "epsilon_delta":
            (eps, delta, _), = self.steps
            return float((math.expm1(eps) + 2 * delta) / (math.exp(eps) + 1))
        if self.method == "profile":
            return self.delta(0.0)
        fpr, tpr = self._roc
        grid = np.union1d(fpr, _CHECK_ALPHAS)
        return float(np.max(self.max_tpr(grid) - grid))

    def delta(self, epsilon: float) -> float:
        """The delta at which the release is (epsilon, delta)-DP: ``H_{e^eps}(Q || P)``.

        Read from the curve: ``delta(eps) = max_alpha (TPR(alpha) - e^eps alpha)`` (Dong,
        Roth & Su, Proposition 2.12); pessimistic like the curve.
        """
        epsilon = float(epsilon)
        if self.method == "none":
            return 0.0
        if self.method == "infinite":
            return 1.0
        e = math.exp(epsilon)
        if self.method == "gaussian":
            mu = self.mu
            return float(ndtr(-epsilon / mu + mu / 2) - e * ndtr(-epsilon / mu - mu / 2))
        if self.method == "epsilon_delta":
            (eps0, d0, _), = self.steps
            if epsilon >= eps0:
                return d0
            return float(d0 + (1 - d0) * (math.exp(eps0) - e) / (math.exp(eps0) + 1))
        if self.method == "profile":
            # sup of the concave TPR(alpha) - e^eps alpha, bounded above on a grid
            # and by each pair's own delta at epsilon (both are upper bounds)
            grid = _PROFILE_ALPHAS
            eps0, d0 = self.profile
            with np.errstate(over="ignore"):
                pairs = np.where(epsilon >= eps0, d0,
                                 d0 + (1 - d0) * (np.exp(eps0) - e) / (np.exp(eps0) + 1))
            sup = min(_concave_sup(grid, self.max_tpr(grid) - e * grid), float(pairs.min()))
            return float(np.clip(sup, 0.0, 1.0))
        fpr, tpr = self._roc
        grid = np.union1d(fpr, _CHECK_ALPHAS)
        return float(max(0.0, np.max(self.max_tpr(grid) - e * grid)))

    def epsilon(self, delta: float) -> float:
        """The smallest epsilon with ``delta(epsilon) <= delta`` (``inf`` if none)."""
        delta = float(delta)
        if self.method == "none":
            return 0.0
        if self.delta(0.0) <= delta:
            return 0.0
        hi = 1.0
        while self.delta(hi) > delta:
            hi *= 2
            if hi > 1e4:
                return math.inf
        return float(brentq(lambda e: self.delta(e) - delta, 0.0, hi, xtol=1e-10))

    def attribute_bound(self, prior) -> float:
        """Largest probability that an attacker guesses one row's categorical attribute.

        The attacker knows every other row and the declared ``prior`` over the attribute's
        values, sees the release, and guesses; changing the attribute is replacing the row,
        so every pair of values is a pair of neighbours. For guessing regions ``S_v`` and
        any reference value ``w``, ``P_v(S_v) <= TPR(P_w(S_v))`` and ``sum_v P_w(S_v) = 1``,
        so the success ``sum_v prior_v P_v(S_v)`` is at most the maximum of ``prior_w a_w +
        sum_{v != w} prior_v TPR(a_v)`` over the simplex (a concave problem, solved exactly
        on the curve's breakpoints); the bound is the smallest over ``w``.

        Parameters
        ----------
        prior : array-like of float
            Probabilities of the attribute's values (summing to 1).

        Returns
        -------
        bound : float
            Between ``max(prior)`` (guessing the most likely value without the release)
            and 1.
        """
        prior = np.asarray(prior, dtype=float).ravel()
        if prior.size < 2 or np.any(~(prior >= 0)) or abs(prior.sum() - 1) > 1e-9:
            raise ValueError("prior must be at least two probabilities that sum to 1; "
                             f"got {prior!r}.")
        if self.method == "none":
            return float(prior.max())
        if self.method == "infinite":
            return 1.0
        grid = np.unique(np.concatenate([[0.0], np.geomspace(1e-12, 1.0, 4000),
                                         np.linspace(0, 1, 2001)]))
        tpr = self.max_tpr(grid)
        slopes = np.diff(tpr) / np.diff(grid)      # non-increasing (concave curve)
        widths = np.diff(grid)
        # the chords lie below the concave curve: add the largest gap at a midpoint
        mid = 0.5 * (grid[1:] + grid[:-1])
        slack = float(np.max(self.max_tpr(mid) - 0.5 * (tpr[1:] + tpr[:-1])))
        best = 1.0
        for w in np.argsort(prior)[::-1][: min(prior.size, 20)]:
            others = np.delete(prior, w)

            def alloc(lam, others=others):
                # a_v(lam): all segments whose marginal gain prior_v * slope exceeds lam
                take = (others[:, None] * slopes[None, :]) > lam
                a = (take * widths).sum(axis=1)
                return a

            a = alloc(prior[w])
            if a.sum() > 1:
                lo, hi = prior[w], float(others.max() * slopes[0]) + 1
                for _ in range(100):
                    mid = 0.5 * (lo + hi)
                    if alloc(mid).sum() > 1:
                        lo = mid
                    else:
                        hi = mid
                a = alloc(hi)
                # the rest of the simplex goes to the segments at the threshold (value
                # grows by about lam per unit), an upper bound of the optimum
                rest = 1 - a.sum()
                value = float(np.sum(others * np.interp(a, grid, tpr)) + hi * rest)
            else:
                value = float(prior[w] * (1 - a.sum()) + np.sum(others * np.interp(a, grid,
                                                                                  tpr)))
            best = min(best, value)
        return float(min(1.0, max(best + max(slack, 0.0), prior.max())))

    # ----------------------------------------------------------------------- text
    @property
    def label(self) -> str:
        """How the curve was obtained, in words."""
        if self.method == "none":
            return "no DP step: nothing about the rows is released"
        if self.method == "infinite":
            return "no guarantee"
        if self.method == "gaussian":
            text = f"exact (Gaussian DP, mu = {self.mu:.4g})"
        elif self.method == "epsilon_delta":
            (eps, delta, _), = self.steps
            text = f"exact for an ({eps:.4g}, {delta:.3g})-DP claim"
        elif self.method == "profile":
            text = (f"from a privacy profile of {self.profile[0].size} (epsilon, delta) "
                    "pairs (the least of their curves)")
        else:
            text = (f"numerical composition of privacy-loss distributions, pessimistic, "
                    f"certified error <= {self.error:.1e}")
        if self.conservative:
            text += ("; conservative: some steps are known only by their (epsilon, delta), "
                     "their mechanisms may be safer")
        return text

    def __repr__(self) -> str:
        return (f"TradeoffCurve(TPR at FPR 1% <= {float(self.max_tpr(0.01)):.4g}, "
                f"advantage <= {self.max_advantage():.4g}; {self.label})")

    def __getstate__(self):
        return dict(self.__dict__)


# ---------------------------------------------------------------------------- target
@dataclass(frozen=True)
class RiskTarget:
    """A risk a user accepts, as a bound on membership attacks; sets the noise of a release.

    Pass it wherever an ``epsilon`` sets the noise (``FILLogisticRegression(epsilon=...)``,
    ``DPLogisticRegression``, ``DPStandardScaler``, a
    :class:`~sklearn_privacy.privacy.PrivacyLedger`): the
    estimator then uses the least noise whose trade-off curve meets the target, computed
    from the parameters and the public number of rows before any row is read.

    Parameters
    ----------
    tpr : float in (0, 1) or None, default=None
        Largest true-positive rate an attacker may reach at false-positive rate ``fpr``.
    fpr : float in (0, 1), default=0.01
        The false-positive rate at which ``tpr`` is stated.
    advantage : float in (0, 1) or None, default=None
        Largest membership advantage ``TPR - FPR`` (instead of ``tpr``).

    Notes
    -----
    Conversions (replace-one neighbours). A Gaussian mechanism is ``mu``-GDP with ``mu =
    Delta / sigma``; it meets ``tpr`` at ``fpr`` exactly when ``mu <= Phi^-1(tpr) -
    Phi^-1(fpr)`` and an ``advantage`` when ``mu <= 2 Phi^-1((1 + advantage) / 2)``
    (:meth:`gaussian_mu`). A mechanism known only as (epsilon, delta)-DP meets it when
    ``min(delta + e^eps fpr, 1 - e^-eps (1 - delta - fpr)) <= tpr``
    (:meth:`epsilon`). The other way, :meth:`from_epsilon` gives the TPR bound an (epsilon,
    delta) target implies, and :meth:`~sklearn_privacy.privacy.TradeoffCurve.epsilon` the
    epsilon of any curve.
    Calibrating Gaussian noise to ``from_epsilon(1, 1e-5)`` (TPR <= 2.72 % at FPR 1 %)
    needs ``mu = 0.403`` where calibrating to (1, 1e-5) needs ``mu = 0.268``: 0.66 times
    the noise for the same bound at FPR 1 %.

    Examples
    --------
    >>> from sklearn_privacy.privacy import RiskTarget
    >>> target = RiskTarget(tpr=0.05, fpr=0.01)
    >>> round(target.gaussian_mu(), 4), round(target.epsilon(delta=0.0), 4)
    (0.6815, 1.6094)
    >>> round(RiskTarget.from_epsilon(1.0, 1e-5).tpr, 4)
    0.0272
    """

    tpr: float | None = None
    fpr: float = 0.01
    advantage: float | None = None

    def __post_init__(self):
        if (self.tpr is None) == (self.advantage is None):
            raise ValueError("RiskTarget: give exactly one of tpr= (with fpr=) or "
                             "advantage=; e.g. RiskTarget(tpr=0.05, fpr=0.01).")
        for name in ("tpr", "fpr", "advantage"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, Real) or not 0 < v < 1:
                raise ValueError(f"RiskTarget: {name} must be a number in (0, 1); got {v!r}.")
        if self.tpr is not None and not self.tpr > self.fpr:
            raise ValueError(
                f"RiskTarget: tpr={self.tpr!r} must exceed fpr={self.fpr!r} (every release "
                "lets an attacker guess at random, TPR = FPR; a target at or below that "
                "allows no release).")

    @classmethod
    def from_epsilon(cls, epsilon: float, delta: float = 1e-5, *,
                     fpr: float = 0.01) -> RiskTarget:
        """The TPR bound at ``fpr`` that an (epsilon, delta) claim implies."""
        tpr = float(_approx_tpr(fpr, float(epsilon), float(delta)))
        return cls(tpr=min(tpr, 1 - 1e-12), fpr=fpr)

    def gaussian_mu(self) -> float:
        """Largest ``mu`` (sensitivity / sigma) of a Gaussian mechanism meeting the target."""
        if self.tpr is not None:
            return float(ndtri(self.tpr) - ndtri(self.fpr))
        return float(2 * ndtri((1 + self.advantage) / 2))

    def epsilon(self, delta: float = 1e-5) -> float:
        """Largest epsilon whose (epsilon, ``delta``) claim meets the target (``delta=0``:
        pure epsilon).

        Raises ``ValueError`` when ``delta`` alone exceeds the target.
        """
        delta = float(delta)
        if self.tpr is not None:
            # TPR(fpr) = min(delta + e^eps fpr, 1 - e^-eps (1 - delta - fpr)) <= tpr
            a, b = self.tpr - delta, 1 - delta - self.fpr
            if a <= self.fpr and b <= 1 - self.tpr:
                raise ValueError(
                    f"delta={delta!r} alone lets an attacker exceed TPR {self.tpr!r} at FPR "
                    f"{self.fpr!r}; use a smaller delta.")
            return float(max(math.log(a / self.fpr) if a > 0 else -math.inf,
                             math.log(b / (1 - self.tpr))))
        num = 1 + self.advantage - 2 * delta
        if num <= 1 - self.advantage:
            raise ValueError(f"delta={delta!r} alone exceeds advantage {self.advantage!r}; "
                             "use a smaller delta.")
        return float(math.log(num / (1 - self.advantage)))

    def share(self, fraction: float) -> RiskTarget:
        """The part of this target one Gaussian step of a composition may take.

        Gaussian steps compose by adding ``mu ** 2``, so steps given ``share(f_i)`` with
        ``sum f_i = 1`` compose to exactly this target: the step's target is the one met
        by ``mu = sqrt(fraction) * gaussian_mu()``.

        Parameters
        ----------
        fraction : float in (0, 1]

        Returns
        -------
        target : RiskTarget
            Of the same kind (``tpr`` at the same ``fpr``, or ``advantage``).
        """
        if isinstance(fraction, bool) or not isinstance(fraction, Real) or \
                not 0 < fraction <= 1:
            raise ValueError(f"fraction must be in (0, 1]; got {fraction!r}.")
        mu = math.sqrt(fraction) * self.gaussian_mu()
        if self.tpr is not None:
            return RiskTarget(tpr=float(ndtr(ndtri(self.fpr) + mu)), fpr=self.fpr)
        return RiskTarget(advantage=float(2 * ndtr(mu / 2) - 1))

    def is_met_by(self, curve: TradeoffCurve) -> bool:
        """Whether ``curve`` stays within the target."""
        if self.tpr is not None:
            return bool(float(curve.max_tpr(self.fpr)) <= self.tpr * (1 + 1e-9))
        return bool(curve.max_advantage() <= self.advantage * (1 + 1e-9))

    def stated_value(self, curve: TradeoffCurve) -> float:
        """The curve's value in the target's currency (TPR at ``fpr``, or the advantage)."""
        if self.tpr is not None:
            return float(curve.max_tpr(self.fpr))
        return float(curve.max_advantage())

    def __str__(self) -> str:
        if self.tpr is not None:
            return f"TPR <= {self.tpr:.4g} at FPR {self.fpr:.4g}"
        return f"membership advantage <= {self.advantage:.4g}"


def empirical_point(scores_members, scores_nonmembers, *, fpr: float = 0.01,
                    confidence: float = 0.95) -> dict:
    """An attack's TPR at false-positive rate at most ``fpr``, with what refutes a curve.

    The threshold is the ``(k + 1)``-th largest non-member score, ``k = floor(fpr n_out)``,
    and rows above it are called members. Its true FPR is a ``Beta(k + 1, n_out - k)``
    order statistic, so ``fpr_high`` (its ``confidence`` quantile, one-sided at ``(1 +
    confidence) / 2``) bounds it; ``tpr_low`` and ``tpr_high`` are the Clopper--Pearson
    interval of the TPR at the same level, so the two hold together with probability at
    least ``confidence``. A curve is refuted when ``tpr_low > curve.max_tpr(fpr_high)``.

    Returns
    -------
    point : dict
        ``tpr``, ``tpr_low``, ``tpr_high``, ``fpr`` (empirical), ``fpr_high``.
    """
    from scipy.stats import beta

    s_in = np.asarray(scores_members, dtype=float).ravel()
    s_out = np.sort(np.asarray(scores_nonmembers, dtype=float).ravel())[::-1]
    n_in, n_out = s_in.size, s_out.size
    k = int(np.floor(fpr * n_out + 1e-9))
    thr = s_out[k] if k < n_out else -np.inf
    t = int(np.count_nonzero(s_in > thr))
    f = int(np.count_nonzero(s_out > thr))
    one_sided = (1 + confidence) / 2
    lo = float(beta.ppf(1 - one_sided, t, n_in - t + 1)) if t > 0 else 0.0
    hi = float(beta.ppf(one_sided, t + 1, n_in - t)) if t < n_in else 1.0
    fpr_high = float(beta.ppf(one_sided, k + 1, n_out - k)) if k < n_out else 1.0
    return {"tpr": t / n_in, "tpr_low": lo, "tpr_high": hi, "fpr": f / n_out,
            "fpr_high": fpr_high}


def refutes(curve: TradeoffCurve, point: dict) -> bool:
    """Whether an ``empirical_point`` lies above ``curve`` at its confidence."""
    return bool(point["tpr_low"] > float(curve.max_tpr(min(point["fpr_high"], 1.0))))


def claim_curve(claim, *, max_error: float = 1e-3) -> TradeoffCurve:
    """The trade-off curve of a :class:`~sklearn_privacy.privacy.PrivacyClaim`'s steps."""
    steps = [s for s in claim.steps if s.kind == "dp"]
    if not claim.is_private:
        return TradeoffCurve(0.0, [(math.inf, 0.0, 1)])
    if len(steps) == 1 and isinstance(steps[0].tradeoff, TradeoffCurve):
        return steps[0].tradeoff
    mu = math.sqrt(sum(s.gaussian_mu ** 2 for s in steps if s.gaussian_mu is not None))
    rest = [(s.epsilon, s.delta, 1) for s in steps if s.gaussian_mu is None]
    conservative = any(s.delta > 0 for s in steps if s.gaussian_mu is None)
    curve = TradeoffCurve(mu, rest, conservative=conservative, max_error=max_error)
    return curve


def epsilon_value(epsilon, delta: float = 0.0) -> float:
    """``epsilon`` as a number; a :class:`RiskTarget` as the largest epsilon whose
    (epsilon, ``delta``) claim meets it (``RiskTarget.epsilon``): a mechanism calibrated
    to that epsilon meets the target, conservatively where its own curve is tighter."""
    if isinstance(epsilon, RiskTarget):
        return float(epsilon.epsilon(float(delta)))
    return float(epsilon)
