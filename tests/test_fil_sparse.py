"""Sparse (CSR/CSC) input for the FIL/IRFIL estimators, and columns named by feature name."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from _expected_warnings import IRFIL_REWEIGHTING

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    IRFILLinearRegression,
    IRFILLogisticRegression,
)

ESTIMATORS = [FILLinearRegression, FILLogisticRegression, IRFILLinearRegression,
              IRFILLogisticRegression]


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = np.max(np.abs(b))
    return float(np.max(np.abs(a - b)) / max(scale, 1e-300))


def _sparse_data(Est, n=150, d=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < 0.3)
    X[:, 0] = rng.normal(size=n)  # one dense column keeps the problem well posed
    z = X @ rng.normal(size=d) + 0.2
    if issubclass(Est, FILLogisticRegression):
        return X, (z + rng.logistic(size=n) > 0).astype(int)
    return X, z + 0.3 * rng.normal(size=n)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_sparse_fit_equals_dense(Est, fit_intercept, fmt):
    X, y = _sparse_data(Est)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    kw = dict(sigma=0.3, alpha=1e-2, fit_intercept=fit_intercept, random_state=0)
    if Est in (IRFILLinearRegression, IRFILLogisticRegression):
        kw["eta_max_iter"] = 3
    dense = Est(**kw).fit(X, y, sample_weight=w)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = Est(**kw).fit(Xs, y, sample_weight=w)
    assert _rel(sparse._audit_engine().theta, dense._audit_engine().theta) <= 1e-10
    assert _rel(sparse.coef_, dense.coef_) <= 1e-10  # same seed: same release
    assert _rel(sparse.eta_, dense.eta_) <= 1e-10
    for cols in ([0], [1, 3], [2, X.shape[1]], list(range(X.shape[1]))):
        assert _rel(sparse.eta(columns=cols, per_example=True),
                    dense.eta(columns=cols, per_example=True)) <= 1e-10
    assert sparse.eta() == pytest.approx(dense.eta(), rel=1e-10)
    assert sparse.eta(rows=[3, 1, 7], columns=[0, 2]) == pytest.approx(
        dense.eta(rows=[3, 1, 7], columns=[0, 2]), rel=1e-10)
    assert _rel(sparse.fisher_information(rows=[5, 2]),
                dense.fisher_information(rows=[5, 2])) <= 1e-10
    u = np.random.default_rng(2).normal(size=len(y) * (X.shape[1] + 1))
    assert _rel(sparse.fisher_information(dense=False) @ u,
                dense.fisher_information(dense=False) @ u) <= 1e-10
    pred = "decision_function" if hasattr(dense, "decision_function") else "predict"
    assert _rel(getattr(sparse, pred)(Xs), getattr(dense, pred)(X)) <= 1e-12
    eng = sparse._audit_engine()
    assert isinstance(eng.dense_rows([4, 1]), np.ndarray)
    assert np.array_equal(eng.dense_rows([4, 1]), X[[4, 1]])
    assert np.array_equal(eng.dense_columns([2, 0]), X[:, [2, 0]])


def test_sparse_tag_is_set():
    for Est in ESTIMATORS:
        assert Est().__sklearn_tags__().input_tags.sparse is True


def test_sparse_audit_state_is_a_private_copy():
    X, y = _sparse_data(FILLinearRegression)
    Xs = sp.csr_matrix(X)
    est = FILLinearRegression(random_state=0).fit(Xs, y)
    eta = est.eta_.copy()
    Xs.data *= 2.0
    assert np.array_equal(est.eta_, eta)


def test_sparse_per_example_memory_is_chunked(monkeypatch):
    """Per-example work on a CSR X densifies one chunk at a time: O(chunk p + p^2)."""
    import tracemalloc

    import sklearn_privacy.fil._eta._engine as engine_module

    original = engine_module._chunk_rows
    budget = 200_000
    d = 40
    peaks = {}
    for n in (2000, 8000):
        rng = np.random.default_rng(0)
        X = sp.random(n, d, density=0.1, random_state=0, format="csr")
        X = sp.hstack([X, rng.normal(size=(n, 1))], format="csr")
        y = (X[:, -1].toarray().ravel() + rng.normal(size=n) > 0).astype(int)
        est = FILLogisticRegression(alpha=1e-2, random_state=0).fit(X, y)
        eng = est._audit_engine()
        monkeypatch.setattr(engine_module, "_chunk_rows",
                            lambda n_, p_, budget_bytes=None: original(n_, p_, budget))
        calls = {"secular": lambda e=eng: e.per_example_sq_norms(),
                 "gram": lambda e=eng: e.per_example_sq_norms([0, 1, 2]),
                 "group": lambda e=eng: e.group_sq_norm()}
        for name, f in calls.items():
            f()
            tracemalloc.start()
            f()
            peaks[n, name] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        monkeypatch.setattr(engine_module, "_chunk_rows", original)
    for name in ("secular", "gram", "group"):
        # a dense n x p copy of X at n = 8000 would be 2.6 MB
        assert peaks[8000, name] < 8000 * (d + 2) * 8, (name, peaks[8000, name])
        assert peaks[8000, name] - peaks[2000, name] < 16 * 8 * 6000, name


def _frame(n=300, seed=0):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Asian"], size=n, p=[0.6, 0.3, 0.1])
    sex = rng.choice(["Male", "Female"], size=n)
    age = rng.integers(18, 80, size=n).astype(float)
    hours = rng.normal(40, 10, size=n)
    z = 0.03 * (age - 45) + 0.05 * (hours - 40) + (sex == "Male") * 0.5 - (race == "Black") * 0.3
    y = np.where(z + rng.logistic(size=n) > 0, ">50K", "<=50K")
    df = pd.DataFrame({"race": race, "sex": sex, "age": age, "hours": hours})
    return df, y


def _pipeline(sparse):
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    pre = ColumnTransformer(
        [("cat", OneHotEncoder(sparse_output=sparse), ["race", "sex"]),
         ("num", StandardScaler(), ["age", "hours"])],
        sparse_threshold=1.0 if sparse else 0.0,
    )
    if not sparse:
        pre.set_output(transform="pandas")  # the final step sees the column names
    return Pipeline([("pre", pre), ("clf", FILLogisticRegression(sigma=0.5, alpha=1e-2,
                                                                 random_state=0))])


def test_sparse_one_hot_pipeline_equals_dense_pipeline():
    df, y = _frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        sparse = _pipeline(True).fit(df, y)
        dense = _pipeline(False).fit(df, y)
        assert sp.issparse(sparse[:-1].transform(df))
        clf_s, clf_d = sparse[-1], dense[-1]
        assert _rel(clf_s.eta_, clf_d.eta_) <= 1e-10
        race = ["cat__race_Asian", "cat__race_Black", "cat__race_White"]
        # a sparse matrix carries no column names (scikit-learn): the final step of the
        # sparse pipeline is addressed by index, the dense one by name
        out_names = list(sparse[:-1].get_feature_names_out())
        assert list(clf_d.feature_names_in_) == out_names
        a = clf_s.eta(columns=[out_names.index(r) for r in race], per_example=True,
                      constrained=True)
        b = clf_d.eta(columns=race, per_example=True, constrained=True)
        assert _rel(a, b) <= 1e-10
        assert _rel(sparse.predict_proba(df), dense.predict_proba(df)) <= 1e-12


def test_columns_by_name_equal_columns_by_index():
    df, y = _frame()
    pipe = _pipeline(False).fit(df, y)
    clf = pipe[-1]
    names = list(clf.feature_names_in_)
    d = clf.n_features_in_
    by_name = ["num__age", "cat__sex_Male", "label"]
    by_index = [names.index("num__age"), names.index("cat__sex_Male"), d]
    assert np.array_equal(clf.eta(columns=by_name, per_example=True),
                          clf.eta(columns=by_index, per_example=True))
    assert clf.eta(columns="num__hours") == clf.eta(columns=[names.index("num__hours")])
    # order of columns is kept in the FIM
    F = clf.fisher_information(rows=[0], columns=["num__age", "label"])
    G = clf.fisher_information(rows=[0], columns=["label", "num__age"])
    assert np.allclose(F, G[::-1, ::-1], rtol=1e-12, atol=0)
    assert clf.sigma_for_eta(0.5, columns="cat__race_Black") == pytest.approx(
        clf.sigma_for_eta(0.5, columns=[names.index("cat__race_Black")]), rel=1e-12)
    mask = np.zeros(d + 1, bool)
    mask[[0, d]] = True
    assert np.array_equal(clf.eta(columns=mask, per_example=True),
                          clf.eta(columns=[0, d], per_example=True))
    # an original feature resolves to its encoded columns (checked to be one-hot)
    race = [k for k, n in enumerate(names) if n.startswith("cat__race_")]
    assert np.array_equal(clf.eta(columns=["race"], per_example=True),
                          clf.eta(columns=race, per_example=True))
    with pytest.raises(ValueError, match="columns.*'rac'.*not a column"):
        clf.eta(columns=["rac"])
    # no feature names: a clear error naming the parameter
    X, yy = _sparse_data(FILLinearRegression)
    plain = FILLinearRegression(random_state=0).fit(X, yy)
    with pytest.raises(ValueError, match="columns.*no feature_names_in_"):
        plain.eta(columns=["x0"])
    assert plain.eta(columns="label", per_example=True).shape == (len(yy),)


@IRFIL_REWEIGHTING
@pytest.mark.parametrize("Est", [IRFILLinearRegression, IRFILLogisticRegression])
def test_irfil_attributes_by_name(Est):
    pd = pytest.importorskip("pandas")
    X, y = _sparse_data(Est, n=120, d=4)
    df = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    by_name = Est(sensitive_features=["c", "a"], eta_max_iter=3, random_state=0).fit(df, y)
    by_index = Est(sensitive_features=[2, 0], eta_max_iter=3, random_state=0).fit(X, y)
    assert np.allclose(by_name.sample_weight_, by_index.sample_weight_, rtol=1e-12)
    with pytest.raises(ValueError, match="sensitive_features.*'e'"):
        Est(sensitive_features=["e"], eta_max_iter=1).fit(df, y)
    with pytest.raises(ValueError, match="sensitive_features.*no feature_names_in_"):
        Est(sensitive_features=["a"], eta_max_iter=1).fit(X, y)
