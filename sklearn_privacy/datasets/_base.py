"""File access shared by the loaders: bundled files, CSV parsing, optional pandas output."""

from __future__ import annotations

import csv
import gzip
import io
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

_DATA_PACKAGE = "sklearn_privacy.datasets"


def data_path(name: str):
    """Return a traversable handle on a bundled data file."""
    return resources.files(_DATA_PACKAGE).joinpath("data", name)


def read_gzip_csv(name: str, *, skip_initial: int = 0) -> list[list[str]]:
    """Parse a bundled gzip CSV file into rows of stripped strings (blank lines dropped)."""
    with data_path(name).open("rb") as raw, gzip.open(raw, "rt", newline="") as text:
        for _ in range(skip_initial):
            text.readline()
        reader = csv.reader(text, skipinitialspace=True)
        return [[cell.strip() for cell in row] for row in reader if row]


def read_gzip_bytes(name: str) -> bytes:
    with data_path(name).open("rb") as raw:
        return gzip.decompress(raw.read())


def load_descr(name: str) -> str:
    return resources.files(_DATA_PACKAGE).joinpath("descr", name).read_text(encoding="utf-8")


def require_pandas(caller: str):
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{caller}(as_frame=True) needs pandas; install it with `pip install pandas` "
            "or call it with as_frame=False."
        ) from exc
    return pd


def frame_bunch(bunch: Bunch, caller: str, target_name: str) -> Bunch:
    """Replace ``data``/``target`` by a DataFrame/Series and add ``frame`` (both joined)."""
    pd = require_pandas(caller)
    data = pd.DataFrame(bunch.data, columns=list(bunch.feature_names))
    target = pd.Series(bunch.target, name=target_name)
    bunch.frame = pd.concat([data, target], axis=1)
    bunch.data, bunch.target = data, target
    return bunch


def parse_float_table(payload: bytes, n_columns: int) -> np.ndarray:
    """Fast parse of a numeric CSV without header."""
    table = np.loadtxt(io.BytesIO(payload), delimiter=",", dtype=np.float64)
    if table.ndim != 2 or table.shape[1] != n_columns:
        raise ValueError(f"unexpected table shape {table.shape}, expected {n_columns} columns")
    return table
