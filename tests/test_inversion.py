import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import train_test_split

from sklearn_privacy import FILLinearRegression, FILLogisticRegression, IRFILLinearRegression
from sklearn_privacy.attacks import (
    candidate_minimisers,
    fredrikson_inversion,
    prior_baseline,
    whitebox_inversion,
)
from sklearn_privacy.datasets import load_iwpc


def _onehot_data(n=80, seed=0):
    rng = np.random.RandomState(seed)
    level = rng.randint(0, 3, size=n)
    onehot = np.eye(3)[level][:, 1:]  # first level dropped
    X = np.column_stack([rng.normal(size=(n, 3)), onehot])
    y = X @ [1.0, -0.5, 0.3, 1.5, -1.0] + 0.2 * rng.normal(size=n)
    return X, y, [3, 4], np.array([[0, 0], [1, 0], [0, 1]], float)


def test_woodbury_equals_refit_least_squares():
    X, y, cols, cand = _onehot_data()
    est = FILLinearRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y)
    a, truth, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                       rows=np.arange(10))
    b, truth_b, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                         rows=np.arange(10), method="refit")
    assert np.array_equal(truth, truth_b)
    assert np.allclose(a, b, rtol=1e-11, atol=1e-12)
    # and with IRFIL weights (the attack replays the weighted objective)
    w = IRFILLinearRegression(sigma=1e-3, alpha=1e-2, eta_max_iter=3, random_state=0).fit(X, y)
    a, _, _ = candidate_minimisers(w, sensitive_features=cols, candidates=cand, rows=np.arange(10))
    b, _, _ = candidate_minimisers(w, sensitive_features=cols, candidates=cand,
                                   rows=np.arange(10), method="refit")
    assert np.allclose(a, b, rtol=1e-11, atol=1e-12)


def test_parallel_refits_equal_the_serial_ones_and_verbose_counts_them(capsys):
    """The refits of the multinomial model (one task per row and candidate) in two
    threads equal the serial ones bit for bit; verbose=1 counts them as they finish."""
    import joblib

    X, y, cols, cand = _onehot_data(n=90)
    y3 = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    est = FILLogisticRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y3)
    one, truth, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                         rows=np.arange(4))
    assert capsys.readouterr().out == ""
    with joblib.parallel_config(backend="threading"):
        two, truth2, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                              rows=np.arange(4), n_jobs=2, verbose=1)
    np.testing.assert_array_equal(two, one)
    np.testing.assert_array_equal(truth2, truth)
    # the true candidate's entry is the fitted minimiser, no refit
    theta = est._audit_engine().theta
    assert all(np.array_equal(one[k, truth[k]], theta) for k in range(4))
    assert capsys.readouterr().out.splitlines() == [
        f"[candidate_minimisers] done {k} of 8 exact refits" for k in range(1, 9)]


def test_newton_update_logistic_within_documented_tolerance():
    X, y, cols, cand = _onehot_data(n=150)
    y01 = (y > np.median(y)).astype(int)
    est = FILLogisticRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y01)
    theta = est._audit_engine().theta
    a, _, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                   rows=np.arange(15))
    b, _, _ = candidate_minimisers(est, sensitive_features=cols, candidates=cand,
                                   rows=np.arange(15), method="refit")
    shift = np.abs(b - theta).max()
    assert shift > 1e-3  # candidates really move the minimiser
    assert np.abs(a - b).max() <= 0.05 * shift  # second order; documented: 4% here
    ra = whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=np.arange(15),
                            n_draws=50, random_state=0)
    rb = whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=np.arange(15),
                            n_draws=50, random_state=0, method="refit")
    assert np.array_equal(ra.predictions, rb.predictions)
    rc = whitebox_inversion(est, sensitive_features=cols, candidates=cand, rows=np.arange(15),
                            n_draws=50, random_state=0, method="refit", n_jobs=2)
    assert np.array_equal(rc.predictions, rb.predictions)


@pytest.fixture(scope="module")
def iwpc():
    d = load_iwpc()
    Xtr, Xte, ytr, yte = train_test_split(d.data, d.target, test_size=0.2, random_state=0)
    return d, Xtr, ytr


def test_iwpc_published_accuracies(iwpc):
    d, X, y = iwpc
    cols, cand = d.attribute_columns, d.attribute_encoding
    assert X.shape[0] == 3855
    base = prior_baseline(X, sensitive_features=cols, candidates=cand).accuracy
    assert base == pytest.approx(0.37, abs=0.01)
    accs, maps = [], []
    for sigma in (1e-8, 1e-4, 1e-3, 1e-2, 1e-1):
        # the paper's model: lambda = 1e-2, no intercept (standardised data)
        est = FILLinearRegression(sigma=sigma, alpha=1e-2, fit_intercept=False,
                                  random_state=0).fit(X, y)
        accs.append(whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                       n_draws=100, random_state=0).accuracy)
        maps.append(whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                                       n_draws=100, prior="empirical",
                                       random_state=0).accuracy)
        if sigma == 1e-3:
            fred = fredrikson_inversion(est, X, y, sensitive_features=cols, candidates=cand)
    assert accs[0] == 1.0
    # sigma = 0: the exact minimiser itself is released
    theta = est._audit_engine().theta
    assert whitebox_inversion(est, sensitive_features=cols, candidates=cand,
                              released=theta).accuracy == 1.0
    assert accs[2] == pytest.approx(0.54, abs=0.03)
    assert all(a >= b for a, b in zip(accs, accs[1:], strict=False))
    assert all(m >= base for m in maps)
    assert fred.accuracy == pytest.approx(0.49, abs=0.02)


def test_newton_update_logistic_iwpc(iwpc):
    d, X, y = iwpc
    y01 = (y > 0).astype(int)
    est = FILLogisticRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y01)
    theta = est._audit_engine().theta
    rows = np.arange(20)
    a, _, _ = candidate_minimisers(est, sensitive_features=d.attribute_columns,
                                   candidates=d.attribute_encoding, rows=rows)
    b, _, _ = candidate_minimisers(est, sensitive_features=d.attribute_columns,
                                   candidates=d.attribute_encoding, rows=rows,
                                   method="refit")
    assert np.abs(a - b).max() <= 6e-4 * np.abs(b - theta).max()


def test_released_model_attack_and_fredrikson_classifier(iwpc):
    d, X, y = iwpc
    est = FILLinearRegression(sigma=1e-8, alpha=1e-2, random_state=0).fit(X, y)
    res = whitebox_inversion(est, sensitive_features=d.attribute_columns,
                             candidates=d.attribute_encoding)
    assert res.predictions.shape == (1, len(y)) and res.accuracy == 1.0


def test_fredrikson_classifier_equals_brute_force(iwpc):
    """Fredrikson et al.'s attack on a classifier against a row-by-row brute force of its
    definition: argmax over candidates c of prior(c) * P(true = y | predicted = f(x_c)),
    the confusion rates counted on X with add-one smoothing, the prior the level
    frequencies of X.

    Replaces ``0.3 < accuracy < 0.7``, which the prior-only guess (0.365) passes.
    Mutation check: dropping the prior term (``logp[c]``) made this test fail (removing the
    add-one smoothing does not change any prediction on 3,855 rows and is not detected).
    """
    d, X, y = iwpc
    cols, cand = d.attribute_columns, d.attribute_encoding
    y01 = (y > 0).astype(int)
    clf = FILLogisticRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y01)
    fr = fredrikson_inversion(clf, X, y01, sensitive_features=cols, candidates=cand)
    # the oracle
    truth = np.argmin([np.abs(X[:, cols] - c).sum(axis=1) for c in cand], axis=0)
    prior = np.bincount(truth, minlength=len(cand)) / len(truth)
    pred = clf.predict(X)
    conf = np.ones((2, 2))
    for t, q in zip(y01, pred, strict=True):
        conf[t, q] += 1
    conf /= conf.sum(axis=0)
    pred_c = []
    for code in cand:
        Xc = X.copy()
        Xc[:, cols] = code
        pred_c.append(clf.predict(Xc))
    expected = np.empty(len(y01), int)
    for i in range(len(y01)):
        best, best_score = 0, -np.inf
        for c in range(len(cand)):
            score = np.log(prior[c]) + np.log(conf[y01[i], pred_c[c][i]])
            if score > best_score:
                best, best_score = c, score
        expected[i] = best
    np.testing.assert_array_equal(fr.predictions[0], expected)
    assert fr.accuracy == np.mean(expected == truth)
    # not a prior-only guess: some rows get a level other than the most frequent one
    assert np.any(expected != np.argmax(prior))


def test_bad_input(iwpc):
    d, X, y = iwpc
    with pytest.raises(TypeError, match="FIL estimator"):
        whitebox_inversion(LinearRegression().fit(X, y), sensitive_features=d.attribute_columns)
    est = FILLinearRegression(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="out of range"):
        whitebox_inversion(est, sensitive_features=[14])
    with pytest.raises(ValueError, match="not among the candidates"):
        whitebox_inversion(est, sensitive_features=d.attribute_columns,
                           candidates=[[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="prior must be"):
        whitebox_inversion(est, sensitive_features=d.attribute_columns, prior=[0.5, 0.5])
    with pytest.raises(ValueError, match="method"):
        candidate_minimisers(est, sensitive_features=d.attribute_columns, method="exact")
    # a continuous column, and two binary columns that are not a one-hot group
    Xb = X.copy()
    Xb[:5, 0], Xb[:5, 1] = 1.0, 1.0
    Xb[5:, :2] = 0.0
    for attack in (lambda c: whitebox_inversion(est, sensitive_features=c),
                   lambda c: fredrikson_inversion(est, X, y, sensitive_features=c),
                   lambda c: prior_baseline(X, sensitive_features=c)):
        with pytest.raises(ValueError, match="not a binary column or a one-hot group"):
            attack([0])
    with pytest.raises(ValueError, match="not a binary column or a one-hot group"):
        prior_baseline(Xb, sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="at least two candidate"):
        prior_baseline(X, sensitive_features=d.attribute_columns, candidates=[[0, 0]])


def test_mlp_only_options_are_refused_for_a_fil_estimator():
    """``method="first_order"`` and a released *model* belong to MLP audits only."""
    import re

    from sklearn_privacy.attacks import candidate_minimisers

    rng = np.random.RandomState(0)
    X = np.column_stack([rng.normal(size=(60, 2)), rng.randint(0, 2, size=60)])
    y = X @ [1.0, -1.0, 2.0] + 0.1 * rng.normal(size=60)
    reg = FILLinearRegression(sigma=1e-3, alpha=1e-2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match=re.escape("method='first_order'")):
        candidate_minimisers(reg, sensitive_features=[2], method="first_order")
    with pytest.raises(ValueError, match=re.escape("method='first_order'")):
        whitebox_inversion(reg, sensitive_features=[2], n_draws=2, method="first_order")
    with pytest.raises(TypeError, match="released must be the released parameters"):
        whitebox_inversion(reg, sensitive_features=[2], released=LinearRegression().fit(X, y))
    # the parameter vector itself is accepted
    theta = np.r_[reg.coef_.ravel(), reg.intercept_]
    res = whitebox_inversion(reg, sensitive_features=[2], released=theta)
    assert res.predictions.shape[-1] == 60 and 0.0 <= res.accuracy <= 1.0


def test_prior_and_population_rows_with_other_columns_are_named():
    """Rows meant to be in X's layout are checked against it, naming the argument.

    Before: ``prior_baseline(df, X_prior=df[["age"]])`` said "column 'race' has missing
    values in rows [0, 1, 2, 3, 4]" (the concatenated frame's NaN); an ``X_prior`` array
    with one column more said "Rows [0, 1, 2, 3, 4] have attribute values that are not
    among the candidates" (it read another column); ``regression_inversion`` with a
    3-column ``X_population`` failed with scikit-learn's "X has 3 features, but
    LinearRegression is expecting 4".
    """
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    df = pd.DataFrame({"age": rng.randint(18, 80, 60), "race": rng.choice(["a", "b"], 60)})
    with pytest.raises(ValueError, match=r"X_prior lacks the columns \['race'\] of X"):
        prior_baseline(df, sensitive_features="race", X_prior=df[["age"]])
    assert prior_baseline(df, sensitive_features="race", X_prior=df[["race"]]).accuracy == \
        prior_baseline(df, sensitive_features="race").accuracy
    X, y, cols, _ = _onehot_data()
    reg = LinearRegression().fit(X, y)
    wider = np.column_stack([X, np.zeros(len(X))])
    with pytest.raises(ValueError, match="X_prior has 6 columns but X has 5"):
        fredrikson_inversion(reg, X, y, sensitive_features=cols, X_prior=wider)
    with pytest.raises(ValueError, match="X_prior has 6 columns but X has 5"):
        prior_baseline(X, sensitive_features=cols, X_prior=wider)
    from sklearn_privacy.attacks import regression_inversion

    with pytest.raises(ValueError, match="X_population has 4 columns but X has 5"):
        regression_inversion(reg, X, y, sensitive_features=0, X_population=X[:, :4],
                             y_population=y, random_state=0)


def test_one_level_in_the_attacked_rows_says_to_pass_candidates():
    """Before: "An attribute needs at least two candidate values to be inverted." with no
    way out, for a single attacked row (or a subset holding one level)."""
    pd = pytest.importorskip("pandas")
    X, y, cols, cand = _onehot_data()
    reg = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="pass candidates= with every possible level"):
        fredrikson_inversion(reg, X[:1], y[:1], sensitive_features=cols)
    assert fredrikson_inversion(reg, X[:1], y[:1], sensitive_features=cols,
                                candidates=cand).predictions.shape == (1, 1)
    df = pd.DataFrame({"age": [30, 40], "race": ["a", "a"]})
    with pytest.raises(ValueError, match="pass candidates= with every possible level"):
        prior_baseline(df, sensitive_features="race")


def test_result_constructors_check_their_arrays():
    """``from_predictions`` of both result classes names a bad argument.

    Before: numpy's "operands could not be broadcast together" for a length mismatch,
    an accuracy of NaN with two RuntimeWarnings for zero rows, predictions outside the
    candidates (5, -1, 0.5) scored silently as wrong guesses, and a NaN prediction
    giving a NaN mean absolute error.
    """
    from sklearn_privacy.attacks import AttributeInversionResult, NumericInversionResult

    cand = np.array([[0.0], [1.0]])
    ok = AttributeInversionResult.from_predictions(np.array([[0, 1, 1]]), np.array([0, 1, 0]),
                                                   cand)
    assert ok.accuracy == pytest.approx(2 / 3)
    for preds, truth, match in (
            (np.array([[0, 1]]), np.array([0, 1, 0]), r"predictions must have shape "
                                                      r"\(n_draws, 3\)"),
            (np.zeros((1, 0), int), np.zeros(0, int), "truth must be a non-empty 1-D"),
            (np.array([[0, 5, 1]]), np.array([0, 1, 0]), r"predictions must hold indices "
                                                         r"into candidates \(integers in 0\.\.1\)"),
            (np.array([[0, -1, 1]]), np.array([0, 1, 0]), "predictions must hold indices"),
            (np.array([[0.5, 1, 1]]), np.array([0, 1, 0]), "predictions must hold indices"),
            (np.array([[0, 1, 1]]), np.array([0, 2, 0]), "truth must hold indices")):
        with pytest.raises(ValueError, match=match):
            AttributeInversionResult.from_predictions(preds, truth, cand)
    res = NumericInversionResult.from_predictions("age", [1.0, 2, 3, 4], [1.0, 2, 3, 5],
                                                  baseline=2.5)
    assert res.mae == 0.25 and res.baseline_mae == pytest.approx(1.25)
    for kwargs, exc, match in (
            (dict(predictions=[1.0, 2, 3]), ValueError, "predictions and truth must be 1-D "
                                                         "of the same non-zero length"),
            (dict(predictions=[np.nan, 2, 3, 4]), ValueError, "predictions and truth must be "
                                                               "finite"),
            (dict(baseline=np.inf), ValueError, "baseline must be a finite number"),
            (dict(confidence=1.0), ValueError, "confidence must be a float in")):
        args = dict(predictions=[1.0, 2, 3, 4], truth=[1.0, 2, 3, 5], baseline=2.5)
        args.update(kwargs)
        with pytest.raises(exc, match=match):
            NumericInversionResult.from_predictions("age", **args)
