"""The public schema maps raw rows one by one: by position, whatever the index or the values.

Every test of this module failed on the code before the positional map (frames were
aligned on their index labels, and some raw values raised), as each docstring says.
"""

import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from sklearn_privacy.preprocessing import PublicSchema

pd = pytest.importorskip("pandas")

COLUMNS = {"age": (0, 100), "job": ["a", "b", "c"], "level": [1, 2, 3]}


def _frame(n=150, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.uniform(0, 100, n),
        "job": pd.Series(rng.choice(["a", "b", "c", "z"], n), dtype="category"),
        "level": rng.choice([1, 2, 3, 4], n),
        "other": rng.choice(["u", "v"], n),   # undeclared: dropped
    })


def _expected(X):
    """The declared rules written out column by column on plain values (the oracle)."""
    age = np.clip(np.where(np.isnan(X["age"].to_numpy(float)), 50.0,
                           X["age"].to_numpy(float)), 0, 100)
    job = np.array([v if v in ("a", "b", "c") else "(unknown)"
                    for v in X["job"].astype(object)], dtype=object)
    lev = X["level"].to_numpy(float)
    lev = np.where(np.isin(lev, [1, 2, 3]), lev, np.nan)
    return age, job, lev


def _check(out, X):
    age, job, lev = _expected(X)
    np.testing.assert_array_equal(out["age"].to_numpy(), age)
    np.testing.assert_array_equal(out["job"].to_numpy(), job)
    np.testing.assert_array_equal(out["level"].to_numpy(), lev)
    assert list(out.index) == list(X.index)   # labels carried along, never used


@pytest.mark.parametrize("index", ["split", "shuffled", "duplicated", "strings", "dates"])
def test_rows_are_mapped_by_position_for_any_index(index):
    """Failed on the old code: ``transform`` built its frame with ``index=X.index`` from
    columns indexed 0..n-1, so pandas aligned them on the labels (on a train_test_split
    frame 37 of 150 rows became NaN and 111 took another row's values)."""
    from sklearn.model_selection import train_test_split

    X = _frame(200)
    if index == "split":
        X, _ = train_test_split(X, train_size=150, random_state=0)
    elif index == "shuffled":
        X = X.iloc[np.random.default_rng(1).permutation(len(X))]
    elif index == "duplicated":   # pd.concat without ignore_index
        X = pd.concat([X.iloc[:100], X.iloc[100:].set_axis(range(100), axis=0)])
    elif index == "strings":
        X = X.set_axis([f"id{i}" for i in range(len(X))], axis=0)
    else:
        X = X.set_axis(pd.date_range("2020", periods=len(X), freq="D"), axis=0)
    schema = PublicSchema(COLUMNS).fit(X)
    _check(schema.transform(X), X)


def test_concat_without_ignore_index_feeds_each_raw_row_once():
    """Failed on the old code: after ``pd.concat`` of two frames with labels 0..99, label
    ``i`` selected the first frame's row twice, so one raw row fed two training rows and
    the second frame's rows were lost."""
    X = _frame(200)
    both = pd.concat([X.iloc[:100], X.iloc[100:].set_axis(range(100), axis=0)])
    out = PublicSchema({"age": (0, 100)}).fit(both).transform(both)
    np.testing.assert_array_equal(out["age"].to_numpy(), X["age"].to_numpy())
    assert np.unique(out["age"].to_numpy()).size == 200


class _Weird:
    def __eq__(self, other):
        raise RuntimeError("no comparison")

    __hash__ = object.__hash__

    def __float__(self):
        raise RuntimeError("no float")


class _LoudStr(str):
    def __eq__(self, other):
        raise RuntimeError("no comparison")

    __hash__ = str.__hash__


# (raw value, value in a numeric (0, 100) column, value in a string categorical column)
EXOTIC = [
    (2**1100, 100.0, "(unknown)"),                 # int beyond the float range: +inf
    (-(2**1100), 0.0, "(unknown)"),
    (Fraction(10**400, 3), 100.0, "(unknown)"),
    (Decimal("1e400"), 100.0, "(unknown)"),
    (Decimal("12.5"), 12.5, "(unknown)"),
    ("1e400", 100.0, "(unknown)"),
    (" 42.5 ", 42.5, "(unknown)"),
    ("nan", 50.0, "(unknown)"),
    ("n/a", 50.0, "(unknown)"),
    (np.array([1, 2]), 50.0, "(unknown)"),         # an array inside a cell
    ([1, 2], 50.0, "(unknown)"),
    ({"a": 1}, 50.0, "(unknown)"),
    (pd.NaT, 50.0, "(unknown)"),
    (np.datetime64("NaT"), 50.0, "(unknown)"),     # was clipped to the lower bound
    (np.timedelta64("NaT"), 50.0, "(unknown)"),
    (np.timedelta64(3, "s"), 50.0, "(unknown)"),   # durations are not numbers
    (pd.Timestamp("2020-01-01"), 50.0, "(unknown)"),
    (complex(1, 2), 50.0, "(unknown)"),
    (b"3", 50.0, "(unknown)"),
    (pd.NA, 50.0, "(unknown)"),
    (None, 50.0, "(unknown)"),
    (math.inf, 100.0, "(unknown)"),
    (True, 1.0, "(unknown)"),
    (np.float32(7.0), 7.0, "(unknown)"),
    (_Weird(), 50.0, "(unknown)"),
    (_LoudStr("b"), 50.0, "(unknown)"),           # its own equality fails: unknown
    (np.str_("a"), 50.0, "a"),
]


@pytest.mark.parametrize("value, number, category", EXOTIC,
                         ids=[type(v[0]).__name__ + str(i) for i, v in enumerate(EXOTIC)])
@pytest.mark.parametrize("container", ["frame", "array"])
def test_every_raw_value_is_mapped_by_the_declared_rules(value, number, category,
                                                        container):
    """Failed on the old code: a Python int beyond the float range raised OverflowError,
    an array in a string column raised ValueError (the comparison with the categories),
    and NaT as numpy's ``datetime64`` became the lower bound instead of the fill. Now each
    value is mapped by the documented rule, without an exception or a warning."""
    col = np.empty(4, dtype=object)
    col[:] = [10.0, 20.0, 30.0, 40.0]
    col[2] = value
    cat = np.empty(4, dtype=object)
    cat[:] = ["a", "b", "c", "a"]
    cat[2] = value
    if container == "frame":
        X = pd.DataFrame({"x": pd.Series(col, dtype=object),
                          "c": pd.Series(cat, dtype=object)}).set_axis([5, 5, 9, -1])
        schema = PublicSchema({"x": (0, 100), "c": ["a", "b", "c"]})
    else:
        X = np.column_stack([col, cat])
        schema = PublicSchema({0: (0, 100), 1: ["a", "b", "c"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(schema.fit(X).transform(X), dtype=object)
    assert out[2, 0] == number and type(out[2, 0]) is float or isinstance(out[2, 0], float)
    assert out[2, 1] == category and type(out[2, 1]) is str
    np.testing.assert_array_equal(out[[0, 1, 3], 0].astype(float), [10.0, 20.0, 40.0])
    assert list(out[[0, 1, 3], 1]) == ["a", "b", "a"]


def test_numeric_categories_and_typed_columns_use_the_same_rule():
    """The fast paths (typed columns, pandas categoricals, nullable dtypes) agree with the
    value-by-value rule of an object column (failed on the old code: the datetime column
    was read as nanoseconds and clipped)."""
    n = 6
    frame = pd.DataFrame({
        "f": np.array([1.5, np.nan, np.inf, -5.0, 2.0, 3.0]),
        "i": pd.array([1, None, 3, 400, 2, 2], dtype="Int64"),
        "b": pd.array([True, None, False, True, False, True], dtype="boolean"),
        "cat": pd.Categorical(["a", None, "z", "b", "a", "c"]),
        "s": pd.Series(["a", None, "z", "b", "a", "c"], dtype="string"),
        "t": pd.to_datetime(["2020-01-01"] * n),
        "lev": pd.Categorical([1, 2, 5, None, 3, 3]),
    })
    spec = {"f": (0, 10), "i": (0, 10), "b": (0, 10), "cat": ["a", "b", "c"],
            "s": ["a", "b", "c"], "t": (0, 10), "lev": [1, 2, 3]}
    schema = PublicSchema(spec).fit(frame)
    typed = schema.transform(frame)
    as_objects = frame.astype(object)
    loose = schema.transform(as_objects)
    for c in spec:
        np.testing.assert_array_equal(typed[c].to_numpy(), loose[c].to_numpy(), err_msg=c)
    np.testing.assert_array_equal(typed["f"], [1.5, 5.0, 10.0, 0.0, 2.0, 3.0])
    np.testing.assert_array_equal(typed["i"], [1.0, 5.0, 3.0, 10.0, 2.0, 2.0])
    np.testing.assert_array_equal(typed["b"], [1.0, 5.0, 0.0, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(typed["t"], [5.0] * n)
    assert list(typed["cat"]) == ["a", "(unknown)", "(unknown)", "b", "a", "c"]
    np.testing.assert_array_equal(typed["lev"], [1.0, 2.0, np.nan, np.nan, 3.0, 3.0])


def test_a_frame_with_two_columns_of_a_declared_name_is_refused():
    X = pd.DataFrame([[1.0, 2.0]], columns=["a", "a"])
    with pytest.raises(ValueError, match="several columns named"):
        PublicSchema({"a": (0, 10)}).fit(X)


# ------------------------------------------------------------------ BoundedScaler
def test_bounded_scaler_fits_both_neighbours_when_one_value_is_missing():
    """Failed on the old code: ``BoundedScaler(fill_value=None)`` refused NaN with a
    ValueError, so whether the fit existed at all told D (no NaN) from D' (one NaN). Now a
    missing entry takes the middle of its column's bounds, and a non-numeric column is
    read by the schema's numeric rule; the two fits are identical."""
    from sklearn_privacy.preprocessing import BoundedScaler

    rng = np.random.default_rng(3)
    D = pd.DataFrame({"a": rng.uniform(0, 10, 40), "b": rng.uniform(-5, 5, 40)})
    D.index = rng.permutation(1000)[:40]
    # a huge int is clipped to the upper bound (1 after scaling), the rest is missing (0)
    for bad, expected in ((np.nan, 0.0), ("n/a", 0.0), (2**1100, 1.0),
                          (np.array([1.0]), 0.0), (pd.NaT, 0.0)):
        D2 = D.astype(object)
        D2.iloc[7, 0] = bad
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a = BoundedScaler({"a": (0, 10), "b": (-5, 5)}).fit(D)
            b = BoundedScaler({"a": (0, 10), "b": (-5, 5)}).fit(D2)
            out = b.transform(D2)
        assert vars(a).keys() == vars(b).keys()
        np.testing.assert_array_equal(a.transform(D)[np.arange(40) != 7],
                                      out[np.arange(40) != 7])
        assert out[7, 0] == expected


# ------------------------------------------------------- consumers of the schema's map
def _schema_pipeline(model):
    from sklearn.pipeline import make_pipeline

    schema = PublicSchema({"age": (0, 100), "job": ["a", "b", "c"]}, classes=[0, 1])
    return make_pipeline(schema, schema.make_encoder(), model)


def _labelled(n, seed=0):
    X = _frame(n, seed)[["age", "job"]]
    y = ((X["age"].to_numpy() > 50) ^ (X["job"] == "b").to_numpy()).astype(int)
    return X, y


def test_documented_pipeline_fits_a_neighbour_with_a_new_index_label():
    """Failed on the old code: D (labels 0..n-1) fitted, and D' -- one row replaced by a
    row carrying the label 10**9 -- raised in BoundedScaler (that row became NaN), so
    whether a model existed told D from D' with certainty."""
    from sklearn_privacy import privacy_claim
    from sklearn_privacy.linear_model import DPLogisticRegression

    X, y = _labelled(200)
    X_prime = X.copy()
    X_prime.iloc[0] = [99.0, "c"]
    X_prime.index = [10**9] + list(X.index[1:])
    model = DPLogisticRegression(epsilon=1.0, delta=0.0, data_norm=2.0 ** 0.5 * 1.5,
                                 intercept_scaling=1.0, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _schema_pipeline(model).fit(X, y)
        b = _schema_pipeline(model).fit(X_prime, y)
    assert privacy_claim(a).is_private and privacy_claim(b).is_private
    assert np.isfinite(b[-1].coef_).all()


def test_private_selection_on_a_shuffled_frame_trains_on_the_right_rows():
    """Failed on the old code: the search's row subsets keep their labels, the schema
    aligned them and the candidates raised on NaN (or, with the labels of another part,
    trained on other rows' features). With the same seed, the search on a shuffled
    frame now releases exactly what it releases on the same rows labelled 0..n-1."""
    from sklearn_privacy import FILLogisticRegression, RandomStoppingSearch

    X, y = _labelled(300)
    order = np.random.default_rng(2).permutation(300)
    shuffled = X.iloc[order]
    fil = FILLogisticRegression(sigma=0.5, data_norm=2.0, intercept_scaling=1.0,
                                classes=[0, 1])

    def search(frame):
        return RandomStoppingSearch(_schema_pipeline(fil), {
            "fillogisticregression__alpha": [0.05, 0.5]}, mean_runs=2,
            random_state=0).fit(frame, y[order])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = search(shuffled)
        ref = search(shuffled.reset_index(drop=True))
    assert got.best_params_ == ref.best_params_
    np.testing.assert_array_equal(got.best_estimator_[-1].coef_,
                                  ref.best_estimator_[-1].coef_)


def test_report_subsamples_population_rows_of_a_frame_with_any_index():
    """Failed on the old code: the report's subsets of the population frame kept their
    labels, the schema turned them into NaN and BoundedScaler raised."""
    from sklearn_privacy.linear_model import DPLogisticRegression
    from sklearn_privacy.report import PrivacyReport

    X, y = _labelled(240)
    X = X.set_axis(np.random.default_rng(4).permutation(10_000)[:240], axis=0)
    model = DPLogisticRegression(epsilon=1.0, data_norm=1.5 * 2.0 ** 0.5,
                                 intercept_scaling=1.0, classes=[0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = _schema_pipeline(model).fit(X.iloc[:120], y[:120])
        report = PrivacyReport.from_estimator(pipe, X.iloc[:120], y[:120],
                                              X.iloc[120:], y[120:], n_canaries=0,
                                              canary_releases=0)
    assert "membership" in [section.key for section in report.sections]
    assert report.to_html()


def test_sparse_and_other_extension_columns_are_mapped_by_the_rules():
    """pandas sparse, period and interval columns, under a duplicated index."""
    frame = pd.DataFrame({
        "a": pd.arrays.SparseArray([0.0, 0.0, 3.0, np.nan]),
        "c": pd.arrays.SparseArray(["x", None, "y", "x"]),
        "p": pd.period_range("2020", periods=4),
        "iv": pd.IntervalIndex.from_breaks([0, 1, 2, 3, 4]),
    }).set_axis([1, 1, 2, 2])
    schema = PublicSchema({"a": (0, 10), "c": ["x", "y"], "p": (0, 1), "iv": ["x"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = schema.fit(frame).transform(frame)
    np.testing.assert_array_equal(out["a"], [0.0, 0.0, 3.0, 5.0])
    assert list(out["c"]) == ["x", "(unknown)", "y", "x"]
    np.testing.assert_array_equal(out["p"], [0.5] * 4)      # periods are not numbers
    assert list(out["iv"]) == ["(unknown)"] * 4


def test_a_list_of_rows_with_a_sequence_in_a_cell():
    """Failed on the old code: ``np.asarray`` of the rows raised on the ragged cell."""
    rows = [[1.0, "a"], [[1, 2], "b"], [np.array([3.0, 4.0]), ["a"]]]
    schema = PublicSchema({0: (0, 10), 1: ["a", "b"]}).fit(rows)
    out = schema.transform(rows)
    np.testing.assert_array_equal(out[:, 0], [1.0, 5.0, 5.0])
    assert list(out[:, 1]) == ["a", "b", "(unknown)"]
