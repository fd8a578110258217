"""The report's cost: one set of reference models for every attack, counted fits, the
counts on the page, progress when verbose."""

import json
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.report import PrivacyReport


class CountingLogisticRegression(LogisticRegression):
    """LogisticRegression whose fits are counted (class level: clones count too)."""

    fits = 0

    def fit(self, X, y, sample_weight=None):
        type(self).fits += 1
        return super().fit(X, y, sample_weight=sample_weight)


class CountingFIL(FILLogisticRegression):
    """FILLogisticRegression whose fits are counted (class level: clones count too)."""

    fits = 0

    def fit(self, X, y, **kw):
        type(self).fits += 1
        return super().fit(X, y, **kw)


def _rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 4))
    X[:, 3] = rng.integers(0, 3, 2 * n)
    y = (X[:, 0] + rng.normal(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _report(model, X, y, Xp, yp, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PrivacyReport.from_estimator(model, X, y, Xp, yp, random_state=0, **kw)


def test_lira_and_rmia_share_one_set_of_reference_models():
    """LiRA and RMIA run on the private page from the same reference models: the fits
    counted are the page's stated count (4 reference models + 1 one-run audit fit), half
    of what the two attacks cost when each trains its own (the old report had no summary
    "cost" and no RMIA row: KeyError / no RMIA on the old code)."""
    from sklearn_privacy.attacks import lira, rmia

    X, y, Xp, yp = _rows(200)
    model = CountingLogisticRegression().fit(X, y)
    CountingLogisticRegression.fits = 0
    rep = _report(model, X, y, Xp, yp, n_reference_models=4, n_canaries=50,
                  include_private_details=True)
    cost = rep.summary["cost"]
    assert cost["reference_models"] == 4
    assert CountingLogisticRegression.fits == cost["reference_models"] + cost["audit_refits"]
    assert cost["audit_refits"] == 1
    memb = next(s for s in rep.sections if s.key == "membership")
    labels = [k for k, _ in memb.private_table]
    assert any(k.startswith("LiRA (4 reference models) AUC") for k in labels)
    assert any(k.startswith("RMIA (the same 4 reference models) AUC") for k in labels)
    # the two attacks on their own: one set of reference models each
    CountingLogisticRegression.fits = 0
    Xa, ya = np.r_[X, Xp], np.r_[y, yp]
    members = np.r_[np.ones(200, bool), np.zeros(200, bool)]
    lira(model, Xa, ya, members, n_reference_models=4, random_state=0)
    rmia(model, Xa, ya, members, n_reference_models=4, random_state=0)
    assert CountingLogisticRegression.fits == 8


def test_shared_scores_equal_the_attacks_run_on_their_own():
    """Independent oracle: the shared reference set gives exactly the scores of
    ``lira`` and ``rmia`` run with the same generator."""
    from sklearn_privacy.attacks import lira, rmia
    from sklearn_privacy.report._shared import lira_scores, reference_set, rmia_scores

    X, y, Xp, yp = _rows(200, seed=1)
    model = LogisticRegression(C=100.0).fit(X, y)
    Xa, ya = np.r_[X, Xp], np.r_[y, yp]
    members = np.r_[np.ones(200, bool), np.zeros(200, bool)]
    ctx = {"estimator": model, "n_ref": 6, "n_jobs": None, "verbose": 0}
    ref = reference_set(ctx, Xa, ya, np.random.default_rng(7))
    assert reference_set(ctx, Xa, ya, None) is ref          # trained once
    assert ctx["cost"]["reference_models"] == 6
    res = lira(model, Xa, ya, members, n_reference_models=6,
               random_state=np.random.default_rng(7))
    s = lira_scores(ref)
    np.testing.assert_allclose(s[members], res.scores_members, rtol=1e-12)
    np.testing.assert_allclose(s[~members], res.scores_nonmembers, rtol=1e-12)
    res = rmia(model, Xa, ya, members, n_reference_models=6,
               random_state=np.random.default_rng(7))
    s = rmia_scores(ref)
    np.testing.assert_allclose(s[members], res.scores_members, rtol=1e-12)
    np.testing.assert_allclose(s[~members], res.scores_nonmembers, rtol=1e-12)


def test_default_page_states_counts_that_match_the_fits():
    """A DP release with a finite claim: the audits' fits counted equal the page's count,
    the canary releases are 2 x canary_releases, the counts are on the page and in the
    record (schema 2.1), and the default page trains no reference model (LiRA is private).
    No cost on the old page (KeyError)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    X /= 1.2 * np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0).astype(int)
    model = CountingFIL(epsilon=2.0, data_norm=1.0, alpha=0.05, classes=[0, 1],
                        fit_intercept=False).fit(X[:300], y[:300])
    CountingFIL.fits = 0
    rep = _report(model, X[:300], y[:300], X[300:], y[300:], n_reference_models=4,
                  n_canaries=50, canary_releases=200)
    cost = rep.summary["cost"]
    assert cost == {"reference_models": 0, "audit_refits": CountingFIL.fits,
                    "canary_releases": 400}
    assert cost["audit_refits"] >= 4      # one-run (2), worst-case search (>= 1), canary (2)
    page = rep.default_page()
    assert f"fits of the recipe by the audits (on the population rows)</td><td>" \
           f"{cost['audit_refits']:,}" in page
    assert "canary releases drawn (noise redrawn, no refit)</td><td>400" in page
    record = json.loads(rep.to_json())
    assert record["schema_version"] == "2.1"
    assert record["summary"]["cost"] == cost
    assert PrivacyReport.from_json(rep.to_json()).summary["cost"] == cost
    props = PrivacyReport.json_schema()["properties"]["summary"]["properties"]["cost"]
    assert set(props["required"]) == set(cost)
    # seconds stay private: not in the record
    assert "seconds" not in json.dumps(record["summary"])


def test_verbose_reports_reference_model_progress(capsys):
    """verbose=1 prints each reference model as it is trained (the old report printed
    joblib's own line once, without a count)."""
    X, y, Xp, yp = _rows(150)
    model = LogisticRegression().fit(X, y)
    _report(model, X, y, Xp, yp, n_reference_models=4, n_canaries=20,
            include_private_details=True, verbose=1)
    out = capsys.readouterr().out
    for k in range(1, 5):
        assert f"[PrivacyReport] reference models {k}/4" in out
    assert "[PrivacyReport] one-run audit" in out


@pytest.mark.parametrize("private", [False, True])
def test_without_reference_models_nothing_is_trained_for_them(private):
    """n_reference_models=0: no reference model, no LiRA or RMIA row."""
    X, y, Xp, yp = _rows(150)
    model = CountingLogisticRegression().fit(X, y)
    CountingLogisticRegression.fits = 0
    rep = _report(model, X, y, Xp, yp, n_canaries=0, include_private_details=private)
    assert rep.summary["cost"] == {"reference_models": 0, "audit_refits": 0,
                                   "canary_releases": 0}
    assert CountingLogisticRegression.fits == 0
    memb = next(s for s in rep.sections if s.key == "membership")
    assert not any("RMIA" in k or "LiRA" in k for k, _ in memb.private_table)


def test_canary_audit_reuses_the_worst_case_fits_with_the_same_releases():
    """The report's canary audit redraws the worst-case search's exact fits of D and D'
    instead of fitting them again: the releases' statistics and the bound are exactly
    canary_audit's (refit=False) from the same seed, with two fits fewer (the old code
    refitted both sides: the counted fits were 2 more)."""
    from sklearn_privacy.attacks import canary_audit, worst_case_neighbours
    from sklearn_privacy.report._audits import _canary_of_fits

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    X /= 1.2 * np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
    est = CountingFIL(epsilon=1.0, data_norm=1.0, alpha=0.05, classes=[0, 1],
                      fit_intercept=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = worst_case_neighbours(est, X, y, random_state=0)
        CountingFIL.fits = 0
        mine = _canary_of_fits(pair._fits, X, y, pair, 300, 0.95,
                               np.random.default_rng(11))
        assert CountingFIL.fits == 0
        ref = canary_audit(est, X, y, pair.index, pair.x_replacement, pair.y_replacement,
                           attack=pair.statistic(), n_releases=300, refit=False,
                           random_state=np.random.default_rng(11))
        assert CountingFIL.fits == 2
    np.testing.assert_array_equal(mine.statistics_original, ref.statistics_original)
    np.testing.assert_array_equal(mine.statistics_replaced, ref.statistics_replaced)
    assert mine.epsilon_lower_bound == ref.epsilon_lower_bound
    assert mine.claimed_epsilon == ref.claimed_epsilon == 1.0


def test_fil_audit_runs_once_for_the_fil_and_inversion_sections(capsys):
    """With sigma, fil.audit of a scikit-learn GLM is computed once and read by both the
    FIL section and the white-box inversion on simulated releases; verbose says so."""
    X, y, Xp, yp = _rows(200)
    model = LogisticRegression().fit(X, y)
    rep = _report(model, X, y, Xp, yp, sigma=1.0, sensitive_features=[3], n_canaries=0,
                  include_private_details=True, verbose=1)
    out = capsys.readouterr().out
    assert out.count("fil: sklearn_privacy.fil.audit of the model at sigma") == 1
    assert "inversion: white-box attack on '3'" in out
    keys = [s.key for s in rep.sections]
    assert "fil" in keys and "inversion" in keys
