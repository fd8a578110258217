"""DP bounding and set-valued FIL queries of models fitted on dask arrays, against the
in-memory fit on X.compute() (the oracle)."""

import warnings

import numpy as np
import pytest

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
)
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.fil import eta as fil_eta
from sklearn_privacy.fil import fisher_information

da = pytest.importorskip("dask.array")

N, D = 360, 6


def _data(seed=0, classification=False, onehot=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D)) * 1.5
    if onehot:
        X[:, 3:6] = np.eye(3)[rng.integers(0, 3, N)]
    y = X @ rng.normal(size=D) + 0.3 + 2.0 * rng.normal(size=N)
    if classification:
        y = (y > 0).astype(int)
    return X, y, rng.uniform(0.5, 2.0, N)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300), initial=0.0))


def _fit_recording(est, *args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(*args, **kwargs)
    return [(w.category, str(w.message), w.filename) for w in caught
            if issubclass(w.category, PrivacyWarning)]


# ---------------------------------------------------------------- DP bounding (task 2)
@pytest.mark.parametrize("Est,params,weights", [
    (FILLogisticRegression, dict(data_norm=2.5), None),
    (FILLogisticRegression, dict(data_norm=2.5), "dask"),
    (FILLinearRegression, dict(data_norm=3.0, target_bound=4.0), "numpy"),
    (FILLinearRegression, dict(data_norm=3.0, target_bound=4.0), "dask"),
])
def test_dp_bounding_on_dask_equals_numpy(Est, params, weights):
    X, y, sw = _data(classification=Est is FILLogisticRegression)
    kw = dict(sigma=0.05, alpha=0.05, fit_intercept=False, random_state=3, **params)
    ref = Est(**kw)
    caught_ref = _fit_recording(ref, X, y, sample_weight=None if weights is None else sw)
    est = Est(**kw)
    swd = {None: None, "numpy": sw, "dask": da.from_array(sw, chunks=97)}[weights]
    caught = _fit_recording(est, da.from_array(X, chunks=(101, 4)), y, sample_weight=swd)
    # bounding is silent on both paths (whether a row exceeds a bound depends on that row);
    # the counts, equal on both paths, go to the private channel that is never pickled
    assert caught == caught_ref == []
    assert est._bounding_counts == ref._bounding_counts
    assert ref._bounding_counts["rows_scaled"] > 0
    assert (ref._bounding_counts["targets_clipped"] > 0) == ("target_bound" in params)
    # undeclared weights (plain or dask arrays) are data: no claim, on both paths alike
    assert np.isfinite(ref.epsilon_) == (weights is None)
    assert est.epsilon_ == pytest.approx(ref.epsilon_, rel=1e-12)
    assert est.sensitivity_ == pytest.approx(ref.sensitivity_, rel=1e-12)
    assert (est.delta_, est.epsilon_reason_) == (ref.delta_, ref.epsilon_reason_)
    assert _rel(est.coef_, ref.coef_) < 1e-10
    assert _rel(est.eta_, ref.eta_) < 1e-10  # the etas of the bounded data
    assert est.sigma_for_epsilon(1.0) == pytest.approx(ref.sigma_for_epsilon(1.0), rel=1e-12)
    # the bound really acted: the unbounded fit differs
    plain = Est(sigma=0.05, alpha=0.05, fit_intercept=False, random_state=3).fit(X, y)
    assert _rel(plain.coef_, ref.coef_) > 1e-3


def test_dp_bounding_on_dask_without_rows_above_the_bound():
    X, y, _ = _data()
    kw = dict(alpha=0.05, fit_intercept=False, random_state=0, data_norm=1e3,
              target_bound=1e3)
    ref = FILLinearRegression(**kw)
    assert _fit_recording(ref, X, y) == []
    est = FILLinearRegression(**kw)
    assert _fit_recording(est, da.from_array(X, chunks=100), y) == []
    assert est.epsilon_ == ref.epsilon_ and est.sensitivity_ == ref.sensitivity_
    assert _rel(est.coef_, ref.coef_) < 1e-10


def test_irfil_with_data_norm_on_dask_reports_no_guarantee():
    X, y, _ = _data()
    kw = dict(alpha=0.05, fit_intercept=False, eta_max_iter=2, data_norm=2.0, target_bound=3.0,
              random_state=0)
    ref = IRFILLinearRegression(**kw)
    caught_ref = _fit_recording(ref, X, y)
    est = IRFILLinearRegression(**kw)
    caught = _fit_recording(est, da.from_array(X, chunks=120), y)
    assert caught == caught_ref == []        # bounding is silent (private channel)
    assert est._bounding_counts == ref._bounding_counts
    assert est.epsilon_ == ref.epsilon_ == np.inf
    assert est.sensitivity_ == np.inf
    assert "IRFIL" in est.epsilon_reason_ and est.epsilon_reason_ == ref.epsilon_reason_
    assert _rel(est.coef_, ref.coef_) < 1e-10
    assert _rel(est.sample_weight_, ref.sample_weight_) < 1e-10


# ---------------------------------------------------------- set-valued queries (task 3)
@pytest.fixture(scope="module", params=["linear", "logistic"])
def fitted(request):
    classification = request.param == "logistic"
    X, y, sw = _data(seed=4, classification=classification, onehot=True)
    Est = FILLogisticRegression if classification else FILLinearRegression
    kw = dict(sigma=0.4, alpha=1e-2, random_state=0)
    ref = Est(**kw).fit(X, y, sample_weight=sw)
    est = Est(**kw).fit(da.from_array(X, chunks=((50, 130, 1, 179), D)), y,
                        sample_weight=sw)
    return est, ref


ROWS = {
    "indices": [300, 5, -1, 51, 5, 180],          # order kept, duplicates, negative
    "one": 7,
    "mask": np.arange(N) % 7 == 3,
}


@pytest.mark.parametrize("rows", list(ROWS))
@pytest.mark.parametrize("columns,constrained", [
    (None, False), ([0, 2], False), ([D], False), ([3, 4, 5], True), ([1, 3, 4, 5, D], False),
])
def test_per_example_eta_of_selected_rows(fitted, rows, columns, constrained):
    est, ref = fitted
    got = est.eta(ROWS[rows], columns, per_example=True, constrained=constrained)
    want = ref.eta(ROWS[rows], columns, per_example=True, constrained=constrained)
    assert got.shape == want.shape
    assert _rel(got, want) < 1e-10


def test_per_example_eta_with_a_dask_mask_and_constrained_all_rows(fitted):
    est, ref = fitted
    mask = ROWS["mask"]
    got = est.eta(da.from_array(mask, chunks=100), [3, 4, 5], per_example=True)
    assert _rel(got, ref.eta(mask, [3, 4, 5], per_example=True)) < 1e-10
    assert _rel(est.eta(None, [3, 4, 5], per_example=True, constrained=True),
                ref.eta(None, [3, 4, 5], per_example=True, constrained=True)) < 1e-10
    for statistic in ("max", "mean"):
        assert est.sigma_for_eta(0.5, aggregate=statistic, columns=[3, 4, 5],
                                 constrained=True) == pytest.approx(
            ref.sigma_for_eta(0.5, aggregate=statistic, columns=[3, 4, 5],
                              constrained=True), rel=1e-10)
    assert est.eta(rows=[], per_example=True).shape == (0,)


@pytest.mark.parametrize("rows", [None, [300, 5, -1, 51, 180], "mask", 7])
@pytest.mark.parametrize("columns,constrained", [
    (None, False), ([0, D], False), ([3, 4, 5], True), ([5, 3, 4], False),
])
def test_eta_of_a_set_of_values(fitted, rows, columns, constrained):
    est, ref = fitted
    rows = ROWS["mask"] if isinstance(rows, str) else rows
    got = est.eta(rows, columns, constrained=constrained)
    want = ref.eta(rows, columns, constrained=constrained)
    assert isinstance(got, float)
    assert got == pytest.approx(want, rel=1e-10)
    if rows is None and columns is None:  # the module-level function, same route
        assert fil_eta(est) == pytest.approx(want, rel=1e-10)


def test_group_gram_equals_numpy_engine(fitted):
    est, ref = fitted
    G = est._audit_engine().group_gram([4, 100, 200, 359], [1, 3, 4, 5], constrained=True)
    G_ref = ref._audit_engine().group_gram([4, 100, 200, 359], [1, 3, 4, 5],
                                           constrained=True)
    np.testing.assert_allclose(G, G_ref, rtol=1e-10, atol=1e-12 * np.abs(G_ref).max())


@pytest.mark.parametrize("rows,columns", [
    ([300, 5, -1, 51], None), ([9, 2], [D, 0]), (ROWS["mask"], [1, 3]), (11, [D]),
])
def test_fisher_information_of_a_set(fitted, rows, columns):
    est, ref = fitted
    F = est.fisher_information(rows, columns)
    F_ref = ref.fisher_information(rows, columns)
    assert isinstance(F, np.ndarray) and F.shape == F_ref.shape
    np.testing.assert_allclose(F, F_ref, rtol=1e-10, atol=1e-12 * np.abs(F_ref).max())
    np.testing.assert_allclose(fisher_information(est, rows, columns), F_ref, rtol=1e-10,
                               atol=1e-12 * np.abs(F_ref).max())
    # the matrix-free operator of the same set
    op, op_ref = (m.fisher_information(rows, columns, dense=False) for m in (est, ref))
    u = np.random.default_rng(0).normal(size=F_ref.shape[0])
    assert _rel(op @ u, op_ref @ u) < 1e-9


def test_jacobian_columns_equals_numpy_engine(fitted):
    est, ref = fitted
    e, r = est._audit_engine(), ref._audit_engine()
    idx = np.array([300, 5, 51, 5])
    J = e.jacobian_columns(idx, np.array([2, 0]), True, label_position=1)
    J_ref = r.jacobian_columns(idx, np.array([2, 0]), True, label_position=1)
    np.testing.assert_allclose(J, J_ref, rtol=1e-10, atol=1e-12 * np.abs(J_ref).max())


def test_dask_queries_validate_like_numpy(fitted):
    est, ref = fitted
    for model in (est, ref):
        with pytest.raises(ValueError, match="out of range"):
            model.eta([0, N], per_example=True)
        with pytest.raises(ValueError, match="duplicate"):
            model.eta([3, 3])
        with pytest.raises(ValueError, match="duplicate"):
            model.fisher_information([3, 3 - N])
        with pytest.raises(ValueError, match="at least two"):
            model.eta(columns=[3], per_example=True, constrained=True)
        with pytest.raises(ValueError, match="mask"):
            model.eta(np.ones(N - 1, bool))


def test_large_gathers_are_refused_with_the_size(fitted, monkeypatch):
    from sklearn_privacy.fil import _dask

    est, _ = fitted
    monkeypatch.setattr(_dask, "GATHER_MAX_BYTES", 100 * D * 8)
    est.fisher_information(list(range(100)), [0])  # at the limit: gathered
    with pytest.raises(ValueError, match=r"fisher_information of 101 rows.*limit.*fewer rows"):
        est.fisher_information(list(range(101)), [0], dense=False)
    with pytest.raises(ValueError, match="dense_rows of 101 rows"):
        est._audit_engine().dense_rows(np.arange(101))
    np.testing.assert_array_equal(est._audit_engine().dense_rows(np.arange(100)[::-1]),
                                  _data(seed=4, onehot=True)[0][99::-1])
    # sets of any size are still fine for eta (no gathering)
    assert est.eta(None, [0]) > 0
    # a column of every row: 360 values fit under the limit, two columns do not
    monkeypatch.setattr(_dask, "GATHER_MAX_BYTES", 360 * 8)
    np.testing.assert_array_equal(est._audit_engine().dense_columns([2]),
                                  _data(seed=4, onehot=True)[0][:, [2]])
    with pytest.raises(ValueError, match=r"dense_columns of 2 column\(s\).*all 360"):
        est._audit_engine().dense_columns([0, 1])


def test_eta_display_by_class_without_y():
    """Regression: the display read the dask column of labels (IndexError)."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.fil import EtaDisplay

    X, y, _ = _data(classification=True)
    est = FILLogisticRegression(alpha=1e-2, random_state=0).fit(
        da.from_array(X, chunks=100), y)
    ref = FILLogisticRegression(alpha=1e-2, random_state=0).fit(X, y)
    disp = EtaDisplay.from_estimator(est, kind="hist", by_class=True)
    disp_ref = EtaDisplay.from_estimator(ref, kind="hist", by_class=True)
    np.testing.assert_array_equal(disp.group_codes, disp_ref.group_codes)
    assert _rel(disp.eta, disp_ref.eta) < 1e-10
    np.testing.assert_array_equal(est._audit_engine().y, ref._audit_engine().y)
    matplotlib.pyplot.close("all")


def test_column_readers_on_a_dask_fitted_model_equal_numpy():
    """A column of every training row is read in one pass (dense_columns), so
    EtaDisplay(sensitive_features=<column>) without X and the white-box attribute inversion of
    a one-hot attribute work on a dask-fitted model and give the in-memory results."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.attacks import whitebox_inversion
    from sklearn_privacy.fil import EtaDisplay

    X, y, _ = _data(seed=5, onehot=True)
    kw = dict(sigma=0.05, alpha=1e-2, random_state=0)
    est = FILLinearRegression(**kw).fit(da.from_array(X, chunks=(90, D)), y)
    ref = FILLinearRegression(**kw).fit(X, y)
    disp = EtaDisplay.from_estimator(est, kind="hist", sensitive_features=3)
    disp_ref = EtaDisplay.from_estimator(ref, kind="hist", sensitive_features=3)
    np.testing.assert_array_equal(disp.group_codes, disp_ref.group_codes)
    assert _rel(disp.eta, disp_ref.eta) < 1e-10
    rows = np.arange(0, N, 7)
    got = whitebox_inversion(est, sensitive_features=[3, 4, 5], rows=rows, random_state=1)
    want = whitebox_inversion(ref, sensitive_features=[3, 4, 5], rows=rows, random_state=1)
    np.testing.assert_array_equal(got.predictions, want.predictions)
    np.testing.assert_array_equal(got.truth, want.truth)
    matplotlib.pyplot.close("all")
