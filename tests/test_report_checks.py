"""PrivacyReport on the models people publish: the DP recipe with a penalised intercept,
the worst-case audit of pipelines, structural disclosure checks, the low-FPR tail and the
machine-readable record."""

import warnings

import numpy as np
import pytest

from sklearn_privacy import FILLogisticRegression
from sklearn_privacy.report import PrivacyReport


def _bounded(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(2 * n, d)) / np.sqrt(2 * d)
    y = (X[:, 0] + 0.1 * rng.normal(size=2 * n) > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _dp_penalised_intercept():
    return FILLogisticRegression(epsilon=2.0, data_norm=1.0, intercept_scaling=0.5,
                                 alpha=0.05, classes=[0, 1])


@pytest.mark.parametrize("n_canaries", [50, 0])
def test_penalised_intercept_dp_release_is_audited_without_crash(n_canaries):
    """A bare FILLogisticRegression with intercept_scaling on a numpy array: the one-run
    white-box scores built canary rows without the constant column (7-vs-6 shape mismatch)
    and the worst-case search treated the constant column as a free feature. Both raised
    ValueError on the old code; the audits now run and stay below the claim."""
    X, y, Xp, yp = _bounded()
    est = _dp_penalised_intercept().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(est, X, y, Xp, yp, n_canaries=n_canaries,
                                           canary_releases=300, random_state=0)
    audits = next(s for s in rep.sections if s.key == "audits")
    labels = [k for k, _ in audits.table]
    assert any(k.startswith("canary audit") for k in labels)
    one_run = dict(audits.table).get("one-run audit", "")
    assert (n_canaries == 0) == (one_run == "not run: n_canaries=0")
    assert 0.0 <= rep.summary["empirical_epsilon"] <= 2.0 + 1e-9


def test_worst_case_pair_with_penalised_intercept_keeps_the_constant_column():
    """The replacement row has the user's columns only, lies in the data_norm ball once the
    constant column is appended, and moves the minimiser at most the sensitivity (the old
    code raised a broadcast ValueError)."""
    from sklearn_privacy.attacks import worst_case_neighbours

    X, y, _, _ = _bounded()
    est = _dp_penalised_intercept()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = worst_case_neighbours(est, X, y, random_state=0)
    assert pair.x_replacement.shape == (X.shape[1],)
    assert np.linalg.norm(np.r_[pair.x_replacement, 0.5]) <= 1.0 + 1e-9
    assert 0.3 < pair.ratio <= 1.0 + 1e-9


def _raw_frame(n=300, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.uniform(-1, 1, 2 * n), "b": rng.uniform(-1, 1, 2 * n),
                       "c": rng.choice(["x", "y", "z"], 2 * n)},
                      index=rng.permutation(10 * n)[:2 * n])
    y = (df["a"] + 0.3 * rng.normal(size=2 * n) > 0).astype(int).to_numpy()
    return df.iloc[:n], y[:n], df.iloc[n:], y[n:]


def _recipe():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from sklearn_privacy.preprocessing import BoundedScaler

    return make_pipeline(
        ColumnTransformer([("num", BoundedScaler({"a": (-1, 1), "b": (-1, 1)}), ["a", "b"]),
                           ("cat", OneHotEncoder(categories=[["x", "y", "z"]],
                                                 handle_unknown="ignore",
                                                 sparse_output=False), ["c"])],
                          sparse_threshold=0),
        FILLogisticRegression(epsilon=2.0, data_norm=2.0, intercept_scaling=1.0, alpha=0.05,
                              classes=[0, 1]))


def test_canary_audit_runs_for_the_recipe_on_a_raw_frame():
    """The publishing recipe (a pipeline on a raw frame with a finite claim): the old code
    skipped the worst-case canary audit without a word. It now runs on the final step
    through the pipeline's own preprocessing and stays below the claim."""
    X, y, Xp, yp = _raw_frame()
    model = _recipe().fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = PrivacyReport.from_estimator(model, X, y, Xp, yp, n_canaries=0,
                                           canary_releases=300, random_state=0)
    audits = dict(next(s for s in rep.sections if s.key == "audits").table)
    row = audits["canary audit on the worst pair found (replace-one)"]
    assert "through" not in row or "preprocessing" in row
    assert "pipeline's preprocessing" in row
    assert 0.0 <= rep.summary["empirical_epsilon"] <= 2.0


def test_audits_that_cannot_run_say_why():
    """A model without a claim: the canary audit says it did not run and why, and with
    n_canaries=0 the one-run audit too (the old page dropped the section silently)."""
    from sklearn.linear_model import LogisticRegression

    X, y, Xp, yp = _bounded()
    rep = PrivacyReport.from_estimator(LogisticRegression().fit(X, y), X, y, Xp, yp,
                                       n_canaries=0, random_state=0)
    audits = next(s for s in rep.sections if s.key == "audits")
    table = dict(audits.table)
    assert table["one-run audit"] == "not run: n_canaries=0"
    assert table["canary audit on the worst-case pair"].startswith("not run: it audits")
    assert "not_checked" in audits.outcomes


@pytest.fixture(scope="module")
def svc_report():
    return _svc_report(n_canaries=0, include_private_details=True)


def _svc_report(**kw):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4))
    y = (X[:, 0] + X[:, 1] ** 2 + 0.5 * rng.normal(size=1000) > 1).astype(int)
    model = make_pipeline(StandardScaler(), SVC(C=10.0)).fit(X[:500], y[:500])
    rep = PrivacyReport.from_estimator(model, X[:500], y[:500], X[500:], y[500:],
                                       random_state=0, **kw)
    return model, rep


def test_rows_stored_verbatim_count_in_the_headline_epsilon(svc_report):
    """An SVC pipeline stores its support vectors: the exact-match membership test fed to
    epsilon_lower_bound bounds the headline (the old headline ignored it and showed the
    weaker attacks' figure)."""
    from sklearn_privacy.attacks import epsilon_lower_bound

    model, rep = svc_report
    n_sv = model[-1].support_vectors_.shape[0]
    structural = next(s for s in rep.sections if s.key == "structural")
    # the exact count is private; the default page shows it with Laplace noise
    assert f"{n_sv:,} of 500 training rows are stored" in " ".join(
        v for _, v in structural.private_table)
    noisy = next(v for k, v in structural.table
                 if k == "training rows stored in the model")
    shown = int(noisy.split("about ")[1].split(" of ")[0].replace(",", ""))
    scale = float(noisy.split("noise of scale ")[1].split(")")[0])
    assert abs(shown - n_sv) <= 12 * scale + 1
    exact = next(v for k, v in structural.private_table
                 if k == "training rows stored in the model (exact)")
    assert exact not in rep.default_page()
    # the same test by hand: 1 for a row stored in the model, 0 otherwise
    members = np.r_[np.ones(500, bool), np.zeros(500, bool)]
    scores = np.r_[np.ones(n_sv), np.zeros(1000 - n_sv)]
    by_hand = epsilon_lower_bound(members=members, scores=scores, random_state=0)
    assert by_hand.epsilon_lower_bound > 1.5
    # it scores training rows: it bounds the private page's headline, not the default's
    private = rep.private_details["summary"]
    assert private["empirical_epsilon"] > 1.5
    assert "stored" in private["empirical_epsilon_source"]
    # the default page's bound comes from the noisy count of stored rows (accounted) and
    # the population rows stored (public); it is conservative: below the exact one
    assert "stored rows (noisy count)" in rep.summary["empirical_epsilon_source"]
    from scipy.stats import beta

    # no population row is stored: the bound is at most log(1 / FPR_high) at 0 of 500
    ceiling = -np.log(beta.ppf(1 - 0.05 / 3, 1, 500))
    assert 1.5 < rep.summary["empirical_epsilon"] <= ceiling
    tail = private["tpr_at_low_fpr"]
    assert "stored" in tail["attack"]
    assert tail["levels"]["0.01"]["tpr"] == pytest.approx(n_sv / 500)   # no false positive
    # the default page's tail: the same test from the noisy count (no population row is
    # stored, so it is a TPR at FPR <= 1 %); its widened interval holds the exact TPR
    shown_tail = rep.summary["tpr_at_low_fpr"]
    assert "stored rows (noisy count)" in shown_tail["attack"]
    one = shown_tail["levels"]["0.01"]
    assert one["false_positives"] == 0 and one["low"] <= n_sv / 500 <= one["high"]
    # the noisy count alone proves stored rows: the default page's decision is "reject"
    assert rep.recommendation["decision"] == "reject"
    assert rep.private_details["recommendation"]["decision"] == "reject"


def _validate(instance, schema, path="$"):
    """A small JSON Schema validator (type, enum, required, properties,
    additionalProperties, items): the keywords the report's schema uses."""
    types = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    allowed = schema.get("type")
    if allowed is not None:
        allowed = [allowed] if isinstance(allowed, str) else allowed
        ok = False
        for t in allowed:
            if t == "integer":
                ok |= isinstance(instance, int) and not isinstance(instance, bool)
            elif t == "number":
                ok |= isinstance(instance, int | float) and not isinstance(instance, bool)
            else:
                ok |= isinstance(instance, types[t])
        assert ok, f"{path}: {instance!r} is not of type {allowed}"
    if "enum" in schema:
        assert instance in schema["enum"], f"{path}: {instance!r} not in {schema['enum']}"
    if isinstance(instance, dict):
        for key in schema.get("required", []):
            assert key in instance, f"{path}: missing {key!r}"
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is False:
            extra = set(instance) - set(props)
            assert not extra, f"{path}: unexpected {sorted(extra)}"
        for key, sub in props.items():
            if key in instance:
                _validate(instance[key], sub, f"{path}.{key}")
    if isinstance(instance, list) and "items" in schema:
        for i, item in enumerate(instance):
            _validate(item, schema["items"], f"{path}[{i}]")


def test_validator_rejects_what_the_schema_forbids():
    schema = PrivacyReport.json_schema()
    bad = {"schema": "sklearn_privacy.privacy_report"}
    with pytest.raises(AssertionError, match="missing"):
        _validate(bad, schema)
    rec = {"decision": "publish", "reasons": [], "policy": {}}
    with pytest.raises(AssertionError, match="not in"):
        _validate(rec, schema["properties"]["recommendation"])


def test_json_record_validates_round_trips_and_matches_the_page(svc_report):
    import json

    from sklearn_privacy.report import ReleasePolicy

    _, rep = svc_report
    text = rep.to_json()
    record = json.loads(text)
    _validate(record, PrivacyReport.json_schema())
    assert record["schema_version"] == "2.1"
    assert record["recommendation"]["decision"] == "reject"
    assert {c["name"] for c in record["structural"]} == {"stored_rows"}
    page = [s for s in rep.sections if s.key != "private"]
    assert len(record["checks"]) == sum(len(s.verdicts) for s in page)
    # a private report's record carries its private channel, marked
    assert record["private"]["do_not_publish"] is True
    assert record["private"]["recommendation"]["decision"] == "reject"
    again = PrivacyReport.from_json(text)
    assert again.to_json() == text
    for page in (rep.to_html(), again.to_html()):
        assert "Recommendation: reject</b>" in page
    # the default record: only what the default page shows, and its decision from it
    from sklearn_privacy.report._record import recommend, to_record

    default = to_record(rep, private=False)
    _validate(default, PrivacyReport.json_schema())
    assert "private" not in default
    assert recommend(default, ReleasePolicy()) == rep.recommendation
    assert "seconds" not in json.dumps(default)
    # a policy is a declared input: a stricter one can only move the decision down
    X, y, Xp, yp = _bounded(n=300, seed=1)
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression().fit(X, y)
    # the page's noisy figures from a seed: the decisions compared are reproducible (a
    # noisy count crosses its 95 % threshold on about 1 page in 20 otherwise)
    lenient = PrivacyReport.from_estimator(model, X, y, Xp, yp, n_canaries=0,
                                           random_state=0, noise_random_state=0)
    assert lenient.recommendation["decision"] == "support_release"
    assert "Recommendation: support release</b>" in lenient.to_html()
    strict = PrivacyReport.from_estimator(model, X, y, Xp, yp, n_canaries=0,
                                          random_state=0, noise_random_state=0,
                                          policy=ReleasePolicy(min_rows=400))
    assert strict.recommendation["decision"] == "support_rejection"
    assert any("degrees_of_freedom" in r for r in strict.recommendation["reasons"])
    with pytest.raises(ValueError, match="min_rows"):
        ReleasePolicy(min_rows=0)
    with pytest.raises(TypeError, match="policy"):
        PrivacyReport.from_estimator(model, X, y, policy={"min_rows": 5})
    with pytest.raises(ValueError, match="schema"):
        PrivacyReport.from_json(json.dumps({**record, "schema": "other"}))


def test_recommendation_rules_on_hand_built_reports():
    """Each rule of the policy, on reports built by hand (no fitting)."""
    from sklearn_privacy.report import ReleasePolicy, ReportSection
    from sklearn_privacy.report._record import recommend

    def rep(outcome, key="audits", **summary):
        sec = ReportSection(key, key, verdicts=["a sentence"], outcomes=[outcome])
        r = PrivacyReport([sec], summary={"claimed_epsilon": np.inf, **summary})
        return recommend(r, ReleasePolicy())["decision"]

    assert rep("leaks", empirical_epsilon=0.5) == "support_release"
    assert rep("leaks", empirical_epsilon=1.5) == "support_rejection"
    assert rep("leaks", key="membership") == "support_rejection"
    assert rep("verbatim", key="release") == "reject"
    assert rep("refuted", claimed_epsilon=1.0) == "reject"
    assert rep("not_refuted", claimed_epsilon=20.0) == "support_rejection"
    assert rep("not_refuted", claimed_epsilon=2.0) == "support_release"
    tail = {"attack": "x", "levels": {"0.01": {"tpr": 0.3, "low": 0.2, "high": 0.4}}}
    assert rep("note", tpr_at_low_fpr=tail) == "support_rejection"
    sec = ReportSection("structural", "s")
    r = PrivacyReport([sec], summary={})
    r.structural = [{"name": "stored_rows", "ran": True, "found": 3, "detail": "3 rows"}]
    assert recommend(r, ReleasePolicy())["decision"] == "reject"
    r.structural = [{"name": "leaf_k_anonymity", "ran": True, "found": 3, "detail": "d"}]
    assert recommend(r, ReleasePolicy())["decision"] == "support_rejection"
    r.structural = [{"name": "stored_rows", "ran": False, "found": None, "detail": ""}]
    assert recommend(r, ReleasePolicy())["decision"] == "support_release"
