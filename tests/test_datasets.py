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
    assert set(train.sensitive_columns) == {"race", "sex", "marital_status"}
    assert len(train.sensitive_columns["race"]) == 5
    assert len(train.sensitive_columns["marital_status"]) == 7
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
    d = load_mnist01()
    assert d.data_train.shape == (800, 784) and d.data_test.shape == (200, 784)
    assert np.bincount(d.target_train).tolist() == [400, 400]
    assert np.intersect1d(d.train_index, d.test_index).size == 0
    assert np.linalg.norm(d.data_train, axis=1).max() == pytest.approx(1.0)
    p = load_mnist01(n_components=20)
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
    m01 = load_mnist01(n_components=20, as_frame=True)
    arr = load_mnist01(n_components=20)
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
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_attribution_is_bundled():
    text = data_path("ATTRIBUTION.txt").read_text()
    for source in ("CC BY 4.0", "CC BY-SA 4.0", "CC BY-SA 3.0", "Yeom"):
        assert source in text
