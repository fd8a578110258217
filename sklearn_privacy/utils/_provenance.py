"""How a fitted estimator was fitted: recorded at ``fit``, kept by pickles and stripping.

Every estimator of the package that draws noise calls :func:`record_fit_provenance` in
its ``fit`` (one line, before ``return self``), which sets ``fit_provenance_``, a
:class:`FitProvenance` recording three facts a privacy claim depends on and that the
estimator's parameters no longer show once the object is copied, stripped or pickled:

* where the noise came from (``random_state=None``: fresh OS entropy; an int seed or a
  shared generator: reproducible noise, hence no privacy), read from the parameters *at
  fit*, so that :func:`~sklearn_privacy.utils.strip_for_release` setting
  ``random_state=None`` afterwards does not make a seeded release look private;
* whether the fit ran inside a selection on the same rows (a scikit-learn search or
  cross-validation, or the package's own private selection): a hyperparameter chosen by
  scores on the private rows is not covered by the estimator's own claim;
* whether the solver's output passed its certificate (FIL estimators, objective
  perturbation).

The record fails closed: it names the class it was recorded for (``owner``) and carries
a digest of the values the object released at fit (``release``, the attributes its
class declares ``"dp"``). :func:`provenance_problem` says why a record cannot vouch for
an object -- missing (deleted, or a subclass whose ``fit`` never records it), replaced by
something else, recorded for another class, or recorded for another release (copied from
another fit, or the released values changed after the fit) -- and
:func:`~sklearn_privacy.privacy_claim` then makes the object's claim ``inf`` with that
reason.
"""

from __future__ import annotations

import hashlib
import math
import sys
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from .fixes import CV_MODULES, search_cv_base

__all__ = ["FitProvenance", "provenance_problem", "record_fit_provenance",
           "selection_context"]

#: Values of :attr:`FitProvenance.noise`.
NOISE_KINDS = ("os_entropy", "seed", "shared_generator", "none")

#: Modules of scikit-learn whose functions fit estimators on folds of the rows they are
#: given (cross_validate, cross_val_score, validation/learning curves, the searches'
#: ``_fit_and_score``).
_CV_MODULES = CV_MODULES


@dataclass(frozen=True, slots=True)
class FitProvenance:
    """What ``fit`` recorded about the randomness and the selection of a release.

    Parameters
    ----------
    noise : {"os_entropy", "seed", "shared_generator", "none"}
        ``random_state`` at fit: ``None`` (fresh OS entropy), an int (a seed anyone can
        try), a ``RandomState``/``Generator`` instance (state shared with clones and
        stored with the model), or ``"none"`` when the estimator has no
        ``random_state`` (it draws no noise).
    selected_by : str or None
        The selection the fit ran inside (``"GridSearchCV"``, ``"cross-validation
        (cross_validate)"``, ``"RandomStoppingSearch"``, ...) or ``None``.
    certificate : bool or None
        Whether the released centre was certified close to the exact minimiser (FIL
        estimators in their DP view); ``None`` when no certificate applies.
    owner : str or None
        ``module.qualname`` of the class of the object the record was made for.
    release : tuple or None
        ``((attribute, digest), ...)`` of the values the object released at fit (its
        attributes declared ``"dp"``): a function of the released values only
        (post-processing of the DP output). Not compared by ``==``: two releases of the
        same fit differ in it only through their noise.

    Examples
    --------
    >>> from sklearn_privacy.utils._provenance import FitProvenance
    >>> FitProvenance("seed", None, True).is_seeded
    True
    """

    noise: str
    selected_by: str | None = None
    certificate: bool | None = None
    owner: str | None = None
    release: tuple | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.noise not in NOISE_KINDS:
            raise ValueError(f"FitProvenance.noise must be one of {NOISE_KINDS}; got "
                             f"{self.noise!r}.")

    @property
    def is_seeded(self) -> bool:
        """Whether the noise is reproducible (a seed or a shared generator)."""
        return self.noise in ("seed", "shared_generator")


def _noise_kind(estimator) -> str:
    try:
        params = estimator.get_params(deep=False)
    except Exception:  # noqa: BLE001 - any object without scikit-learn parameters
        return "none"
    if "random_state" not in params:
        return "none"
    rs = params["random_state"]
    if rs is None:
        return "os_entropy"
    if isinstance(rs, Integral) and not isinstance(rs, bool):
        return "seed"
    return "shared_generator"


def selection_context(skip: int = 1, owner=None) -> str | None:
    """The selection on the rows the current ``fit`` runs inside, found on the call stack.

    A frame whose ``self`` is a scikit-learn search (``BaseSearchCV``) or an estimator
    whose class sets ``_selects_on_rows = True`` (the package's private selection), or a
    frame of scikit-learn's cross-validation functions; frames of ``owner`` itself (the
    estimator being fitted) do not count.
    """
    BaseSearchCV = search_cv_base()
    frame = sys._getframe(skip + 1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module in _CV_MODULES:
            return f"cross-validation ({frame.f_code.co_name})"
        this = frame.f_locals.get("self") if "self" in frame.f_code.co_varnames else None
        if this is not None and this is not owner:
            if isinstance(this, BaseSearchCV):
                return type(this).__name__
            if getattr(type(this), "_selects_on_rows", False):
                return type(this).__name__
        frame = frame.f_back
    return None


def _certificate(estimator) -> bool | None:
    sens = estimator.__dict__.get("sensitivity_")
    distance = estimator.__dict__.get("certified_distance_")
    if sens is None or distance is None:
        return None
    try:
        if not math.isfinite(float(sens)):
            return None
        return bool(math.isfinite(float(distance)))
    except (TypeError, ValueError):
        return None


def _class_path(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _feed(h, value, depth=0) -> None:
    """Feed a released value into the digest ``h`` (estimators inside are skipped: each
    carries its own record)."""
    if depth > 6:
        return
    if isinstance(value, np.ndarray):
        h.update(f"a{value.dtype.str}{value.shape}".encode())
        if value.dtype != object:
            h.update(np.ascontiguousarray(value).tobytes())
        else:
            for v in value.ravel():
                _feed(h, v, depth + 1)
    elif isinstance(value, bool | np.bool_ | Real | np.number):
        h.update(f"n{value!r}".encode())
    elif isinstance(value, str | bytes):
        h.update(b"s" + (value.encode() if isinstance(value, str) else value))
    elif isinstance(value, list | tuple):
        h.update(f"l{len(value)}".encode())
        for v in value:
            _feed(h, v, depth + 1)
    elif isinstance(value, dict):
        h.update(f"d{len(value)}".encode())
        for k in sorted(value, key=repr):
            _feed(h, repr(k), depth + 1)
            _feed(h, value[k], depth + 1)
    elif value is None:
        h.update(b"0")
    elif hasattr(value, "get_params"):
        h.update(b"e")
    else:
        h.update(f"o{type(value).__name__}".encode())


def release_digest(estimator) -> tuple | None:
    """``((attribute, digest), ...)`` of the attributes ``estimator``'s class declares
    ``"dp"`` and holds (None without a declaration)."""
    declare = getattr(estimator, "__sklearn_privacy_attributes__", None)
    if declare is None:
        return None
    try:
        kinds = declare()
    except Exception:  # noqa: BLE001 - a declaration that needs more state
        return None
    state = getattr(estimator, "__dict__", {})
    out = []
    for key in sorted(k for k, kind in kinds.items() if kind == "dp" and k in state):
        h = hashlib.blake2b(digest_size=12)
        _feed(h, state[key])
        out.append((key, h.hexdigest()))
    return tuple(out)


def _same_release(recorded, now) -> bool:
    """Every released attribute held both at fit and now has the value it had at fit (an
    attribute removed since, e.g. by ``strip_for_release``, is less output, not other)."""
    if now is None:
        return False
    now = dict(now)
    return all(now[k] == v for k, v in recorded if k in now)


def provenance_problem(estimator) -> str | None:
    """Why ``estimator.fit_provenance_`` cannot vouch for ``estimator`` (None: it can).

    Parameters
    ----------
    estimator : fitted estimator

    Returns
    -------
    problem : str or None
        A sentence naming the problem and the fix, or None when the record is a
        :class:`FitProvenance` made for this class and this release (or when no record
        is expected and none is present).
    """
    name = type(estimator).__name__
    prov = getattr(estimator, "__dict__", {}).get("fit_provenance_")
    if prov is None:
        if not getattr(type(estimator), "_records_fit_provenance", False):
            return None
        return (f"{name} has no fit_provenance_ (deleted, or a subclass whose fit never "
                "records it): how it was fitted -- the noise source, a selection on the "
                "rows, the certificate -- is unknown, so no claim can be made; refit it "
                "with the fit of its class (which records it) and publish it unchanged")
    if not isinstance(prov, FitProvenance):
        return (f"{name}.fit_provenance_ was replaced by a {type(prov).__name__}: only the "
                "record made by its own fit can vouch for how it was fitted; refit it")
    if prov.owner is not None and prov.owner != _class_path(type(estimator)):
        return (f"{name}.fit_provenance_ was recorded for a {prov.owner.rsplit('.', 1)[-1]}, "
                "not for this object (a foreign record); refit it")
    if prov.release is not None and not _same_release(prov.release, release_digest(estimator)):
        return (f"{name}.fit_provenance_ was recorded for another release: its released "
                "values differ from those recorded at fit (a record copied from another "
                "fit, or values changed after the fit); refit it and publish it unchanged")
    if prov.owner is None and getattr(type(estimator), "_records_fit_provenance", False):
        return (f"{name}.fit_provenance_ names no owner (made by hand, not by fit); "
                "refit it")
    return None


def record_fit_provenance(estimator, certificate=None) -> None:
    """Set ``estimator.fit_provenance_``; call it from ``fit``, once the fit is done.

    Reads the parameters (``random_state``), the call stack (a selection on the rows
    that runs this ``fit``) and the certificate attributes (``sensitivity_``,
    ``certified_distance_``) when the estimator has them, or ``certificate`` when the
    estimator states its certificate's outcome itself (a bool). Adds no frame to the
    ``fit`` call chain, so the stack levels of the fit's warnings are unchanged.
    """
    if certificate is None:
        certificate = _certificate(estimator)
    estimator.fit_provenance_ = FitProvenance(
        _noise_kind(estimator), selection_context(skip=1, owner=estimator),
        None if certificate is None else bool(certificate),
        _class_path(type(estimator)), release_digest(estimator))
