"""Structural disclosure checks: what a fitted model's own structure proves about its rows.

Attacks measure what an adversary *infers*; these checks read what the published object
*states*. Each check belongs to a model family, says what it proves, and reports whether
it ran, what it found and why it could not run. Where the finding is a membership test
(the pickle tells members from non-members), the check also returns that test's scores
on training rows and population rows, so that the report can turn it into an empirical
epsilon with :func:`sklearn_privacy.attacks.epsilon_lower_bound`.

Families and checks (``min_rows`` is the k of k-anonymity, 10 by default):

* trees, forests, boosting -- ``leaf_k_anonymity`` (leaves the pickle says are backed by
  fewer than k training rows), ``class_disclosure`` (pure leaves of fewer than k rows:
  everyone in that region of the input space has the leaf's label),
  ``threshold_midpoints`` (split or bin thresholds equal to a training value or to the
  midpoint of two training values, as a split between consecutive values of a node
  is), ``recoverable_values`` (columns whose every distinct training value follows from
  the thresholds and any one training value of the column: a row with another value is
  proved a non-member);
* instance-based models -- ``stored_rows`` (fitted arrays with one column per input, such as
  support vectors, a neighbours model's or a kernel model's stored rows, matched bit for bit
  with the training rows as the model sees them);
* naive-Bayes-style models -- ``small_class_statistics`` (per-class statistics published
  for classes of fewer than k training rows: for a class of one row its mean is that row);
* linear models and MLPs -- ``degrees_of_freedom`` (fitted parameters against training
  rows: with fewer than k residual degrees of freedom the model can interpolate its rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: most rows a side of a structural membership test
_TEST_ROWS = 5_000
#: a column with at most this many distinct values has a guessable grid (scikit-learn's
#: histogram boosting bins such a column at every midpoint: ``max_bins`` is at most 255)
_GUESSABLE = 255


@dataclass
class StructuralCheck:
    """One structural disclosure check of a fitted model.

    Parameters
    ----------
    name : str
        The check's key (``"leaf_k_anonymity"``, ``"stored_rows"``, ...).
    family : str
        The model family it applies to (``"trees"``, ``"instance"``, ``"naive_bayes"``,
        ``"parametric"``).
    proves : str
        What a finding of this check proves.
    ran : bool
        Whether the check could look (a "no" is said only when it ran).
    found : int or None
        How many disclosive items it found (None when it did not run).
    total : int or None
        Out of how many items looked at.
    detail : str
        The figures, in words.
    reason : str or None
        Why the check could not run.
    membership : tuple or None
        ``(members, scores)`` of the membership test the finding gives (training rows
        True, population rows False), for :func:`~sklearn_privacy.attacks.epsilon_lower_bound`.
    channel : {"public", "accounted", "private"}
        How the report's default page may show the check's figures (:data:`CHANNELS`):
        read from the published object, a Laplace-noised count, or only on the private
        page.
    """

    name: str
    family: str
    proves: str
    ran: bool
    found: int | None = None
    total: int | None = None
    detail: str = ""
    reason: str | None = None
    membership: tuple | None = field(default=None, repr=False)
    channel: str = "public"

    def record(self, private: bool = False) -> dict:
        """The check as a dictionary of the report's record.

        A check of the private channel keeps only what it is and whether it ran unless
        ``private`` (the private record).
        """
        out = {k: v for k, v in vars(self).items()
               if k not in ("membership", "private_found", "private_detail")}
        if private and hasattr(self, "private_detail"):
            out.update(found=self.private_found, detail=self.private_detail)
        if self.channel == "private" and not private:
            # whether it could run can depend on the rows too (distinct values per column)
            out.update(ran=True, found=None, total=None, reason=None, detail=(
                "computed from the training rows: its figures are in the report's private "
                "channel (include_private_details=True)"))
        return out

    @property
    def outcome(self) -> str:
        """``"disclosive"``, ``"none_found"`` or ``"not_checked"``."""
        if not self.ran:
            return "not_checked"
        return "disclosive" if self.found else "none_found"


PROVES = {
    "leaf_k_anonymity": (
        "the pickle states, for each such leaf, a region of the input space that holds "
        "fewer than k training rows (and their targets): a person known to be in that "
        "region is singled out among at most k-1 others"),
    "class_disclosure": (
        "each such leaf is pure and holds fewer than k training rows: anyone whose row "
        "falls in its region has, in the training data, the leaf's label (attribute "
        "disclosure of the label for a group smaller than k)"),
    "threshold_midpoints": (
        "each such threshold lies exactly on a training value of its column or halfway "
        "between two (as a tree splits between consecutive values of a node's rows): the "
        "pickle encodes values of the training rows, not only a summary of them"),
    "recoverable_values": (
        "from the thresholds and any one training value of the column, every distinct "
        "training value of the column is recovered exactly: a row with another value is "
        "proved a non-member (a membership test)"),
    "stored_rows": (
        "the pickle holds these training rows bit for bit, in the space the model sees "
        "(behind an invertible preprocessing they are the raw rows): publishing it "
        "publishes them, and exact matching is a membership test"),
    "small_class_statistics": (
        "per-class statistics (means, variances, counts) are published for classes of "
        "fewer than k training rows; for a class of one row its mean is that row"),
    "degrees_of_freedom": (
        "with fewer than k residual degrees of freedom (training rows minus fitted "
        "parameters) the model can fit its training rows exactly; a risk indicator, not a "
        "proof of disclosure (the attacks measure what it leaks)"),
}


#: how the report's default page may show each check (``report._disclosure``): ``public``
#: checks read only the published object (leaf counts, class counts and parameters are in
#: the pickle; the number of training rows is a parameter of the page); ``accounted``:
#: a count over training rows of a 0/1 quantity given the published model, released with
#: Laplace noise; ``private``: the threshold checks compare the thresholds with the
#: training values (no bounded per-row sum), so their figures are private. Every
#: membership test of a finding scores training rows: private too.
CHANNELS = {
    "leaf_k_anonymity": "public",
    "class_disclosure": "public",
    "threshold_midpoints": "private",
    "recoverable_values": "private",
    "stored_rows": "accounted",
    "small_class_statistics": "public",
    "degrees_of_freedom": "public",
}


def _check(name, family, **kw):
    return StructuralCheck(name=name, family=family, proves=PROVES[name],
                           channel=CHANNELS[name], **kw)


# ---------------------------------------------------------------------- model access
def _final_and_pre(est):
    """The fitted final model and the preprocessing before it (None for a bare model)."""
    pre = None
    if hasattr(est, "steps"):
        pre = est[:-1] if len(est.steps) > 1 else None
        est = est.steps[-1][1]
    best = getattr(est, "best_estimator_", None)   # a search: what it publishes
    return (best if best is not None else est), pre


def _model_rows(pre, X):
    """Rows as the final model sees them, as a dense float array (or a reason)."""
    try:
        Xt = X if pre is None else pre.transform(X)
    except Exception as exc:  # noqa: BLE001 - the refusal is the reason
        # the message can quote a training value: only its type is stated
        return None, (f"the rows could not be pushed through the preprocessing "
                      f"({type(exc).__name__})")
    if hasattr(Xt, "toarray"):
        if Xt.shape[0] * Xt.shape[1] > 50_000_000:
            return None, "the rows the model sees are a large sparse matrix"
        Xt = Xt.toarray()
    try:
        Xt = np.asarray(Xt, dtype=np.float64)
    except (TypeError, ValueError):
        return None, "the rows the model sees have non-numeric columns"
    if Xt.ndim != 2:
        return None, "the rows the model sees are not a 2-D table"
    return Xt, None


def _trees(final):
    """The scikit-learn decision trees of a tree, forest or gradient boosting model."""
    from sklearn.tree import BaseDecisionTree

    if isinstance(final, BaseDecisionTree):
        return [final]
    ests = getattr(final, "estimators_", None)
    if ests is None:
        return []
    flat = list(np.ravel(np.asarray(ests, dtype=object))) if isinstance(ests, np.ndarray) \
        else list(ests)
    return [t for t in flat if isinstance(t, BaseDecisionTree)] if flat and all(
        isinstance(t, BaseDecisionTree) for t in flat) else []


def _is_hist(final):
    return type(final).__name__.startswith("HistGradientBoosting") and hasattr(
        final, "n_iter_")


# ---------------------------------------------------------------------- helpers
def _distinct(col, float32=False):
    v = col[np.isfinite(col)]
    if float32:
        v = v.astype(np.float32).astype(np.float64)
    return np.unique(v)


def _midpoints(values):
    return values[:-1] / 2.0 + values[1:] / 2.0


def _on_grid(t, grid):
    """Which of ``t`` equal (to 1e-12 relative) an element of sorted ``grid``."""
    if grid.size == 0 or t.size == 0:
        return np.zeros(t.size, bool)
    pos = np.clip(np.searchsorted(grid, t), 1, grid.size - 1) if grid.size > 1 \
        else np.zeros(t.size, int)
    near = np.minimum(np.abs(grid[pos] - t), np.abs(grid[np.maximum(pos - 1, 0)] - t))
    scale = np.maximum(np.abs(t), 1.0)
    return near <= 1e-12 * scale


def recover_values(thresholds, anchor):
    """Every distinct training value of a column from its full set of midpoints and one value.

    ``thresholds`` are the sorted midpoints ``m_i = (v_i + v_{i+1}) / 2`` of consecutive
    distinct values ``v_0 < ... < v_K``; ``anchor`` is any one of the ``v_i``. Reflecting
    across each midpoint, ``v_{i+1} = 2 m_i - v_i``, recovers all of them.

    Parameters
    ----------
    thresholds : ndarray of shape (K,)
        Sorted midpoints.
    anchor : float
        One training value of the column.

    Returns
    -------
    values : ndarray of shape (K + 1,)
        The recovered distinct values, sorted.
    """
    t = np.asarray(thresholds, dtype=float)
    b = int(np.searchsorted(t, anchor))
    v = np.empty(t.size + 1)
    v[b] = anchor
    for i in range(b, t.size):           # K reflections; K <= max_bins (255)
        v[i + 1] = 2.0 * t[i] - v[i]
    for i in range(b - 1, -1, -1):
        v[i] = 2.0 * t[i] - v[i + 1]
    return v


def _row_hash(A):
    """A 64-bit hash of every row of a float array (exact bits; -0.0 read as 0.0)."""
    A = np.ascontiguousarray(np.asarray(A, dtype=np.float64) + 0.0)
    bits = A.view(np.uint64)
    mult = (np.arange(1, A.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
            | np.uint64(1))
    with np.errstate(over="ignore"):
        return (bits * mult[None, :]).sum(axis=1, dtype=np.uint64) ^ (bits[:, 0] >> np.uint64(7))


def _row_arrays(final, width):
    """Fitted 2-D float arrays of ``final`` with one column per input (name, array)."""
    out = []
    for k, v in vars(final).items():
        if k in ("coef_", "coefs_", "intercepts_", "theta_", "var_", "sigma_"):
            continue                      # parameters, not rows (checked elsewhere)
        if hasattr(v, "tocsr") and getattr(v, "ndim", 0) == 2 and v.shape[1] == width:
            v = v.toarray()
        if isinstance(v, np.ndarray) and v.ndim == 2 and v.dtype.kind == "f" \
                and v.shape[1] == width and v.size:
            out.append((k, v))
    return out


# ---------------------------------------------------------------------- the checks
def _leaf_stats(final, trees, hist_nodes):
    """Per tree: (counts of training rows per leaf, pure-leaf mask or None)."""
    out = []
    for t in trees:
        tr = t.tree_
        leaf = tr.children_left == -1
        pure = None
        if tr.value.shape[-1] > 1 and hasattr(t, "classes_"):
            pure = (tr.value[leaf, 0, :] > 0).sum(axis=1) == 1
        out.append((tr.n_node_samples[leaf], pure))
    for nodes in hist_nodes:
        out.append((nodes["count"][nodes["is_leaf"].astype(bool)], None))
    return out


def _hist_leaf(nodes, X):
    """Index of the leaf of every row of ``X`` in one HistGradientBoosting tree."""
    node = np.zeros(X.shape[0], dtype=np.intp)
    leaf = nodes["is_leaf"].astype(bool)
    for _ in range(int(nodes["depth"].max()) + 1):
        active = ~leaf[node]
        if not active.any():
            break
        idx = np.flatnonzero(active)
        nd = node[idx]
        x = X[idx, nodes["feature_idx"][nd]]
        go_left = np.where(np.isnan(x), nodes["missing_go_to_left"][nd].astype(bool),
                           x <= nodes["num_threshold"][nd])
        node[idx] = np.where(go_left, nodes["left"][nd], nodes["right"][nd])
    return node


def _leaf_scores(final, trees, hist_nodes, Xs, ys):
    """Membership score from the leaves: mean over trees of 1 / (training rows in the
    row's leaf), counted only where the leaf's stored class is the row's label."""
    score = np.zeros(Xs.shape[0])
    classes = getattr(final, "classes_", None)
    for t in trees:
        tr = t.tree_
        leaf = tr.apply(np.ascontiguousarray(Xs, dtype=np.float32))   # rows as arrays
        s = 1.0 / tr.n_node_samples[leaf]
        if classes is not None and tr.value.shape[-1] == len(classes) and ys is not None:
            s = s * (classes[np.argmax(tr.value[leaf, 0, :], axis=1)] == ys)
        score += s
    for nodes in hist_nodes:
        score += 1.0 / np.maximum(nodes["count"][_hist_leaf(nodes, Xs)], 1)
    return score / max(len(trees) + len(hist_nodes), 1)


def _tree_thresholds(trees, hist_thresholds, d):
    """Thresholds per input column (all trees), and whether they are HGB bin thresholds."""
    per = [[] for _ in range(d)]
    for t in trees:
        tr = t.tree_
        inner = tr.children_left != -1
        for f, th in zip(tr.feature[inner], tr.threshold[inner], strict=True):
            per[f].append(th)
    if hist_thresholds is not None:
        for j, th in enumerate(hist_thresholds[:d]):
            if th is not None:
                per[j].extend(np.asarray(th, dtype=float).tolist())
    return [np.unique(np.asarray(p, dtype=float)) for p in per]


def _tree_family_checks(final, trees, hist_nodes, hist_thresholds, Xt, y, Xs, ys, members,
                        min_rows):
    checks = []
    stats = _leaf_stats(final, trees, hist_nodes)
    counts = np.concatenate([c for c, _ in stats]) if stats else np.zeros(0, int)
    small = counts < min_rows
    n_small_rows = int(counts[small].sum())
    checks.append(_check(
        "leaf_k_anonymity", "trees", ran=True, found=int(small.sum()), total=counts.size,
        detail=(f"{int(small.sum()):,} of {counts.size:,} leaves hold fewer than {min_rows} "
                f"training rows ({n_small_rows:,} row-in-leaf memberships; smallest leaf "
                f"{int(counts.min()) if counts.size else 0} row(s))"),
        membership=(members, _leaf_scores(final, trees, hist_nodes, Xs, ys))
        if Xs is not None else None))
    if any(p is not None for _, p in stats):
        pure_small = sum(int(np.sum(p & (c < min_rows))) for c, p in stats if p is not None)
        n_leaves = sum(c.size for c, p in stats if p is not None)
        checks.append(_check(
            "class_disclosure", "trees", ran=True, found=pure_small, total=n_leaves,
            detail=(f"{pure_small:,} of {n_leaves:,} leaves are pure and hold fewer than "
                    f"{min_rows} training rows")))
    else:
        why = ("the leaves store boosting values, not class counts" if hist_nodes or
               type(final).__name__.startswith("GradientBoosting")
               else "a regressor's leaves store mean targets, not classes")
        checks.append(_check("class_disclosure", "trees", ran=False, reason=why))
    if Xt is None:
        reason = "the training rows as the model sees them are not available"
        checks += [_check("threshold_midpoints", "trees", ran=False, reason=reason),
                   _check("recoverable_values", "trees", ran=False, reason=reason)]
        return checks
    d = Xt.shape[1]
    per = _tree_thresholds(trees, hist_thresholds, d)
    hits = total = n_cols = 0
    chance = 0.0 if Xs is not None else None
    recoverable = []
    f32 = bool(trees)               # scikit-learn's trees split float32 copies of the rows
    for j in range(d):
        t = per[j]
        if not t.size:
            continue
        vals = _distinct(Xt[:, j], float32=f32 and not hist_thresholds)
        if vals.size > _GUESSABLE:   # on a small grid a midpoint is guessed without the data
            hits += int(_pair_midpoints(t, vals).sum())
            total += t.size
            n_cols += 1
            if chance is not None:
                chance += _chance_hits(t.size, vals, Xs[~members, j]) or 0.0
        mids = _midpoints(vals)
        if vals.size >= 2 and t.size == mids.size and np.allclose(t, mids, rtol=1e-12,
                                                                  atol=0):
            rec = recover_values(t, vals[vals.size // 2])
            if np.allclose(rec, vals, rtol=1e-9, atol=1e-9 * max(1.0, np.abs(vals).max())):
                recoverable.append((j, rec))
    if n_cols:
        # a finding needs more hits than thresholds not derived from these rows would get
        excess = hits if chance is None else hits - chance
        significant = chance is None or excess > 3.0 * np.sqrt(chance + 1.0)
        checks.append(_check(
            "threshold_midpoints", "trees", ran=True,
            found=int(round(excess)) if significant else 0, total=total,
            detail=(f"{hits:,} of {total:,} distinct thresholds on the {n_cols} split columns "
                    f"of more than {_GUESSABLE} distinct training values equal a training "
                    "value of their column or the midpoint of two"
                    + ("" if chance is None else
                       f" ({chance:.1f} expected by chance: the rate of midpoints of "
                       "population values)"))))
    else:
        checks.append(_check(
            "threshold_midpoints", "trees", ran=False,
            reason=(f"no split column has more than {_GUESSABLE} distinct training values (on "
                    "fewer, a value or midpoint can be guessed without the data; the "
                    "recoverable-values check covers them)")))
    # a recovered set discloses something only when it is not the column's whole public
    # range: more than two values and, with population rows, one of theirs outside it
    informative = []
    for j, rec in recoverable:
        if rec.size <= 2:
            continue
        if Xs is not None and np.all(_on_grid_tol(Xs[~members, j], rec)
                                     | ~np.isfinite(Xs[~members, j])):
            continue
        informative.append((j, rec))
    member_test = None
    if informative and Xs is not None:
        inside = np.zeros(Xs.shape[0])
        for j, rec in informative:
            inside += _on_grid_tol(Xs[:, j], rec)
        member_test = (members, inside / len(informative))
    listed = ", ".join(str(j) for j, _ in informative[:10])
    checks.append(_check(
        "recoverable_values", "trees", ran=True, found=len(informative), total=d,
        detail=(f"{len(recoverable)} of {d} input columns have every distinct training value "
                f"recoverable from the thresholds; {len(informative)} of them informative "
                "(more than two values"
                + (", and a population value outside the recovered set" if Xs is not None
                   else "") + ")" + (f": columns {listed}" if informative else "")),
        membership=member_test))
    return checks


#: training values below a threshold tried as one end of the pair it is the midpoint of
_PAIR_WINDOW = 32


def _pair_midpoints(t, vals):
    """Which thresholds equal a training value or the midpoint of two training values.

    A tree splits a node halfway between two consecutive values of the node's rows, so a
    threshold ``t`` derived from the rows has a training value ``a <= t`` (among the
    ``_PAIR_WINDOW`` values just below) whose reflection ``2 t - a`` is a training value
    (among the ``_PAIR_WINDOW`` just above).
    """
    if vals.size == 0 or t.size == 0:
        return np.zeros(t.size, bool)
    hit = _on_grid(t, vals)
    pos = np.searchsorted(vals, t, side="right")          # vals[pos - 1] <= t
    top = vals[np.minimum(pos + _PAIR_WINDOW - 1, vals.size - 1)]
    for k in range(1, min(_PAIR_WINDOW, vals.size) + 1):
        i = pos - k
        ok = i >= 0
        b = 2.0 * t - vals[np.maximum(i, 0)]
        hit |= ok & (b <= top * (1 + 1e-12) + 1e-300) & _on_grid(b, vals)
    return hit


def _chance_hits(t_size, vals, other):
    """Hits of :func:`_pair_midpoints` expected by chance for ``t_size`` thresholds that
    do not come from the training rows: midpoints of consecutive distinct values of
    ``other`` rows (population rows), scaled to ``t_size``; None without such rows."""
    if other is None:
        return None
    pseudo = _midpoints(np.unique(other[np.isfinite(other)]))
    if pseudo.size == 0:
        return None
    return float(_pair_midpoints(pseudo, vals).mean() * t_size)


def _on_grid_tol(x, grid):
    grid = np.sort(grid)
    pos = np.clip(np.searchsorted(grid, x), 1, max(grid.size - 1, 1))
    lo = grid[np.maximum(pos - 1, 0)]
    hi = grid[np.minimum(pos, grid.size - 1)]
    near = np.minimum(np.abs(x - lo), np.abs(x - hi))
    return near <= 1e-9 * np.maximum(1.0, np.abs(x))


def _instance_checks(final, Xt, Xs, members):
    arrays = _row_arrays(final, Xt.shape[1])
    if not arrays:
        return []
    train = np.zeros(Xt.shape[0], bool)
    probe = np.zeros(Xs.shape[0], bool) if Xs is not None else None
    names = []
    for name, A in arrays:
        names.append(f"{name} ({A.shape[0]:,} rows)")
        single = A.dtype == np.float32
        stored = _row_hash(A)
        cast = (lambda R: R.astype(np.float32)) if single else (lambda R: R)
        train |= np.isin(_row_hash(cast(Xt)), stored)
        if probe is not None:
            probe |= np.isin(_row_hash(cast(Xs)), stored)
    found = int(train.sum())
    return [_check(
        "stored_rows", "instance", ran=True, found=found, total=Xt.shape[0],
        detail=(f"{found:,} of {Xt.shape[0]:,} training rows are stored in "
                + ", ".join(names)),
        membership=(members, probe.astype(float)) if probe is not None else None)]


def _naive_bayes_checks(final, min_rows):
    counts = np.asarray(final.class_count_, dtype=float)
    small = counts < min_rows
    classes = np.asarray(getattr(final, "classes_", np.arange(counts.size)))
    listed = ", ".join(repr(c.item() if hasattr(c, "item") else c) for c in classes[small][:10])
    return [_check(
        "small_class_statistics", "naive_bayes", ran=True, found=int(small.sum()),
        total=counts.size,
        detail=(f"{int(small.sum())} of {counts.size} classes have fewer than {min_rows} "
                "training rows and published per-class statistics"
                + (f" (classes {listed})" if small.any() else "")))]


def _n_parameters(final):
    """Fitted parameters of a linear model or MLP (None for other models)."""
    if hasattr(final, "coefs_") and hasattr(final, "intercepts_"):
        return int(sum(np.size(c) for c in final.coefs_)
                   + sum(np.size(b) for b in final.intercepts_))
    if hasattr(final, "coef_") and not hasattr(final, "support_vectors_"):
        return int(np.size(final.coef_) + np.size(getattr(final, "intercept_", 0))
                   * bool(np.any(getattr(final, "intercept_", 0) != 0)
                          or getattr(final, "fit_intercept", False)))
    return None


def _dof_check(final, n, min_rows):
    p = _n_parameters(final)
    if p is None:
        return []
    dof = n - p
    return [_check(
        "degrees_of_freedom", "parametric", ran=True, found=int(dof < min_rows), total=1,
        detail=(f"{p:,} fitted parameters for {n:,} training rows: {dof:,} residual degrees "
                f"of freedom (fewer than {min_rows} is flagged)"))]


def structural_checks(estimator, X, y, X_population=None, y_population=None, *,
                      min_rows: int = 10, rng=None) -> list[StructuralCheck]:
    """Run every structural check that applies to a fitted model (or pipeline).

    Parameters
    ----------
    estimator : fitted estimator or Pipeline
        The published model.
    X, y : array-like
        Its training rows (raw, as passed to the model) and targets.
    X_population, y_population : array-like or None
        Rows not used for training: the non-members of the checks' membership tests.
    min_rows : int, default=10
        The k of k-anonymity: leaves, classes and residual degrees of freedom below it
        are findings.
    rng : numpy.random.Generator or None
        Subsampling of the membership tests' rows (at most 5,000 a side).

    Returns
    -------
    checks : list of StructuralCheck
        Every applicable check, run or not (with the reason).
    """
    from ..attacks._validation import n_rows, take_rows

    rng = np.random.default_rng(0) if rng is None else rng
    final, pre = _final_and_pre(estimator)
    n = n_rows(X)
    Xt, why = _model_rows(pre, X)
    y = np.asarray(y)
    Xs = ys = members = None
    if Xt is not None and X_population is not None:
        k = min(n, n_rows(X_population), _TEST_ROWS)
        i_in = np.sort(rng.choice(n, size=k, replace=False))
        i_out = np.sort(rng.choice(n_rows(X_population), size=k, replace=False))
        Xp_t, why_p = _model_rows(pre, take_rows(X_population, i_out))
        if Xp_t is not None and Xp_t.shape[1] == Xt.shape[1]:
            Xs = np.vstack([Xt[i_in], Xp_t])
            ys = np.r_[y[i_in], np.asarray(y_population)[i_out]]
            members = np.r_[np.ones(k, bool), np.zeros(k, bool)]
    checks = []
    trees = _trees(final)
    hist = _is_hist(final)
    if trees or hist:
        from ..utils.fixes import hist_gradient_boosting_state

        thresholds, nodes = hist_gradient_boosting_state(final) if hist else (None, [])
        checks += _tree_family_checks(final, trees, nodes, thresholds, Xt, y, Xs, ys,
                                      members, min_rows)
    if Xt is not None:
        checks += _instance_checks(final, Xt, Xs, members)
    elif any(hasattr(final, a) for a in ("support_vectors_", "_fit_X", "X_fit_", "X_train_")):
        checks.append(_check("stored_rows", "instance", ran=False, reason=why))
    if hasattr(final, "class_count_") and (hasattr(final, "theta_")
                                           or hasattr(final, "feature_count_")):
        checks += _naive_bayes_checks(final, min_rows)
    checks += _dof_check(final, n, min_rows)
    return checks


_TITLES = {
    "leaf_k_anonymity": "leaves under k training rows",
    "class_disclosure": "pure leaves under k training rows (class disclosure)",
    "threshold_midpoints": "thresholds on training values or their midpoints",
    "recoverable_values": "columns whose training values the thresholds recover",
    "stored_rows": "training rows stored in the model",
    "small_class_statistics": "per-class statistics of classes under k rows",
    "degrees_of_freedom": "parameters against training rows (degrees of freedom)",
}


def planned_queries(estimator) -> int:
    """Accounted queries of the structural section, from the published object alone.

    One (how many training rows the model stores) when the final model has a fitted
    float array with one column per input (support vectors, stored samples).
    """
    final, _ = _final_and_pre(estimator)
    width = getattr(final, "n_features_in_", None)
    if not isinstance(width, int | np.integer):
        return 0
    try:
        return int(bool(_row_arrays(final, int(width))))
    except Exception:  # noqa: BLE001 - a model whose attributes cannot be read: none
        return 0


def structural_section(ctx):
    """The report's section of structural checks (a builder of ``PrivacyReport``).

    Every figure goes through the page's ledger (``ctx["ledger"]``) by the check's
    channel (:data:`CHANNELS`): public checks are shown as computed, the stored-rows count
    is released with Laplace noise (a planned query, :func:`planned_queries`), the
    threshold checks and every membership test of a finding are private (the page says
    they ran in the private section). Sets ``ctx["structural_bounds"]`` (name, epsilon
    lower bound: private) and ``ctx["structural_tests"]`` (name, member scores,
    non-member scores: private) for the audit and membership sections.
    """
    from ..attacks import epsilon_lower_bound
    from . import _verdicts as V
    from ._disclosure import count_p_value, register_tests
    from ._section import ReportSection

    est, X, y, Xp, yp, rng, conf = (ctx[k] for k in ("estimator", "X", "y", "Xp", "yp",
                                                     "rng", "confidence"))
    ledger = ctx["ledger"]
    k = int(ctx.get("min_rows", 10))
    sec = ReportSection("structural", "Structural disclosure checks")
    try:
        checks = structural_checks(est, X, y, Xp, yp, min_rows=k, rng=rng)
    except (TypeError, ValueError, IndexError, AttributeError, MemoryError) as exc:
        sec.add(V.Verdict("not_checked", f"The structural checks could not run "
                                         f"({type(exc).__name__}; the message is in the "
                                         "private channel)."))
        sec.private_table.append(("why the structural checks could not run", str(exc)))
        return sec
    ctx["structural_checks"] = checks
    bounds, tests = [], []
    name = type(_final_and_pre(est)[0]).__name__
    if not checks:
        sec.add(V.Verdict("not_checked", f"No structural check applies to {name} (the checks "
                                         "cover trees, forests, boosting, instance-based, "
                                         "naive-Bayes, linear and MLP models)."))
        return sec
    planned = planned_queries(est)
    public_bounds, public_tail, public_inputs = [], {}, []
    _what_ran(V, sec, checks, name, k)
    for c in checks:
        title = _TITLES[c.name]
        if c.channel == "private":
            ledger.figure(f"structural check: {c.name}", c.found, source="training")
            sec.table.append((title, "ran; computed from the training rows: in the private "
                                     "section"))
            sec.private_table.append((title, c.detail if c.ran
                                      else f"not checked: {c.reason}"))
            if c.ran:
                sec.add_private(_finding(V, c))
        elif not c.ran:
            sec.table.append((title, f"not checked: {c.reason}"))
            continue
        elif c.channel == "accounted":
            if not planned:
                # not planned from the published object: nothing on the page
                ledger.figure(f"structural check: {c.name}", c.found, source="training")
                c.channel = "private"
                sec.table.append((title, "ran; computed from the training rows: in the "
                                         "private section"))
                sec.private_table.append((title, c.detail))
                sec.add_private(_finding(V, c))
            else:
                exact, detail = c.found, c.detail
                count = ledger.figure(f"training rows stored in the model ({c.name})",
                                      int(exact), source="training", bound=1)
                shown = max(0, int(round(count.value)))
                c.detail = (f"about {shown:,} of {c.total:,} training rows are stored in "
                            f"the model (Laplace noise of scale {count.scale:.3g}): "
                            + detail.split(" are stored in ", 1)[-1])
                c.private_found, c.private_detail = exact, detail
                ledger.show(sec, "cell", (title, c.detail), count)
                sec.private_table.append((f"{title} (exact)", detail))
                register_tests(ctx, sec, [count], [count_p_value(count)],
                               _stored_finding(V, c, shown))
                public_inputs.append(count)
                if c.membership is not None:
                    public_bounds += _noisy_stored_bound(sec, c, count, conf, public_tail,
                                                         ledger)
        else:
            sec.table.append((title, c.detail))
            sec.add(_finding(V, c))
        if c.membership is not None and getattr(c, "private_found", c.found):
            # the test scores training rows: its bound and tail are private
            members, scores = c.membership
            res = epsilon_lower_bound(members=members, scores=scores, confidence=conf,
                                      random_state=int(rng.integers(2**31 - 1)))
            eps = float(res.epsilon_lower_bound)
            label = f"membership test from the {title}"
            ledger.figure(f"{label}: epsilon lower bound", eps, source="training")
            bounds.append((label, eps))
            tests.append((label, scores[members], scores[~members]))
            sec.private_table.append((f"{label}: epsilon lower bound at {conf:.0%} "
                                      "(epsilon_lower_bound, one model and many rows)",
                                      f"{eps:.3g} ({int(members.sum()):,} training rows, "
                                      f"{int((~members).sum()):,} population rows)"))
    if ctx.get("Xp") is not None and any(c.name in _TESTS for c in checks):
        sec.table.append(("membership tests of the findings", (
            "they score training rows, so their epsilon lower bounds and TPRs are in the "
            "private section (they count in the private page's headline)")))
    if ctx.get("Xp") is None and any(c.ran for c in checks):
        sec.table.append(("membership tests of the findings",
                          "not run: they need X_population (the non-members)"))
    ctx["structural_bounds"] = bounds
    ctx["structural_public_bounds"] = public_bounds
    ctx["structural_public_inputs"] = public_inputs
    ctx["structural_public_tail"] = public_tail or None
    ctx["structural_tests"] = tests
    return sec


def _what_ran(V, sec, checks, name, k):
    """The structural section's notes: which checks ran, which could not and why, and
    which are in the private channel."""
    shown_ran = [c for c in checks if c.ran or c.channel == "private"]
    not_ran = [c for c in checks if not c.ran and c.channel != "private"]
    sec.add(V.Verdict("note", (
        f"Ran on {name} with k = {k}: "
        + (", ".join(_TITLES[c.name] + (" (private)" if c.channel == "private" else "")
                     for c in shown_ran) or "none")
        + (". Could not run: " + "; ".join(f"{_TITLES[c.name]} ({c.reason})" for c in not_ran)
           if not_ran else "") + ".")))
    private_checks = [c for c in checks if c.channel == "private"]
    if private_checks:
        sec.add(V.Verdict("note", (
            "The " + ", ".join(_TITLES[c.name] for c in private_checks) + " check"
            + ("s compare" if len(private_checks) > 1 else " compares")
            + " the model's thresholds with the training values, so "
            + ("their" if len(private_checks) > 1 else "its")
            + " figures and findings are in the report's private channel: build the "
            "report with include_private_details=True to see them on a private page.")))


def _stored_tail(out, count, n, m, fp, conf, label):
    """The exact-match test's TPR at 0.1 % and 1 % FPR from the noisy count, for the
    default page's headline (into the dictionary ``out``): a level is given when the population
    rows stored (public) stay within it, with the interval of
    :func:`~sklearn_privacy.report._tail.noisy_tpr_at_fpr` (Clopper-Pearson widened by
    the noise's tail)."""
    from ._tail import FPR_LEVELS, clopper_pearson

    alpha = 1.0 - conf
    width = count.tail(alpha / 2)
    levels = {}
    for f in FPR_LEVELS:
        allowed = int(np.floor(f * m + 1e-9))
        if allowed < 1 or fp > allowed:
            levels[str(f)] = None
            continue
        lo_k = int(np.clip(np.floor(count.value - width), 0, n))
        hi_k = int(np.clip(np.ceil(count.value + width), 0, n))
        levels[str(f)] = {"tpr": float(np.clip(count.value, 0, n)) / n,
                          "low": clopper_pearson(lo_k, n, 1.0 - alpha / 2)[0],
                          "high": clopper_pearson(hi_k, n, 1.0 - alpha / 2)[1],
                          "false_positives": fp, "n_members": n, "n_nonmembers": m}
    if levels.get("0.01") is not None:
        out.update(attack=label, levels=levels)


def _stored_finding(V, c, shown):
    """The stored-rows verdict, decided with the page's other findings (Holm at the page's
    false-alarm level, :func:`~sklearn_privacy.report._disclosure.finish_tests`)."""
    base = c.detail

    def write(rejected, adjusted, method):
        c.found = shown if rejected[0] else 0
        c.detail = f"{base}; one-sided {V._p(adjusted[0])} adjusted ({method})"
        return [_finding(V, c)]
    return write


def _noisy_stored_bound(sec, c, count, conf, tail, ledger=None):
    """An empirical epsilon from the stored-rows count for the default page.

    The exact-match test at its one threshold ("stored"): the training rows stored are
    the page's noisy count (``count``, of all ``c.total`` training rows); the population
    rows stored are public (``c.membership``'s non-member scores). ``1 - conf`` is split
    in three (union bound): the noise's tail, a Clopper-Pearson lower end of the TPR on
    the count moved down by that tail, and an upper end of the FPR; the bound is
    ``log(TPR_low / FPR_high)`` (as :func:`~sklearn_privacy.attacks.epsilon_lower_bound`
    at one fixed threshold). Returns ``[(label, epsilon)]`` or ``[]``.
    """
    from scipy.stats import beta

    members, scores = c.membership
    a = (1.0 - conf) / 3.0
    n, m = int(c.total), int((~members).sum())
    fp = int(np.sum(scores[~members] > 0.5))
    k = int(np.clip(np.floor(count.value - count.tail(2 * a)), 0, n))
    label = "exact match of stored rows (noisy count)"
    row = f"{label}: epsilon lower bound at {conf:.0%}"
    if k == 0 or m == 0:
        # the row is on every page (whether the noisy count clears its tail is noise)
        value = ("not computed: the noisy count does not clear its noise's tail" if m
                 else "not computed: no population rows")
        if ledger is not None:
            ledger.show(sec, "cell", (row, value), count)
        return []
    tpr_lo = float(beta.ppf(a, k, n - k + 1))
    fpr_hi = 1.0 if fp == m else float(beta.ppf(1.0 - a, fp + 1, m - fp))
    eps = max(0.0, float(np.log(tpr_lo / fpr_hi)))
    _stored_tail(tail, count, n, m, fp, conf, label)
    entry = (row, (
        f"{eps:.3g} (at least {k:,} of {n:,} training rows stored after the noise's tail, "
        f"TPR at least {tpr_lo:.3g}; {fp} of {m:,} population rows stored, FPR at most "
        f"{fpr_hi:.3g})"))
    if ledger is not None:
        ledger.show(sec, "cell", entry, count)
    else:
        sec.table.append(entry)
    return [(label, eps)]


#: checks whose finding gives a membership test (with population rows)
_TESTS = ("leaf_k_anonymity", "recoverable_values", "stored_rows")


def _finding(V, c):
    """The verdict of one check that ran."""
    if c.found:
        outcome = "risk" if c.name == "degrees_of_freedom" else "disclosive"
        return V.Verdict(outcome, f"Flag: {c.detail}. This proves: {c.proves}.")
    return V.Verdict("none_found", f"None found ({c.detail}); the check reads the whole "
                                   "fitted structure, so it could have found one.")
