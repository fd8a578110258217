"""IWPC warfarin dosing data (preprocessed table of Yeom et al. 2018, and the raw table)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from sklearn.utils import Bunch

from ..utils.fixes import validate_params
from ._base import frame_bunch, load_descr, read_gzip_csv

IWPC_FEATURES = (
    "age", "amiodarone", "cyp2c9=12", "cyp2c9=13", "cyp2c9=22", "cyp2c9=23", "cyp2c9=33",
    "decr", "height", "race=black", "race=white", "vkorc1=CT", "vkorc1=TT", "weight",
)
VKORC1_LEVELS = ("CC", "CT", "TT")


@lru_cache(maxsize=1)
def _preprocessed():
    rows = read_gzip_csv("iwpc_yeom2018_preprocessed.csv.gz")
    header, body = rows[0], rows[1:]
    if tuple(header[:14]) != IWPC_FEATURES or header[14] != "dose":
        raise ValueError("the bundled IWPC table does not have the expected columns")
    table = np.array(body, dtype=object)
    data = table[:, :14].astype(np.float64)
    dose = table[:, 14].astype(np.float64)
    genotype = table[:, 15].astype(str)
    return data, dose, genotype


@lru_cache(maxsize=1)
def _raw():
    rows = read_gzip_csv("iwpc.csv.gz")
    return rows[0], rows[1:]


_MAX_CATEGORIES = 100


def _typed_frame(pd, table, header):
    """The raw table with column dtypes: numbers numeric, short vocabularies categorical."""
    frame = pd.DataFrame(table, columns=header).replace("", np.nan)
    columns = {}
    for name in header:
        col = frame[name]
        present = col.notna()
        numbers = pd.to_numeric(col, errors="coerce")
        if numbers[present].notna().all():
            values = numbers.to_numpy(dtype=np.float64)
            complete = bool(present.all())
            integral = complete and np.all(values == np.round(values))
            columns[name] = values.astype(np.int64) if integral else values
            continue
        n_levels = col[present].nunique()
        if n_levels <= _MAX_CATEGORIES and n_levels < present.sum():
            columns[name] = pd.Categorical(col, categories=sorted(col[present].unique()))
        else:  # identifiers and free text stay strings
            columns[name] = col
    return pd.DataFrame(columns, index=frame.index)


@validate_params(
    {"raw": ["boolean"], "as_frame": ["boolean"], "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_iwpc(*, raw: bool = False, as_frame: bool = False,
              return_X_y: bool = False) -> Bunch | tuple:
    """Load the IWPC warfarin data set.

    By default this is the preprocessed table used by Yeom et al. (2018) and by the
    Fisher-information-loss paper: 4,819 patients, 14 features (one-hot encodings with the
    first level dropped, numeric columns standardised), and as target the standardised
    square root of the stable therapeutic dose. The attribute attacked in the paper is the
    VKORC1 genotype, encoded by the one-hot pair ``vkorc1=CT``, ``vkorc1=TT`` (``CC`` is the
    dropped level, both columns zero).

    Parameters
    ----------
    raw : bool, default=False
        Return the raw consortium table instead (6,256 rows, 68 columns, strings; missing
        values are empty strings, or NaN when ``as_frame=True``). With ``as_frame=True``
        the columns are typed: a column whose every present value is a number is
        ``float64`` (``int64`` when complete and integral, e.g. ``Project Site``); a
        column with at most 100 distinct values that repeat is ``category`` (sex, race,
        age band, genotypes, ...); identifiers and free text stay strings.
    as_frame : bool, default=False
        Return pandas objects (requires pandas).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of the Bunch, as scikit-learn's loaders do
        (preprocessed table only: the raw table has no target column).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Preprocessed: ``data`` (4819, 14), ``target``, ``feature_names``,
        ``attribute_columns`` (``[11, 12]``), ``attribute_levels`` (``["CC", "CT", "TT"]``),
        ``attribute_encoding`` (3, 2) one-hot row of each level, ``attribute`` (level index
        per patient), ``DESCR``. Raw: ``data`` (object array), ``feature_names``, ``DESCR``.
    (data, target) : tuple
        With ``return_X_y=True``: the Bunch's ``data`` and ``target``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.datasets import load_iwpc
    >>> iwpc = load_iwpc()
    >>> iwpc.data.shape, [iwpc.feature_names[j] for j in iwpc.attribute_columns]
    ((4819, 14), ['vkorc1=CT', 'vkorc1=TT'])
    >>> np.bincount(iwpc.attribute)  # CC, CT, TT
    array([1435, 1756, 1628])
    """
    if raw and return_X_y:
        raise ValueError(
            "return_X_y=True needs a target, and the raw IWPC table has none (the dose is "
            "one of its 68 columns, 'Therapeutic Dose of Warfarin'): call "
            "load_iwpc(raw=True) and select the columns, or load_iwpc(return_X_y=True).")
    if raw:
        header, body = _raw()
        width = len(header)
        table = np.array([row + [""] * (width - len(row)) for row in body], dtype=object)
        bunch = Bunch(data=table, feature_names=list(header), DESCR=load_descr("iwpc.rst"))
        if as_frame:
            from ._base import require_pandas

            pd = require_pandas("load_iwpc")
            bunch.data = bunch.frame = _typed_frame(pd, table, header)
        return bunch

    data, dose, genotype = _preprocessed()
    attribute = np.searchsorted(np.array(VKORC1_LEVELS), genotype)
    encoding = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    if not np.array_equal(encoding[attribute], data[:, [11, 12]]):
        raise ValueError("the bundled IWPC table has inconsistent VKORC1 columns")
    bunch = Bunch(
        data=data.copy(),
        target=dose.copy(),
        feature_names=list(IWPC_FEATURES),
        attribute_columns=[11, 12],
        attribute_levels=list(VKORC1_LEVELS),
        attribute_encoding=encoding,
        attribute=attribute,
        DESCR=load_descr("iwpc.rst"),
    )
    if as_frame:
        bunch = frame_bunch(bunch, "load_iwpc", "dose")
    return (bunch.data, bunch.target) if return_X_y else bunch
