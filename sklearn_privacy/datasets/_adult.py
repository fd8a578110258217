"""UCI Adult census income data."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
from sklearn.utils import Bunch

from ..utils.fixes import StrOptions, validate_params
from ._base import frame_bunch, load_descr, read_gzip_csv, require_pandas

# One naming everywhere: UCI's attribute names in snake_case. They are the columns of the
# raw table, the keys of ``categorical_columns``/``sensitive_features`` and the prefixes of
# the encoded feature names (``marital_status=Never-married``).
ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education_num", "marital_status",
    "occupation", "relationship", "race", "sex", "capital_gain", "capital_loss",
    "hours_per_week", "native_country",
)
_CATEGORICAL = (
    "workclass", "education", "marital_status", "occupation", "relationship", "race", "sex",
    "native_country",
)
_NUMERIC = ("age", "fnlwgt", "education_num", "capital_gain", "capital_loss", "hours_per_week")
_SENSITIVE = ("race", "sex", "marital_status")
_TARGET_NAMES = ("<=50K", ">50K")


@lru_cache(maxsize=1)
def _uci_tables():
    """Every row of both official files: (strings with ``?`` kept, label strings)."""
    splits = {}
    for split, name, skip in (("train", "adult.data.gz", 0), ("test", "adult.test.gz", 1)):
        rows = [r for r in read_gzip_csv(name, skip_initial=skip) if len(r) == 15]
        table = np.array(rows, dtype=object)
        labels = np.array([s.rstrip(".") for s in table[:, -1]])  # test labels end in "."
        splits[split] = (table[:, :-1], labels)
    return splits


@lru_cache(maxsize=1)
def _raw_adult():
    """Rows without missing values, for both official splits, as string arrays."""
    splits = {}
    for split, (table, labels) in _uci_tables().items():
        keep = ~np.any(table == "?", axis=1)
        splits[split] = (table[keep], (labels[keep] == ">50K").astype(np.int64))
    return splits


@lru_cache(maxsize=2)
def _encoded_adult(variant="full"):
    splits = _raw_adult()
    both = np.vstack([splits["train"][0], splits["test"][0]])
    numeric_idx = [ADULT_COLUMNS.index(c) for c in _NUMERIC]
    train_num = splits["train"][0][:, numeric_idx].astype(np.float64)
    mean, std = train_num.mean(axis=0), train_num.std(axis=0)
    fil = variant == "fil"
    categorical = [c for c in _CATEGORICAL if not (fil and c == "relationship")]

    feature_names: list[str] = list(_NUMERIC)
    categorical_columns: dict[str, list[int]] = {}
    levels = {}
    for col in categorical:
        j = ADULT_COLUMNS.index(col)
        levels[col] = np.array(sorted(set(both[:, j])))
        if fil and col == "marital_status":
            names = ["married"]
        elif fil:
            names = [f"{col}={lev}" for lev in levels[col][:-1]]  # last level dropped
        else:
            names = [f"{col}={lev}" for lev in levels[col]]
        start = len(feature_names)
        feature_names += names
        categorical_columns[col] = list(range(start, len(feature_names)))

    encoded = {}
    for split, (table, target) in splits.items():
        parts = [(table[:, numeric_idx].astype(np.float64) - mean) / std]
        for col in categorical:
            values = table[:, ADULT_COLUMNS.index(col)].astype(str)
            if fil and col == "marital_status":
                parts.append(np.char.startswith(values, "Married")[:, None].astype(float))
                continue
            onehot = np.eye(len(levels[col]))[np.searchsorted(levels[col], values)]
            parts.append(onehot[:, :-1] if fil else onehot)
        encoded[split] = (np.hstack(parts), target)
    return encoded, feature_names, categorical_columns


def _raw_strings(subset):
    tables = _uci_tables()
    names = ("train", "test") if subset == "all" else (subset,)
    table = np.vstack([tables[s][0] for s in names])
    labels = np.concatenate([tables[s][1] for s in names])
    split = np.concatenate([np.full(len(tables[s][1]), s) for s in names])
    return table, labels, split


def _raw_object_table(table):
    """Object array of the raw rows: numbers as int, ``?`` as NaN."""
    data = np.empty(table.shape, dtype=object)
    for j, col in enumerate(ADULT_COLUMNS):
        values = table[:, j]
        if col in _NUMERIC:
            data[:, j] = values.astype(np.int64).astype(object)
        else:
            data[:, j] = np.where(values == "?", np.nan, values)
    return data


@lru_cache(maxsize=1)
def _levels():
    """Sorted levels of every categorical column over both splits (``?`` excluded)."""
    both = np.vstack([t for t, _ in _uci_tables().values()])
    return {col: sorted(set(both[:, ADULT_COLUMNS.index(col)]) - {"?"})
            for col in _CATEGORICAL}


def _load_raw(subset, as_frame):
    table, target, split = _raw_strings(subset)
    data = _raw_object_table(table) if not as_frame else None
    index = {c: j for j, c in enumerate(ADULT_COLUMNS)}
    bunch = Bunch(
        data=data,
        target=target.astype(object),
        feature_names=list(ADULT_COLUMNS),
        target_names=list(_TARGET_NAMES),
        numeric_columns=[index[c] for c in _NUMERIC],
        categorical_columns={c: [index[c]] for c in _CATEGORICAL},
        sensitive_features={c: [index[c]] for c in _SENSITIVE},
        split=split,
        DESCR=load_descr("adult.rst"),
    )
    if as_frame:
        pd = require_pandas("load_adult")
        levels = _levels()
        columns = {}
        for j, col in enumerate(ADULT_COLUMNS):
            values = table[:, j].astype(str)
            if col in _NUMERIC:
                columns[col] = values.astype(np.int64)
                continue
            level_array = np.array(levels[col])
            codes = np.where(values == "?", -1, np.searchsorted(level_array, values))
            columns[col] = pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(levels[col]))
        frame_X = pd.DataFrame(columns)
        y_codes = np.searchsorted(np.array(_TARGET_NAMES), target.astype(str))
        y = pd.Series(pd.Categorical.from_codes(
            y_codes, dtype=pd.CategoricalDtype(list(_TARGET_NAMES))), name="income")
        bunch.data, bunch.target = frame_X, y
        bunch.frame = pd.concat([frame_X, y], axis=1)
    return bunch


@validate_params(
    {
        "subset": [StrOptions({"train", "test", "all"})],
        "variant": [StrOptions({"full", "fil"})],
        "raw": ["boolean"],
        "as_frame": ["boolean"],
        "return_X_y": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_adult(
    *,
    subset: Literal["train", "test", "all"] = "train",
    variant: Literal["full", "fil"] = "full",
    raw: bool = False,
    as_frame: bool = False,
    return_X_y: bool = False,
) -> Bunch | tuple:
    """Load the UCI Adult census income data (binary task: income above 50K).

    Rows with a missing value (``?``) are dropped, which leaves 30,162 rows in the
    official training split and 15,060 in the test split. The six numeric columns are
    standardised with the mean and standard deviation of the training split (for every
    subset, so train and test share one scale); the eight categorical columns are one-hot
    encoded with every level kept (levels are those present in either split).

    ``variant="fil"`` gives the encoding of the Fisher-information-loss paper (after
    Mehnaz et al., 2020): marital status reduced to one binary ``married`` column (levels
    starting with "Married"), the relationship column removed, and every one-hot block
    without its last level (86 columns).

    ``raw=True`` gives the UCI table itself, for pipelines that do their own encoding:
    every row of the official files (32,561 training and 16,281 test rows; rows with
    missing values are *kept*, the missing entries of ``workclass``, ``occupation`` and
    ``native_country`` are NaN), the 14 attributes unencoded and unscaled, strings
    stripped, and the test labels without their trailing dot. Drop the incomplete rows
    with ``data.dropna()`` to get the rows of the encoded variant.

    Column names follow one convention everywhere: UCI's attribute names in snake_case
    (``marital_status``, ``native_country``, ``hours_per_week``). They are the raw
    columns, the keys of ``categorical_columns`` and ``sensitive_features``, and the
    prefixes of the encoded feature names (``marital_status=Never-married``).

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which official split to return; ``"all"`` stacks train then test.
    variant : {"full", "fil"}, default="full"
        ``"full"``: every level of every categorical column (104 columns); ``"fil"``: the
        FIL paper's encoding described above.
    raw : bool, default=False
        Return the raw UCI table described above instead of the encoded one. Only with
        ``variant="full"``.
    as_frame : bool, default=False
        Return ``data`` as a pandas DataFrame and ``target`` as a Series, plus ``frame``
        (requires pandas). Raw: numeric columns ``int64``, categorical columns
        ``category`` (levels of both splits, sorted, so train and test agree; missing
        entries NaN), ``target`` a ``category`` Series ``income`` with levels
        ``["<=50K", ">50K"]``.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch, as scikit-learn's loaders do
        (arrays, or a DataFrame and a Series with ``as_frame=True``).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n_samples, 104 or 86) float array, ``target`` int array (1 = income >50K),
        ``feature_names``, ``numeric_columns`` (indices), ``categorical_columns`` (dict from
        column name to the indices of its one-hot block), ``sensitive_features`` (the blocks of
        ``race``, ``sex`` and ``marital_status``), ``split`` (``"train"``/``"test"`` per row)
        and ``DESCR``. Raw: ``data`` (n_samples, 14) object array (numbers as ``int``,
        missing entries NaN) or DataFrame, ``target`` the label strings ``"<=50K"`` /
        ``">50K"``, and the same keys, ``categorical_columns`` and ``sensitive_features``
        mapping each name to its one column index.
    (data, target) : tuple
        With ``return_X_y=True``: the Bunch's ``data`` and ``target``.

    Raises
    ------
    ValueError
        If ``raw=True`` is combined with ``variant="fil"`` (an encoding).

    Examples
    --------
    >>> from sklearn_privacy.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape, round(float(adult.target.mean()), 3)
    ((30162, 104), 0.249)
    >>> [adult.feature_names[j] for j in adult.sensitive_features["sex"]]
    ['sex=Female', 'sex=Male']
    >>> fil = load_adult(variant="fil")
    >>> fil.data.shape, [fil.feature_names[j] for j in fil.sensitive_features["marital_status"]]
    ((30162, 86), ['married'])
    >>> raw = load_adult(raw=True, as_frame=True)
    >>> raw.data.shape, str(raw.data["race"].dtype), int(raw.data["occupation"].isna().sum())
    ((32561, 14), 'category', 1843)
    >>> raw.data.dropna().shape
    (30162, 14)
    """
    if raw:
        if variant != "full":
            raise ValueError(
                f"variant={variant!r} is an encoding and raw=True returns the unencoded "
                "table; call load_adult(raw=True) without variant, or raw=False."
            )
        bunch = _load_raw(subset, as_frame)
        return (bunch.data, bunch.target) if return_X_y else bunch
    encoded, feature_names, categorical_columns = _encoded_adult(variant)
    names = ("train", "test") if subset == "all" else (subset,)
    data = np.vstack([encoded[s][0] for s in names])
    target = np.concatenate([encoded[s][1] for s in names])
    split = np.concatenate([np.full(len(encoded[s][1]), s) for s in names])
    bunch = Bunch(
        data=data,
        target=target,
        feature_names=list(feature_names),
        target_names=["<=50K", ">50K"],
        numeric_columns=list(range(len(_NUMERIC))),
        categorical_columns={k: list(v) for k, v in categorical_columns.items()},
        sensitive_features={
            k: list(categorical_columns[k]) for k in _SENSITIVE
        },
        split=split,
        DESCR=load_descr("adult.rst"),
    )
    if as_frame:
        bunch = frame_bunch(bunch, "load_adult", "income>50K")
    return (bunch.data, bunch.target) if return_X_y else bunch
