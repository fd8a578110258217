"""Raw-input FIL through differentiable feature maps, against finite differences of
exact refits (the preprocessing frozen, the final FIL estimator refitted on the
preprocessed perturbed rows)."""

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    KBinsDiscretizer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    PolynomialFeatures,
    RobustScaler,
    SplineTransformer,
    StandardScaler,
)
from threadpoolctl import threadpool_limits

from sklearn_privacy import (
    FILLinearRegression,
    FILLogisticRegression,
    FILPoissonRegressor,
    fil,
)
from sklearn_privacy.exceptions import PrivacyWarning
from sklearn_privacy.fil._raw._feature_maps import feature_map
from sklearn_privacy.preprocessing import BoundedScaler

N = 36


@pytest.fixture(autouse=True)
def _one_thread():
    """Hundreds of refits of tiny problems: BLAS threads only contend."""
    with threadpool_limits(1):
        yield

SIGMA = 0.7
H = 1e-5
RTOL = 1e-6


def _frame(seed=0):
    rng = np.random.RandomState(seed)
    return pd.DataFrame({"a": rng.normal(size=N) * 3 + 1,
                         "b": rng.uniform(0.5, 3.0, N),
                         "c": rng.choice(["x", "y", "z"], N)})


def _target(df, kind, seed=0):
    rng = np.random.RandomState(seed + 1)
    s = 0.4 * df["a"].to_numpy() / 3 + np.sin(2 * df["b"].to_numpy()) + (df["c"] == "y")
    if kind == "ls":
        return s + 0.3 * rng.normal(size=N)
    if kind == "logistic":
        return (s + 0.8 * rng.normal(size=N) > np.median(s)).astype(int)
    if kind == "multinomial":
        return np.digitize(s + 0.8 * rng.normal(size=N), np.quantile(s, [0.33, 0.66]))
    return rng.poisson(np.exp(0.5 * s))


def _glm(kind):
    if kind == "ls":
        return FILLinearRegression(sigma=SIGMA, alpha=0.05, random_state=0)
    if kind in ("logistic", "multinomial"):
        return FILLogisticRegression(sigma=SIGMA, alpha=0.05, random_state=0)
    return FILPoissonRegressor(sigma=SIGMA, alpha=0.05, random_state=0)


def _lfun(X):
    return np.log1p(X)


_lfun.derivative = lambda X: 1.0 / (1.0 + X)


def _mix(X):
    """A map mixing the columns: its derivative is a full Jacobian (m, 3, 2)."""
    X = np.asarray(X, dtype=float)
    return np.c_[X[:, 0] * X[:, 1], X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 0])]


def _mix_derivative(X):
    J = np.zeros((X.shape[0], 3, 2))
    J[:, 0, 0], J[:, 0, 1] = X[:, 1], X[:, 0]
    J[:, 1, 0], J[:, 1, 1] = 1.0, 2.0 * X[:, 1]
    J[:, 2, 0] = np.cos(X[:, 0])
    return J


_mix.derivative = _mix_derivative

#: name -> the numeric block applied to ["a", "b"] (one-hot of "c" alongside)
MAPS = {
    "scalers": lambda: make_pipeline(StandardScaler(), MinMaxScaler(), RobustScaler(),
                                     MaxAbsScaler()),
    "bounded": lambda: BoundedScaler(bounds=(-20.0, 20.0)),
    "poly": lambda: make_pipeline(StandardScaler(), PolynomialFeatures(3)),
    "spline_constant": lambda: SplineTransformer(n_knots=4),
    "spline_linear": lambda: SplineTransformer(n_knots=4, extrapolation="linear",
                                               include_bias=False),
    "spline_continue": lambda: SplineTransformer(n_knots=5, extrapolation="continue"),
    "spline_periodic": lambda: SplineTransformer(n_knots=4, extrapolation="periodic"),
    "spline_error": lambda: make_pipeline(StandardScaler(), SplineTransformer(
        n_knots=4, degree=2, extrapolation="error")),
    "rff": lambda: make_pipeline(StandardScaler(), RBFSampler(n_components=12,
                                                              random_state=0)),
    "nystroem_rbf": lambda: make_pipeline(StandardScaler(), Nystroem(
        n_components=8, random_state=0)),
    "nystroem_poly": lambda: make_pipeline(StandardScaler(), Nystroem(
        kernel="poly", degree=2, n_components=5, random_state=0)),
    "nystroem_sigmoid": lambda: make_pipeline(StandardScaler(), Nystroem(
        kernel="sigmoid", gamma=0.3, n_components=8, random_state=0)),
    "nystroem_laplacian": lambda: make_pipeline(StandardScaler(), Nystroem(
        kernel="laplacian", n_components=8, random_state=0)),
    "function": lambda: make_pipeline(
        FunctionTransformer(_lfun, feature_names_out="one-to-one"),
        FunctionTransformer(np.sqrt, feature_names_out="one-to-one"),
        FunctionTransformer(_mix, feature_names_out=lambda t, names: ["m0", "m1", "m2"])),
}
GLMS = ["ls", "logistic", "multinomial", "poisson"]


def _fit(map_name, kind, *, sparse=False, df=None):
    df = _frame() if df is None else df
    y = _target(df, kind)
    ct = make_column_transformer((MAPS[map_name](), ["a", "b"]),
                                 (OneHotEncoder(sparse_output=sparse), ["c"]),
                                 sparse_threshold=1.0 if sparse else 0.0)
    if map_name == "function":  # func(|x|) needs no sign; keep the values away from 0
        df = df.assign(a=np.abs(df["a"]) + 0.5)
    pipe = make_pipeline(ct, _glm(kind)).fit(df, y)
    return pipe, df, y


def _theta(pipe, Z, y):
    est = clone(pipe[-1]).fit(Z, y)
    return est._audit_engine().theta


def _fd_jacobian(pipe, df, y, row, coords):
    """Central differences of exact refits: columns d theta / d coordinate (p, k)."""
    fmap = feature_map(pipe)
    Z0 = pipe[:-1].transform(df)
    Z0 = Z0.toarray() if sp.issparse(Z0) else np.asarray(Z0, dtype=float)
    names = list(pipe[0].get_feature_names_out())
    cols = []
    for u in coords:
        cname = fmap.coordinate_names[u]
        if cname in ("a", "b"):
            plus, minus = df.copy(), df.copy()
            plus.loc[row, cname] += H
            minus.loc[row, cname] -= H
            Zp = pipe[:-1].transform(plus)
            Zm = pipe[:-1].transform(minus)
            Zp = Zp.toarray() if sp.issparse(Zp) else Zp
            Zm = Zm.toarray() if sp.issparse(Zm) else Zm
        else:  # an encoded level: the one-hot value itself
            o = [k for k, n in enumerate(names) if n.endswith("__" + cname)]
            assert len(o) == 1
            Zp, Zm = Z0.copy(), Z0.copy()
            Zp[row, o[0]] += H
            Zm[row, o[0]] -= H
        cols.append((_theta(pipe, Zp, y) - _theta(pipe, Zm, y)) / (2 * H))
    return np.column_stack(cols)


def _label_columns(pipe, row):
    """The label's Jacobian columns (unchanged by the map): the features engine's."""
    eng = pipe[-1]._audit_engine()
    if hasattr(eng, "K"):
        return eng.jacobian_columns(np.array([row]), np.array([eng.d]))[0]
    return eng.jacobian_columns(np.array([row]), np.array([], dtype=int), True)[0]


def _probe_rows(pipe, df):
    """Rows away from the training extremes (kinks of constant extrapolation) and not
    published by a Nystroem step."""
    bad = set()
    for c in ("a", "b"):
        bad |= {int(df[c].to_numpy().argmin()), int(df[c].to_numpy().argmax())}
    found = []
    feature_map(pipe).jacobian_blocks(df, published_rows=found)
    bad |= set(found)
    return [r for r in range(N) if r not in bad][:3]


def _rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)))
                 / max(np.max(np.abs(np.asarray(b))), 1e-300))


@pytest.mark.parametrize("kind", GLMS)
@pytest.mark.parametrize("map_name", list(MAPS))
def test_raw_input_eta_matches_finite_differences(map_name, kind):
    sparse = map_name in ("spline_continue", "rff", "poly", "nystroem_rbf")
    pipe, df, y = _fit(map_name, kind, sparse=sparse)
    if sparse:
        assert sp.issparse(pipe[-1]._audit_engine().X)
    fmap = feature_map(pipe)
    assert fmap.refusals == []
    coords = np.arange(fmap.n_coordinates)
    rows = _probe_rows(pipe, df)
    assert len(rows) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)  # Nystroem publishes rows
        per_example = fil.eta(pipe, X=df, per_example=True)
        per_a = fil.eta(pipe, X=df, columns="a", per_example=True)
        per_c = fil.eta(pipe, X=df, columns="c", per_example=True)
        group = fil.eta(pipe, X=df, rows=rows, columns=["a", "b"])
        fim = fil.fisher_information(pipe, X=df, rows=rows[:2], columns=["b", "c"])
    Js = {r: _fd_jacobian(pipe, df, y, r, coords) for r in rows}
    c_coords = fmap.feature_coordinates[2]
    for r in rows:
        J = np.column_stack([Js[r], _label_columns(pipe, r)])
        assert _rel(per_example[r], np.linalg.norm(J, 2) / SIGMA) < RTOL
        assert _rel(per_a[r], np.linalg.norm(Js[r][:, 0]) / SIGMA) < RTOL
        assert _rel(per_c[r], np.linalg.norm(Js[r][:, c_coords], 2) / SIGMA) < RTOL
    JS = np.column_stack([Js[r][:, :2] for r in rows])
    assert _rel(group, np.linalg.norm(JS, 2) / SIGMA) < RTOL
    JF = np.column_stack([Js[r][:, np.r_[1, c_coords]] for r in rows[:2]])
    assert _rel(fim, JF.T @ JF / SIGMA**2) < RTOL


def test_constrained_and_label_columns_through_a_spline():
    pipe, df, y = _fit("spline_linear", "logistic")
    final = pipe[-1]
    d = final.n_features_in_
    # the label (and an encoded level) are not changed by the map
    np.testing.assert_allclose(fil.eta(pipe, X=df, columns="label", per_example=True),
                               final.eta(columns=[d], per_example=True), rtol=1e-12)
    block = list(range(d - 3, d))
    np.testing.assert_allclose(
        fil.eta(pipe, X=df, columns="c", per_example=True, constrained=True),
        final.eta(columns=block, per_example=True, constrained=True), rtol=1e-10)
    np.testing.assert_allclose(
        fil.eta(pipe, X=df, columns=["c_x", "label"], per_example=True),
        final.eta(columns=[d - 3, d], per_example=True), rtol=1e-10)
    # sigma_for_eta through the raw inputs reaches its target
    s = fil.sigma_for_eta(pipe, 0.25, columns="a", X=df)
    refit = clone(pipe).set_params(fillogisticregression__sigma=s).fit(df, y)
    assert fil.eta(refit, X=df, columns="a", per_example=True).max() == pytest.approx(0.25)


def test_audit_of_a_scikit_learn_pipeline_keeps_the_raw_rows():
    df = _frame()
    y = _target(df, "ls")
    ct = make_column_transformer((SplineTransformer(n_knots=4, extrapolation="linear"),
                                  ["a", "b"]), (OneHotEncoder(), ["c"]))
    pipe = make_pipeline(ct, Ridge(alpha=1.0)).fit(df, y)
    audited = fil.audit(pipe, df, y, sigma=SIGMA, random_state=0)
    raw = fil.eta(audited, per_example=True)  # no X: fil.audit kept it
    np.testing.assert_allclose(raw, fil.eta(audited, X=df, per_example=True), rtol=1e-12)
    assert not np.allclose(raw, fil.eta(audited, per_example=True, wrt="features"))
    fmap = feature_map(audited)
    r = _probe_rows(audited, df)[0]
    J = np.column_stack([_fd_jacobian(audited, df, y, r, np.arange(fmap.n_coordinates)),
                         _label_columns(audited, r)])
    assert _rel(raw[r], np.linalg.norm(J, 2) / SIGMA) < RTOL
    # the raw rows are audit state: never pickled
    import pickle
    assert "_raw_input" not in pickle.loads(pickle.dumps(audited[-1])).__dict__


def test_default_is_raw_when_traceable_and_features_on_request():
    pipe, df, y = _fit("spline_continue", "ls")
    with pytest.raises(ValueError, match="needs the raw training rows"):
        fil.eta(pipe, per_example=True)
    features = fil.eta(pipe, per_example=True, wrt="features")
    np.testing.assert_allclose(features, pipe[-1].eta_, rtol=1e-12)
    raw = fil.eta(pipe, X=df, per_example=True)
    assert np.array_equal(raw, fil.eta(pipe, X=df, per_example=True, wrt="raw"))
    assert not np.allclose(raw, features, rtol=1e-2)
    # a constant derivative (scalers, encoders) needs no rows
    sc, df2, _ = _fit("scalers", "ls")
    np.testing.assert_allclose(fil.eta(sc, per_example=True),
                               fil.eta(sc, X=df2, per_example=True), rtol=1e-12)
    with pytest.raises(ValueError, match="'wrt' parameter of eta must be"):
        fil.eta(pipe, X=df, wrt="inputs")
    # rows that are not the training rows are refused
    with pytest.raises(ValueError, match="does not reproduce"):
        fil.eta(pipe, X=df.sample(frac=1.0, random_state=0), per_example=True)
    with pytest.raises(ValueError, match="rows"):
        fil.eta(pipe, X=df.iloc[:10], per_example=True)


def _refusal_pipeline(step, cols=("a", "b")):
    df = _frame()
    y = _target(df, "ls")
    ct = make_column_transformer((step, list(cols)), (OneHotEncoder(), ["c"]))
    return make_pipeline(ct, FILLinearRegression(sigma=1.0, alpha=0.1)).fit(df, y), df


@pytest.mark.parametrize("step, name", [
    (KBinsDiscretizer(n_bins=3, strategy="uniform"),
     "KBinsDiscretizer"),
    (FunctionTransformer(np.cbrt, feature_names_out="one-to-one"), "cbrt"),
    (make_pipeline(StandardScaler(), PolynomialFeatures(2), KBinsDiscretizer(
        n_bins=2, strategy="uniform")), "KBinsDiscretizer"),
    (Nystroem(kernel=lambda u, v: float(u @ v), n_components=5, random_state=0),
     "Nystroem"),
    (make_pipeline(StandardScaler(), SplineTransformer(n_knots=3),
                   KBinsDiscretizer(n_bins=2, strategy="uniform")),
     "KBinsDiscretizer"),
])
@pytest.mark.filterwarnings("ignore:Bins whose width are too small")
@pytest.mark.filterwarnings("ignore:Feature 0 is constant and will be replaced with 0")
def test_untraceable_steps_are_refused_by_name(step, name):
    pipe, df = _refusal_pipeline(step)
    with pytest.raises(ValueError, match=name):
        fil.eta(pipe, X=df, per_example=True, wrt="raw")
    with pytest.raises(ValueError, match=name):
        fil.fisher_information(pipe, X=df, rows=[0], columns="b", wrt="raw")
    # the default falls back to the features, saying why
    with pytest.warns(PrivacyWarning, match=name) as record:
        out = fil.eta(pipe, X=df, per_example=True)
    assert record[0].filename == __file__  # points at the user's call
    np.testing.assert_allclose(out, pipe[-1].eta_, rtol=1e-12)
    assert name in " ".join(feature_map(pipe).refusals)


def test_nystroem_published_rows_are_reported_with_infinite_eta():
    pipe, df, y = _fit("nystroem_rbf", "ls")
    nys = pipe[0].named_transformers_["pipeline"][-1]
    published = sorted(nys.component_indices_.tolist())
    fmap = feature_map(pipe)
    assert fmap.published and "components_" in fmap.published[0]
    with pytest.warns(PrivacyWarning, match="publishes training rows verbatim") as record:
        e = fil.eta(pipe, X=df, per_example=True)
    assert record[0].filename == __file__
    assert np.array_equal(np.flatnonzero(np.isinf(e)), published)
    assert np.all(np.isfinite(np.delete(e, published)))
    with pytest.warns(PrivacyWarning):
        assert fil.eta(pipe, X=df, rows=[published[0], 1]) == np.inf
    other = [r for r in range(N) if r not in published][:2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        assert np.isfinite(fil.eta(pipe, X=df, rows=other))


def test_raw_columns_errors():
    pipe, df, _ = _fit("poly", "ls")
    with pytest.raises(ValueError, match="neither a raw input feature"):
        fil.eta(pipe, X=df, columns="nope")
    with pytest.raises(ValueError, match="twice"):
        fil.eta(pipe, X=df, columns=["a", "a"])
    with pytest.raises(ValueError, match="out of range"):
        fil.eta(pipe, X=df, columns=7)
    with pytest.raises(TypeError, match="columns"):
        fil.eta(pipe, X=df, columns=1.5)


def test_function_transformer_derivative_of_the_wrong_shape_is_refused():
    def f(X):
        return X * 2.0

    f.derivative = lambda X: np.ones(3)
    pipe, df = _refusal_pipeline(FunctionTransformer(f, feature_names_out="one-to-one"))
    with pytest.raises(ValueError, match="derivative returned shape"):
        fil.eta(pipe, X=df, per_example=True)


def test_logistic_regression_audit_multinomial_raw():
    df = _frame()
    y = _target(df, "multinomial")
    ct = make_column_transformer((make_pipeline(StandardScaler(), RBFSampler(
        n_components=10, random_state=1)), ["a", "b"]), (OneHotEncoder(), ["c"]))
    pipe = make_pipeline(ct, LogisticRegression(C=2.0, max_iter=2000)).fit(df, y)
    audited = fil.audit(pipe, df, y, sigma=SIGMA, random_state=0)
    e = fil.eta(audited, per_example=True, columns=["a", "b"])
    r = _probe_rows(audited, df)[0]
    J = _fd_jacobian(audited, df, y, r, np.arange(2))
    assert _rel(e[r], np.linalg.norm(J, 2) / SIGMA) < RTOL


def test_report_and_eta_display_read_the_raw_inputs():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy.fil import EtaDisplay
    from sklearn_privacy.report import PrivacyReport

    pipe, df, y = _fit("spline_linear", "logistic")
    raw = fil.eta(pipe, X=df, per_example=True)
    # per-example figures are private: computed for the private page only
    rep = PrivacyReport.from_estimator(pipe, df, y, sensitive_features=["a"], n_canaries=0,
                                       canary_releases=0, random_state=0,
                                       include_private_details=True)
    sec = next(s for s in rep.sections if s.key == "fil")
    table = dict(sec.table + sec.private_table)
    assert table["eta with respect to"].startswith("the raw inputs")
    assert rep.private_details["summary"]["max_eta"] == pytest.approx(raw.max(), rel=1e-12)
    a = fil.eta(pipe, X=df, columns="a", per_example=True)
    # the private page rounds per-person figures to two significant digits
    assert table["eta of 'a' (median / max)"] == f"{np.median(a):.2g} / {a.max():.2g}"
    disp = EtaDisplay.from_estimator(pipe, X=df)
    np.testing.assert_allclose(disp.eta, raw, rtol=1e-12)
    feats = EtaDisplay.from_estimator(pipe, X=df, wrt="features")
    np.testing.assert_allclose(feats.eta, pipe[-1].eta_, rtol=1e-12)
    # an untraceable map: the report says which view it shows
    kb, df2 = _refusal_pipeline(KBinsDiscretizer(n_bins=3,
                                                 strategy="uniform"))
    rep2 = PrivacyReport.from_estimator(kb, df2, _target(df2, "ls"), n_canaries=0,
                                        canary_releases=0, random_state=0)
    table2 = dict(next(s for s in rep2.sections if s.key == "fil").table)
    assert table2["eta with respect to"].startswith("the features entering the final step")
    assert "KBinsDiscretizer" in table2["eta with respect to"]


def test_one_vs_rest_pipeline_reports_the_features_view_and_says_so():
    from sklearn.multiclass import OneVsRestClassifier

    df = _frame()
    y = _target(df, "multinomial")
    ct = make_column_transformer((StandardScaler(), ["a", "b"]), (OneHotEncoder(), ["c"]))
    pipe = make_pipeline(ct, OneVsRestClassifier(
        FILLogisticRegression(sigma=SIGMA, alpha=0.05, random_state=0))).fit(df, y)
    with pytest.warns(PrivacyWarning, match="one-vs-rest"):
        default = fil.eta(pipe, per_example=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)
        np.testing.assert_array_equal(default, fil.eta(pipe, per_example=True,
                                                       wrt="features"))
    with pytest.raises(ValueError, match="one-vs-rest"):
        fil.eta(pipe, per_example=True, wrt="raw")


@pytest.mark.parametrize("kind", ["ls", "logistic", "poisson"])
def test_constant_map_route_equals_the_dense_jacobians(kind):
    """Scalers and encoders: the engine's own fast routes with ``B Phi``, ``Phi^T w``
    give the spectral norms of the dense raw-input Jacobians."""
    from sklearn_privacy.fil._audits._pipeline import raw_columns, raw_view

    df = _frame()
    ct = make_column_transformer((make_pipeline(StandardScaler(), MaxAbsScaler()),
                                  ["a", "b"]), (OneHotEncoder(), ["c"]))
    pipe = make_pipeline(ct, _glm(kind)).fit(df, _target(df, kind))
    raw = raw_view(pipe)
    assert raw.fmap.constant and raw.X is None
    for columns, constrained in ((None, False), ("a", False), (["b", "c"], False),
                                 ("c", True)):
        order = raw_columns(raw, columns)
        fast = raw.per_example_sq_norms(order, constrained=constrained)
        Jt, _ = raw.jacobians_t(np.arange(N), order, constrained)
        dense = np.linalg.norm(Jt.transpose(0, 2, 1), 2, axis=(1, 2)) ** 2
        np.testing.assert_allclose(fast, dense, rtol=1e-10)


def test_data_norm_final_step_falls_back_to_the_features_by_name():
    df = _frame()
    y = _target(df, "logistic")
    ct = make_column_transformer((StandardScaler(), ["a", "b"]), (OneHotEncoder(), ["c"]))
    pipe = make_pipeline(ct, FILLogisticRegression(sigma=SIGMA, alpha=0.05, data_norm=2.0,
                                                   random_state=0)).fit(df, y)
    with pytest.raises(ValueError, match="data_norm"):
        fil.eta(pipe, per_example=True, wrt="raw")
    with pytest.warns(PrivacyWarning, match="data_norm"):
        out = fil.eta(pipe, per_example=True)
    np.testing.assert_allclose(out, pipe[-1].eta_, rtol=1e-12)


# ---------------------------------------------------------------------------------------
# The fixed-pole route of the per-example etas (no per-row eigendecomposition)
# ---------------------------------------------------------------------------------------
def _dense_top(pi, Yh, C0):
    """Largest eigenvalue of diag(pi) (+ zeros) + Y Y^T, built explicitly."""
    m, q, r = Yh.shape
    ev, V = np.linalg.eigh(C0)
    R = V * np.sqrt(np.maximum(ev, 0.0))[:, None, :]  # C0 = R R^T
    W = np.concatenate([Yh, R.transpose(0, 2, 1)], axis=1)
    A = W @ W.transpose(0, 2, 1)
    A[:, np.arange(q), np.arange(q)] += pi
    return np.linalg.eigvalsh(A)[:, -1]


@pytest.mark.parametrize("q, r", [(12, 6), (5, 1), (0, 4), (3, 7), (1, 2)])
def test_fixed_pole_solver_matches_dense_eigenvalues(q, r):
    """largest_eigenvalue_psd_update against the eigenvalues of the explicit matrix, on
    random rows and on the hard ones: no update, an update orthogonal to the top pole
    (the answer is the pole), a tiny update (a root just above the pole), repeated
    poles, an update of rank one."""
    from sklearn_privacy._linalg._psd_update import largest_eigenvalue_psd_update

    rng = np.random.default_rng(q * 10 + r)
    m = 400
    pi = rng.random((m, q)) * rng.lognormal(0, 2, (m, 1))
    Yh = rng.normal(size=(m, q, r)) * rng.lognormal(0, 2, (m, 1, r))
    B = rng.normal(size=(m, r, r)) * rng.lognormal(0, 1, (m, 1, 1))
    C0 = B @ B.transpose(0, 2, 1)
    if q:
        top = pi.argmax(axis=1)
        Yh[0] = 0.0
        C0[0] = 0.0  # no update: the top pole
        Yh[1, top[1]] = 0.0  # orthogonal to the top pole
        Yh[2] *= 1e-5
        C0[2] *= 1e-10  # a root just above the pole
        pi[3] = pi[3, 0]  # one repeated pole
        Yh[4, :, 1:] = 0.0
        C0[4] = 0.0
        C0[4, 0, 0] = 1.0  # rank one
    lam, conv = largest_eigenvalue_psd_update(pi, Yh, C0)
    ref = _dense_top(pi, Yh, C0)
    assert conv.mean() > 0.99
    np.testing.assert_allclose(lam[conv], ref[conv], rtol=1e-10, atol=1e-300)
    # unconverged rows report an upper bound (the caller solves them densely)
    assert np.all(lam[~conv] >= ref[~conv] * (1 - 1e-12))


SECULAR_MAPS = ["spline_linear", "poly", "rff", "nystroem_rbf", "function",
                "spline_periodic"]


def _frame_levels(seed=0, levels=9):
    """The test frame with a categorical of many levels (enough fixed coordinates for
    the fixed-pole route to be chosen by itself)."""
    df = _frame(seed)
    rng = np.random.RandomState(seed + 7)
    return df.assign(c=rng.choice([f"l{k}" for k in range(levels)], N))


@pytest.mark.parametrize("kind", ["ls", "logistic", "poisson"])
@pytest.mark.parametrize("map_name", SECULAR_MAPS)
def test_fixed_pole_route_equals_dense_jacobians_on_every_row(map_name, kind,
                                                              monkeypatch):
    """Every row's per-example eta by the fixed-pole route equals the spectral norm of
    its dense raw-input Jacobian (SVD) and the per-row Gram route, for every raw
    coordinate, subsets with and without the label, and the route picked by itself."""
    from sklearn_privacy.fil._audits._pipeline import raw_columns, raw_view
    from sklearn_privacy.fil._raw import _raw_input

    for df in (_frame(), _frame_levels()):
        pipe, df, _ = _fit(map_name, kind, df=df)
        raw = raw_view(pipe, X=df)
        for columns in (None, ["a", "c"], ["b", "c"], ["c", "label"]):
            order = raw_columns(raw, columns)
            Jt, _ = raw.jacobians_t(np.arange(N), order)
            dense = np.linalg.norm(Jt.transpose(0, 2, 1), 2, axis=(1, 2)) ** 2
            out = {}
            for route in ("secular", "gram", "auto"):
                monkeypatch.setattr(_raw_input, "_ROUTE", route)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)
                    out[route] = raw.per_example_sq_norms(order)
            fine = np.isfinite(dense) & np.isfinite(out["secular"])
            np.testing.assert_allclose(out["secular"][fine], dense[fine], rtol=1e-10)
            np.testing.assert_allclose(out["secular"], out["gram"], rtol=1e-10)
            chosen = "secular" if raw._use_secular(np.arange(N), order) else "gram"
            np.testing.assert_array_equal(out["auto"], out[chosen])
    # the many-level frame, every coordinate: the route is chosen by itself
    monkeypatch.setattr(_raw_input, "_ROUTE", "auto")
    pipe, df, _ = _fit(map_name, kind, df=_frame_levels())
    raw = raw_view(pipe, X=df)
    assert raw._use_secular(np.arange(N), raw_columns(raw, None))


@pytest.mark.parametrize("kind", ["ls", "logistic", "poisson"])
@pytest.mark.parametrize("map_name", ["spline_linear", "poly", "rff", "function"])
def test_fixed_pole_route_matches_finite_differences(map_name, kind, monkeypatch):
    """The fixed-pole route's per-example etas equal the spectral norms of the
    raw-input Jacobians from central differences of exact refits."""
    from sklearn_privacy.fil._raw import _raw_input

    monkeypatch.setattr(_raw_input, "_ROUTE", "secular")
    pipe, df, y = _fit(map_name, kind)
    fmap = feature_map(pipe)
    coords = np.arange(fmap.n_coordinates)
    rows = _probe_rows(pipe, df)
    per_example = fil.eta(pipe, X=df, per_example=True)
    per_c = fil.eta(pipe, X=df, columns=["a", "c"], per_example=True)
    ca = np.r_[0, fmap.feature_coordinates[2]]
    for r in rows:
        Jr = _fd_jacobian(pipe, df, y, r, coords)
        J = np.column_stack([Jr, _label_columns(pipe, r)])
        assert _rel(per_example[r], np.linalg.norm(J, 2) / SIGMA) < RTOL
        assert _rel(per_c[r], np.linalg.norm(Jr[:, ca], 2) / SIGMA) < RTOL


def test_fixed_pole_route_solves_unconverged_rows_on_their_gram(monkeypatch):
    """Rows the solver reports as not converged are answered by their per-row Gram."""
    from sklearn_privacy.fil._audits._pipeline import raw_columns, raw_view
    from sklearn_privacy.fil._raw import _raw_input

    solver = _raw_input.largest_eigenvalue_psd_update

    def partial(pi, Yh, C0):
        lam, conv = solver(pi, Yh, C0)
        conv[::3] = False
        lam[::3] = np.inf  # an upper bound that must not be used
        return lam, conv

    monkeypatch.setattr(_raw_input, "largest_eigenvalue_psd_update", partial)
    monkeypatch.setattr(_raw_input, "_ROUTE", "secular")
    pipe, df, _ = _fit("spline_linear", "logistic", df=_frame_levels())
    raw = raw_view(pipe, X=df)
    order = raw_columns(raw, None)
    Jt, _ = raw.jacobians_t(np.arange(N), order)
    dense = np.linalg.norm(Jt.transpose(0, 2, 1), 2, axis=(1, 2)) ** 2
    np.testing.assert_allclose(raw.per_example_sq_norms(order), dense, rtol=1e-10)


# scikit-learn's own warning on the unnamed array, before the refusal the test asserts
@pytest.mark.filterwarnings("ignore:X does not have valid feature names:UserWarning")
def test_raw_rows_with_other_columns_are_refused_by_name():
    """The derivative reads the raw columns by position: a frame missing one used to
    fail with "could not convert string to float" (the categorical column read in the
    numeric one's place), an array for a pipeline that selects columns by name with
    scikit-learn's unnamed column-transformer message."""
    pipe, df, _ = _fit("poly", "ls")
    want = fil.eta(pipe, X=df, columns="a", per_example=True)
    with pytest.raises(ValueError, match=r"^X: columns \['b'\] of the pipeline's input are "
                                         "missing"):
        fil.eta(pipe, X=df.drop(columns="b"), columns="a")
    with pytest.raises(ValueError, match=r"^X: the columns must come in the order"):
        fil.eta(pipe, X=df[["b", "a", "c"]], columns="a")
    with pytest.raises(ValueError, match=r"^X: Specifying the columns using strings"):
        fil.eta(pipe, X=df.to_numpy(), columns="a")
    with pytest.raises(ValueError, match=r"^X has 2 columns, but the pipeline was fitted "
                                         "on 3"):
        fil.eta(pipe, X=df[["a", "b"]].to_numpy(), columns="a")
    # a trailing extra column is not read: the same etas as the training frame
    got = fil.eta(pipe, X=df.assign(extra=0.0), columns="a", per_example=True)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("kind", ["ls", "logistic"])
def test_identity_function_transformer_without_names_is_traced(kind):
    """``FunctionTransformer()`` (no ``feature_names_out``) inside a column transformer
    has no ``get_feature_names_out``: the symbolic pass of a constant map used to raise
    scikit-learn's AttributeError for per-example and column etas and sigma_for_eta.
    Its width is now the input's; the etas equal those of the same pipeline declaring
    ``feature_names_out="one-to-one"`` and, through the scaler, the features' etas
    divided by its ``scale_``."""
    df = _frame()
    y = _target(df, kind)

    def pipe_with(ft):
        ct = make_column_transformer((make_pipeline(StandardScaler(), ft), ["a", "b"]),
                                     (OneHotEncoder(), ["c"]))
        return make_pipeline(ct, _glm(kind)).fit(df, y)

    bare = pipe_with(FunctionTransformer())
    named = pipe_with(FunctionTransformer(feature_names_out="one-to-one"))
    for kw in ({"columns": "a", "per_example": True}, {"columns": "c"}, {}):
        assert _rel(fil.eta(bare, **kw), fil.eta(named, **kw)) <= 1e-12
    assert _rel(fil.sigma_for_eta(bare, 1.0), fil.sigma_for_eta(named, 1.0)) <= 1e-12
    scale = bare[0].transformers_[0][1][0].scale_[0]
    feat = fil.eta(bare, columns=0, per_example=True, wrt="features")
    assert _rel(fil.eta(bare, columns="a", per_example=True), feat / scale) <= 1e-10


class _DoublingScaler(StandardScaler):
    """A user subclass that changes the map (twice the standardised value)."""

    def transform(self, X, copy=None):
        return 2.0 * super().transform(X, copy=copy)


class _RenamedScaler(StandardScaler):
    """A user subclass that keeps StandardScaler's transform."""


def test_subclass_overriding_transform_is_refused_not_given_the_base_derivative():
    """Derivatives are dispatched by isinstance: a StandardScaler subclass doubling its
    output got StandardScaler's derivative, a raw-input eta half the true one with no
    warning. It is now refused by name (the features' view with a PrivacyWarning by
    default); a subclass inheriting transform keeps the base derivative."""
    df = _frame()[["a", "b"]]
    y = _target(_frame(), "ls")
    doubling = make_pipeline(_DoublingScaler(), _glm("ls")).fit(df, y)
    with pytest.raises(ValueError, match="a subclass of StandardScaler that overrides "
                                         "transform"):
        fil.eta(doubling, columns="a", wrt="raw")
    with pytest.warns(PrivacyWarning, match="_doublingscaler"):
        got = fil.eta(doubling, columns="a", per_example=True)
    np.testing.assert_array_equal(
        got, fil.eta(doubling, columns="a", per_example=True, wrt="features"))
    renamed = make_pipeline(_RenamedScaler(), _glm("ls")).fit(df, y)
    plain = make_pipeline(StandardScaler(), _glm("ls")).fit(df, y)
    assert _rel(fil.eta(renamed, columns="a", per_example=True, wrt="raw"),
                fil.eta(plain, columns="a", per_example=True, wrt="raw")) <= 1e-12


def test_unfitted_pipeline_is_reported_as_not_fitted():
    """fil.eta of an unfitted pipeline said "feature_map: the raw input width is unknown
    ... or pass n_features_in" (a parameter the audit functions do not have)."""
    from sklearn.exceptions import NotFittedError

    pipe = make_pipeline(StandardScaler(), _glm("ls"))
    for call in (lambda: fil.eta(pipe), lambda: fil.sigma_for_eta(pipe, 1.0),
                 lambda: fil.fisher_information(pipe, rows=[0])):
        with pytest.raises(NotFittedError, match="is not fitted yet"):
            call()
