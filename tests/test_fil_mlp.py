"""fil.audit of scikit-learn's MLPClassifier / MLPRegressor.

Oracles:
- scikit-learn's own reported objective (``loss_`` of an lbfgs fit) for the objective;
- central finite differences of the objective, of its gradient and of the gradient with
  respect to the data for the analytic derivatives;
- finite differences of **warm-started retraining** for eta: the data value is moved by
  +-eps, the model is retrained from the polished minimiser on the perturbed data until
  the gradient of the perturbed objective is below 1e-14, and the parameters are
  differenced. The retraining iterates a chord step (a fixed matrix times the
  gradient); its fixed point is defined by the gradient alone, so the matrix only sets
  the speed of convergence, not the answer.
"""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import (
    KBinsDiscretizer,
    OneHotEncoder,
    SplineTransformer,
    StandardScaler,
)

from sklearn_privacy import fil, privacy_claim
from sklearn_privacy.exceptions import AuditStateUnavailableError, UncertifiedMinimumError
from sklearn_privacy.fil._mlp._math import MLPObjective


def _data(kind, n, d=3, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    z = X[:, 0] - 0.7 * X[:, 1] ** 2 + np.sin(2 * X[:, -1])
    if kind == "binary":
        y = np.where(z + 0.5 * rng.normal(size=n) > -0.3, "yes", "no")
    elif kind == "multiclass":
        y = np.digitize(z + 0.5 * rng.normal(size=n), [-1.0, 0.3])
    elif kind == "poisson":
        y = rng.poisson(np.exp(0.4 * np.tanh(z))).astype(float)
    else:
        y = z + 0.3 * rng.normal(size=n)
    return X, y


def _fit(model, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y, **kw)


def _retrain_jacobian(audited, rows, eps=1e-4, columns=None):
    """Finite differences of warm-started retraining: J_i (p x q) for each row."""
    obj = audited._obj
    theta = audited._theta
    H = obj.hessian(theta)
    U = np.zeros((obj.p, 0))
    if obj.out == "softmax":  # the gauge direction (a common shift of the output biases)
        u = np.zeros(obj.p)
        u[obj.p - obj.K:] = 1.0 / np.sqrt(obj.K)
        U = u[:, None]
        H = H + U @ U.T
    chord = np.linalg.inv(H)
    pipe = audited._source[0]
    out = []
    for i in rows:
        cols = []
        for c in (range(audited._q) if columns is None else columns):
            ends = []
            for sign in (1.0, -1.0):
                X2, Y2 = obj.X.copy(), obj.Y.copy()
                if c >= audited._d:
                    Y2[i] += sign * eps * obj.label_dirs[c - audited._d]
                elif pipe is None:
                    X2[i, c] += sign * eps
                else:  # move the raw value, re-apply the fitted preprocessing
                    raw = audited._X_raw.iloc[[i]].copy()
                    raw.iloc[0, c] += sign * eps
                    X2[i] = pipe[:-1].transform(raw)[0]
                o2 = MLPObjective(obj.units, obj.activation, obj.out, obj.alpha, X2, Y2,
                                  obj.w)
                t = theta.copy()
                for _ in range(60):
                    g = o2.value_grad(t)[1]
                    if np.linalg.norm(g) < 1e-14:
                        break
                    t = t - chord @ g
                assert np.linalg.norm(o2.value_grad(t)[1]) < 1e-13
                ends.append(t)
            cols.append((ends[0] - ends[1]) / (2 * eps))
        out.append(np.array(cols).T)
    return out


def _probe_rows(audited, n_probe=20, seed=0):
    top = np.argsort(audited.eta_)[-5:]
    rest = np.setdiff1d(np.arange(audited.eta_.size), top)
    others = np.random.RandomState(seed).choice(rest, n_probe - 5, replace=False)
    return np.r_[top, others]


def _check_against_retraining(audited, rows, rtol):
    Js = _retrain_jacobian(audited, rows)
    fd = np.array([np.linalg.norm(J, 2) for J in Js]) / audited.sigma
    where = {int(r): k for k, r in enumerate(audited.rows_)}
    got = audited.eta_[[where[int(r)] for r in rows]]
    rel = np.abs(got - fd) / fd
    assert rel.max() < rtol, (rel.max(), got, fd)
    return rel.max()


# ---------------------------------------------------------------- the objective
#: MLPRegressor(loss="poisson") and MLP sample weights arrived in scikit-learn 1.7
HAS_POISSON_MLP = "loss" in MLPRegressor().get_params()
needs_sklearn_17 = pytest.mark.skipif(not HAS_POISSON_MLP,
                                      reason="MLP loss='poisson' and sample_weight need "
                                             "scikit-learn >= 1.7")

OBJ_CASES = [
    ("binary", lambda a: MLPClassifier((4, 3), activation=a, alpha=0.1, solver="lbfgs",
                                       max_iter=40, random_state=0)),
    ("multiclass", lambda a: MLPClassifier((4,), activation=a, alpha=0.1, solver="lbfgs",
                                           max_iter=40, random_state=0)),
    ("regression", lambda a: MLPRegressor(hidden_layer_sizes=(4, 3), activation=a, alpha=0.1,
                                          solver="lbfgs", max_iter=40, random_state=0)),
    ("poisson", lambda a: MLPRegressor(hidden_layer_sizes=(4,), activation=a, alpha=0.1,
                                       solver="lbfgs", max_iter=40, random_state=0,
                                       loss="poisson")),
]


def _objective_of(model, X, y, sample_weight=None):
    if hasattr(model, "classes_"):
        Y = model._label_binarizer.transform(y).astype(float)
    else:
        Y = np.asarray(y, dtype=float)[:, None]
    units = [X.shape[1], *[W.shape[1] for W in model.coefs_]]
    theta = np.concatenate([W.ravel() for W in model.coefs_ + model.intercepts_])
    return MLPObjective(units, model.activation, model.out_activation_, model.alpha, X, Y,
                        sample_weight), theta


@pytest.mark.parametrize("activation", ["tanh", "logistic", "identity"])
@pytest.mark.parametrize("case", OBJ_CASES, ids=[c[0] for c in OBJ_CASES])
def test_objective_is_scikit_learns_and_derivatives_match_finite_differences(case,
                                                                             activation):
    kind, make = case
    if kind == "poisson" and not HAS_POISSON_MLP:
        pytest.skip("MLPRegressor(loss='poisson') needs scikit-learn >= 1.7")
    X, y = _data(kind, 80)
    model = _fit(make(activation), X, y)
    obj, theta = _objective_of(model, X, y)
    # scikit-learn's lbfgs reports the objective at its final parameters
    assert obj.value_grad(theta)[0] == pytest.approx(model.loss_, rel=1e-12, abs=1e-14)
    sw = np.random.RandomState(1).uniform(0.3, 2.0, X.shape[0])
    obj, _ = _objective_of(model, X, y, sw)
    eps, eye = 1e-6, np.eye(obj.p)
    g = obj.value_grad(theta)[1]
    g_fd = np.array([(obj.value_grad(theta + eps * v)[0] - obj.value_grad(theta - eps * v)[0])
                     / (2 * eps) for v in eye])
    np.testing.assert_allclose(g, g_fd, atol=1e-8)
    H = obj.hessian(theta)
    H_fd = np.array([(obj.value_grad(theta + eps * v)[1] - obj.value_grad(theta - eps * v)[1])
                     / (2 * eps) for v in eye])
    assert np.abs(H - H_fd).max() < 1e-7 * np.abs(H).max()
    np.testing.assert_allclose(H, obj.hessian(theta, generic=True), atol=1e-13)
    # mixed derivatives with respect to row 5's values and label
    G = obj.mixed(theta, [5])[0]
    for c in range(obj.q):
        ends = []
        for sign in (1, -1):
            X2, Y2 = obj.X.copy(), obj.Y.copy()
            if c < obj.d:
                X2[5, c] += sign * eps
            else:
                Y2[5] += sign * eps * obj.label_dirs[c - obj.d]
            o2 = MLPObjective(obj.units, obj.activation, obj.out, obj.alpha, X2, Y2, sw)
            ends.append(o2.value_grad(theta)[1])
        np.testing.assert_allclose(G[c], (ends[0] - ends[1]) / (2 * eps), atol=1e-8)


# ---------------------------------------------------------------- the dense Hessian
def _random_objective(kind, hidden, activation, sample_weight, n=150, seed=0):
    """An objective at random parameters (far from a minimum: the residual curvature
    terms are as large as the Gauss-Newton ones)."""
    X, y = _data(kind, n, d=3, seed=seed)
    rng = np.random.RandomState(seed + 1)
    if kind == "binary":
        out, Y = "logistic", (y == "yes").astype(float)[:, None]
    elif kind == "multiclass":
        out, Y = "softmax", np.eye(3)[y]
    elif kind == "poisson":
        out, Y = "exp", y[:, None]
    else:
        out, Y = "identity", y[:, None]
    units = [X.shape[1], *hidden, Y.shape[1]]
    sw = rng.uniform(0.2, 3.0, n) if sample_weight else None
    obj = MLPObjective(units, activation, out, 0.3, X, Y, sw)
    return obj, rng.normal(scale=0.8, size=obj.p)


@pytest.mark.parametrize("sample_weight", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("kind", ["binary", "multiclass", "regression", "poisson"])
@pytest.mark.parametrize("activation", ["tanh", "logistic", "identity"])
@pytest.mark.parametrize("hidden", [(4,), (4, 3), (3, 4, 2)], ids=["1", "2", "3"])
def test_layer_pair_hessian_equals_the_forward_mode_hessian(hidden, activation, kind,
                                                            sample_weight):
    """The dense Hessian from GEMMs per pair of layers equals p Hessian-vector products
    (forward mode over the analytic gradient) to rounding, for one to three hidden
    layers, every activation and output, with and without sample weights."""
    obj, theta = _random_objective(kind, hidden, activation, sample_weight)
    H = obj.hessian(theta)
    oracle = obj.hessian(theta, generic=True)
    assert np.abs(H - oracle).max() <= 1e-12 * np.abs(oracle).max()
    np.testing.assert_array_equal(H, H.T)
    # the blocks between layers two apart are not zero (the Rh term of the derivation
    # contributes there): a dropped term would show
    if len(hidden) >= 2:
        idx = obj._layer_index()
        far = oracle[np.ix_(idx[0].ravel(), idx[2].ravel())]
        assert np.abs(far).max() > 1e-6 * np.abs(oracle).max()


def test_layer_pair_hessian_equals_finite_differences_of_the_gradient():
    """Second oracle: central differences of value_grad, three hidden layers, softmax,
    sample weights, rows spread over several chunks."""
    from sklearn_privacy.fil._mlp import _math as _mlp_math

    obj, theta = _random_objective("multiclass", (4, 3, 3), "tanh", True, n=400, seed=2)
    old = _mlp_math._CHUNK_BYTES
    _mlp_math._CHUNK_BYTES = 200_000  # about 200 rows per chunk
    try:
        H = obj.hessian(theta)
    finally:
        _mlp_math._CHUNK_BYTES = old
    eps = 1e-6
    fd = np.empty((obj.p, obj.p))
    for k in range(obj.p):
        e = np.zeros(obj.p)
        e[k] = eps
        fd[k] = (obj.value_grad(theta + e)[1] - obj.value_grad(theta - e)[1]) / (2 * eps)
    assert np.abs(H - fd).max() < 1e-7 * np.abs(H).max()
    np.testing.assert_allclose(H, obj.hessian(theta), rtol=0, atol=1e-14 * np.abs(H).max())


def test_audit_of_a_two_hidden_layer_pipeline_uses_the_exact_hessian():
    """Through a pipeline on a raw frame: the certificate's Hessian at the polished point
    is the forward-mode one, and the polish reaches the gradient threshold."""
    pd = pytest.importorskip("pandas")
    X, y = _data("multiclass", 300)
    df = pd.DataFrame({"age": 40 + 12 * X[:, 0], "income": 3000 + 800 * X[:, 1],
                       "hours": 38 + 5 * X[:, 2]})
    pipe = _fit(make_pipeline(StandardScaler(), MLPClassifier(
        (5, 4), activation="tanh", alpha=0.5, solver="lbfgs", max_iter=3000,
        random_state=0)), df, y)
    audited = fil.audit(pipe, df, y, sigma=1.0)
    obj, theta = audited._obj, audited._theta
    oracle = obj.hessian(theta, generic=True)
    assert np.abs(obj.hessian(theta) - oracle).max() <= 1e-12 * np.abs(oracle).max()
    assert audited.gradient_norm_ <= 1e-10
    U = np.zeros((obj.p, 1))
    U[obj.p - obj.K:] = 1.0 / np.sqrt(obj.K)  # the softmax gauge
    from scipy.linalg import null_space
    Z = null_space(U.T)
    lam = np.linalg.eigvalsh(Z.T @ oracle @ Z)
    assert audited.hessian_min_eigenvalue_ == pytest.approx(lam[0], rel=1e-8)
    assert audited.hessian_max_eigenvalue_ == pytest.approx(lam[-1], rel=1e-10)


def test_preconditioned_lbfgs_reaches_the_hand_over_in_fewer_gradients():
    """L-BFGS in the Hessian's scaled eigen-coordinates against plain L-BFGS, from where
    scikit-learn's adam stops (two hidden layers, ill-conditioned and non-convex)."""
    from scipy.optimize import minimize

    from sklearn_privacy.fil._mlp import _polish as _mlp

    X, y = _data("binary", 1000, d=5)
    model = _fit(MLPClassifier((8, 4), activation="tanh", alpha=0.1, random_state=0), X, y)
    obj, theta0 = _objective_of(model, X, y)
    calls = {"n": 0}
    value_grad = obj.value_grad

    def counted(t):
        calls["n"] += 1
        return value_grad(t)

    obj.value_grad = counted
    theta = _mlp._lbfgs_preconditioned(obj, theta0, np.eye(obj.p), 1e-6)
    pre = calls["n"]
    F, g = value_grad(theta)
    assert np.abs(g).max() <= 1e-6 and F < value_grad(theta0)[0]
    calls["n"] = 0
    res = minimize(counted, theta0, jac=True, method="L-BFGS-B",
                   options={"maxiter": 20_000, "ftol": 0.0, "maxcor": 30, "gtol": 1e-6})
    assert np.abs(value_grad(res.x)[1]).max() <= 1e-6
    assert pre < 0.7 * calls["n"], (pre, calls["n"])  # measured: 712 against 1,596


def test_polish_falls_back_when_newton_meets_an_indefinite_hessian(monkeypatch):
    """Newton handed a point where the Hessian is indefinite (adam stopped after 20
    epochs, no L-BFGS before it): the polish goes back to preconditioned L-BFGS, then
    Newton certifies a minimum."""
    from sklearn_privacy.fil._mlp import _polish as _mlp

    X, y = _data("binary", 400)
    model = _fit(MLPClassifier((4, 3), activation="tanh", alpha=0.1, max_iter=20,
                               random_state=0), X, y)
    seen = []
    newton = _mlp._newton_dense

    def recorded(obj, theta, U, Z, strict=False):
        out = newton(obj, theta, U, Z, strict)
        seen.append((strict, out[3]))
        return out

    monkeypatch.setattr(_mlp, "_newton_dense", recorded)
    monkeypatch.setattr(_mlp, "_PRECOND_GTOL", np.inf)  # straight to Newton
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        audited = fil.audit(model, X, y, sigma=1.0)
    assert seen[0] == (True, False) and seen[1] == (False, True)
    assert audited.gradient_norm_ <= 1e-10 and audited.hessian_min_eigenvalue_ > 0
    _check_against_retraining(audited, _probe_rows(audited, 6), rtol=1e-4)


@pytest.mark.parametrize("n,batch_size", [(450, 100), (450, "auto"), (300, 64)])
def test_stochastic_solvers_objective_is_the_loss_curve_convention(n, batch_size):
    """sgd/adam add the penalty to every minibatch: loss_curve_ has B * alpha."""
    from sklearn_privacy.fil._mlp._audit import _objective_alpha

    X, y = _data("binary", n)
    model = MLPClassifier((3,), activation="tanh", alpha=0.7, solver="sgd",
                          learning_rate_init=1e-13, momentum=0.0, batch_size=batch_size,
                          shuffle=False, max_iter=1, random_state=0)
    model = _fit(model, X, y)  # one epoch with (numerically) frozen parameters
    alpha, batches = _objective_alpha(model, n)
    size = min(200, n) if batch_size == "auto" else batch_size
    assert batches == int(np.ceil(n / size)) and alpha == pytest.approx(0.7 * batches)
    obj, theta = _objective_of(model, X, y)
    obj = MLPObjective(obj.units, obj.activation, obj.out, alpha, obj.X, obj.Y)
    assert obj.value_grad(theta)[0] == pytest.approx(model.loss_curve_[0], rel=1e-10)
    # the lbfgs objective (alpha itself) would not match
    lbfgs = MLPObjective(obj.units, obj.activation, obj.out, 0.7, obj.X, obj.Y)
    assert abs(lbfgs.value_grad(theta)[0] - model.loss_curve_[0]) > 1e-4
    model.set_params(max_iter=200, learning_rate_init=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # sgd stops far from the minimum
        audited = fil.audit(_fit(model, X, y), X, y, sigma=1.0)
    assert audited.objective_alpha_ == pytest.approx(0.7 * batches)
    assert audited.n_minibatches_ == batches


# ---------------------------------------------------------------- eta vs retraining
ETA_CASES = [
    ("binary", lambda: MLPClassifier((5,), activation="tanh", alpha=1.0, random_state=0,
                                     max_iter=300)),
    ("multiclass", lambda: MLPClassifier((4,), activation="logistic", alpha=0.5,
                                         solver="lbfgs", random_state=0, max_iter=500)),
    ("regression", lambda: MLPRegressor(hidden_layer_sizes=(4, 3), activation="tanh",
                                        alpha=0.5, solver="lbfgs", random_state=0,
                                        max_iter=500)),
]


@pytest.mark.parametrize("case", ETA_CASES, ids=[c[0] for c in ETA_CASES])
def test_eta_equals_finite_differences_of_warm_started_retraining(case):
    kind, make = case
    X, y = _data(kind, 1000)
    model = _fit(make(), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the polish may move far: adam stops early
        audited = fil.audit(model, X, y, sigma=0.5)
    assert audited.hessian_ == "dense" and audited.eta_.shape == (1000,)
    # a polished, certified minimum of scikit-learn's objective
    assert audited.gradient_norm_ <= 1e-10
    assert np.linalg.norm(audited._obj.value_grad(audited._theta)[1]) <= 1e-10
    assert audited.hessian_min_eigenvalue_ > 0
    assert np.linalg.eigvalsh(audited._obj.hessian(audited._theta))[-1] == pytest.approx(
        audited.hessian_max_eigenvalue_, rel=1e-10)
    _check_against_retraining(audited, _probe_rows(audited), rtol=1e-4)
    # eta scales as 1 / sigma; a single value is a column of the Jacobian
    row = int(np.argmax(audited.eta_))
    J = audited.jacobian(row)
    assert np.linalg.norm(J, 2) / 0.5 == pytest.approx(audited.eta_[row], rel=1e-10)
    assert audited.eta(rows=[row], columns=[1], per_example=True)[0] == pytest.approx(
        np.linalg.norm(J[:, 1]) / 0.5, rel=1e-10)


@pytest.mark.parametrize("kind,hidden,spline,alpha,seed", [
    ("multiclass", (4, 3), False, 0.5, 0), ("binary", (3,), True, 0.3, 1),
    ("poisson", (3, 2, 2), False, 0.5, 0)])
def test_all_row_grams_from_layer_factors_equal_the_direct_jacobians(kind, hidden, spline,
                                                                     alpha, seed):
    """The Grams J_i^T J_i of every row come from Kronecker factors of the mixed
    derivatives and blocks of H^-2 (about 2 p^2 flops per row); they equal the direct
    product of each row's q x p mixed derivative with the inverse-Hessian factor, through
    a non-linear preprocessing map too."""
    if kind == "poisson" and not HAS_POISSON_MLP:
        pytest.skip("MLPRegressor(loss='poisson') needs scikit-learn >= 1.7")
    n = 600
    X, y = _data(kind, n)
    Est = MLPRegressor if kind == "poisson" else MLPClassifier
    kw = {"loss": "poisson"} if kind == "poisson" else {}
    model = Est(hidden_layer_sizes=hidden, activation="tanh", alpha=alpha, solver="lbfgs",
                max_iter=3000, random_state=seed, **kw)
    if spline:
        model = make_pipeline(StandardScaler(), SplineTransformer(n_knots=3, degree=2),
                              model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the polish may move far
        audited = fil.audit(_fit(model, X, y), X, y, sigma=1.0)
    rows = np.arange(n)
    fast = audited._structured_grams(rows)
    direct = np.concatenate([np.einsum("mqa,mra->mqr", T, T)
                             for _, T in audited._rotated_chunks(rows)])
    assert fast.shape == direct.shape == (n, audited._q, audited._q)
    np.testing.assert_allclose(fast, direct, rtol=1e-9, atol=1e-12 * np.abs(direct).max())
    eta = np.sqrt(np.linalg.eigvalsh(direct)[:, -1])
    np.testing.assert_allclose(audited.eta_, eta, rtol=1e-9)
    # and each equals the Jacobian of the row (the column J_i = -H^-1 G_i^T)
    J = audited.jacobian(7)
    np.testing.assert_allclose(fast[7], J.T @ J, rtol=1e-9, atol=1e-12 * np.abs(J).max() ** 2)


def test_group_eta_and_fisher_information_against_stacked_jacobians():
    X, y = _data("multiclass", 400)
    model = _fit(MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=500, random_state=0), X, y)
    audited = fil.audit(model, X, y, sigma=2.0)
    assert audited.n_label_columns_ == 2  # K - 1 Helmert coordinates of the one-hot label
    rows, cols = [3, 17, 40], [0, 2, "label"]
    idx = [0, 2, 3, 4]
    JS = np.hstack([audited.jacobian(r)[:, idx] for r in rows])
    assert audited.eta(rows=rows, columns=cols) == pytest.approx(
        np.linalg.norm(JS, 2) / 2.0, rel=1e-9)
    F = audited.fisher_information(rows=rows, columns=cols)
    np.testing.assert_allclose(F, JS.T @ JS / 4.0, rtol=1e-8, atol=1e-14)
    per = audited.eta(rows=rows, columns="label", per_example=True)
    np.testing.assert_allclose(
        per, [np.linalg.norm(audited.jacobian(r)[:, 3:], 2) / 2.0 for r in rows], rtol=1e-9)
    # the softmax gauge: output biases centred, the audit's minimiser is the symmetric one
    assert abs(audited._obj.unpack(audited._theta)[1][-1].sum()) < 1e-12
    # sigma_for_eta; the package-level functions answer for an MLP audit too
    s = audited.sigma_for_eta(0.25)
    assert audited.eta_.max() * audited.sigma / s == pytest.approx(0.25)
    assert fil.sigma_for_eta(audited, 0.25) == s
    assert fil.eta(audited, rows=rows, columns=cols) == audited.eta(rows=rows, columns=cols)
    np.testing.assert_array_equal(fil.fisher_information(audited, rows=rows, columns=cols), F)
    with pytest.raises(ValueError, match="wrt='features'"):
        fil.eta(audited, wrt="features")


@needs_sklearn_17
def test_sample_weight_enters_the_audit():
    X, y = _data("regression", 300)
    sw = np.random.RandomState(3).uniform(0.2, 3.0, 300)
    model = _fit(MLPRegressor(hidden_layer_sizes=(3,), activation="tanh", alpha=1.0,
                              solver="lbfgs",
                              max_iter=2000, random_state=0), X, y, sample_weight=sw)
    audited = fil.audit(model, X, y, sigma=1.0, sample_weight=sw)
    with pytest.warns(UserWarning, match="from the polished local minimiser"):
        unweighted = fil.audit(model, X, y, sigma=1.0)  # the wrong objective for this fit
    assert not np.allclose(audited.eta_, unweighted.eta_)
    _check_against_retraining(audited, _probe_rows(audited, 8), rtol=1e-4)


def test_n_jobs_gives_the_serial_etas_and_verbose_prints_the_phases(capsys):
    """1,200 rows are three blocks of per-example etas: two threads give the serial etas
    bit for bit, and verbose=1 names the polish, its certificate and the blocks done."""
    X, y = _data("binary", 1200)
    model = _fit(MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=2000, random_state=0), X, y)
    one = fil.audit(model, X, y, sigma=1.0)
    assert capsys.readouterr().out == ""                    # verbose=0: silent
    two = fil.audit(model, X, y, sigma=1.0, n_jobs=2, verbose=1)
    out = capsys.readouterr().out.splitlines()
    np.testing.assert_array_equal(two.eta_, one.eta_)
    assert two.eta(rows=[0, 5, 900]) == one.eta(rows=[0, 5, 900])
    assert out[0] == ("[audit] MLPClassifier: polishing the minimiser (16 parameters, "
                      "1200 rows, dense Hessian)")
    assert out[1].startswith(f"[audit] MLPClassifier: {two.n_newton_steps_} Newton steps")
    assert out[2:] == [f"[audit] done {k} of 3 row blocks of per-example etas"
                       for k in (1, 2, 3)]


# ---------------------------------------------------------------- operator route
def test_operator_route_on_named_rows_equals_dense_and_retraining():
    X, y = _data("binary", 600, d=4)
    model = _fit(MLPClassifier((6,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=1000, random_state=0), X, y)
    dense = fil.audit(model, X, y, sigma=1.0)
    rows = np.r_[np.argsort(dense.eta_)[-3:], [0, 1]]
    op = fil.audit(model, X, y, sigma=1.0, hessian="operator", rows=rows)
    assert op.hessian_ == "operator"
    np.testing.assert_array_equal(op.rows_, rows)
    np.testing.assert_allclose(op.eta_, dense.eta_[rows], rtol=1e-6)
    assert op.hessian_min_eigenvalue_ == pytest.approx(dense.hessian_min_eigenvalue_,
                                                       rel=1e-4)
    _check_against_retraining(op, rows, rtol=1e-3)
    with pytest.raises(ValueError, match="pass rows"):
        from sklearn_privacy.fil._mlp import _audit as _mlp
        old = _mlp.MLP_DENSE_MAX
        _mlp.MLP_DENSE_MAX = 10
        try:
            fil.audit(model, X, y, sigma=1.0)
        finally:
            _mlp.MLP_DENSE_MAX = old


@pytest.mark.slow
def test_operator_route_at_a_few_hundred_parameters():
    """241 parameters, 2,000 rows: Hessian-vector products and conjugate gradients on
    named rows agree with the dense route and with retraining."""
    X, y = _data("binary", 2000, d=10)
    model = _fit(MLPClassifier((20,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=3000, random_state=0), X, y)
    dense = fil.audit(model, X, y, sigma=1.0)
    rows = np.r_[np.argsort(dense.eta_)[-3:], [0, 1]]
    op = fil.audit(model, X, y, sigma=1.0, hessian="operator", rows=rows)
    assert op.n_parameters_ == 241
    np.testing.assert_allclose(op.eta_, dense.eta_[rows], rtol=1e-6)
    _check_against_retraining(op, rows, rtol=1e-3)


def test_block_conjugate_gradients_solve_all_columns_and_refuse_what_they_cannot():
    from sklearn_privacy.fil._mlp._polish import _block_cg

    rng = np.random.RandomState(0)
    p = 300
    Q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    # a spectrum like the audited networks': a few small eigenvalues, a spread bulk,
    # a few large ones (condition number 1e4)
    lam = np.r_[np.geomspace(1e-4, 1e-3, 20), np.geomspace(1e-2, 1e-1, 260),
                np.geomspace(0.5, 1.0, 20)]
    H = (Q * lam) @ Q.T
    calls = []

    def hop(V):
        calls.append(V.shape[1])
        return H @ V

    # 60 right-hand sides spanning 6 directions: one shared Krylov space
    B = rng.normal(size=(p, 6)) @ rng.normal(size=(6, 60))
    X = _block_cg(hop, B, lambda V: V)
    exact = np.linalg.solve(H, B)
    assert np.abs(X - exact).max() < 1e-8 * np.abs(exact).max()
    assert sum(calls) < 3 * p  # column by column: about 60 x 300 products
    # the gauge: solutions stay in the complement of U
    u = rng.normal(size=p)
    u /= np.linalg.norm(u)

    def project(V):
        return V - np.outer(u, u @ V)

    Hp = project(project(H).T).T + np.outer(u, u)
    X = _block_cg(lambda V: H @ V, B, project)
    assert np.abs(u @ X).max() < 1e-13 * np.abs(X).max()
    exact = project(np.linalg.solve(Hp, project(B)))
    assert np.abs(X - exact).max() < 1e-8 * np.abs(exact).max()
    # a vector solve keeps its shape
    assert _block_cg(lambda V: H @ V, B[:, 0], lambda V: V).shape == (p,)
    # an indefinite matrix is refused, and so is a solve that runs out of products
    lam_bad = lam.copy()
    lam_bad[3] = -1e-3
    H_bad = (Q * lam_bad) @ Q.T
    with pytest.raises(UncertifiedMinimumError, match="non-positive curvature"):
        _block_cg(lambda V: H_bad @ V, rng.normal(size=(p, 4)), lambda V: V)
    with pytest.raises(UncertifiedMinimumError, match="did not converge"):
        _block_cg(lambda V: H @ V, rng.normal(size=(p, 2)), lambda V: V, max_products=20)


@pytest.mark.parametrize("hidden", [(7,), (5, 4)])
def test_cached_hessian_operator_equals_the_hessian(hidden, monkeypatch):
    from sklearn_privacy.fil._mlp import _math as _mlp_math

    X, y = _data("multiclass", 150, d=4)
    model = _fit(MLPClassifier(hidden, activation="tanh", alpha=0.1, solver="lbfgs",
                               max_iter=50, random_state=0), X, y)
    sw = np.random.RandomState(2).uniform(0.5, 2.0, X.shape[0])
    obj, theta = _objective_of(model, X, y, sw)
    H = obj.hessian(theta, generic=True)
    V = np.random.RandomState(3).normal(size=(obj.p, 21))  # three column groups of 8
    for cache in (True, False):
        if not cache:  # above the memory budget: every product recomputes the pass
            monkeypatch.setattr(_mlp_math, "_OPERATOR_CACHE_BYTES", 0)
        op = obj.hvp_operator(theta)
        np.testing.assert_allclose(op(V), H @ V, rtol=0, atol=1e-13 * np.abs(H).max())
        np.testing.assert_allclose(op(V[:, 4]), H @ V[:, 4], rtol=0,
                                   atol=1e-13 * np.abs(H).max())


@pytest.mark.slow
def test_operator_route_above_the_dense_limit():
    """3,001 parameters (above ``MLP_DENSE_MAX``: the default route is Hessian-vector
    products), 6 named rows: equal to the dense solve at the same minimum and to
    finite differences of warm-started retraining within 1e-3."""
    from sklearn_privacy.fil._mlp._audit import MLP_DENSE_MAX

    X, y = _data("binary", 2000, d=8)
    model = _fit(MLPClassifier((300,), activation="tanh", alpha=1.0, random_state=0), X, y)
    rows = np.array([0, 1, 2, 700, 1400, 1999])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        op = fil.audit(model, X, y, sigma=1.0, rows=rows)
    assert op.n_parameters_ == 3001 > MLP_DENSE_MAX
    assert op.hessian_ == "operator"
    obj, theta = op._obj, op._theta
    H = obj.hessian(theta)
    lam = np.linalg.eigvalsh(H)
    assert op.hessian_min_eigenvalue_ == pytest.approx(lam[0], rel=1e-6)
    G = obj.mixed(theta, rows)
    dense = np.array([np.linalg.norm(np.linalg.solve(H, G[k].T), 2)
                      for k in range(rows.size)])
    np.testing.assert_allclose(op.eta_, dense, rtol=1e-6)
    _check_against_retraining(op, rows, rtol=1e-3)


@pytest.mark.slow
def test_operator_route_at_ten_thousand_parameters():
    """10,001 parameters: the audit never forms the Hessian; the named rows' etas equal
    finite differences of warm-started retraining within 1e-3 (the oracle's chord steps
    use the dense inverse Hessian, about 0.8 GB)."""
    X, y = _data("binary", 2000, d=8)
    model = _fit(MLPClassifier((1000,), activation="tanh", alpha=1.0, random_state=0),
                 X, y)
    rows = np.array([0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        op = fil.audit(model, X, y, sigma=1.0, rows=rows)
    assert op.n_parameters_ == 10001 and op.hessian_ == "operator"
    _check_against_retraining(op, rows, rtol=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize("n,d,hidden,alpha", [(5000, 10, (20,), 1.0),
                                              (20000, 20, (40,), 1.0),
                                              (20000, 20, (24, 16), 0.1)])
def test_eta_against_retraining_larger(n, d, hidden, alpha):
    """Up to 20,000 rows and 921 parameters, one and two hidden layers (the benchmark's
    networks): every row's eta, 20 probe rows including the 5 most exposed against
    warm-started retraining."""
    X, y = _data("binary", n, d=d)
    model = _fit(MLPClassifier(hidden, activation="tanh", alpha=alpha, random_state=0), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        audited = fil.audit(model, X, y, sigma=1.0)
    assert audited.n_parameters_ <= 1000 and audited.eta_.shape == (n,)
    worst = _check_against_retraining(audited, _probe_rows(audited), rtol=1e-4)
    print(f"{n} x {audited.n_parameters_}: worst relative error {worst:.3g}")


# ---------------------------------------------------------------- refusals
def test_saddle_point_is_refused_and_a_minimum_is_certified():
    X, y = _data("binary", 500)
    model = _fit(MLPClassifier((2,), activation="tanh", alpha=1e-3, solver="lbfgs",
                               max_iter=1000, random_state=0), X, y)
    ok = fil.audit(model, X, y, sigma=1.0)
    assert ok.hessian_min_eigenvalue_ > 0
    # a stationary point that is a saddle: every weight zero, the output bias at the
    # log-odds of the positive class (tanh(0) = 0 makes every gradient vanish)
    saddle = _fit(MLPClassifier((2,), activation="tanh", alpha=1e-3, solver="lbfgs",
                                max_iter=5, random_state=0), X, y)
    frac = np.mean(y == saddle.classes_[1])
    saddle.coefs_ = [np.zeros_like(W) for W in saddle.coefs_]
    saddle.intercepts_ = [np.zeros(2), np.array([np.log(frac / (1 - frac))])]
    with pytest.raises(UncertifiedMinimumError, match="not positive definite") as info:
        fil.audit(saddle, X, y, sigma=1.0)
    assert info.value.smallest_eigenvalue < 0
    # the Hessian-vector-product route refuses it too: Lanczos finds the same eigenvalue
    with pytest.raises(UncertifiedMinimumError, match="not positive definite") as op:
        fil.audit(saddle, X, y, sigma=1.0, hessian="operator", rows=[0, 1])
    assert op.value.smallest_eigenvalue == pytest.approx(info.value.smallest_eigenvalue,
                                                         rel=1e-6)
    # and certifies the minimum with the dense route's eigenvalue
    ok_op = fil.audit(model, X, y, sigma=1.0, hessian="operator", rows=[0, 1])
    assert ok_op.hessian_min_eigenvalue_ == pytest.approx(ok.hessian_min_eigenvalue_,
                                                          rel=1e-6)
    np.testing.assert_allclose(ok_op.eta_, ok.eta_[[0, 1]], rtol=1e-6)


def test_refusals_are_clear():
    X, y = _data("binary", 120)
    relu = _fit(MLPClassifier((3,), alpha=0.1, max_iter=20, random_state=0), X, y)
    with pytest.raises(ValueError, match="relu"):
        fil.audit(relu, X, y, sigma=1.0)
    free = _fit(MLPClassifier((3,), activation="tanh", alpha=0.0, max_iter=20,
                              random_state=0), X, y)
    with pytest.raises(ValueError, match="alpha > 0"):
        fil.audit(free, X, y, sigma=1.0)
    model = _fit(MLPClassifier((3,), activation="tanh", alpha=0.1, max_iter=20,
                               random_state=0), X, y)
    with pytest.raises(ValueError, match="sigma"):
        fil.audit(model, X, y, sigma=0.0)
    with pytest.raises(ValueError, match="random_state"):
        fil.audit(model, X, y, sigma=1.0, random_state=0)
    with pytest.raises(ValueError, match="data_norm"):
        fil.audit(model, X, y, sigma=1.0, data_norm=3.0)
    with pytest.raises(ValueError, match="features"):
        fil.audit(model, X[:, :2], y, sigma=1.0)
    with pytest.raises(ValueError, match="classes"):
        fil.audit(model, X, np.where(y == "yes", "a", "b"), sigma=1.0)
    with pytest.raises(ValueError, match="hessian"):
        fil.audit(model, X, y, sigma=1.0, hessian="gauss-newton")
    binned = _fit(make_pipeline(KBinsDiscretizer(3, encode="ordinal"), MLPClassifier(
        (3,), activation="tanh", alpha=0.1, max_iter=20, random_state=0)), X, y)
    with pytest.raises(ValueError, match="KBinsDiscretizer"):
        fil.audit(binned, X, y, sigma=1.0)
    Y2 = np.c_[X[:, 0], X[:, 1]]
    multi = _fit(MLPRegressor(hidden_layer_sizes=(3,), activation="tanh", alpha=0.1,
                              max_iter=20, random_state=0), X, Y2)
    with pytest.raises(ValueError, match="one target at a time"):
        fil.audit(multi, X, Y2, sigma=1.0)
    from sklearn.linear_model import Ridge
    with pytest.raises(ValueError, match="MLPClassifier / MLPRegressor only"):
        fil.audit(Ridge().fit(X, X[:, 0]), X, X[:, 0], sigma=1.0, rows=[0])
    with pytest.warns(UserWarning, match="polished"):  # 20 adam epochs: far from a minimum
        audited = fil.audit(model, X, y, sigma=1.0)
    with pytest.raises(ValueError, match="unknown input"):
        audited.eta(columns="age")
    with pytest.raises(ValueError, match="rows"):
        audited.eta(rows=[500])


# ---------------------------------------------------------------- release and pipelines
def test_release_is_the_users_mlp_with_noisy_parameters():
    X, y = _data("multiclass", 300)
    model = _fit(MLPClassifier((4,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=1000, random_state=0), X, y)
    audited = fil.audit(model, X, y, sigma=0.05)
    pub = audited.release(random_state=0)
    assert type(pub) is MLPClassifier and pub.get_params() == model.get_params()
    for attr in ("loss_", "loss_curve_", "n_iter_", "t_", "best_loss_", "_optimizer"):
        assert not hasattr(pub, attr), attr
    theta = audited._theta
    noisy = np.concatenate([W.ravel() for W in pub.coefs_ + pub.intercepts_])
    assert 0 < np.abs(noisy - theta).max() < 0.5
    draws = np.array([np.concatenate([W.ravel() for W in r.coefs_ + r.intercepts_]) - theta
                      for r in (audited.release(random_state=k) for k in range(100))])
    assert draws.std() == pytest.approx(0.05, rel=0.05)
    assert np.mean(pub.predict(X) == model.predict(X)) > 0.9
    assert pickle.loads(pickle.dumps(pub)).predict(X).shape == (300,)
    np.testing.assert_array_equal(audited.release(random_state=3).coefs_[0],
                                  audited.release(random_state=3).coefs_[0])
    # no DP claim for a network: the release is a plain MLP, the audit says why
    claim = privacy_claim(pub)
    assert claim.epsilon == np.inf and not claim.is_private
    assert audited.epsilon_ == np.inf and "local" in audited.epsilon_reason_
    # the pickled audit keeps no training state
    restored = pickle.loads(pickle.dumps(audited))
    assert "_obj" not in restored.__dict__ and "_theta" not in restored.__dict__
    with pytest.raises(AuditStateUnavailableError):
        restored.eta(rows=[0])
    with pytest.raises(AuditStateUnavailableError):
        restored.eta_  # noqa: B018 (per-row values are audit state too)
    with pytest.raises(AuditStateUnavailableError):
        restored.release()


def test_scaler_pipeline_on_a_frame_gives_raw_unit_etas():
    pd = pytest.importorskip("pandas")
    X, y = _data("regression", 500)
    df = pd.DataFrame({"age": 40 + 12 * X[:, 0], "income": 3000 + 800 * X[:, 1],
                       "hours": 38 + 5 * X[:, 2]})
    pipe = _fit(make_pipeline(StandardScaler(), MLPRegressor(
        hidden_layer_sizes=(4,), activation="tanh", alpha=1.0, solver="lbfgs",
        max_iter=3000, random_state=0)), df, y)
    audited = fil.audit(pipe, df, y, sigma=1.0)
    assert list(audited.feature_names_in_) == ["age", "income", "hours"]
    inner = fil.audit(pipe[-1], pipe[0].transform(df), y, sigma=1.0)
    scale = pipe[0].scale_
    for row in (0, 7):
        J = audited.jacobian(row)
        np.testing.assert_allclose(J[:, :3], inner.jacobian(row)[:, :3] / scale, rtol=1e-8)
        np.testing.assert_allclose(J[:, 3], inner.jacobian(row)[:, 3], rtol=1e-8)
    income = audited.eta(columns="income", per_example=True)
    np.testing.assert_allclose(
        income, inner.eta(columns=1, per_example=True) / scale[1], rtol=1e-8)
    # raw units: a one-dollar change of income, checked by retraining on the raw frame
    _check_against_retraining(audited, _probe_rows(audited, 6), rtol=1e-4)
    pub = audited.release(random_state=0)
    assert type(pub).__name__ == "Pipeline" and type(pub[-1]) is MLPRegressor
    assert pub.predict(df).shape == (500,)
    assert "preprocessing steps were fitted" in audited.release_claim_


def test_spline_pipeline_raw_etas_equal_retraining_on_the_raw_frame():
    """A non-linear map before the MLP: the chain rule through d phi / d x per row."""
    pd = pytest.importorskip("pandas")
    X, y = _data("binary", 600)
    df = pd.DataFrame({"age": 40 + 12 * X[:, 0], "income": 3000 + 800 * X[:, 1],
                       "hours": 38 + 5 * X[:, 2]})
    pipe = _fit(make_pipeline(StandardScaler(), SplineTransformer(n_knots=3, degree=2),
                              MLPClassifier((3,), activation="tanh", alpha=0.3,
                                            solver="lbfgs", max_iter=3000,
                                            random_state=1)), df, y)
    audited = fil.audit(pipe, df, y, sigma=1.0)
    assert list(audited.coordinate_names_) == ["age", "income", "hours"]
    assert audited.eta_.shape == (600,) and audited._obj.d == 12  # 3 x 4 spline columns
    _check_against_retraining(audited, _probe_rows(audited, 8), rtol=1e-4)
    # the raw-input ranking differs from the spline-feature ranking
    features = fil.audit(pipe[-1], pipe[:-1].transform(df), y, sigma=1.0)
    assert not np.array_equal(np.argsort(features.eta_)[-5:], np.argsort(audited.eta_)[-5:])


def _people_frame(pd, X, seed, categorical):
    """A raw frame: age and hours in their units, race as strings (or a category)."""
    race = np.random.RandomState(seed).choice(["a", "b", "c"], X.shape[0])
    return pd.DataFrame({"age": 40 + 12 * X[:, 0], "hours": 38 + 5 * X[:, 2],
                         "race": pd.Categorical(race) if categorical else race})


def test_raw_frame_with_categories_by_name():
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer

    X, y = _data("regression", 400)
    df = _people_frame(pd, X, seed=1, categorical=True)
    pipe = _fit(make_pipeline(
        make_column_transformer((StandardScaler(), ["age", "hours"]),
                                (OneHotEncoder(), ["race"])),
        MLPRegressor(hidden_layer_sizes=(3,), activation="tanh", alpha=1.0,
                     solver="lbfgs", max_iter=3000, random_state=0)), df, y)
    audited = fil.audit(pipe, df, y, sigma=1.0)
    race = audited.eta(columns="race", per_example=True)
    levels = [c for c in audited.coordinate_names_ if str(c).startswith("race")]
    assert len(levels) == 3
    np.testing.assert_allclose(race, audited.eta(columns=levels, per_example=True))
    J = audited.jacobian(5)
    idx = [list(audited.coordinate_names_).index(c) for c in levels]
    assert race[5] == pytest.approx(np.linalg.norm(J[:, idx], 2), rel=1e-10)
    # a one-year change of age, by retraining on the raw frame
    _check_against_retraining_columns(audited, [0, 5, int(np.argmax(audited.eta_))],
                                      cols=[0, 1, audited._d])


def test_operator_route_through_a_pipeline_of_a_raw_frame():
    """Block conjugate gradients through a spline + one-hot pipeline of a raw frame
    with a string column: the named rows' raw-input etas equal a dense solve at the
    same minimum, and the per-column view agrees with the Jacobian."""
    pd = pytest.importorskip("pandas")
    from sklearn.compose import make_column_transformer

    X, y = _data("binary", 500)
    df = _people_frame(pd, X, seed=4, categorical=False)  # plain string column
    assert df["race"].dtype != "category"
    pipe = _fit(make_pipeline(
        make_column_transformer((SplineTransformer(n_knots=4, degree=3), ["age", "hours"]),
                                (OneHotEncoder(), ["race"])),
        MLPClassifier((8,), activation="tanh", alpha=1.0, solver="lbfgs", max_iter=3000,
                      random_state=0)), df, y)
    rows = np.array([3, 17, 250, 499])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # lbfgs's tol stops it early
        op = fil.audit(pipe, df, y, sigma=0.5, hessian="operator", rows=rows)
    assert op.hessian_ == "operator"
    obj, theta = op._obj, op._theta
    H = obj.hessian(theta)
    G = obj.mixed(theta, rows)  # (rows, q_features, p)
    T = np.stack([np.linalg.solve(H, G[k].T).T for k in range(rows.size)])
    raw = op._to_raw(T, rows)  # (rows, raw coordinates + label, p)
    ref = np.array([np.linalg.norm(raw[k], 2) for k in range(rows.size)]) / 0.5
    np.testing.assert_allclose(op.eta_, ref, rtol=1e-8)
    age = op.eta(rows=rows, columns="age", per_example=True)
    J = op.jacobian(17)
    k = list(op.coordinate_names_).index("age")
    assert age[1] == pytest.approx(np.linalg.norm(J[:, k]) / 0.5, rel=1e-8)


def _check_against_retraining_columns(audited, rows, cols):
    Js = _retrain_jacobian(audited, rows, columns=cols)
    for r, J in zip(rows, Js, strict=True):
        np.testing.assert_allclose(audited.jacobian(r)[:, cols], J, rtol=1e-4,
                                   atol=1e-6 * np.abs(J).max())


def test_eta_display_of_an_mlp_audit():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    pd = pytest.importorskip("pandas")
    X, y = _data("binary", 300)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    model = _fit(MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=2000, random_state=0), df, y)
    audited = fil.audit(model, df, y, sigma=1.0)
    disp = fil.EtaDisplay.from_estimator(audited, by_class=True, y=y, X=df, top_k=3)
    np.testing.assert_array_equal(disp.eta, audited.eta_)
    assert sum(disp.counts_[k].sum() for k in disp.counts_) == 300
    assert list(disp.top_k_index) == list(np.argsort(-audited.eta_, kind="stable")[:3])
    col = fil.EtaDisplay.from_estimator(audited, columns="b", sensitive_features=df["a"] > 0)
    np.testing.assert_allclose(col.eta, audited.eta(columns="b", per_example=True))
    with pytest.raises(ValueError, match="needs the labels"):
        fil.EtaDisplay.from_estimator(audited, by_class=True)


def test_privacy_report_audits_an_mlp_through_fil_audit():
    from sklearn_privacy.report import PrivacyReport

    X, y = _data("binary", 400)
    model = _fit(MLPClassifier((3,), activation="tanh", alpha=1.0, solver="lbfgs",
                               max_iter=2000, random_state=0), X, y)
    rep = PrivacyReport.from_estimator(model, X, y, sigma=0.5, n_canaries=0,
                                       random_state=0)
    fil_sec = next(s for s in rep.sections if s.key == "fil")
    text = str(fil_sec.table + fil_sec.private_table)
    assert "local minimum certified" in text
    audited = fil.audit(model, X, y, sigma=0.5)
    assert rep.private_details["summary"]["max_eta"] == pytest.approx(audited.eta_.max(),
                                                                      rel=1e-9)
    relu = _fit(MLPClassifier((3,), alpha=1.0, max_iter=50, random_state=0), X, y)
    rep = PrivacyReport.from_estimator(relu, X, y, sigma=0.5, n_canaries=0, random_state=0)
    fil_sec = next(s for s in rep.sections if s.key == "fil")
    assert "relu" in " ".join(fil_sec.verdicts)


def test_bad_arguments_of_an_mlp_audit_name_the_parameter():
    """Out-of-range ``rows`` on the dense route used to be ignored, ``X``/``y`` of
    different lengths gave scikit-learn's unnamed message, a forced
    ``hessian='operator'`` claimed the small network had more than 1500 parameters,
    ``eta(per_example="x")`` was truthy, ``sigma_for_eta(inf)`` returned 0 and
    ``fil.eta(audited, X=<list>)`` raised AttributeError."""
    X, y = _data("regression", 60)
    model = _fit(MLPRegressor(hidden_layer_sizes=(3,), activation="tanh", alpha=0.1,
                              max_iter=300, random_state=0), X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # polish distance of 300 adam epochs
        with pytest.raises(ValueError, match=r"rows: indices must lie in 0\.\.59"):
            fil.audit(model, X, y, sigma=1.0, rows=[60])
        with pytest.raises(ValueError, match=r"^X and y: .*inconsistent"):
            fil.audit(model, X[:-1], y, sigma=1.0)
        with pytest.raises(ValueError, match="hessian='operator' was asked for.*rows="):
            fil.audit(model, X, y, sigma=1.0, hessian="operator")
        audited = fil.audit(model, X, y, sigma=1.0)
    with pytest.raises(TypeError, match="per_example must be True or False"):
        audited.eta(per_example="x")
    for bad in (np.inf, np.nan, 0.0):
        with pytest.raises(ValueError, match="target_eta must be a positive finite"):
            audited.sigma_for_eta(bad)
    assert fil.eta(audited, X=X.tolist()) == audited.eta()
    with pytest.raises(ValueError, match="^X: the MLP audit holds its 60"):
        fil.eta(audited, X=X[:5].tolist())
