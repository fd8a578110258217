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
    #: the figure's id on the page (``"A1"``, ``"A2"``, ... in the order released)
    id: str = ""

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
    #: every accounted figure: id, label, sensitivity, epsilon, Laplace scale
    released: list = field(default_factory=list)
    #: every page element computed from accounted figures (:meth:`show`): id, kind,
    #: section, part, index, inputs
    items: list = field(default_factory=list)
    #: headline figures computed from accounted figures: summary key -> item id
    summary_items: dict = field(default_factory=dict)

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
        fid = f"A{len(self.released) + 1}"
        self.released.append({"id": fid, "label": str(label), "sensitivity": sensitivity,
                              "epsilon": eps, "scale": scale, "mechanism": "laplace"})
        return AccountedValue(noisy if v.ndim else float(noisy), scale, eps, fid)

    # ------------------------------------------------------------ derived page elements
    def _inputs(self, inputs):
        """The ids of ``inputs``: accounted figures this ledger released (or ids)."""
        ids = []
        for v in inputs:
            if isinstance(v, (list, tuple)):
                ids += self._inputs(v)
                continue
            fid = v.id if isinstance(v, AccountedValue) else v
            if not any(r["id"] == fid for r in self.released):
                raise ValueError(f"PageLedger.show: {v!r} is not a figure this ledger "
                                 "released; only post-processing of accounted figures may "
                                 "be derived on the page.")
            ids.append(fid)
        if not ids:
            raise ValueError("PageLedger.show: an element derived from no accounted figure "
                             "is public; append it to the section directly.")
        return tuple(dict.fromkeys(ids))

    def _item(self, kind, section, part, index, inputs):
        iid = f"D{len(self.items) + 1}"
        self.items.append({"id": iid, "kind": kind, "section": section, "part": part,
                           "index": index, "inputs": self._inputs(inputs)})
        return iid

    def show(self, sec, part, entry, *inputs):
        """Write to section ``sec`` an element computed from accounted figures.

        Parameters
        ----------
        sec : ReportSection
            The section of the page.
        part : {"verdict", "cell"}
            ``"verdict"``: ``entry`` is a verdict (its sentence and outcome);
            ``"cell"``: ``entry`` is a table row ``(label, value)`` whose label is public
            and whose value is derived.
        entry : Verdict or tuple
            What the page shows.
        *inputs : AccountedValue
            The accounted figures it is computed from (with public inputs only).
        """
        if part == "verdict":
            index = len(sec.verdicts)
            sec.add(entry)
        elif part == "cell":
            index = len(sec.table)
            sec.table.append(entry)
        else:
            raise ValueError(f"part must be 'verdict' or 'cell'; got {part!r}.")
        return self._item("sentence" if part == "verdict" else "figure", sec.key, part,
                          index, inputs)

    def mark(self, sec, part, index, *inputs):
        """Record an element already on ``sec`` as derived from ``inputs``."""
        return self._item("sentence" if part == "verdict" else "figure", sec.key, part,
                          index, inputs)

    def headline(self, key, *inputs):
        """Record the summary figure ``key`` (a headline row) as derived from ``inputs``."""
        ids = self._inputs(inputs)
        if key in self.summary_items:   # derived again: from both sets of inputs
            old = next(i for i in self.items if i["id"] == self.summary_items[key])
            old["inputs"] = tuple(dict.fromkeys(old["inputs"] + ids))
            return old["id"]
        iid = self._item("headline", "summary", "headline", key, ids)
        self.summary_items[key] = iid
        return iid

    def record(self) -> dict:
        """What the page's template refers to: the budget, the released figures (without
        their values) and the derived items (public structure)."""
        return {"epsilon": float(self.epsilon), "n_queries": int(self.n_queries),
                "released": [dict(r) for r in self.released],
                "items": [dict(i, inputs=list(i["inputs"])) for i in self.items]}

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


# ---------------------------------------------------------------------- findings
def count_p_value(count):
    """One-sided p-value of a noisy count against "no training row counted".

    Under the null the exact count is 0 and the released value is pure Laplace noise of
    scale ``b``: ``P(noise >= c) = exp(-c / b) / 2`` for ``c >= 0``.
    """
    c, b = float(count.value), float(count.scale)
    return 0.5 * math.exp(-c / b) if c >= 0 else 1.0 - 0.5 * math.exp(c / b)


def register_tests(ctx, sec, inputs, p_values, write, n_verdicts=1):
    """Reserve ``n_verdicts`` sentences of ``sec`` for findings decided at the end.

    Every finding of the default page that can send a release to rejection (a membership
    attack or group that leaks, training rows stored in the pickle) is one test of a single
    family: :func:`finish_tests` runs Holm's step-down procedure over all of them at the
    page's false-alarm level, then calls ``write(rejected, adjusted, method)``, which
    returns the ``n_verdicts`` verdicts (derived from the accounted ``inputs``).
    """
    from ._verdicts import Verdict

    ledger = ctx["ledger"]
    index = len(sec.verdicts)
    for _ in range(n_verdicts):
        ledger.show(sec, "verdict", Verdict("pending", "(decided with the page's other "
                                                       "tests)"), *inputs)
    ctx.setdefault("page_tests", []).append((sec, index, [float(p) for p in p_values],
                                             write))


def finish_tests(ctx, level):
    """Decide every registered finding together: Holm at family-wise ``level``.

    Under the null of every test (no training row stored, members scored like
    non-members) the page shows any such finding with probability at most ``level``.
    """
    regs = ctx.get("page_tests", [])
    ps = [p for _, _, tests, _ in regs for p in tests]
    rejected, adjusted = holm(ps, level)
    method = (f"Holm's step-down correction over the {len(ps)} finding tests of this page "
              f"at its false-alarm level {level:g}" if len(ps) != 1 else
              f"the page's one finding test, at its false-alarm level {level:g}")
    pos = 0
    for sec, index, tests, write in regs:
        k = len(tests)
        verdicts = write([bool(r) for r in rejected[pos:pos + k]],
                         [float(a) for a in adjusted[pos:pos + k]], method)
        for j, v in enumerate(verdicts):
            sec.verdicts[index + j] = str(v)
            sec.outcomes[index + j] = getattr(v, "outcome", "")
        pos += k
    ctx["summary"]["false_alarm"] = float(level)
    ctx["summary"]["finding_tests"] = len(ps)


def mark_reconciled(sections, ledger):
    """The audit sentences a leak of the membership section rewrites (``_reconcile``)
    are derived from the membership section's accounted figures."""
    by = {s.key: s for s in sections}
    memb, audit = by.get("membership"), by.get("audits")
    if memb is None or audit is None:
        return
    inputs = [fid for it in ledger.items if it["section"] == "membership"
              and it["part"] == "verdict" for fid in it["inputs"]]
    if not inputs:
        return
    marked = {it["index"]: it for it in ledger.items
              if it["section"] == "audits" and it["part"] == "verdict"}
    for i, o in enumerate(audit.outcomes):
        if o == "cannot_tell" and i not in marked:
            ledger.mark(audit, "verdict", i, *inputs)
        elif o == "cannot_tell":
            item = marked[i]
            item["inputs"] = tuple(dict.fromkeys(tuple(item["inputs"]) + tuple(inputs)))


# ------------------------------------------------------- facts read from the public side
def published_rows(model) -> int:
    """Training rows a preprocessing step of ``model`` holds verbatim, read from the
    published object: the ``components_`` of every ``Nystroem`` step (nested in
    pipelines and column transformers), whose count is a parameter of the step.

    The count of training rows whose eta is infinite is not it: a training row equal to
    a component (a duplicate) has an infinite eta too, so that count depends on the rows.
    """
    from sklearn.kernel_approximation import Nystroem

    total, stack, seen = 0, [model], set()
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Nystroem) and hasattr(obj, "components_"):
            total += int(obj.components_.shape[0])
            continue
        for name in ("steps", "transformers_", "transformer_list"):
            for entry in getattr(obj, name, None) or []:
                if isinstance(entry, tuple) and len(entry) >= 2:
                    stack.append(entry[1])
    return total


#: reasons of :func:`sklearn_privacy.fil.audit` that depend on the published object and
#: the parameters only (the model's type, its size): stated on the default page as given
_PUBLIC_AUDIT_REASONS = ("audit supports fitted scikit-learn", "the report audits every row",
                         # an MLP refused for its activation or its missing penalty
                         "is not twice differentiable", "has no penalty; eta needs")


def public_audit_reason(msg, exc, ctx):
    """What the default page says when ``fil.audit`` refuses the model on its rows.

    A refusal decided by the model's type or size is stated as given. Any other message
    can quote the training rows (their classes, a value that does not convert, a singular
    Hessian on these data): the page states the exception's type and the message goes to
    the private channel (``ctx["fil_audit_refusal"]``, shown on the private page).
    """
    if any(k in msg for k in _PUBLIC_AUDIT_REASONS):
        return msg
    ctx["fil_audit_refusal"] = f"{type(exc).__name__}: {msg}"
    return (f"sklearn_privacy.fil.audit refused the model on its training rows "
            f"({type(exc).__name__}; the message can quote those rows, so it is in the "
            "report's private channel: build the report with include_private_details=True "
            "to read it)")
