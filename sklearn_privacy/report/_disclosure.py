"""What the report's default page may show: the one place that decides it.

The default page of :class:`~sklearn_privacy.PrivacyReport` is a release of its own.
Every data-dependent figure the report computes goes through :class:`PageLedger`, which
puts it in one of three classes:

* **public** -- a function of the published object, the population rows (treated as
  public: the page publishes figures computed on them), the parameters and the report's
  own randomness only; shown as computed;
* **accounted** -- a sum over training rows of a per-row quantity bounded in
  ``[0, bound]`` given everything public (the published model, the population rows):
  replacing one training row moves the sum by at most ``bound`` (a vector of such sums,
  one per group, by at most ``2 * bound`` in L1: the row leaves one group and joins
  another). It is released with Laplace noise of scale ``sensitivity / epsilon_query``,
  where ``epsilon_query`` is the page's budget ``epsilon`` divided evenly among the
  queries planned from public facts before any is answered; the page states the budget;
* **private** -- anything else computed from the training rows (per-example eta, LiRA,
  the two-sample test, white-box and regression attacks, timings): kept in the report's
  private channel (``PrivacyReport.private_details``), never on the default page and
  never pickled.

Privacy of the page. Given the published model ``m`` (itself ``epsilon_m``-DP, or not),
each accounted query is ``epsilon_query``-DP with respect to replacing one training row
(Laplace mechanism; the rows sampled by the report are chosen by positions drawn from the
report's seed, independent of the values), and everything public is a function of ``m``
and public inputs. By adaptive composition the model and its default page together are
``(epsilon_m + epsilon, delta_m)``-DP. The number of queries answered can be smaller than
planned (a section that does not apply); the claim is the planned budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

#: where a figure comes from
SOURCES = ("public", "training")


@dataclass
class AccountedValue:
    """A figure released by the Laplace mechanism: the noisy value and its noise scale."""

    value: np.ndarray | float
    scale: float
    epsilon: float

    def tail(self, alpha: float) -> float:
        """``t`` with ``P(|noise| > t) = alpha`` for one coordinate."""
        return float(self.scale * math.log(1.0 / alpha))


@dataclass
class PageLedger:
    """Routes every data-dependent figure of the report: public, accounted or private.

    Parameters
    ----------
    epsilon : float
        The default page's own budget (the report's ``page_epsilon``).
    n_queries : int
        Accounted queries planned from public facts; each gets ``epsilon / n_queries``.
    min_group_size : int
        No figure from fewer than this many people: a group whose (noisy) member count
        or whose population count is below it is not shown.
    rng : numpy.random.Generator
        Source of the Laplace noise (the report's own randomness).
    """

    epsilon: float
    n_queries: int
    min_group_size: int
    rng: np.random.Generator
    spent: float = 0.0
    answered: list = field(default_factory=list)
    private: list = field(default_factory=list)

    @property
    def epsilon_query(self) -> float:
        """The budget of one accounted query."""
        return self.epsilon / max(1, self.n_queries)

    def figure(self, label, value, *, source, bound=None, vector=False):
        """Decide how one data-dependent figure is released and return what may be shown.

        Parameters
        ----------
        label : str
            What the figure is (stated in the page's accounting).
        value : float or ndarray
            The exact figure.
        source : {"public", "training"}
            ``"public"``: computed from the published object, the population rows, the
            parameters and the report's seed only. ``"training"``: computed from the
            training rows.
        bound : float or None
            For a training figure that is a sum over rows of a per-row quantity in
            ``[0, bound]`` (given the public inputs): its replace-one sensitivity is
            ``bound`` (``2 * bound`` in L1 for a ``vector`` of per-group sums). Without
            it, the figure is private.
        vector : bool
            ``value`` is one sum per disjoint group.

        Returns
        -------
        shown : float, ndarray, AccountedValue or None
            The value itself (public), an :class:`AccountedValue` (noisy) or None
            (private: not for the default page).
        """
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {source!r}.")
        if source == "public":
            return value
        if bound is None:
            self.private.append((label, value))
            return None
        if len(self.answered) >= self.n_queries:
            raise RuntimeError(f"PageLedger: the query {label!r} was not planned; plan it "
                               "from public facts before any query is answered.")
        eps = self.epsilon_query
        sensitivity = (2.0 if vector else 1.0) * float(bound)
        scale = sensitivity / eps
        v = np.asarray(value, dtype=float)
        noisy = v + self.rng.laplace(0.0, scale, size=v.shape)
        self.spent += eps
        self.answered.append((label, sensitivity, eps))
        return AccountedValue(noisy if v.ndim else float(noisy), scale, eps)

    def step_claim(self):
        """The page as a step of the claim (a DP step of budget ``epsilon``)."""
        from ..privacy import StepClaim

        return StepClaim("report page", "PrivacyReport", "dp", float(self.epsilon), 0.0,
                         f"{self.n_queries} figures computed from the training rows, each "
                         f"released with Laplace noise at epsilon "
                         f"{self.epsilon_query:.3g}; the other figures come from the "
                         "published object and the population rows")


def noisy_sum_upper_p(observed, null_mean, null_var, scales, alpha_floor=1e-300):
    """One-sided p-value of ``observed`` against ``N(null_mean, null_var)`` plus Laplace
    noises of the given ``scales`` (the exact null of a noisy, asymptotically normal sum).

    The convolution is integrated on a grid over the Laplace noise (its density is known),
    so the p-value accounts for the noise the page added.
    """
    scales = [s for s in scales if s > 0]
    sd = math.sqrt(max(null_var, 0.0))
    t = float(observed) - float(null_mean)
    if not scales:
        return float(stats.norm.sf(t / sd)) if sd > 0 else float(t <= 0)
    # total Laplace noise: sum of independent Laplaces; integrate numerically
    width = 40.0 * max(scales) + 10.0 * sd + abs(t)
    grid = np.linspace(-width, width, 8001)
    step = grid[1] - grid[0]
    dens = np.exp(-np.abs(grid) / scales[0]) / (2 * scales[0])
    for s in scales[1:]:
        k = np.exp(-np.abs(grid) / s) / (2 * s)
        dens = np.convolve(dens, k, mode="same") * step
    dens /= dens.sum() * step
    if sd > 0:
        tail = stats.norm.sf((t - grid) / sd)
    else:
        tail = (grid >= t).astype(float)
    return float(max(alpha_floor, min(1.0, np.sum(dens * tail) * step)))


def holm(p_values, level):
    """Holm's step-down procedure: which hypotheses are rejected at family-wise ``level``.

    Returns a boolean array in the order of ``p_values`` and the adjusted p-values.
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if not m:
        return np.zeros(0, bool), p
    order = np.argsort(p)
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adj[i] = running
    return adj < level, adj
