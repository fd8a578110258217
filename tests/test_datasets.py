import gzip

import numpy as np
import pytest

from sklearn_privacy.datasets import load_adult, load_iwpc, load_mnist, load_mnist01
from sklearn_privacy.datasets._base import data_path


def _raw_lines(name, skip=0):
    with data_path(name).open("rb") as fh:
        lines = gzip.decompress(fh.read()).decode().splitlines()[skip:]
    return [line for line in lines if line.strip()]


def test_adult_rows_and_columns():
    train, test = load_adult(), load_adult(subset="test")
    # counts published with the data set (rows without missing values)
    assert train.data.shape == (30162, 104) and test.data.shape == (15060, 104)
    raw_train = _raw_lines("adult.data.gz")
    assert len(raw_train) == 32561
    assert len(raw_train) - sum("?" in line for line in raw_train) == 30162
    both = load_adult(subset="all")
    assert both.data.shape[0] == 45222
    assert np.array_equal(both.data[:30162], train.data)
    # every one-hot block has exactly one 1 per row
    for name, cols in train.categorical_columns.items():
        assert np.all(train.data[:, cols].sum(axis=1) == 1), name
    # numeric columns standardised on the training split only
    num = train.data[:, train.numeric_columns]
    assert np.allclose(num.mean(axis=0), 0, atol=1e-12) and np.allclose(num.std(axis=0), 1)
    assert not np.allclose(test.data[:, train.numeric_columns].mean(axis=0), 0, atol=1e-3)
    # first raw row: 39, State-gov, ..., White, Male, ... <=50K
    first = dict(zip(train.feature_names, train.data[0], strict=True))
    assert first["workclass=State-gov"] == 1 and first["race=White"] == 1
    assert first["sex=Male"] == 1 and train.target[0] == 0
    assert set(train.sensitive_features) == {"race", "sex", "marital_status"}
    assert len(train.sensitive_features["race"]) == 5
    assert len(train.sensitive_features["marital_status"]) == 7
    # test labels carry a trailing dot in the raw file; positives must still be found
    assert 0.2 < test.target.mean() < 0.3


def test_iwpc_tables():
    iwpc = load_iwpc()
    assert iwpc.data.shape == (4819, 14) and iwpc.target.shape == (4819,)
    counts = np.bincount(iwpc.attribute)
    assert counts.tolist() == [1435, 1756, 1628]
    # prior-mode baseline of the attribute attack (published: about 0.37)
    assert counts.max() / counts.sum() == pytest.approx(0.364, abs=0.005)
    assert np.array_equal(iwpc.attribute_encoding[iwpc.attribute],
                          iwpc.data[:, iwpc.attribute_columns])
    assert np.isclose(iwpc.target.mean(), 0, atol=1e-3)
    raw = load_iwpc(raw=True)
    assert raw.data.shape == (6256, 68)
    assert "Therapeutic Dose of Warfarin" in raw.feature_names


def test_mnist_loaders():
    mnist = load_mnist()
    assert mnist.data.shape == (5000, 784) and np.bincount(mnist.target).tolist() == [500] * 10
    assert mnist.data.min() == 0.0 and mnist.data.max() == 1.0
    d = load_mnist01(random_state=0)
    assert d.data_train.shape == (800, 784) and d.data_test.shape == (200, 784)
    assert np.bincount(d.target_train).tolist() == [400, 400]
    assert np.intersect1d(d.train_index, d.test_index).size == 0
    assert np.linalg.norm(d.data_train, axis=1).max() == pytest.approx(1.0)
    p = load_mnist01(n_components=20, random_state=0)
    # PCA fitted on training rows only: the training projection is centred
    assert np.allclose(p.data_train.mean(axis=0), 0, atol=1e-12)
    assert not np.allclose(p.data_test.mean(axis=0), 0, atol=1e-3)
    assert np.allclose(p.pca.transform(d.data_train), p.data_train)
    other = load_mnist01(random_state=1)
    assert not np.array_equal(other.train_index, d.train_index)


def test_as_frame():
    pd = pytest.importorskip("pandas")
    adult = load_adult(as_frame=True)
    assert isinstance(adult.data, pd.DataFrame) and adult.frame.shape == (30162, 105)
    iwpc = load_iwpc(as_frame=True)
    assert list(iwpc.data.columns[11:13]) == ["vkorc1=CT", "vkorc1=TT"]
    raw = load_iwpc(raw=True, as_frame=True)
    assert raw.data["Therapeutic Dose of Warfarin"].isna().sum() > 0
    m01 = load_mnist01(n_components=20, as_frame=True, random_state=0)
    arr = load_mnist01(n_components=20, random_state=0)
    assert isinstance(m01.data_train, pd.DataFrame) and m01.frame.shape == (1000, 21)
    assert list(m01.data_train.columns) == arr.feature_names == [f"pc_{j}" for j in range(20)]
    assert np.array_equal(m01.data_train.to_numpy(), arr.data_train)
    assert np.array_equal(m01.target_test.to_numpy(), arr.target_test)
    assert np.array_equal(m01.data_test.index, arr.test_index)
    assert load_mnist(as_frame=True).data.shape == (5000, 784)


def test_loaders_return_copies():
    a = load_iwpc()
    a.data[:] = 0
    assert load_iwpc().data.any()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: load_adult(subset="validation"), "subset"),
        (lambda: load_mnist01(n_components=0), "n_components"),
        (lambda: load_mnist01(train_size=1000), "train_size"),
        (lambda: load_iwpc(raw="yes"), "raw"),
        (lambda: load_adult(return_X_y="yes"), "return_X_y"),
        (lambda: load_iwpc(raw=True, return_X_y=True), "raw IWPC table has none"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_attribution_is_bundled():
    text = data_path("ATTRIBUTION.txt").read_text()
    for source in ("CC BY 4.0", "CC BY-SA 4.0", "CC BY-SA 3.0", "Yeom"):
        assert source in text


# ---------------------------------------------------------------- raw Adult


def test_adult_raw_frame_matches_uci_files_and_encoded_rows():
    pd = pytest.importorskip("pandas")
    train = load_adult(raw=True, as_frame=True)
    test = load_adult(raw=True, as_frame=True, subset="test")
    both = load_adult(raw=True, as_frame=True, subset="all")
    # every row of UCI's files, missing values kept
    assert train.data.shape == (len(_raw_lines("adult.data.gz")), 14) == (32561, 14)
    assert test.data.shape == (len(_raw_lines("adult.test.gz", skip=1)), 14) == (16281, 14)
    assert both.frame.shape == (48842, 15) and list(both.split[[0, -1]]) == ["train", "test"]
    raw_lines = _raw_lines("adult.data.gz")
    assert train.data.isna().any(axis=1).sum() == sum("?" in line for line in raw_lines)
    assert set(train.data.columns[train.data.isna().any()]) == {
        "workclass", "occupation", "native_country"}
    # dtypes: numbers int64, the eight categorical columns category, target category
    cats = ["workclass", "education", "marital_status", "occupation", "relationship", "race",
            "sex", "native_country"]
    for col in train.data.columns:
        expected = "category" if col in cats else "int64"
        assert str(train.data[col].dtype) == expected, col
    assert isinstance(train.target.dtype, pd.CategoricalDtype)
    assert list(train.target.cat.categories) == ["<=50K", ">50K"] == train.target_names
    # train and test share their levels (codes agree across splits)
    for col in cats:
        assert list(train.data[col].cat.categories) == list(test.data[col].cat.categories)
    # strings stripped, test labels without their trailing dot
    assert train.data.loc[0, "workclass"] == "State-gov" and train.data.loc[0, "age"] == 39
    assert set(test.target.unique()) == {"<=50K", ">50K"}
    # one naming: raw columns = keys = prefixes of the encoded names
    enc = load_adult()
    assert set(enc.categorical_columns) == set(cats) == set(train.categorical_columns)
    assert set(enc.sensitive_features) == set(train.sensitive_features)
    for name in enc.feature_names:
        assert name.split("=")[0] in train.data.columns, name
    for key, cols in train.categorical_columns.items():
        assert [train.feature_names[j] for j in cols] == [key]
    # the complete rows are exactly the encoded loader's rows (independent re-encoding)
    for raw, encoded in ((train, enc), (test, load_adult(subset="test"))):
        complete = raw.frame.dropna()
        assert len(complete) == len(encoded.target)
        np.testing.assert_array_equal(complete["income"] == ">50K", encoded.target == 1)
        for key, cols in encoded.categorical_columns.items():
            levels = [enc.feature_names[j].split("=", 1)[1] for j in cols]
            onehot = (complete[key].astype(str).to_numpy()[:, None] == np.array(levels))
            np.testing.assert_array_equal(onehot, encoded.data[:, cols] == 1)
    num = train.frame.dropna()[[enc.feature_names[j] for j in enc.numeric_columns]]
    scaled = (num - num.mean()) / num.std(ddof=0)
    np.testing.assert_allclose(scaled.to_numpy(), enc.data[:, enc.numeric_columns],
                               atol=1e-12)


def test_adult_raw_arrays_and_bad_combination():
    pd = pytest.importorskip("pandas")
    arr = load_adult(raw=True, subset="test")
    frame = load_adult(raw=True, subset="test", as_frame=True)
    assert arr.data.dtype == object and arr.data.shape == (16281, 14)
    assert arr.feature_names == list(frame.data.columns)
    assert arr.target.dtype == object and set(arr.target) == {"<=50K", ">50K"}
    assert isinstance(arr.data[0, 0], int)
    missing = pd.isna(arr.data)
    np.testing.assert_array_equal(missing, frame.data.isna().to_numpy())
    np.testing.assert_array_equal(arr.data[~missing].astype(str),
                                  frame.data.astype(object).to_numpy()[~missing].astype(str))
    with pytest.raises(ValueError, match="variant"):
        load_adult(raw=True, variant="fil")


def test_adult_raw_pipeline_matches_encoded_accuracy():
    """Raw frame + ColumnTransformer vs the pre-encoded loader, same LogisticRegression.

    Measured: 0.8477 on the 15,060 complete test rows for both (identical predictions up
    to solver tolerance); 0.8531 on all 16,281 raw test rows, missing values as their own
    category.
    """
    import warnings

    pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from threadpoolctl import threadpool_limits

    train = load_adult(raw=True, as_frame=True)
    test = load_adult(raw=True, as_frame=True, subset="test")
    cats = list(train.categorical_columns)
    nums = [train.feature_names[j] for j in train.numeric_columns]

    def model():
        ct = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cats),
                                ("num", StandardScaler(), nums)])
        return make_pipeline(ct, LogisticRegression(solver="newton-cholesky", max_iter=200))

    enc, enc_test = load_adult(), load_adult(subset="test")
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("error")  # no feature-name or convergence warning
        ref = LogisticRegression(solver="newton-cholesky", max_iter=200)
        acc_encoded = ref.fit(enc.data, enc.target).score(enc_test.data, enc_test.target)
        ctr, cte = train.frame.dropna(), test.frame.dropna()
        pipe = model().fit(ctr[train.feature_names], ctr["income"])
        acc_complete = pipe.score(cte[train.feature_names], cte["income"])
        acc_all = model().fit(train.data, train.target).score(test.data, test.target)
    assert acc_encoded == pytest.approx(0.8477, abs=0.002)
    assert abs(acc_complete - acc_encoded) < 0.01
    assert abs(acc_all - acc_encoded) < 0.01


def test_iwpc_raw_frame_dtypes():
    pd = pytest.importorskip("pandas")
    raw = load_iwpc(raw=True, as_frame=True).data
    plain = load_iwpc(raw=True)
    assert raw.shape == plain.data.shape == (6256, 68)
    assert list(raw.columns) == plain.feature_names
    assert str(raw["Project Site"].dtype) == "int64"
    for col in ("Height (cm)", "Weight (kg)", "Therapeutic Dose of Warfarin", "Diabetes"):
        assert raw[col].dtype == np.float64, col
    dose = raw["Therapeutic Dose of Warfarin"]
    strings = plain.data[:, plain.feature_names.index("Therapeutic Dose of Warfarin")]
    assert dose.isna().sum() == np.sum(strings == "")
    np.testing.assert_allclose(dose.dropna().to_numpy(),
                               strings[strings != ""].astype(float))
    for col in ("Gender", "Race (OMB)", "Age", "CYP2C9 consensus", "VKORC1 1173 consensus"):
        assert isinstance(raw[col].dtype, pd.CategoricalDtype), col
    assert list(raw["Gender"].cat.categories) == ["female", "male"]
    # identifiers and free text stay strings, not 6,256-level categories
    for col in ("PharmGKB Subject ID", "Medications"):
        assert not isinstance(raw[col].dtype, pd.CategoricalDtype)
        assert pd.api.types.is_string_dtype(raw[col]), col


@pytest.mark.parametrize("loader", ["mnist01", "count"])
def test_random_state_none_draws_os_entropy_not_global_state(loader):
    """``random_state=None`` draws the split / the sample from fresh OS entropy.

    Before, ``load_mnist01`` and ``make_count_data`` drew from numpy's global
    ``RandomState`` (``check_random_state(None)``): the call advanced it, and a user who
    seeded ``np.random`` got the same "random" data on every run.
    """
    from sklearn_privacy.datasets import make_count_data

    def draw():
        if loader == "mnist01":
            return load_mnist01(scale_to_unit_ball=False).data_train[:, 300:500].sum(axis=1)
        return make_count_data(300).target

    np.random.seed(0)  # noqa: NPY002 (the global state is the subject)
    before = np.random.get_state()  # noqa: NPY002
    first = draw()
    after = np.random.get_state()  # noqa: NPY002
    assert np.array_equal(before[1], after[1]) and before[2:] == after[2:]  # not advanced
    np.random.seed(0)  # noqa: NPY002
    second = draw()
    assert not np.array_equal(first, second)  # a seeded global state does not fix it


@pytest.mark.parametrize("as_frame", [False, True])
@pytest.mark.parametrize("load, kwargs", [
    (load_adult, {}), (load_adult, {"raw": True}), (load_adult, {"variant": "fil"}),
    (load_iwpc, {}), (load_mnist, {}),
    ("make_count_data", {"n_samples": 50, "random_state": 0})])
def test_return_X_y_gives_the_bunchs_data_and_target(load, kwargs, as_frame):
    """As scikit-learn's loaders: ``(data, target)`` of the Bunch the same call returns."""
    if as_frame:
        pd = pytest.importorskip("pandas")
    if load == "make_count_data":
        from sklearn_privacy.datasets import make_count_data as load
    bunch = load(as_frame=as_frame, **kwargs)
    X, y = load(as_frame=as_frame, return_X_y=True, **kwargs)
    assert type(X) is type(bunch.data) and type(y) is type(bunch.target)
    if as_frame:
        pd.testing.assert_frame_equal(X, bunch.data)
        pd.testing.assert_series_equal(y, bunch.target)
    else:  # object arrays of the raw table hold NaN for missing entries
        assert X.shape == bunch.data.shape and X.dtype == bunch.data.dtype
        assert all(a == b or (a != a and b != b)
                   for a, b in zip(X.ravel().tolist(), bunch.data.ravel().tolist(),
                                   strict=True))
        np.testing.assert_array_equal(y, bunch.target)
