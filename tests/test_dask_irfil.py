"""IRFIL on dask arrays against the in-memory fit on X.compute() (the oracle)."""

import numpy as np
import pytest
from _expected_warnings import IRFIL_REWEIGHTING
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from sklearn_privacy import IRFILLinearRegression, IRFILLogisticRegression

da = pytest.importorskip("dask.array")

N, D = 420, 5


def _data(classification, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) * [1.0, 2.0, 0.5, 1.0, 3.0]
    y = X @ rng.normal(size=D) + 0.4 + rng.normal(size=N)
    if classification:
        y = np.where(y > 0, "pos", "neg")
    return X, y, rng.uniform(0.2, 3.0, N)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300), initial=0.0))


def _assert_same_irfil(est, ref):
    assert _rel(est.coef_, ref.coef_) < 1e-10
    assert _rel(est.intercept_, ref.intercept_) < 1e-10 or est.intercept_ == ref.intercept_
    assert _rel(est.sample_weight_, ref.sample_weight_) < 1e-10
    assert _rel(est.eta_, ref.eta_) < 1e-10
    assert est.n_iter_ == ref.n_iter_
    assert sorted(est.eta_history_) == sorted(ref.eta_history_)
    h, r = est.eta_history_, ref.eta_history_
    for key in ("mean", "max", "min"):
        assert _rel(h[key], r[key]) < 1e-10, key
    # std and cv fall to rounding level as eta equalises: compare on the scale of the mean
    np.testing.assert_allclose(h["std"], r["std"], rtol=0, atol=1e-10 * r["mean"].max())
    np.testing.assert_allclose(h["cv"], r["cv"], rtol=0, atol=1e-10)
    if "eta" in r:
        assert _rel(h["eta"], r["eta"]) < 1e-10
    assert est.epsilon_ == ref.epsilon_ == np.inf
    assert est.epsilon_reason_ == ref.epsilon_reason_


# uneven row chunks, regular chunks with a short last one, one chunk
CHUNKS = {"uneven": ((37, 200, 3, 180), D), "regular": (128, 2), "single": (N, D)}


@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
@pytest.mark.parametrize("fit_intercept,chunks,weights", [
    (True, "uneven", "numpy"),
    (False, "single", None),
    (True, "regular", "dask"),
    (False, "uneven", "dask"),
])
def test_irfil_on_dask_equals_numpy(Est, fit_intercept, chunks, weights):
    X, y, sw = _data(Est is IRFILLogisticRegression)
    kw = dict(sigma=0.7, alpha=1e-2, fit_intercept=fit_intercept, eta_max_iter=3, store_eta=True,
              random_state=5)
    ref = Est(**kw).fit(X, y, sample_weight=None if weights is None else sw)
    Xd = da.from_array(X, chunks=CHUNKS[chunks])
    swd = {None: None, "numpy": sw, "dask": da.from_array(sw, chunks=100)}[weights]
    est = Est(**kw).fit(Xd, y, sample_weight=swd)
    _assert_same_irfil(est, ref)
    assert ref.eta_history_["cv"][-1] < 0.5 * ref.eta_history_["cv"][0]  # it reweighted
    if Est is IRFILLogisticRegression:
        assert list(est.classes_) == ["neg", "pos"]
    # the dask audit state has the final weights: eta_ of the last weighted fit
    from sklearn_privacy.fil._dask import DaskFILEngine, lazy_eta

    assert isinstance(est._audit_engine(), DaskFILEngine)
    lazy = lazy_eta(est)
    assert lazy.chunks[0] == Xd.chunks[0]
    assert _rel(lazy.compute(), ref.eta_) < 1e-10


@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
def test_irfil_on_dask_verbose_and_cv_tol_as_numpy(Est, capsys):
    X, y, _ = _data(Est is IRFILLogisticRegression, seed=1)
    kw = dict(alpha=1e-2, eta_max_iter=8, eta_tol=0.02, verbose=1, random_state=0)
    ref = Est(**kw).fit(X, y)
    out_ref = capsys.readouterr().out
    est = Est(**kw).fit(da.from_array(X, chunks=100), y)
    out = capsys.readouterr().out
    assert out == out_ref
    assert 0 < ref.n_iter_ < 8  # stopped by cv_tol
    assert out.count("\n") == ref.n_iter_ + 1
    _assert_same_irfil(est, ref)


@IRFIL_REWEIGHTING
@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
def test_irfil_on_dask_constrained_attribute(Est):
    """Attribute-level reweighting of a one-hot block (the engine's Gram route)."""
    rng = np.random.default_rng(2)
    X, y, _ = _data(Est is IRFILLogisticRegression, seed=2)
    X[:, 2:5] = np.eye(3)[rng.integers(0, 3, N)]
    kw = dict(alpha=1e-2, eta_max_iter=2, sensitive_features=[2, 3, 4], constrained=True,
              random_state=0)
    ref = Est(**kw).fit(X, y)
    est = Est(**kw).fit(da.from_array(X, chunks=(150, D)), y)
    _assert_same_irfil(est, ref)
    for constrained in (False, True):
        assert _rel(est.eta(columns=[2, 3, 4], per_example=True, constrained=constrained),
                    ref.eta(columns=[2, 3, 4], per_example=True, constrained=constrained)
                    ) < 1e-10


def test_irfil_on_dask_clone_and_grid_search():
    X, y, _ = _data(True, seed=3)
    Xd = da.from_array(X, chunks=(140, D))
    est = IRFILLogisticRegression(alpha=1e-2, eta_max_iter=2, random_state=0).fit(Xd, y)
    again = clone(est).fit(Xd, y)
    np.testing.assert_array_equal(again.coef_, est.coef_)
    np.testing.assert_array_equal(again.sample_weight_, est.sample_weight_)
    grid = dict(alpha=[1e-2, 1e-1])
    base = IRFILLogisticRegression(eta_max_iter=1, random_state=0)
    on_dask = GridSearchCV(base, grid, cv=2).fit(Xd, y)
    in_memory = GridSearchCV(base, grid, cv=2).fit(X, y)
    assert on_dask.best_params_ == in_memory.best_params_
    np.testing.assert_allclose(on_dask.cv_results_["mean_test_score"],
                               in_memory.cv_results_["mean_test_score"])
    assert _rel(on_dask.best_estimator_.coef_, in_memory.best_estimator_.coef_) < 1e-10
