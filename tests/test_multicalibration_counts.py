"""The multicalibration loop by counts against a cell-by-cell rescanning oracle.

The oracle below is the definition of the loop, written the slow way: every cell is found
by scanning all rows (``M[:, g] & (bucket == b)``) at the moment it is visited, and its
mean residual is ``np.mean`` over its rows in ascending row order. The estimator keeps
per-group bucket sums and counts instead; its updates, predictions, history and privacy
accounting must equal the oracle's bit for bit (``==`` on floats, no tolerance).
"""

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.frozen import FrozenEstimator

from sklearn_privacy import PrivateMulticalibrator
from sklearn_privacy.exceptions import StatisticalWarning
from sklearn_privacy.mechanisms import NumericSparse
from sklearn_privacy.utils._buckets import cell_statistics, score_buckets

#: The fit's advice on the calibration data (a budget of answers spent before the last
#: cell, no cell large enough to correct, updates within a cell's sampling noise) is
#: expected on the small data sets of these tests; each advice is asserted where it is the
#: subject (tests/test_multicalibration_figures.py, and
#: test_updates_within_the_sampling_noise_are_said in tests/test_multicalibration_counts.py).
_FIT_ADVICE = r".*(updates shifted a cell|The private fit|Some groups have no)"
pytestmark = pytest.mark.filterwarnings(
    "ignore:" + _FIT_ADVICE + ":sklearn_privacy.exceptions.StatisticalWarning")


class ScoreColumn(ClassifierMixin, BaseEstimator):
    """Base classifier whose probability of class 1 is column 0 of X."""

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X):
        p = np.asarray(X, dtype=float)[:, 0]
        return np.column_stack([1 - p, p])


def _reference(p, M, y, *, alpha, n_bins, m, max_updates, max_rounds, ns, lo=0.0, hi=1.0):
    """Slow oracle of the multicalibration loop (see the module docstring)."""
    p = p.copy()
    b = score_buckets(p, n_bins)
    updates, history, n_queries, rounds = [], [], 0, 0
    for rounds in range(1, max_rounds + 1):
        n_upd, worst = 0, 0.0
        n_queries += M.shape[1] * n_bins
        for g in range(M.shape[1]):
            bucket = -1
            while True:
                if ns is not None:  # every cell is a query, in order, empty or not
                    bucket += 1
                    if bucket == n_bins:
                        break
                else:  # the next occupied cell (an empty one never updates)
                    later = b[M[:, g] & (b > bucket)]
                    if later.size == 0:
                        break
                    bucket = int(later.min())
                rows = np.flatnonzero(M[:, g] & (b == bucket))
                if ns is not None:
                    if ns.halted_:
                        break
                    resid = float(np.sum(y[rows] - p[rows])) if rows.size else 0.0
                    answer = ns.query(abs(resid), [resid, rows.size])
                    if answer is None or answer[1] < m:
                        continue
                    shift = float(np.clip(answer[0] / answer[1], -1.0, 1.0))
                else:
                    if rows.size < m:
                        continue
                    r = float(np.mean(y[rows] - p[rows]))
                    worst = max(worst, abs(r))
                    if abs(r) <= alpha or (max_updates is not None
                                           and len(updates) >= max_updates):
                        continue
                    shift = r
                if rows.size:
                    p[rows] = np.clip(p[rows] + shift, lo, hi)
                    b[rows] = score_buckets(p[rows], n_bins)
                updates.append((g, bucket, shift))
                n_upd += 1
            if ns is not None and ns.halted_:
                break
        history.append({"round": rounds, "n_updates": n_upd, "max_cell_error_seen": worst})
        if n_upd == 0 or (ns is not None and ns.halted_):
            break
    return {"updates": updates, "p": p, "history": history, "n_queries": n_queries,
            "n_rounds": rounds}


def _replay_reference(p, M, updates, n_bins, lo=0.0, hi=1.0):
    p = p.copy()
    b = score_buckets(p, n_bins)
    for g, bucket, shift in updates:
        cell = M[:, g] & (b == bucket)
        p[cell] = np.clip(p[cell] + shift, lo, hi)
        b[cell] = score_buckets(p[cell], n_bins)
    return p


def _data(seed, n=1500, n_groups=4, decimals=None):
    rng = np.random.RandomState(seed)
    Z = rng.uniform(size=(n, n_groups)) < rng.uniform(0.15, 0.6, size=n_groups)
    # a miscalibrated score whose error depends on the groups: several rounds, rows moving
    # up and down across buckets, cells that receive rows during their group's pass
    truth = np.clip(0.25 + 0.5 * Z[:, 0] - 0.3 * Z[:, 1] + 0.2 * Z[:, 2] * Z[:, 3], 0.02, 0.98)
    y = (rng.uniform(size=n) < truth).astype(int)
    score = np.clip(rng.beta(2, 2, size=n) * 0.9 + 0.05 * rng.uniform(size=n), 0, 1)
    if decimals is not None:  # tied scores: cells of many rows even with huge n_bins
        score = np.round(score, decimals)
    X = np.column_stack([score, Z.astype(float)])
    return X, y


def _fit_both(X, y, **params):
    groups = list(range(1, X.shape[1]))
    mc = PrivateMulticalibrator(FrozenEstimator(ScoreColumn().fit(X, y)), groups,
                                **params).fit(X, y)
    M = np.column_stack([np.ones(len(y), bool), X[:, 1:] > 0.5])
    return mc, M


NON_PRIVATE = [
    dict(calibration_tol=0.1, n_bins=10),
    dict(calibration_tol=0.02, n_bins=10, min_cell_size=5),
    dict(calibration_tol=0.01, n_bins=37, min_cell_size=3, max_iter=7),
    dict(calibration_tol=0.03, n_bins=1, min_cell_size=1),
    dict(calibration_tol=0.005, n_bins=4, min_cell_size=10, max_updates=9),
    dict(calibration_tol=0.02, n_bins=2**40, min_cell_size=2, decimals=2),
    dict(calibration_tol=0.01, n_bins=10**6, min_cell_size=3, decimals=3),
]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("params", NON_PRIVATE)
def test_non_private_loop_equals_rescanning_oracle_bit_for_bit(seed, params):
    params = dict(params)
    X, y = _data(seed, decimals=params.pop("decimals", None))
    mc, M = _fit_both(X, y, **params)
    ref = _reference(X[:, 0], M, y.astype(float), alpha=params["calibration_tol"],
                     n_bins=params["n_bins"], m=mc.min_cell_size_,
                     max_updates=params.get("max_updates"),
                     max_rounds=params.get("max_iter", 100), ns=None)
    assert mc.updates_ == ref["updates"]
    assert mc.n_updates_ == len(ref["updates"]) > 0
    assert mc.history_ == ref["history"]
    assert (mc.n_queries_, mc.n_rounds_) == (ref["n_queries"], ref["n_rounds"])
    # predictions on the calibration rows are the loop's final p; on new rows, the replay
    np.testing.assert_array_equal(mc.predict_proba(X)[:, 1], ref["p"])
    Xn, yn = _data(seed + 100, n=700, decimals=2)
    Mn = np.column_stack([np.ones(len(yn), bool), Xn[:, 1:] > 0.5])
    np.testing.assert_array_equal(mc.predict_proba(Xn)[:, 1],
                                  _replay_reference(Xn[:, 0], Mn, ref["updates"],
                                                    params["n_bins"]))
    assert mc.epsilon_ == float("inf")


PRIVATE = [
    dict(epsilon=2000.0, min_cell_size=30, max_updates=6, n_bins=10),
    dict(epsilon=500.0, min_cell_size=10, max_updates=40, n_bins=5, threshold=2.0),
    dict(epsilon=1.0, n_bins=10),
    dict(epsilon=5e4, min_cell_size=2, max_updates=25, n_bins=64, calibration_tol=0.01),
]


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("params", PRIVATE)
def test_numeric_sparse_loop_equals_rescanning_oracle_bit_for_bit(seed, params):
    X, y = _data(seed)
    params = (dict(calibration_tol=0.05, **params) if "calibration_tol" not in params
              else params)
    mc, M = _fit_both(X, y, mechanism="numeric_sparse", random_state=seed, **params)
    thr = params.get("threshold", params["calibration_tol"] * mc.min_cell_size_)
    ns = NumericSparse(params["epsilon"], mc.max_updates_, thr, test_sensitivity=2.0,
                       answer_sensitivities=[2.0, 1.0], test_fraction=0.5,
                       random_state=np.random.RandomState(seed))
    ref = _reference(X[:, 0], M, y.astype(float), alpha=params["calibration_tol"],
                     n_bins=params["n_bins"], m=mc.min_cell_size_, max_updates=None,
                     max_rounds=100, ns=ns)
    assert mc.updates_ == ref["updates"]
    assert mc.history_ == ref["history"]
    assert (mc.n_queries_, mc.n_rounds_) == (ref["n_queries"], ref["n_rounds"])
    np.testing.assert_array_equal(mc.predict_proba(X)[:, 1], ref["p"])
    assert mc.epsilon_ == params["epsilon"] == ns.epsilon_
    assert mc.delta_ == 0.0
    if params["epsilon"] > 100:
        assert mc.n_updates_ > 0  # the comparison covers applied updates


def test_cell_statistics_equals_per_group_bincount():
    """The one-pass cell statistics equal a per-group np.unique + bincount, bit for bit."""
    rng = np.random.RandomState(5)
    n = 3000
    G = rng.uniform(size=(n, 6)) < [1.0, 0.5, 0.2, 0.05, 0.0, 0.7]
    resid = rng.normal(size=n)
    for n_bins in (1, 10, 2**53):
        buckets = score_buckets(rng.uniform(size=n), n_bins)
        stats = cell_statistics(buckets, resid, G)
        assert len(stats) == G.shape[1]
        for g, (codes, sums, sizes) in enumerate(stats):
            m = G[:, g]
            ref_codes, inv = np.unique(buckets[m], return_inverse=True)
            np.testing.assert_array_equal(codes, ref_codes)
            np.testing.assert_array_equal(sums, np.bincount(inv, weights=resid[m],
                                                            minlength=ref_codes.size))
            np.testing.assert_array_equal(sizes, np.bincount(inv, minlength=ref_codes.size))
        assert stats[4][0].size == 0  # an empty group has no cell


# Pinned from the rescanning implementation (before the loop by counts): a change of
# these numbers is a change of the algorithm's output.
def test_pinned_outputs():
    X, y = _data(11)
    mc, _ = _fit_both(X, y, calibration_tol=0.02, min_cell_size=5)
    assert (mc.n_updates_, mc.n_rounds_) == PINNED["non_private"][:2]
    assert float(mc.predict_proba(X)[:, 1].sum()).hex() == PINNED["non_private"][2]
    mc, _ = _fit_both(X, y, calibration_tol=0.05, mechanism="numeric_sparse", epsilon=2000.0,
                      min_cell_size=30, max_updates=6, random_state=4)
    assert (mc.n_updates_, mc.n_rounds_, mc.epsilon_) == PINNED["private"][:3]
    assert float(mc.predict_proba(X)[:, 1].sum()).hex() == PINNED["private"][3]


PINNED = {"non_private": (141, 13, "0x1.89ab9e5a5667cp+8"),
          "private": (5, 1, 2000.0, "0x1.1ec9c73d063e8p+9")}


@pytest.mark.parametrize("seed", [0, 1])
def test_clip_proba_equals_oracle_with_projection(seed):
    X, y = _data(seed)
    delta = 0.02
    mc, M = _fit_both(X, y, calibration_tol=0.03, min_cell_size=5, clip_proba=delta)
    p0 = np.clip(X[:, 0], delta, 1 - delta)
    ref = _reference(p0, M, y.astype(float), alpha=0.03, n_bins=10, m=5, max_updates=None,
                     max_rounds=100, ns=None, lo=delta, hi=1 - delta)
    assert mc.updates_ == ref["updates"] and mc.n_updates_ > 0
    p = mc.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(p, ref["p"])
    assert p.min() >= delta and p.max() <= 1 - delta
    # converged: every calibration cell with >= m members within alpha (dense check)
    assert mc.history_[-1]["n_updates"] == 0
    b = score_buckets(p, 10)
    for g in range(M.shape[1]):
        for k in range(10):
            cell = M[:, g] & (b == k)
            if cell.sum() >= 5:
                assert abs(np.mean(y[cell] - p[cell])) <= 0.03


def test_clip_proba_keeps_predictions_off_zero():
    """An overshooting update drives rows to exactly 0 with clip_proba=0, not with 0.01."""
    rng = np.random.RandomState(0)
    n = 400
    score = rng.uniform(0.1, 0.2, size=n)  # one bucket, true rate about 0.02
    y = (rng.uniform(size=n) < 0.02).astype(int)
    X = np.column_stack([score, np.ones(n)])
    base = FrozenEstimator(ScoreColumn().fit(X, y))
    plain = PrivateMulticalibrator(base, [1], calibration_tol=0.05).fit(X, y)
    clipped = PrivateMulticalibrator(base, [1], calibration_tol=0.05, clip_proba=0.01).fit(X, y)
    p0, p1 = plain.predict_proba(X)[:, 1], clipped.predict_proba(X)[:, 1]
    assert np.sum(p0 == 0.0) > 50
    assert p1.min() >= 0.01 and np.sum(p1 == 0.01) > 50
    bce = [-np.mean(y * np.log(np.clip(p, 1e-15, 1)) + (1 - y) * np.log(np.clip(1 - p, 1e-15,
                                                                                 1)))
           for p in (p0, p1)]
    assert bce[1] < bce[0]


def test_verbose_prints_one_line_per_round(capsys):
    X, y = _data(2)
    mc, _ = _fit_both(X, y, calibration_tol=0.02, min_cell_size=5, verbose=1)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == mc.n_rounds_ > 1
    for line, h in zip(lines, mc.history_, strict=True):
        assert line.startswith(f"[PrivateMulticalibrator] round {h['round']}: "
                               f"{h['n_updates']} updates, max cell error ")
        assert f"{h['max_cell_error_seen']:.4g}" in line
    _fit_both(X, y, calibration_tol=0.02, min_cell_size=5)  # verbose=0: silent
    assert capsys.readouterr().out == ""
    mc, _ = _fit_both(X, y, calibration_tol=0.05, mechanism="numeric_sparse", epsilon=2000.0,
                      min_cell_size=30, max_updates=6, random_state=4, verbose=1)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == mc.n_rounds_
    assert "noisy answers left" in lines[-1] and "max cell error" not in lines[-1]


def test_updates_within_the_sampling_noise_are_said():
    """Cells of 5 rows: most updates shift a cell by less than twice the standard error
    of its mean residual, and the fit says how many, out of how many."""
    X, y = _data(2)
    with pytest.warns(StatisticalWarning, match=r"(\d+) of (\d+) updates shifted a cell") as rec:
        mc, _ = _fit_both(X, y, calibration_tol=0.02, min_cell_size=5)
    msg = next(str(w.message) for w in rec if "updates shifted a cell" in str(w.message))
    noisy, total = (int(v) for v in msg.split(" updates")[0].split(" of "))
    assert 0 < noisy <= total
    assert total == int(np.asarray(mc._update_noise).size)


def test_membership_matrix_shares_column_evaluations_correctly():
    import pandas as pd

    from sklearn_privacy.multicalibration import (
        ColumnPredicate,
        conjunction_groups,
        membership_matrix,
    )

    rng = np.random.RandomState(1)
    df = pd.DataFrame({"a": rng.randint(0, 2, 300), "b": rng.randint(0, 2, 300),
                       "c": rng.choice(["x", "y", "z"], 300), "v": rng.normal(size=300)})
    groups = conjunction_groups({"ab": ["a", "b"], "c": "c",
                                 "v": [ColumnPredicate("v", ">", 0.0),
                                       ColumnPredicate("v", "<=", 0.0)]}, max_order=3, X=df)
    M = membership_matrix(groups, df)
    assert M.flags.f_contiguous
    np.testing.assert_array_equal(M, np.column_stack([g.mask(df) for g in groups]))
    # against a direct pandas evaluation of one triple conjunction
    name = "a&c=='y'&v>0.0"
    j = [g.name for g in groups].index(name)
    np.testing.assert_array_equal(M[:, j], ((df.a == 1) & (df.c == "y") & (df.v > 0)).values)
