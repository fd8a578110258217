"""fil.audit of models trained with scikit-learn itself.

Oracle: the package's own FIL estimator fitted on the same data with the penalty mapped
by hand (``Ridge(alpha=a)`` -> ``alpha=a/W``, ``LogisticRegression(C)`` -> ``1/(C W)``,
``PoissonRegressor(alpha=a)`` -> ``a``, ``W`` the total sample weight). A wrong mapping
moves the minimiser, which both the eta comparison and ``polish_distance_`` detect.
"""

import pickle

import numpy as np
import pytest
from sklearn.linear_model import (
    Lasso,
    LinearRegression,
    LogisticRegression,
    PoissonRegressor,
    Ridge,
    RidgeCV,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, FILPoissonRegressor, fil
from sklearn_privacy.exceptions import AuditStateUnavailableError, PrivacyWarning


def _data(kind, n=200, d=4, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    z = X @ np.linspace(1.0, -0.5, d)
    if kind == "reg":
        y = z + 0.3 * rng.normal(size=n)
    elif kind == "clf":
        y = np.where(z + rng.normal(size=n) > 0, "yes", "no")
    else:
        y = rng.poisson(np.exp(0.4 * z)).astype(float)
    sw = rng.uniform(0.3, 2.5, size=n)
    return X, y, sw


# (name, data kind, model, FIL class, mapped alpha as a function of the total weight W)
CASES = [
    ("linear", "reg", lambda: LinearRegression(), FILLinearRegression, lambda W: 0.0),
    ("linear_noint", "reg", lambda: LinearRegression(fit_intercept=False),
     FILLinearRegression, lambda W: 0.0),
    ("ridge", "reg", lambda: Ridge(alpha=3.0), FILLinearRegression, lambda W: 3.0 / W),
    ("ridge_sag", "reg", lambda: Ridge(alpha=3.0, solver="sag", tol=1e-3, random_state=0),
     FILLinearRegression, lambda W: 3.0 / W),
    ("ridgecv", "reg", lambda: RidgeCV(alphas=[0.1, 5.0, 100.0]), FILLinearRegression, None),
    ("logistic", "clf", lambda: LogisticRegression(C=0.3, solver="newton-cholesky",
                                                   tol=1e-10), FILLogisticRegression,
     lambda W: 1.0 / (0.3 * W)),
    ("logistic_noint", "clf", lambda: LogisticRegression(C=2.0, fit_intercept=False,
                                                         solver="liblinear", tol=1e-10),
     FILLogisticRegression, lambda W: 1.0 / (2.0 * W)),
    ("logistic_nopenalty", "clf", lambda: LogisticRegression(C=np.inf, max_iter=1000),
     FILLogisticRegression, lambda W: 0.0),
    ("poisson", "count", lambda: PoissonRegressor(alpha=0.1, solver="newton-cholesky",
                                                  tol=1e-10), FILPoissonRegressor,
     lambda W: 0.1),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_audit_equals_library_estimator_with_mapped_penalty(case, weighted):
    name, kind, make, fil_cls, mapped = case
    X, y, sw = _data(kind)
    sw = sw if weighted else None
    model = make().fit(X, y, sample_weight=sw)
    W = X.shape[0] if sw is None else sw.sum()
    alpha = (model.alpha_ / W) if name == "ridgecv" else mapped(W)
    audited = fil.audit(model, X, y, sigma=0.4, sample_weight=sw, random_state=0)
    assert isinstance(audited, fil_cls)
    assert audited.alpha == pytest.approx(alpha, rel=1e-15)
    ref = fil_cls(sigma=0.4, alpha=alpha, fit_intercept=model.fit_intercept,
                  random_state=0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(audited.eta_, ref.eta_, rtol=1e-8)
    np.testing.assert_allclose(audited.eta(rows=[0, 5], columns=[1, "label"]),
                               ref.eta(rows=[0, 5], columns=[1, "label"]), rtol=1e-8)
    assert audited.sigma_for_eta(0.5) == pytest.approx(ref.sigma_for_eta(0.5), rel=1e-8)
    # the mapping is exact: a tight solver's coefficients already are the minimiser
    if name not in ("ridge_sag", "logistic_nopenalty"):
        assert audited.polish_relative_ < 1e-6, audited.polish_distance_


def test_lbfgs_at_default_tol_is_polished():
    """LogisticRegression(lbfgs, tol=1e-4) stops early; the audit polishes to the minimiser."""
    X, y, _ = _data("clf", n=400, d=6, seed=3)
    X[:, 0] *= 30.0  # badly scaled: lbfgs stops visibly short of the minimiser
    model = LogisticRegression(solver="lbfgs", tol=1e-4, C=1.0).fit(X, y)
    audited = fil.audit(model, X, y, sigma=1.0, random_state=0)
    ref = FILLogisticRegression(sigma=1.0, alpha=1.0 / 400, random_state=0).fit(X, y)
    np.testing.assert_allclose(audited.eta_, ref.eta_, rtol=1e-8)
    user = np.r_[model.coef_.ravel(), model.intercept_]
    exact = ref._audit_engine().theta
    assert audited.polish_distance_ == pytest.approx(np.linalg.norm(exact - user), rel=1e-6)
    assert audited.polish_distance_ > 1e-6  # it really needed polishing
    # the etas at the user's own (unpolished) coefficients would differ
    assert np.abs(user - exact).max() > 1e-6


def test_release_is_the_users_model_type_with_noisy_coefficients():
    X, y, _ = _data("clf")
    model = LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.2, random_state=0)
    theta = audited._audit_engine().theta
    pub = audited.release(random_state=1)
    assert type(pub) is LogisticRegression and pub.get_params() == model.get_params()
    assert not hasattr(pub, "n_iter_")
    noisy = np.r_[pub.coef_.ravel(), pub.intercept_]
    assert pub.coef_.shape == model.coef_.shape and pub.intercept_.shape == (1,)
    assert 0 < np.abs(noisy - theta).max() < 2.0
    np.testing.assert_array_equal(pub.decision_function(X), X @ pub.coef_[0] + pub.intercept_[0])
    np.testing.assert_array_equal(pub.classes_, model.classes_)
    # same seed, same release; through a pickle it predicts the same
    again = audited.release(random_state=1)
    np.testing.assert_array_equal(again.coef_, pub.coef_)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pub)).predict(X), pub.predict(X))
    # the noise has the audited scale: 300 draws of 5 coordinates
    draws = np.array([np.r_[r.coef_.ravel(), r.intercept_] - theta
                      for r in (audited.release(random_state=k) for k in range(300))])
    assert draws.std() == pytest.approx(0.2, rel=0.06)
    assert np.abs(draws.mean()) < 0.02
    # another sigma on request
    wide = np.array([audited.release(random_state=k, sigma=2.0).coef_.ravel() - theta[:4]
                     for k in range(200)])
    assert wide.std() == pytest.approx(2.0, rel=0.08)


@pytest.mark.parametrize("make,kind", [(lambda: Ridge(alpha=1.0), "reg"),
                                       (lambda: PoissonRegressor(alpha=0.1), "count"),
                                       (lambda: LinearRegression(fit_intercept=False), "reg")])
def test_release_of_regressors_keeps_shapes_and_predicts(make, kind):
    X, y, _ = _data(kind)
    model = make().fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.05, random_state=0)
    pub = audited.release(random_state=0)
    assert type(pub) is type(model)
    assert np.shape(pub.coef_) == np.shape(model.coef_)
    assert isinstance(pub.intercept_, float)
    assert not np.array_equal(pub.coef_, model.coef_)
    np.testing.assert_allclose(pub.predict(X), model.predict(X), rtol=0.5, atol=0.5)
    if not model.fit_intercept:
        assert pub.intercept_ == 0.0


def test_pickled_audit_drops_the_exact_model():
    X, y, _ = _data("reg")
    audited = fil.audit(Ridge(alpha=1.0).fit(X, y), X, y, sigma=0.1, random_state=0)
    restored = pickle.loads(pickle.dumps(audited))
    assert "_source" not in restored.__dict__ and "_audit" not in restored.__dict__
    np.testing.assert_array_equal(restored.coef_, audited.coef_)  # noisy release only
    with pytest.raises(AuditStateUnavailableError):
        restored.release()


def test_pipeline_with_sparse_output_and_names():
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(0)
    df = pd.DataFrame({"age": rng.normal(40, 10, 300),
                       "city": pd.Categorical(rng.choice(["a", "b", "c"], 300))})
    y = rng.poisson(np.exp(0.03 * (df["age"] - 40) + 0.5 * (df["city"] == "b")))
    pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
                                                 (OneHotEncoder(), ["city"])),
                         PoissonRegressor(alpha=0.01, tol=1e-10)).fit(df, y)
    audited = fil.audit(pipe, df, y, sigma=0.3, random_state=0)
    assert type(audited).__name__ == "Pipeline" and audited[0] is not pipe[0]
    city = fil.eta(audited, columns="city", per_example=True)
    np.testing.assert_allclose(city, audited[-1].eta(columns=[1, 2, 3], per_example=True))
    pub = audited[-1].release(random_state=0)
    assert type(pub).__name__ == "Pipeline" and type(pub[-1]) is PoissonRegressor
    assert pub[-1] is not pipe[-1] and pipe[-1].coef_ is not pub[-1].coef_
    Xt = pipe[0].transform(df)
    np.testing.assert_allclose(pub.predict(df), np.exp(Xt @ pub[-1].coef_ + pub[-1].intercept_))
    theta = audited[-1]._audit_engine().theta
    assert 0 < np.abs(np.r_[pub[-1].coef_, pub[-1].intercept_] - theta).max() < 2.0
    assert "preprocessing steps were fitted on the private rows" in audited[-1].release_claim_


def test_raw_adult_pipeline_audit_with_column_names():
    """ColumnTransformer + LogisticRegression on the raw Adult frame, audited by name."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.preprocessing import OneHotEncoder

    from sklearn_privacy.attacks import whitebox_inversion
    from sklearn_privacy.datasets import load_adult

    bunch = load_adult(raw=True, as_frame=True)
    cats = ["workclass", "education", "marital_status", "race", "sex"]
    nums = ["age", "education_num", "hours_per_week"]
    idx = np.random.RandomState(0).permutation(len(bunch.data))[:1500]
    X = bunch.data[cats + nums].iloc[idx].reset_index(drop=True)
    assert isinstance(X, pd.DataFrame)
    y = (bunch.target.iloc[idx] == ">50K").astype(int).to_numpy()
    pre = ColumnTransformer([("cat", make_pipeline(SimpleImputer(strategy="most_frequent"),
                                                   OneHotEncoder(handle_unknown="ignore")),
                              cats), ("num", StandardScaler(), nums)])
    pipe = make_pipeline(pre, LogisticRegression(C=1.0, max_iter=1000)).fit(X, y)
    audited = fil.audit(pipe, X, y, sigma=0.5, random_state=0)
    Xt = pipe[0].transform(X)
    ref = FILLogisticRegression(sigma=0.5, alpha=1.0 / len(X), random_state=0).fit(Xt, y)
    np.testing.assert_allclose(audited[-1].eta_, ref.eta_, rtol=1e-8)
    race = fil.eta(audited, columns="race", per_example=True)
    names = list(pipe[0].get_feature_names_out())
    block = [k for k, n in enumerate(names) if n.startswith("cat__race_")]
    np.testing.assert_allclose(race, ref.eta(columns=block, per_example=True), rtol=1e-8)
    by_name = fil.eta(audited, columns=[names[k] for k in block], per_example=True)
    np.testing.assert_allclose(by_name, race, rtol=1e-12)
    attack = whitebox_inversion(audited, X, sensitive_features="sex", rows=np.arange(50),
                                n_draws=5, random_state=0)
    assert 0.0 <= attack.accuracy <= 1.0
    pub = audited[-1].release(random_state=0)
    assert pub.score(X, y) > 0.75 and type(pub[-1]) is LogisticRegression


def test_eta_display_on_an_audit():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy import EtaDisplay

    X, y, _ = _data("count")
    audited = fil.audit(PoissonRegressor(alpha=0.1).fit(X, y), X, y, sigma=1.0)
    disp = EtaDisplay.from_estimator(audited)
    assert disp.figure_ is not None


def test_dp_view_through_an_audit():
    X, y, _ = _data("clf")
    X = X / np.linalg.norm(X, axis=1).max()
    model = LogisticRegression(C=0.5, fit_intercept=False, tol=1e-10).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.5, data_norm=1.0, random_state=0)
    assert np.isfinite(audited.epsilon_)
    s = audited.sigma_for_epsilon(1.0)
    # alpha = 1 / (n C) = 0.01; L = sigmoid(R sqrt(2 log 2 / alpha)); sensitivity 2 L R C
    L = 1 / (1 + np.exp(-np.sqrt(2 * np.log(2) / 0.01)))
    assert audited.sensitivity_ == pytest.approx(2.0 * L * 0.5 * 200 / 200, rel=1e-12)
    assert s > 0
    with pytest.raises(ValueError, match="exceed data_norm"):
        fil.audit(model, X, y, sigma=0.5, data_norm=0.5)
    # no guarantee for Poisson, with the reason
    Xc, yc, _ = _data("count")
    pois = fil.audit(PoissonRegressor().fit(Xc, yc), Xc, yc, sigma=1.0)
    assert pois.epsilon_ == np.inf
    with pytest.raises(ValueError, match="not Lipschitz|unbounded"):
        pois.sigma_for_epsilon(1.0)


def test_ridgecv_claim_names_the_selected_alpha():
    X, y, _ = _data("reg")
    model = RidgeCV(alphas=[0.1, 1.0, 10.0]).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.1)
    assert "alpha_" in audited.release_claim_ and "data-dependent" in audited.release_claim_
    pub = audited.release()
    assert type(pub) is RidgeCV and pub.alpha_ == model.alpha_
    assert not hasattr(pub, "best_score_")


def test_refusals_are_clear():
    X, y, _ = _data("reg")
    Xc, yc, _ = _data("clf")
    with pytest.raises(ValueError, match="LinearRegression, LogisticRegression, "
                                         "PoissonRegressor, Ridge, RidgeCV.*got Lasso"):
        fil.audit(Lasso().fit(X, y), X, y, sigma=1.0)
    # an L1 model: l1_ratio=1 where penalty is deprecated (scikit-learn >= 1.8), else
    # penalty="l1" (l1_ratio alone is ignored under the default penalty="l2" there)
    l1 = (dict(l1_ratio=1.0) if LogisticRegression().get_params()["penalty"] == "deprecated"
          else dict(penalty="l1"))
    with pytest.raises(ValueError, match="l1 penalty"):
        fil.audit(LogisticRegression(solver="saga", **l1).fit(Xc, yc), Xc, yc, sigma=1.0)
    with pytest.raises(ValueError, match="class_weight"):
        fil.audit(LogisticRegression(class_weight="balanced").fit(Xc, yc), Xc, yc, sigma=1.0)
    with pytest.raises(ValueError, match="liblinear"):
        fil.audit(LogisticRegression(solver="liblinear").fit(Xc, yc), Xc, yc, sigma=1.0)
    y3 = np.arange(len(yc)) % 3
    ovr_style = LogisticRegression().fit(Xc, y3)
    ovr_style.multi_class = "ovr"  # what scikit-learn < 1.7 could still fit
    with pytest.raises(ValueError, match="3 one-vs-rest binary models.*OneVsRestClassifier"):
        fil.audit(ovr_style, Xc, y3, sigma=1.0)
    with pytest.raises(ValueError, match="class_weight"):
        fil.audit(LogisticRegression(class_weight="balanced").fit(Xc, y3), Xc, y3, sigma=1.0)
    with pytest.raises(ValueError, match="positive=True"):
        fil.audit(LinearRegression(positive=True).fit(X, y), X, y, sigma=1.0)
    Y2 = np.column_stack([y, -y])
    with pytest.raises(ValueError, match="2 targets"):
        fil.audit(Ridge().fit(X, Y2), X, Y2, sigma=1.0)
    model = LogisticRegression().fit(Xc, yc)
    with pytest.raises(ValueError, match="differ from the model's classes_"):
        fil.audit(model, Xc, np.where(yc == "yes", 1, 0), sigma=1.0)
    with pytest.raises(ValueError, match="fitted on 4 features but X gives 3"):
        fil.audit(model, Xc[:, :3], yc, sigma=1.0)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        fil.audit(Ridge(), X, y, sigma=1.0)
    # collinear columns: OLS has no unique minimiser
    Xs = np.column_stack([X, X[:, 0]])
    with pytest.raises(ValueError, match="LinearRegression.*no unique minimiser"):
        fil.audit(LinearRegression().fit(Xs, y), Xs, y, sigma=1.0)
    with pytest.raises(ValueError, match="sigma"):
        fil.audit(Ridge().fit(X, y), X, y, sigma=-1.0)
    ridge = Ridge().fit(X, y)
    with pytest.raises(ValueError, match="sample_weight must be finite and non-negative"):
        fil.audit(ridge, X, y, sigma=1.0, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight: .*(all weights are zero|non-zero)"):
        fil.audit(ridge, X, y, sigma=1.0, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="X.*inconsistent numbers of samples"):
        fil.audit(ridge, X[:-3], y, sigma=1.0, sample_weight=np.ones(len(y)))


def test_wrong_training_data_warns():
    X, y, _ = _data("reg")
    model = Ridge(alpha=1.0).fit(X, y)
    with pytest.warns(UserWarning, match="from the exact minimiser"):
        fil.audit(model, X, y + 5.0, sigma=1.0)


def test_unpenalised_logistic_on_separable_classes_is_refused():
    X, _, _ = _data("clf", n=60)
    y = (X[:, 0] > 0).astype(int)  # separable
    model = LogisticRegression(C=np.inf, max_iter=50)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    with pytest.raises(ValueError, match="LogisticRegression.*alpha=0.0.*separable"):
        fil.audit(model, X, y, sigma=1.0)


def test_sparse_input_gives_the_dense_audit():
    import scipy.sparse as sp

    X, y, sw = _data("clf", n=150, d=5, seed=7)
    X[np.abs(X) < 0.8] = 0.0
    model = LogisticRegression(C=0.7, tol=1e-10, solver="newton-cholesky")
    dense = fil.audit(model.fit(X, y), X, y, sigma=0.3, sample_weight=None)
    Xs = sp.csr_matrix(X)
    sparse = fil.audit(model.fit(Xs, y), Xs, y, sigma=0.3)
    np.testing.assert_allclose(sparse.eta_, dense.eta_, rtol=1e-9)
    assert sparse.release(random_state=0).predict(Xs).shape == (150,)


# ---------------------------------------------------------------- multinomial
def _data3(n=200, d=4, seed=0, scale=1.0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    X[:, 0] *= scale
    z = X[:, 0] / scale - 0.7 * X[:, 1] + 0.6 * rng.normal(size=n)
    y = np.array(["lo", "mid", "hi"])[np.digitize(z, [-0.5, 0.5])]
    sw = rng.uniform(0.3, 2.5, size=n)
    return X, y, sw


def _user_theta3(model):
    T = (np.column_stack([model.coef_, model.intercept_]) if model.fit_intercept
         else model.coef_.copy())
    return T.ravel()


# (name, model, needs polishing)
MULTI_CASES = [
    ("newton_cholesky", lambda fi: LogisticRegression(C=0.5, solver="newton-cholesky",
                                                      tol=1e-10, fit_intercept=fi), False),
    ("lbfgs_default_tol", lambda fi: LogisticRegression(C=0.5, solver="lbfgs", tol=1e-4,
                                                        fit_intercept=fi), True),
    ("sag", lambda fi: LogisticRegression(C=2.0, solver="sag", tol=1e-3, max_iter=1000,
                                          random_state=0, fit_intercept=fi), True),
    ("no_penalty", lambda fi: LogisticRegression(C=np.inf, tol=1e-10, max_iter=1000,
                                                 fit_intercept=fi), False),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("fit_intercept", [True, False], ids=["intercept", "nointercept"])
@pytest.mark.parametrize("case", MULTI_CASES, ids=[c[0] for c in MULTI_CASES])
def test_multinomial_audit_equals_library_estimator(case, fit_intercept, weighted):
    """K = 3: the audit's etas are those of FILLogisticRegression(alpha=1/(C W))."""
    name, make, needs_polish = case
    X, y, sw = _data3(scale=30.0 if needs_polish else 1.0)
    sw = sw if weighted else None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sag / lbfgs stopping early is the point
        model = make(fit_intercept).fit(X, y, sample_weight=sw)
        # sag at tol=1e-3 stops far enough away that the audit warns (tested elsewhere)
        audited = fil.audit(model, X, y, sigma=0.4, sample_weight=sw, random_state=0)
    W = X.shape[0] if sw is None else sw.sum()
    alpha = 0.0 if not np.isfinite(model.C) else 1.0 / (model.C * W)
    assert isinstance(audited, FILLogisticRegression)
    assert audited.alpha == pytest.approx(alpha, rel=1e-15)
    ref = FILLogisticRegression(sigma=0.4, alpha=alpha, fit_intercept=fit_intercept,
                                random_state=0).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(audited.eta_, ref.eta_, rtol=1e-8)
    np.testing.assert_allclose(audited.eta(rows=[0, 5], columns=[1, "label"]),
                               ref.eta(rows=[0, 5], columns=[1, "label"]), rtol=1e-8)
    np.testing.assert_allclose(audited.fisher_information(rows=[3], columns=[0, "label"]),
                               ref.fisher_information(rows=[3], columns=[0, "label"]),
                               rtol=1e-7, atol=1e-12)
    assert audited.sigma_for_eta(0.5) == pytest.approx(ref.sigma_for_eta(0.5), rel=1e-8)
    # scikit-learn's solution is the symmetric one the FIL estimator releases: class
    # rows (coefficients and intercepts) sum to zero, so no offset is hidden in the distance
    user = _user_theta3(model)
    exact = ref._audit_engine().theta
    assert np.abs(user.reshape(3, -1).sum(axis=0)).max() < 1e-8
    assert audited.polish_distance_ == pytest.approx(np.linalg.norm(exact - user),
                                                     rel=1e-6, abs=1e-12)
    if needs_polish:
        assert audited.polish_distance_ > 1e-5  # the solver stopped visibly short
    else:
        assert audited.polish_relative_ < 1e-6, audited.polish_distance_


def test_multinomial_lbfgs_default_tol_polish_distance():
    """The default LogisticRegression (lbfgs, tol=1e-4) on badly scaled data stops short."""
    X, y, _ = _data3(n=300, d=5, seed=4, scale=30.0)
    model = LogisticRegression(solver="lbfgs", tol=1e-4).fit(X, y)
    audited = fil.audit(model, X, y, sigma=1.0, random_state=0)
    ref = FILLogisticRegression(sigma=1.0, alpha=1.0 / 300, random_state=0).fit(X, y)
    np.testing.assert_allclose(audited.eta_, ref.eta_, rtol=1e-8)
    exact = ref._audit_engine().theta
    assert audited.polish_distance_ == pytest.approx(
        np.linalg.norm(exact - _user_theta3(model)), rel=1e-6)
    assert audited.polish_distance_ > 1e-4
    assert audited.polish_relative_ < 0.1  # close enough not to warn


def test_multinomial_release_is_a_logistic_regression_with_noisy_parameters():
    X, y, _ = _data3()
    model = LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.2, random_state=0)
    Theta = audited._audit_engine().theta.reshape(3, 5)
    pub = audited.release(random_state=1)
    assert type(pub) is LogisticRegression and pub.get_params() == model.get_params()
    assert pub.coef_.shape == (3, 4) and pub.intercept_.shape == (3,)
    assert not hasattr(pub, "n_iter_")
    np.testing.assert_array_equal(pub.classes_, model.classes_)
    noisy = np.column_stack([pub.coef_, pub.intercept_])
    assert 0 < np.abs(noisy - Theta).max() < 2.0
    scores = X @ pub.coef_.T + pub.intercept_
    np.testing.assert_allclose(pub.decision_function(X), scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(pub.predict(X), model.classes_[scores.argmax(axis=1)])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(pub)).predict(X), pub.predict(X))
    # the noise is N(0, sigma^2) on all K (d + 1) numbers (intercepts included)
    draws = np.array([np.column_stack([r.coef_, r.intercept_]) - Theta
                      for r in (audited.release(random_state=k) for k in range(200))])
    assert draws.std() == pytest.approx(0.2, rel=0.06)
    assert draws[:, :, -1].std() == pytest.approx(0.2, rel=0.15)
    assert np.abs(draws.mean()) < 0.02
    # without an intercept the release keeps scikit-learn's zero intercepts
    m0 = LogisticRegression(C=0.5, tol=1e-10, fit_intercept=False).fit(X, y)
    pub0 = fil.audit(m0, X, y, sigma=0.2).release()
    np.testing.assert_array_equal(pub0.intercept_, np.zeros(3))
    assert pub0.coef_.shape == (3, 4)


def test_multinomial_dp_view_eta_display_and_inversion():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from sklearn_privacy import EtaDisplay
    from sklearn_privacy.attacks import whitebox_inversion

    X, y, _ = _data3(n=150)
    X[:, :3] *= 0.8 / np.linalg.norm(X[:, :3], axis=1).max()
    X[:, 3] = 0.5 * (X[:, 3] > 0)  # a binary attribute (0 or 0.5) to invert; ||x|| <= 1
    model = LogisticRegression(C=4.0, fit_intercept=False, tol=1e-10).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.5, data_norm=1.0, random_state=0)
    # L = sqrt(2) for the softmax loss: sensitivity 2 sqrt(2) R / (n alpha) = 2 sqrt(2) C
    assert audited.sensitivity_ == pytest.approx(2 * np.sqrt(2) * 4.0, rel=1e-12)
    assert np.isfinite(audited.epsilon_)
    s = audited.sigma_for_epsilon(1.0)
    ref = FILLogisticRegression(sigma=0.5, alpha=1 / (4.0 * 150), fit_intercept=False,
                                data_norm=1.0, random_state=0).fit(X, y)
    assert s == pytest.approx(ref.sigma_for_epsilon(1.0), rel=1e-10)
    with pytest.raises(ValueError, match="exceed data_norm"):
        fil.audit(model, X, y, sigma=0.5, data_norm=0.5)
    disp = EtaDisplay.from_estimator(audited)
    assert disp.figure_ is not None
    levels = np.array([[0.0], [0.5]])
    attack = whitebox_inversion(audited, sensitive_features=3, candidates=levels,
                                rows=np.arange(10), random_state=0)
    assert 0.0 <= attack.accuracy <= 1.0
    ref_attack = whitebox_inversion(ref, sensitive_features=3, candidates=levels,
                                    rows=np.arange(10), random_state=0)
    np.testing.assert_array_equal(attack.predictions, ref_attack.predictions)


def test_multinomial_pipeline_on_a_frame_with_names():
    import pandas as pd
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder

    rng = np.random.RandomState(1)
    df = pd.DataFrame({"age": rng.normal(40, 10, 240),
                       "city": pd.Categorical(rng.choice(["a", "b", "c"], 240))})
    z = 0.08 * (df["age"] - 40) + 1.2 * (df["city"] == "b") + 0.5 * rng.normal(size=240)
    y = np.array(["low", "mid", "high"])[np.digitize(z, [-0.4, 0.6])]
    pipe = make_pipeline(make_column_transformer((StandardScaler(), ["age"]),
                                                 (OneHotEncoder(), ["city"])),
                         LogisticRegression(C=1.0)).fit(df, y)
    audited = fil.audit(pipe, df, y, sigma=0.3, random_state=0)
    Xt = pipe[0].transform(df)
    ref = FILLogisticRegression(sigma=0.3, alpha=1 / 240, random_state=0).fit(Xt, y)
    np.testing.assert_allclose(audited[-1].eta_, ref.eta_, rtol=1e-8)
    city = fil.eta(audited, columns="city", per_example=True)
    np.testing.assert_allclose(city, ref.eta(columns=[1, 2, 3], per_example=True), rtol=1e-8)
    pub = audited[-1].release(random_state=0)
    assert type(pub[-1]) is LogisticRegression and pub[-1].coef_.shape == (3, 4)
    np.testing.assert_array_equal(pub.predict(df), pub[-1].classes_[
        (Xt @ pub[-1].coef_.T + pub[-1].intercept_).argmax(axis=1)])


# ---------------------------------------------------------------- one-vs-rest
def test_one_vs_rest_logistic_regressions_are_composed():
    """OneVsRestClassifier(LogisticRegression): K binary audits whose FIMs add."""
    from sklearn.multiclass import OneVsRestClassifier

    X, y, sw = _data3()
    model = OneVsRestClassifier(LogisticRegression(C=0.5, tol=1e-10)).fit(X, y)
    audited = fil.audit(model, X, y, sigma=0.3, random_state=0)
    assert isinstance(audited, OneVsRestClassifier)
    ref = OneVsRestClassifier(FILLogisticRegression(sigma=0.3, alpha=1 / (0.5 * 200),
                                                    random_state=0)).fit(X, y)
    np.testing.assert_allclose(fil.eta(audited, per_example=True),
                               fil.eta(ref, per_example=True), rtol=1e-8)
    np.testing.assert_allclose(fil.eta(audited, rows=[2], columns=["label"]),
                               fil.eta(ref, rows=[2], columns=["label"]), rtol=1e-8)
    # on the features (the label is parametrised differently in the composition: one-hot
    # coordinates in the sum-zero basis) the composition reveals at least each part
    feats = [0, 1, 2, 3]
    parts = np.max([e.eta(columns=feats, per_example=True) for e in audited.estimators_],
                   axis=0)
    whole = fil.eta(audited, columns=feats, per_example=True)
    assert np.all(whole >= parts * (1 - 1e-12)) and np.any(whole > parts * 1.01)
    assert audited.polish_distances_.shape == (3,) and audited.polish_distances_.max() < 1e-5
    assert "do not cover the composition" in audited.release_claim_ or (
        "does not cover the composition" in audited.release_claim_)
    pub = audited.release(random_state=0)
    assert type(pub) is OneVsRestClassifier
    assert all(type(e) is LogisticRegression for e in pub.estimators_)
    scores = np.column_stack([X @ e.coef_[0] + e.intercept_[0] for e in pub.estimators_])
    np.testing.assert_array_equal(pub.predict(X), model.classes_[scores.argmax(axis=1)])
    exact = np.array([e._audit_engine().theta for e in audited.estimators_])
    noisy = np.array([np.r_[e.coef_[0], e.intercept_] for e in pub.estimators_])
    assert 0 < np.abs(noisy - exact).max() < 1.5
    # weights flow to every binary audit
    from sklearn import config_context

    with config_context(enable_metadata_routing=True):
        weighted = OneVsRestClassifier(LogisticRegression(C=0.5, tol=1e-10)
                                       .set_fit_request(sample_weight=True))
        weighted.fit(X, y, sample_weight=sw)
    a_w = fil.audit(weighted, X, y, sigma=0.3, sample_weight=sw)
    assert a_w.polish_distances_.max() < 1e-5
    from sklearn.linear_model import SGDClassifier

    with pytest.raises(ValueError, match="binary LogisticRegression.*SGDClassifier"):
        fil.audit(OneVsRestClassifier(SGDClassifier()).fit(X, y), X, y, sigma=1.0)


def test_multinomial_from_far_coefficients_warns_and_still_audits_the_minimiser():
    """A model stopped after 3 lbfgs iterations: Newton (damped) still reaches the minimiser."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = _data3(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = LogisticRegression(C=0.5, max_iter=3).fit(X, y)
    with pytest.warns(UserWarning, match="from the exact minimiser"):
        audited = fil.audit(model, X, y, sigma=0.5)
    ref = FILLogisticRegression(sigma=0.5, alpha=1 / (0.5 * 200)).fit(X, y)
    np.testing.assert_allclose(audited.eta_, ref.eta_, rtol=1e-8)
    assert audited.polish_relative_ > 0.1


def test_multinomial_sparse_and_pickled_audits():
    import scipy.sparse as sp
    from sklearn.multiclass import OneVsRestClassifier

    X, y, _ = _data3(n=150, seed=6)
    X[np.abs(X) < 0.7] = 0.0
    Xs = sp.csr_matrix(X)
    model = LogisticRegression(C=0.7, solver="newton-cholesky", tol=1e-10)
    dense = fil.audit(model.fit(X, y), X, y, sigma=0.3)
    sparse = fil.audit(model.fit(Xs, y), Xs, y, sigma=0.3)
    np.testing.assert_allclose(sparse.eta_, dense.eta_, rtol=1e-9)
    assert sparse.release(random_state=0).predict(Xs).shape == (150,)
    restored = pickle.loads(pickle.dumps(sparse))
    assert "_source" not in restored.__dict__
    np.testing.assert_array_equal(restored.coef_, sparse.coef_)
    with pytest.raises(AuditStateUnavailableError):
        restored.release()
    ovr = fil.audit(OneVsRestClassifier(LogisticRegression(tol=1e-10)).fit(X, y), X, y,
                    sigma=0.3)
    back = pickle.loads(pickle.dumps(ovr))
    assert "_source" not in back.__dict__
    np.testing.assert_array_equal(back.predict(X), ovr.predict(X))
    with pytest.raises(AuditStateUnavailableError):
        back.release()


def test_one_vs_rest_in_a_pipeline_and_with_two_classes():
    from sklearn.multiclass import OneVsRestClassifier

    X, y, _ = _data3(seed=2)
    pipe = make_pipeline(StandardScaler(), OneVsRestClassifier(
        LogisticRegression(C=0.5, tol=1e-10))).fit(X, y)
    audited = fil.audit(pipe, X, y, sigma=0.3, random_state=0)
    assert type(audited).__name__ == "Pipeline" and audited[0] is not pipe[0]
    Xt = pipe[0].transform(X)
    ref = OneVsRestClassifier(FILLogisticRegression(sigma=0.3, alpha=1 / (0.5 * 200),
                                                    random_state=0)).fit(Xt, y)
    with pytest.warns(PrivacyWarning, match="entering the one-vs-rest composition"):
        got = fil.eta(audited, per_example=True)     # the scaled features, said so
    np.testing.assert_allclose(got, fil.eta(ref, per_example=True), rtol=1e-8)
    pub = audited[-1].release(random_state=0)
    assert type(pub).__name__ == "Pipeline" and type(pub[-1]) is OneVsRestClassifier
    assert pub.predict(X).shape == (200,)
    # two classes: one binary model, the plain binary audit
    y2 = np.where(y == "hi", "hi", "other")
    two = OneVsRestClassifier(LogisticRegression(C=0.5, tol=1e-10)).fit(X, y2)
    a2 = fil.audit(two, X, y2, sigma=0.3)
    b2 = fil.audit(LogisticRegression(C=0.5, tol=1e-10).fit(X, y2), X, y2, sigma=0.3)
    np.testing.assert_allclose(a2.estimators_[0].eta_, b2.eta_, rtol=1e-8)
    with pytest.raises(ValueError, match="differ from the model's classes_"):
        fil.audit(two, X, y, sigma=0.3)


def test_privacy_claim_of_multiclass_audits():
    """privacy_claim composes the audited one-vs-rest models as the library's own OvR."""
    from sklearn.multiclass import OneVsRestClassifier

    from sklearn_privacy import privacy_claim

    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    X /= np.linalg.norm(X, axis=1).max()
    y = np.digitize(X[:, 0] - X[:, 1], [-0.3, 0.3])
    from sklearn_privacy.privacy._attributes import _attribute_check_disabled

    multi = fil.audit(LogisticRegression(C=10.0, fit_intercept=False, tol=1e-10).fit(X, y),
                      X, y, sigma=30.0, data_norm=1.0, classes=[0, 1, 2])
    assert privacy_claim(multi).epsilon == pytest.approx(multi.epsilon_, rel=1e-12)
    assert np.isfinite(multi.epsilon_)
    # without the declared label set: the labels were found in y
    undeclared = fil.audit(LogisticRegression(C=10.0, fit_intercept=False,
                                              tol=1e-10).fit(X, y), X, y, sigma=30.0,
                           data_norm=1.0)
    assert any("classes_" in r for r in privacy_claim(undeclared).reasons)
    ovr = fil.audit(OneVsRestClassifier(LogisticRegression(C=10.0, fit_intercept=False,
                                                           tol=1e-10)).fit(X, y),
                    X, y, sigma=30.0, data_norm=1.0, classes=[0, 1, 2])
    ref = OneVsRestClassifier(FILLogisticRegression(
        sigma=30.0, alpha=1 / (10.0 * 300), fit_intercept=False, data_norm=1.0,
        classes=[0, 1])).fit(X, y)
    claim = privacy_claim(ovr)
    with _attribute_check_disabled():   # a plain OvR: its label set is not declared
        expected = privacy_claim(ref)
    assert np.isfinite(claim.epsilon)
    assert claim.epsilon == pytest.approx(expected.epsilon, rel=1e-9)
    assert claim.epsilon > max(e.epsilon_ for e in ovr.estimators_)  # three releases
    # seeded noise is not private
    seeded = fil.audit(OneVsRestClassifier(LogisticRegression(C=10.0, fit_intercept=False,
                                                              tol=1e-10)).fit(X, y),
                       X, y, sigma=30.0, data_norm=1.0, random_state=0)
    assert privacy_claim(seeded).epsilon == np.inf
