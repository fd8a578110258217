"""Input validation whose errors name the argument at fault."""

from __future__ import annotations

import re
from contextlib import contextmanager

from sklearn.base import BaseEstimator
from sklearn.utils.validation import validate_data

__all__ = ["check_flag", "errors_name", "validate_named"]


def _prefixed(exc: Exception, param: str) -> Exception:
    msg = str(exc)
    if re.search(rf"(?<![A-Za-z_]){re.escape(param)}(?![A-Za-z_])", msg):
        return exc
    try:
        new = type(exc)(f"{param}: {msg}")
    except Exception:  # an exception class with another signature
        new = (TypeError if isinstance(exc, TypeError) else ValueError)(f"{param}: {msg}")
    return new


@contextmanager
def errors_name(param: str):
    """Re-raise a ``ValueError``/``TypeError`` with ``param`` in its message.

    scikit-learn's and numpy's validation messages ("could not convert string to float",
    "Complex data not supported", "Found array with dim 3") do not say which argument
    they are about; inside this context they are prefixed with ``param``.
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        new = _prefixed(exc, param)
        if new is exc:
            raise
        raise new from exc


class _XProbe(BaseEstimator):
    """A bare estimator on which ``X`` is validated alone (see :func:`validate_named`)."""


def validate_named(estimator, X, y="no_validation", **kwargs):
    """:func:`sklearn.utils.validation.validate_data` whose errors name ``X`` or ``y``.

    When validating ``X`` and ``y`` together fails with a message naming neither, ``X``
    is checked alone to find the culprit, and the message is prefixed with its name.
    """
    try:
        return validate_data(estimator, X, y, **kwargs)
    except (ValueError, TypeError) as exc:
        culprit = "X"
        if not (isinstance(y, str) and y == "no_validation") and y is not None:
            try:
                # X alone, column names included (mixed int/str names fail there, not
                # in check_array), on a probe so the estimator gets no fitted attribute
                validate_data(_XProbe(), X, reset=True,
                              accept_sparse=kwargs.get("accept_sparse", False),
                              dtype=kwargs.get("dtype", "numeric"))
            except (ValueError, TypeError):
                culprit = "X"
            else:
                culprit = "y"
        new = _prefixed(exc, culprit)
        if new is exc:
            raise
        raise new from exc


def check_flag(value, name, *, allow_none=False):
    """``value`` as a bool, or a TypeError naming ``name`` (``"yes"``, ``1`` and ``None``
    are not flags: a truthy string would silently select the other branch)."""
    import numpy as np

    if allow_none and value is None:
        return None
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False{' or None' if allow_none else ''}; "
                        f"got {value!r}.")
    return bool(value)


def encode_declared_labels(declared, y):
    """``(classes, indices)``: ``y`` against a declared label set, never printing a label.

    ``classes`` is the sorted declared set (at least 2 distinct labels); ``indices`` gives
    each row's position in it. A row may hold any declared label and a declared label may
    have no row; a label outside the set is refused without showing its value (a label can
    identify a row).
    """
    import numpy as np

    classes = _declared_classes(declared)
    match = np.asarray(y).ravel()[:, None] == classes[None, :]
    if not np.all(match.any(axis=1)):
        raise ValueError(
            "y holds labels outside the declared classes (the values are not shown: a "
            "label can identify a row); map them to a declared label or drop those rows "
            "before fitting.")
    return classes, np.argmax(match, axis=1)


#: Name of the private channel of the number of rows whose label is outside the declared
#: classes: an in-memory attribute of the fitted estimator, left out of every pickle
#: (``__getstate__``) and of :func:`~sklearn_privacy.utils.strip_for_release`'s output.
OUTSIDE_LABELS_STATE = "_labels_outside_classes"


def _label_matches(values, classes):
    """``(n, K)`` booleans: ``values[i] == classes[k]``, never raising on exotic values
    (``None``, ``pd.NA``, NaN, arrays inside an object column are equal to no label)."""
    import warnings

    import numpy as np

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            match = values[:, None] == classes[None, :]
            if isinstance(match, np.ndarray) and match.dtype == bool \
                    and match.shape == (values.size, classes.size):
                return match
        except Exception:  # noqa: BLE001 -- any comparison failure means "no match"
            pass

        def equal(v, c):
            try:
                r = v == c
                return bool(r) if isinstance(r, (bool, np.bool_)) else False
            except Exception:  # noqa: BLE001
                return False

        return np.array([[equal(v, c) for c in classes] for v in values.tolist()],
                        dtype=bool).reshape(values.size, classes.size)


def void_outside_labels(estimator, declared, y):
    """``(y', known)``: every label outside ``declared`` replaced, and which rows kept theirs.

    The declared, data-independent rule of a DP classifier with ``classes=``: a row whose
    label is outside the declared classes stays in the data set (``n`` is unchanged) and
    contributes nothing to what is released; the number of such rows goes to the private
    channel ``estimator._labels_outside_classes`` (never pickled), without a warning. The
    caller makes the row contribute nothing (for a linear model: its features become
    zeros, where the loss of any label is a constant of the parameters). ``y'`` holds a
    declared label (the first, sorted) in those rows, so no label value -- a new one,
    ``NaN``, ``None``, a float among integers -- makes validation fail; ``known`` is
    ``None`` when every row holds a declared label (``y`` is then returned unchanged).
    Only a 1-D ``y`` (or one column) is read: other shapes are left to the caller's
    validation, whose refusals depend on the shape alone.
    """
    import numpy as np

    estimator.__dict__[OUTSIDE_LABELS_STATE] = 0
    classes = _declared_classes(declared)
    try:
        values = np.asarray(y)
    except Exception:  # noqa: BLE001 -- ragged input: left to the validation
        return y, None
    if values.ndim == 2 and values.shape[1] == 1:
        flat = values[:, 0]
    elif values.ndim == 1:
        flat = values
    else:
        return y, None
    match = _label_matches(flat, classes)
    known = match.any(axis=1)
    if known.all():
        return y, None
    estimator.__dict__[OUTSIDE_LABELS_STATE] = int(np.count_nonzero(~known))
    mapped = classes[np.argmax(match, axis=1)]   # the first declared label where none
    return mapped.reshape(values.shape), known


def zero_rows(X, rows):
    """``X`` with the rows of the boolean mask ``rows`` set to zero (dense in place on a
    private copy; sparse as a new matrix of the same format)."""
    import numpy as np
    import scipy.sparse as sp

    if rows is None or not np.any(rows):
        return X
    if sp.issparse(X):
        keep = sp.diags((~np.asarray(rows)).astype(X.dtype))
        return (keep @ X).asformat(X.format)
    X[np.asarray(rows)] = 0.0
    return X


def _declared_classes(declared):
    import numpy as np

    declared = np.asarray(declared)
    classes = np.unique(declared)
    if declared.ndim != 1 or classes.size < 2 or classes.size != declared.size:
        raise ValueError(f"classes must list at least 2 distinct labels; got "
                         f"{declared.size} label(s), {classes.size} distinct.")
    return classes


def label_set_sentence(estimator):
    """The sentence a classifier's claim adds about its label set (``""`` without one)."""
    if not hasattr(estimator, "classes_"):
        return ""
    if getattr(estimator, "classes", None) is not None:
        return " The label set classes_ is the declared classes parameter."
    return (" The label set classes_ was found in y (not declared): see the attribute check "
            "of privacy_claim.")


def positional_rows(rows, param="rows", X=None):
    """``rows`` with a boolean pandas Series turned into a mask in the training order.

    Row selections are positions in the training data. A pandas boolean Series carries
    its own index, and ``np.asarray`` would read it by position even when that index is
    not the training rows' order (a mask sorted, filtered or built on another frame).
    When the training frame ``X`` is given and the Series' index holds exactly its
    labels, the mask is aligned on ``X.index`` (label alignment, as in pandas, even for
    a Series indexed 0..n-1); otherwise a Series indexed 0..n-1 is read by position and
    any other index is refused. Integer Series are read by value, as positions.
    """
    import numpy as np

    if not hasattr(rows, "index") or not hasattr(rows, "dtype") or getattr(
            rows, "ndim", 1) != 1 or rows.dtype != bool:
        return rows
    index = rows.index
    n = len(index)
    if X is not None and hasattr(X, "index") and len(X.index) == n \
            and index.is_unique and X.index.is_unique and index.isin(X.index).all():
        return np.asarray(rows.reindex(X.index), dtype=bool)
    if np.array_equal(np.asarray(index), np.arange(n)):
        return np.asarray(rows, dtype=bool)
    raise ValueError(
        f"{param}: a boolean pandas Series is a mask over the training rows by position, "
        "but this one's index is not 0..n-1 in order, so its entries may not line up "
        f"with the rows (first labels {list(index[:3])}). Align it on the training "
        f"frame first ({param}=mask.reindex(X_train.index)) or pass mask.to_numpy() if "
        "it is already in the training order.")
