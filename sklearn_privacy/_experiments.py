"""Experiment setups shared by the demo, the examples, the benchmarks and the tests.

Each function reproduces one experimental setup of the papers the package implements, on
the bundled data sets: the split, the preprocessing, the models and the figures computed
from them. ``python -m sklearn_privacy.demo`` prints them next to the papers' figures; the
tests check them against independent computations.

This module is importable but **not part of the stable API**: functions, arguments and
return values may change in any release, whenever an experiment changes. Applications
should use the estimators and functions of the public subpackages instead.

Setups, by paper:

- Hannun, Guo & van der Maaten (2021), *Measuring data leakage in machine-learning models
  with Fisher information*: :func:`fit_mnist01_models` (Section 6.2, Figure 2),
  :func:`fit_irfil_models` (Section 6.3, Table 1), :func:`iwpc_split` and
  :func:`inversion_curve` (Section 6.4, Figure 6).
- Kaplan et al. (PETS 2024), *Weighted ERM with reference data*: :func:`werm_mnist_study`
  (the trade-off of Section 4.4 on bundled MNIST).
- Fishman, Mugunthan & Tanzer, *Private multicalibration*: :func:`adult_multicalibration_data`,
  :func:`adult_setup` and :func:`multicalibration_study` (Section 4, Figure 2).
- Raw tabular data through a FIL pipeline: :func:`raw_adult_split`,
  :func:`raw_adult_model` and :func:`raw_data_audit`.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "IWPC_SIGMAS",
    "LAMBDA_GRID",
    "RAW_ADULT_SIGMAS",
    "WERM_WEIGHTS",
    "adult_multicalibration_data",
    "adult_setup",
    "exact_accuracy",
    "fit_irfil_models",
    "fit_mnist01_models",
    "inversion_curve",
    "iwpc_split",
    "mnist_membership_split",
    "multicalibration_study",
    "raw_adult_model",
    "raw_adult_split",
    "raw_data_audit",
    "released_accuracy",
    "werm_mnist_study",
]

# ---------------------------------------------------------------------------- FIL, MNIST 0/1

#: Candidate penalties for the logistic model, largest first.
LAMBDA_GRID = (1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 1e-6)


def exact_accuracy(est, X, y01):
    """Accuracy of the unperturbed minimiser behind a fitted FIL estimator (audit state)."""
    theta = est._audit_engine().theta
    z = X @ theta[:-1] + theta[-1]
    return float(np.mean((z > 0) == (y01 == 1)))


def released_accuracy(est, X, y01):
    """Accuracy of the released (noisy) model."""
    from .fil import FILLinearRegression

    if isinstance(est, FILLinearRegression):
        return float(np.mean((est.predict(X) > 0) == (y01 == 1)))
    return float(est.score(X, y01))


def fit_mnist01_models(sigma=1.0, random_state=0):
    """Fit the FIL paper's two models on bundled MNIST01 (PCA-20).

    Linear regression has targets in {-1, 1} and no penalty; logistic regression uses the
    largest lambda of :data:`LAMBDA_GRID` whose training accuracy equals the linear model's
    to two significant digits (the paper's rule, applied to the unperturbed minimisers).

    Returns
    -------
    data : Bunch from :func:`~sklearn_privacy.datasets.load_mnist01`
    models : dict
        ``name -> (fitted estimator, lambda)`` for ``"linear"`` and ``"logistic"``.
    """
    from .datasets import load_mnist01
    from .fil import FILLinearRegression, FILLogisticRegression

    data = load_mnist01(n_components=20, random_state=0)
    Xtr, ytr = data.data_train, data.target_train
    lin = FILLinearRegression(sigma=sigma, alpha=0.0, random_state=random_state)
    lin.fit(Xtr, 2.0 * ytr - 1.0)
    target = float(f"{exact_accuracy(lin, Xtr, ytr):.2g}")
    for lam in LAMBDA_GRID:
        log = FILLogisticRegression(sigma=sigma, alpha=lam, random_state=random_state)
        log.fit(Xtr, ytr)
        if float(f"{exact_accuracy(log, Xtr, ytr):.2g}") >= target:
            break
    return data, {"linear": (lin, 0.0), "logistic": (log, lam)}


def fit_irfil_models(n_iter=10, store_eta=False, random_state=0):
    """Plain and IRFIL models of both kinds on bundled MNIST01 (PCA-20), sigma = 1.

    Returns
    -------
    data : Bunch from :func:`~sklearn_privacy.datasets.load_mnist01`
    models : dict
        ``name -> (plain FIL estimator, IRFIL estimator, lambda)``.
    """
    from .fil import IRFILLinearRegression, IRFILLogisticRegression

    data, models = fit_mnist01_models(sigma=1.0, random_state=random_state)
    X, y = data.data_train, data.target_train
    out = {}
    for name, (plain, lam) in models.items():
        if name == "linear":
            est = IRFILLinearRegression(sigma=1.0, alpha=lam, eta_max_iter=n_iter,
                                        store_eta=store_eta, random_state=random_state)
            est.fit(X, 2.0 * y - 1.0)
        else:
            est = IRFILLogisticRegression(sigma=1.0, alpha=lam, eta_max_iter=n_iter,
                                          store_eta=store_eta, random_state=random_state)
            est.fit(X, y)
        out[name] = (plain, est, lam)
    return data, out


# ------------------------------------------------------------------ attribute inversion, IWPC

#: Noise scales of the IWPC inversion curve.
IWPC_SIGMAS = (1e-8, 1e-4, 1e-3, 1e-2, 1e-1)


def iwpc_split(random_state=0):
    """IWPC (Yeom et al. table): 80% training split, as in the FIL paper.

    Returns
    -------
    data, X_train, X_test, y_train, y_test
    """
    from sklearn.model_selection import train_test_split

    from .datasets import load_iwpc

    d = load_iwpc()
    Xtr, Xte, ytr, yte = train_test_split(d.data, d.target, test_size=0.2,
                                          random_state=random_state)
    return d, Xtr, Xte, ytr, yte


def inversion_curve(sigmas=IWPC_SIGMAS, *, alpha=1e-2, n_draws=100, n_draws_blackbox=10,
                    random_state=0):
    """Accuracies of the four attribute attacks and the test MSE at each ``sigma``.

    Least squares with L2 penalty ``alpha`` (the FIL paper's lambda), no intercept.

    White-box and MAP average ``n_draws`` simulated releases; Fredrikson (black-box)
    averages ``n_draws_blackbox`` released models (refits with different noise seeds).

    Returns
    -------
    rows : list of dict
        Keys ``sigma``, ``eta_mean``, ``test_mse``, ``whitebox``, ``map``, ``fredrikson``
        (on the training rows), ``fredrikson_heldout`` (the same attack on the test rows,
        which the model never saw), ``baseline``.
    """
    from .attacks import fredrikson_inversion, prior_baseline, whitebox_inversion
    from .fil import FILLinearRegression

    d, Xtr, Xte, ytr, yte = iwpc_split(random_state)
    cols, cand = d.attribute_columns, d.attribute_encoding
    base = prior_baseline(Xtr, sensitive_features=cols, candidates=cand).accuracy
    out = []
    for sigma in sigmas:
        # the paper's model: no intercept on the standardised table
        est = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                  random_state=random_state).fit(Xtr, ytr)
        wb = whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                n_draws=n_draws, random_state=random_state)
        mp = whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                n_draws=n_draws, prior="empirical",
                                random_state=random_state)
        fr, fr_out, mse = [], [], []
        for k in range(n_draws_blackbox):
            rel = FILLinearRegression(sigma=sigma, alpha=alpha, fit_intercept=False,
                                      random_state=k).fit(Xtr, ytr)
            fr.append(fredrikson_inversion(rel, Xtr, ytr, sensitive_features=cols,
                                           candidates=cand).accuracy)
            fr_out.append(fredrikson_inversion(rel, Xte, yte, sensitive_features=cols,
                                               candidates=cand).accuracy)
            mse.append(float(np.mean((rel.predict(Xte) - yte) ** 2)))
        out.append({"sigma": sigma, "eta_mean": float(est.eta_.mean()),
                    "test_mse": float(np.mean(mse)), "whitebox": wb.accuracy,
                    "map": mp.accuracy, "fredrikson": float(np.mean(fr)),
                    "fredrikson_heldout": float(np.mean(fr_out)), "baseline": base})
    return out


# ---------------------------------------------------------------------------- WERM, MNIST

#: Reference-data weights of the WERM study.
WERM_WEIGHTS = (0.0, 0.5, 1.0)


def werm_mnist_study(weights=WERM_WEIGHTS, random_state=0):
    """WERM with an MLP on bundled MNIST: 1,000 training, 1,000 reference, 1,000 test rows.

    At each reference weight ``w`` an MLP is fitted by
    :class:`~sklearn_privacy.werm.WERMClassifier` and attacked by the per-class confidence
    threshold attack on its training rows and on its reference rows (each against the test
    rows as non-members).

    Returns
    -------
    rows : list of dict
        Keys ``w``, ``test_accuracy``, ``mia_train`` and ``mia_reference`` (balanced
        accuracies of the attack), ``n_eff``, ``epsilon_ratio``.

    Raises
    ------
    RuntimeError
        If this scikit-learn's ``MLPClassifier.fit`` takes no ``sample_weight`` (before
        scikit-learn 1.7).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier
    from sklearn.utils.validation import has_fit_parameter

    from .attacks import membership_inference
    from .datasets import load_mnist
    from .werm import WERMClassifier

    if not has_fit_parameter(MLPClassifier(), "sample_weight"):
        raise RuntimeError("the WERM study weighs the rows of an MLPClassifier, which takes "
                           "sample_weight from scikit-learn 1.7 on.")
    d = load_mnist()
    rng = np.random.RandomState(random_state)
    perm = rng.permutation(len(d.target))
    tr, rf, te = perm[:1000], perm[1000:2000], perm[2000:3000]
    X, y = d.data.astype(np.float32), d.target  # float32 halves the MLP's BLAS time
    Xfit, yfit = X[np.r_[tr, rf]], y[np.r_[tr, rf]]
    group = np.r_[np.zeros(1000, int), np.ones(1000, int)]
    rows = []
    for w in weights:
        # w = 0 / 1 fit one group only (rows of weight 0 are dropped): a batch of 100 keeps
        # the number of Adam steps per epoch of the mixed fit (2,000 rows, batches of 200)
        batch = 200 if 0 < w < 1 else 100
        clf = WERMClassifier(MLPClassifier((64,), max_iter=60, batch_size=batch,
                                           random_state=random_state), w=w)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(Xfit, yfit, data_source=group)
        mia = {}
        for name, members in (("train", tr), ("reference", rf)):
            rows_mi = np.r_[members, te]       # members first, then the test rows
            mia[name] = membership_inference(clf, X[rows_mi], y[rows_mi],
                                             np.arange(rows_mi.size) < members.size,
                                             random_state=random_state)
        mt, mr = mia["train"], mia["reference"]
        rows.append({"w": float(w), "test_accuracy": float(clf.score(X[te], y[te])),
                     "mia_train": float(mt.balanced_accuracy),
                     "mia_reference": float(mr.balanced_accuracy),
                     "n_eff": float(clf.n_eff_), "epsilon_ratio": float(clf.epsilon_ratio_)})
    return rows


# ------------------------------------------------------------------- multicalibration, Adult

def adult_multicalibration_data():
    """Adult for multicalibration: standardised features plus raw race/sex indicators.

    The features are standardised with the training rows' mean and standard deviation;
    the race and sex one-hot columns are appended unscaled so that the groups (their
    conjunctions of order <= 2) read 0/1 values.

    Returns
    -------
    X_train, y_train, X_test, y_test, groups, n_features
        ``n_features``: the number of standardised columns (the first ones), which is
        what the base classifiers read.
    """
    from .datasets import load_adult
    from .multicalibration import conjunction_groups

    tr, te = load_adult(), load_adult(subset="test")
    mu, sd = tr.data.mean(0), tr.data.std(0)
    sd[sd == 0] = 1
    sens = tr.sensitive_features
    cols = sens["race"] + sens["sex"]
    d = tr.data.shape[1]
    Xtr = np.hstack([(tr.data - mu) / sd, tr.data[:, cols]])
    Xte = np.hstack([(te.data - mu) / sd, te.data[:, cols]])
    remap = {j: d + k for k, j in enumerate(cols)}
    groups = conjunction_groups({"race": [remap[j] for j in sens["race"]],
                                 "sex": [remap[j] for j in sens["sex"]]}, max_order=2,
                                names={**{remap[j]: tr.feature_names[j] for j in cols}})
    return Xtr, tr.target, Xte, te.target, groups, d


def adult_setup():
    """:func:`adult_multicalibration_data` plus both base classifiers, fitted.

    Returns
    -------
    X_train, y_train, X_test, y_test, groups, bases
        ``bases`` maps a name to a fitted base classifier (the paper's gradient-descent
        logistic regression and scikit-learn's ``LogisticRegression``), both reading
        only the standardised features.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from .multicalibration._weak_base import GradientDescentLogisticRegression

    Xtr, ytr, Xte, yte, groups, d = adult_multicalibration_data()
    keep = ColumnTransformer([("features", "passthrough", list(range(d)))])
    bases = {
        "weak base (paper)": make_pipeline(keep, GradientDescentLogisticRegression()),
        "sklearn LogisticRegression": make_pipeline(keep, LogisticRegression(max_iter=1000)),
    }
    for b in bases.values():
        b.fit(Xtr, ytr)
    return Xtr, ytr, Xte, yte, groups, bases


def multicalibration_study(*, min_size=20, random_state=0):
    """Both Adult bases uncalibrated, multicalibrated without privacy and under NumericSparse.

    Multicalibration (alpha = 0.1) on the 30,162 training rows, figures on the 15,060
    test rows; the multicalibration error is the largest cell error over the groups (the
    whole population first) and 10 score buckets, cells of at least ``min_size`` rows.

    Returns
    -------
    rows : list of dict
        Keys ``base``, ``post_processing``, ``test_accuracy``, ``test_log_loss``,
        ``test_mc_error``, ``epsilon`` (``None`` without post-processing), ``n_updates``
        (``None`` likewise), ``min_cell_size`` and ``max_updates`` of the post-processor,
        ``worst_cell`` (the test cell behind the error: ``group``, ``bucket``, ``n_test``,
        ``error`` and ``n_calibration``, its size on the calibration rows under the final
        model) and ``model`` (the fitted post-processor or base).
    """
    from sklearn.frozen import FrozenEstimator
    from sklearn.metrics import log_loss

    from .metrics import multicalibration_error
    from .multicalibration import Group, PrivateMulticalibrator, membership_matrix

    Xtr, ytr, Xte, yte, groups, bases = adult_setup()
    # test-set membership of the groups the post-processors use (the whole population first)
    G = membership_matrix([Group("all"), *groups], Xte)
    rows = []
    for base_name, base in bases.items():
        configs = [("uncalibrated", None),
                   ("no privacy", PrivateMulticalibrator(FrozenEstimator(base), groups)),
                   ("NumericSparse eps=1", PrivateMulticalibrator(
                       FrozenEstimator(base), groups, mechanism="numeric_sparse", epsilon=1.0,
                       random_state=random_state))]
        for name, mc in configs:
            model = base if mc is None else mc.fit(Xtr, ytr)
            p = model.predict_proba(Xte)[:, 1]
            worst = _worst_cell(yte, p, G, ["all", *(g.name or str(g) for g in groups)],
                                min_size=min_size)
            p_cal = model.predict_proba(Xtr)[:, 1]
            G_cal = membership_matrix([Group("all"), *groups], Xtr)
            j = worst["group_index"]
            worst["n_calibration"] = int(np.sum(
                G_cal[:, j] & (_buckets(p_cal) == worst["bucket"])))
            rows.append({
                "base": base_name, "post_processing": name, "worst_cell": worst,
                "min_cell_size": None if mc is None else int(mc.min_cell_size_),
                "max_updates": None if mc is None or mc.max_updates_ is None
                else int(mc.max_updates_),
                "test_accuracy": float(np.mean((p > 0.5) == yte)),
                "test_log_loss": float(log_loss(yte, np.clip(p, 1e-15, 1 - 1e-15))),
                "test_mc_error": float(multicalibration_error(yte, p, G, min_size=min_size)),
                "epsilon": None if mc is None else float(mc.epsilon_),
                "n_updates": None if mc is None else int(mc.n_updates_),
                "model": model,
            })
    return rows


def _buckets(p, n_bins=10):
    """Score bucket of each probability (as the multicalibration error buckets them)."""
    return np.minimum((np.asarray(p) * n_bins).astype(np.int64), n_bins - 1)


def _worst_cell(y, p, G, names, *, n_bins=10, min_size=20):
    """The (group, bucket) cell of largest ``|mean(p) - mean(y)|`` among cells of at least
    ``min_size`` rows: the cell behind the ``"max"`` multicalibration error."""
    b = _buckets(p, n_bins)
    best = {"error": -1.0}
    for j in range(G.shape[1]):
        for k in np.unique(b[G[:, j]]):
            cell = G[:, j] & (b == k)
            if cell.sum() >= min_size:
                err = float(abs(p[cell].mean() - y[cell].mean()))
                if err > best["error"]:
                    best = {"error": err, "group": names[j], "group_index": j,
                            "bucket": int(k), "n_test": int(cell.sum())}
    return best


# ------------------------------------------------------------------------ raw Adult frame

#: Noise scales of the raw-Adult audit.
RAW_ADULT_SIGMAS = (0.01, 0.1, 1.0)


def raw_adult_split(n_train=3000, n_test=3000, random_state=0):
    """Raw Adult frame split into ``n_train`` training and ``n_test`` held-out rows.

    Returns
    -------
    X_train, y_train, X_test, y_test : DataFrame / Series
    """
    from sklearn.model_selection import train_test_split

    from .datasets import load_adult

    adult = load_adult(raw=True, as_frame=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        adult.data, adult.target, train_size=n_train, stratify=adult.target,
        random_state=random_state)
    return X_train, y_train, X_rest.iloc[:n_test], y_rest.iloc[:n_test]


def raw_adult_model(X, sigma, *, alpha=1e-3, random_state=0):
    """One-hot (NaN kept as a level, sparse output) + scaling + FIL logistic regression.

    Returns
    -------
    model : Pipeline (unfitted)
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from .fil import FILLogisticRegression

    encode = ColumnTransformer(
        [("cat", OneHotEncoder(handle_unknown="ignore"),
          list(X.select_dtypes("category").columns)),
         ("num", StandardScaler(), list(X.select_dtypes("number").columns))],
        sparse_threshold=1.0)
    return make_pipeline(encode, FILLogisticRegression(sigma=sigma, alpha=alpha,
                                                       random_state=random_state))


def raw_data_audit(sigmas=RAW_ADULT_SIGMAS, *, random_state=0):
    """Audit figures of the raw-frame pipeline at each ``sigma``.

    Returns
    -------
    rows : list of dict
        Keys ``sigma``, ``eta_max``, ``eta_median``, ``race_max``, ``race_median``,
        ``accuracy``, ``whitebox``, ``map``, ``baseline``, ``membership`` (advantage).
    """
    import pandas as pd

    from .attacks import membership_inference, prior_baseline, whitebox_inversion
    from .fil import eta

    X_train, y_train, X_test, y_test = raw_adult_split(random_state=random_state)
    baseline = prior_baseline(X_train, sensitive_features="race").accuracy
    out = []
    for sigma in sigmas:
        model = raw_adult_model(X_train, sigma, random_state=random_state).fit(X_train,
                                                                               y_train)
        eta_all = model[-1].eta_
        eta_race = eta(model, columns="race", per_example=True)
        out.append({
            "sigma": sigma, "eta_max": float(eta_all.max()),
            "eta_median": float(np.median(eta_all)),
            "race_max": float(eta_race.max()), "race_median": float(np.median(eta_race)),
            "accuracy": model.score(X_test, y_test),
            "whitebox": whitebox_inversion(model, X_train, sensitive_features="race",
                                           random_state=random_state).accuracy,
            "map": whitebox_inversion(model, X_train, sensitive_features="race",
                                      prior="empirical", random_state=random_state).accuracy,
            "baseline": baseline,
            "membership": membership_inference(
                model, pd.concat([X_train, X_test]), pd.concat([y_train, y_test]),
                np.arange(len(y_train) + len(y_test)) < len(y_train),
                random_state=random_state).advantage,
        })
    return out


def mnist_membership_split(n_rows, n_components, *, seed=0):
    """Rows of MNIST-5k on principal components, half of them marked as training members.

    Used by the membership-inference tests and benchmarks: ``n_rows`` digits drawn at
    random (seed ``seed``), projected on ``n_components`` principal components, and a
    random half flagged as the members a target model is trained on.

    Returns
    -------
    X : ndarray of shape (n_rows, n_components)
    y : ndarray of shape (n_rows,)
        Digit labels.
    members : ndarray of bool, shape (n_rows,)
        ``n_rows // 2`` True entries.
    """
    from sklearn.decomposition import PCA

    from .datasets import load_mnist

    d = load_mnist()
    rng = np.random.RandomState(seed)
    idx = rng.permutation(len(d.target))[:n_rows]
    X = PCA(n_components, random_state=0).fit_transform(d.data[idx])
    y = d.target[idx]
    members = np.zeros(len(y), bool)
    members[rng.permutation(len(y))[:n_rows // 2]] = True
    return X, y, members
