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
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from numbers import Integral

from .fixes import CV_MODULES, search_cv_base

__all__ = ["FitProvenance", "record_fit_provenance", "selection_context"]

#: Values of :attr:`FitProvenance.noise`.
NOISE_KINDS = ("os_entropy", "seed", "shared_generator", "none")

#: Modules of scikit-learn whose functions fit estimators on folds of the rows they are
#: given (cross_validate, cross_val_score, validation/learning curves, the searches'
#: ``_fit_and_score``).
_CV_MODULES = CV_MODULES


@dataclass(frozen=True)
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

    Examples
    --------
    >>> from sklearn_privacy.utils._provenance import FitProvenance
    >>> FitProvenance("seed", None, True).is_seeded
    True
    """

    noise: str
    selected_by: str | None = None
    certificate: bool | None = None

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
        None if certificate is None else bool(certificate))
