"""UCI Adult census income data."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from ._base import frame_bunch, load_descr, read_gzip_csv

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country",
)
_CATEGORICAL = (
    "workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
    "native-country",
)
_NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


@lru_cache(maxsize=1)
def _raw_adult():
    """Rows without missing values, for both official splits, as string arrays."""
    splits = {}
    for split, name, skip in (("train", "adult.data.gz", 0), ("test", "adult.test.gz", 1)):
        rows = [r for r in read_gzip_csv(name, skip_initial=skip) if len(r) == 15]
        table = np.array(rows, dtype=object)
        keep = ~np.any(table == "?", axis=1)
        table = table[keep]
        labels = np.array([s.rstrip(".") for s in table[:, -1]])
        splits[split] = (table[:, :-1], (labels == ">50K").astype(np.int64))
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
        if fil and col == "marital-status":
            names = ["married"]
        elif fil:
            names = [f"{col}={lev}" for lev in levels[col][:-1]]  # last level dropped
        else:
            names = [f"{col}={lev}" for lev in levels[col]]
        start = len(feature_names)
        feature_names += names
        categorical_columns[col.replace("-", "_")] = list(range(start, len(feature_names)))

    encoded = {}
    for split, (table, target) in splits.items():
        parts = [(table[:, numeric_idx].astype(np.float64) - mean) / std]
        for col in categorical:
            values = table[:, ADULT_COLUMNS.index(col)].astype(str)
            if fil and col == "marital-status":
                parts.append(np.char.startswith(values, "Married")[:, None].astype(float))
                continue
            onehot = np.eye(len(levels[col]))[np.searchsorted(levels[col], values)]
            parts.append(onehot[:, :-1] if fil else onehot)
        encoded[split] = (np.hstack(parts), target)
    return encoded, feature_names, categorical_columns


@validate_params(
    {
        "subset": [StrOptions({"train", "test", "all"})],
        "variant": [StrOptions({"full", "fil"})],
        "as_frame": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_adult(
    *,
    subset: Literal["train", "test", "all"] = "train",
    variant: Literal["full", "fil"] = "full",
    as_frame: bool = False,
) -> Bunch:
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

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which official split to return; ``"all"`` stacks train then test.
    variant : {"full", "fil"}, default="full"
        ``"full"``: every level of every categorical column (104 columns); ``"fil"``: the
        FIL paper's encoding described above.
    as_frame : bool, default=False
        Return ``data`` as a pandas DataFrame and ``target`` as a Series, plus ``frame``
        (requires pandas).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n_samples, 104 or 86) float array, ``target`` int array (1 = income >50K),
        ``feature_names``, ``numeric_columns`` (indices), ``categorical_columns`` (dict from
        column name to the indices of its one-hot block), ``sensitive_columns`` (the blocks of
        ``race``, ``sex`` and ``marital_status``), ``split`` (``"train"``/``"test"`` per row)
        and ``DESCR``.

    Examples
    --------
    >>> from sklearn_privacy.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape, round(float(adult.target.mean()), 3)
    ((30162, 104), 0.249)
    >>> [adult.feature_names[j] for j in adult.sensitive_columns["sex"]]
    ['sex=Female', 'sex=Male']
    >>> fil = load_adult(variant="fil")
    >>> fil.data.shape, [fil.feature_names[j] for j in fil.sensitive_columns["marital_status"]]
    ((30162, 86), ['married'])
    """
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
        sensitive_columns={
            k: list(categorical_columns[k]) for k in ("race", "sex", "marital_status")
        },
        split=split,
        DESCR=load_descr("adult.rst"),
    )
    if as_frame:
        bunch = frame_bunch(bunch, "load_adult", "income>50K")
    return bunch
