"""The audit methods of the FIL estimators: ``eta_``, ``eta``, ``fisher_information``,
``sigma_for_eta``.

They read the audit state a fit leaves in memory (the ``FILEngine`` of the training rows
and the exact minimiser), which is never serialised (see ``_base``).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..exceptions import AuditStateUnavailableError
from ..utils import resolve_columns
from ..utils._columns import check_derived_block, derived_columns
from ..utils._validation import check_flag
from ._eta._engine import FILEngine, check_sigma_scaled


class FILAuditMixin:
    """Fisher information loss of a fitted FIL estimator's training values.

    Mixed into :class:`~sklearn_privacy.fil._base.BaseFILEstimator`; the methods need the
    audit state of a fit in this session.
    """

    def _audit_engine(self) -> FILEngine:
        check_is_fitted(self)
        engine = self.__dict__.get("_audit")
        if engine is None:
            raise AuditStateUnavailableError(
                f"{type(self).__name__} was loaded from a pickle/joblib dump (or copied "
                "through one). Dumps hold only the released, noise-perturbed parameters: "
                "the training data, the exact minimiser and the Hessian needed for eta_ "
                "and fisher_information are deliberately never serialised. Audit it again "
                "from its training rows: sklearn_privacy.fil.audit(model, X, y) returns it "
                "with eta_ (or refit it)."
            )
        return engine

    def _audit_sigma(self) -> float:
        """The sigma of the released model (a later ``set_params`` without refit does not
        change what was released, so it must not change the reported eta)."""
        return self.__dict__.get("_sigma_fit", self.sigma)

    def _resolve_columns(self, columns, param="columns", X=None):
        """Names of ``feature_names_in_`` / indices / mask -> int indices (order kept).

        With a penalised intercept (``intercept_scaling``) the engine's column ``d`` is the
        constant column, so the label moves to index ``d + 1`` and ``None`` (every feature
        and the label) skips the constant.
        """
        d = self.n_features_in_
        if columns is None:
            return np.r_[np.arange(d), d + 1] if self._penalised_intercept() else None
        cols = self._resolve_named_columns(columns, param=param, X=X)
        return np.where(cols == d, d + 1, cols) if self._penalised_intercept() else cols

    def _resolve_named_columns(self, columns, param="columns", X=None):
        """Names of ``feature_names_in_`` / indices / mask -> int indices (order kept).

        A name that is not a column but an original feature behind a ColumnTransformer
        with pandas output (``"sex"`` for ``"cat__sex_Female"``, ``"cat__sex_Male"``)
        resolves to its derived columns when their training values (``X``, else the audit
        data) are that feature's encoding; see ``utils._columns.derived_columns``.
        """
        if columns is None:
            return None
        d = self.n_features_in_
        names = getattr(self, "feature_names_in_", None)
        try:
            return resolve_columns(columns, d, names, label=True, param=param)
        except ValueError as exc:
            if isinstance(columns, str):
                items = [columns]
            elif isinstance(columns, (list, tuple, np.ndarray)) and all(
                    isinstance(c, (str, Integral)) and not isinstance(c, (bool, np.bool_))
                    for c in columns):
                items = list(columns)
            else:
                raise
            unknown = [c for c in items if isinstance(c, str) and c != "label"
                       and (names is None or c not in list(names))]
            if not unknown:
                raise
            if names is None and param == "sensitive_features":
                raise ValueError(
                    f"sensitive_features: got the name {unknown[0]!r}, but {type(self).__name__} "
                    "received X without column names (no feature_names_in_). Inside a "
                    "Pipeline the preceding step returns an array even when the pipeline is "
                    "fitted on a DataFrame: call "
                    "pipe.set_output(transform='pandas') before fitting, so that the "
                    f"encoded columns (e.g. 'onehotencoder__{unknown[0]}_...') reach this "
                    f"step and {unknown[0]!r} resolves to them; or pass their indices in the "
                    "preprocessing's output (sklearn_privacy.utils.feature_columns of the "
                    "fitted preprocessing gives them)."
                ) from None
            if names is None:
                raise ValueError(
                    f"{param}: got the name {unknown[0]!r}, but {type(self).__name__} was "
                    "fitted on data without column names (no feature_names_in_). Inside a "
                    "Pipeline the preceding step returns an array even when the pipeline "
                    "was fitted on a DataFrame: use the pipeline-level functions "
                    "sklearn_privacy.fil.eta / fisher_information / sigma_for_eta(pipe, "
                    f"..., columns={unknown[0]!r}), or call "
                    "pipe.set_output(transform='pandas') before fitting so that column "
                    "names reach this step, or pass integer indices."
                ) from None
            out = []
            for item in items:
                if not (isinstance(item, str) and item in unknown):
                    out.extend(resolve_columns(item, d, names, label=True, param=param))
                    continue
                idx = derived_columns(item, names)
                if not idx.size:
                    raise exc from None
                block = (X[:, idx] if X is not None else
                         self._audit_engine().dense_columns(idx))
                if sp.issparse(block):
                    block = block.toarray()
                check_derived_block(item, [str(names[k]) for k in idx], block, param)
                out.extend(idx.tolist())
            idx = np.asarray(out, dtype=np.int64)
            if np.unique(idx).size != idx.size:
                raise ValueError(f"{param} contains duplicate columns: {items}.") from None
            return idx

    def _scaled(self, norms, what):
        """``norms / sigma`` with a clear error if it over- or underflows."""
        sigma = self._audit_sigma()
        with np.errstate(over="ignore", under="ignore"):
            out = norms / sigma
        return check_sigma_scaled(out, np.max(norms, initial=0.0), sigma, what)

    @property
    def eta_(self) -> np.ndarray:
        """Per-example Fisher information loss at ``sigma`` (all attributes and label).

        ``eta_[i] = ||J_i||_2 / sigma``. Audit state: computed on first access in the
        fitting session, never serialised.
        """
        engine = self._audit_engine()
        cache = self.__dict__.setdefault("_eta_cache", {})
        if "eta" not in cache:
            cache["eta"] = np.sqrt(engine.per_example_sq_norms(self._resolve_columns(None)))
        return self._scaled(cache["eta"], "eta_")

    def eta(self, rows=None, columns=None, *, per_example: bool = False,
            constrained: bool = False):
        """Fisher information loss of a subset of the training values.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the subset (``None``: every row). Negative indices count
            from the end, as in numpy. With ``per_example=True`` the result follows
            ``rows`` exactly (order kept, one value per entry, duplicates allowed);
            for the eta of a set (``per_example=False``) duplicates are refused.
            Positions, not labels: a boolean pandas Series whose index is not
            ``0..n-1`` is refused (:func:`sklearn_privacy.fil.eta` with the training
            frame ``X`` aligns it on ``X.index``).
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes of the subset: feature indices ``0..n_features_in_ - 1`` or names
            of ``feature_names_in_`` (e.g. ``"cat__race_White"`` after a
            ``ColumnTransformer``), and ``n_features_in_`` or ``"label"`` for the label
            (``None``: every feature and the label). A boolean mask has length
            ``n_features_in_ + 1`` (last entry: the label). No negative indices, no
            duplicates.
        per_example : bool, default=False
            If True, return one eta per row (the attribute-level eta of each example,
            e.g. the eta of one sensitive attribute); if False, the eta of the whole
            set of values ``rows x columns`` (a group or the whole data set).
        constrained : bool, default=False
            For a one-hot attribute given as ``columns``: restrict to changes that keep
            those columns' sum fixed (moving an individual between the encoded levels).
            Never larger than the default, which also counts impossible moves; valid
            only for a complete one-hot block (see :meth:`sigma_for_eta`).

        Returns
        -------
        eta : float or ndarray of shape (n_rows,)
            The eta of the set ``rows x columns`` (a float), or with
            ``per_example=True`` one eta per entry of ``rows``. Smaller is more private.

        Raises
        ------
        ValueError
            Unknown column name, index out of range, duplicate rows for a set, or a
            ``sigma`` so extreme that eta is not representable in float64.
        """
        per_example = check_flag(per_example, "per_example")
        constrained = check_flag(constrained, "constrained")
        engine = self._audit_engine()
        columns = self._resolve_columns(columns)
        if per_example:
            sq = engine.per_example_sq_norms(columns, constrained=constrained, rows=rows)
            return self._scaled(np.sqrt(sq), "eta")
        value = np.sqrt(engine.group_sq_norm(rows, columns, constrained=constrained))
        return float(self._scaled(value, "eta"))

    def fisher_information(self, rows=None, columns=None, *, dense=None):
        """Fisher information matrix ``J_S^T J_S / sigma^2`` of a subset of values.

        Parameters
        ----------
        rows : None, int, array-like of int or array-like of bool, default=None
            Training rows of the subset, as in :meth:`eta` (duplicate rows refused).
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes of the subset, as in :meth:`eta`. The data values are ordered
            row-major, in the order given: all selected columns (in the order of
            ``columns``) of the first row of ``rows``, then the next row.
        dense : bool or None, default=None
            ``None`` returns a dense array when the subset has at most 2048 values and
            a symmetric :class:`scipy.sparse.linalg.LinearOperator` (matrix-free,
            O(n p) per product) otherwise.

        Returns
        -------
        fim : ndarray or LinearOperator of shape (n_values, n_values)
            The Fisher information matrix of the selected values, symmetric positive
            semi-definite; ``n_values = len(rows) * len(columns)``.
        """
        dense = check_flag(dense, "dense", allow_none=True)
        engine = self._audit_engine()
        return engine.fim(rows, self._resolve_columns(columns), sigma=self._audit_sigma(),
                          dense=dense)

    def sigma_for_eta(self, target_eta: float, *, aggregate: str = "max",
                      columns=None, constrained: bool = False, n_samples=None) -> float:
        """Noise scale at which the per-example eta reaches ``target_eta``.

        eta scales exactly as ``1 / sigma`` and the minimiser does not depend on
        ``sigma``, so refitting with ``set_params(sigma=...)`` releases a model whose
        per-example eta aggregate equals ``target_eta``. Through a pipeline, with
        original feature names, use :func:`sklearn_privacy.fil.sigma_for_eta`.

        **Units.** eta bounds how precisely an unbiased adversary recovers a training
        *value* (standard deviation at least ``1 / eta`` in that value's units), so it
        depends on the units of ``X`` and ``y``: on scikit-learn's diabetes data
        (standardised features, ``alpha=1e-2``) the largest example-level eta is 77 times
        larger with the raw target (standard deviation 77) than with the standardised
        one, and the sigma returned here scales the same way. Standardise the columns
        whose leakage you target, or choose ``target_eta`` in their units.

        **One-hot attributes.** With ``columns`` a one-hot block, the default
        ``constrained=False`` also counts moves no individual can make (half of one
        level, half of another), so it is an upper bound on the ``constrained=True``
        eta, which counts only moves between levels; on 3,000 Adult rows the largest
        eta of ``sex`` is 0.408 unconstrained and 0.034 constrained. The default stays
        unconstrained: it never understates leakage, and the constrained eta is only
        right for a complete one-hot block (every level has a column and each row has
        exactly one 1; with ``OneHotEncoder(drop=...)`` or unknown levels it would
        understate it). Pass ``constrained=True`` when the block is complete.

        Parameters
        ----------
        target_eta : float > 0
            The per-example eta the refitted model must reach.
        aggregate : {"max", "mean"}, default="max"
            Which aggregate of the per-example eta must equal ``target_eta``.
        columns : None, int, str, array-like of int or str, or array-like of bool, \
                default=None
            Attributes whose per-example eta is targeted, as in :meth:`eta` (indices or
            names; ``None``: every feature and the label).
        constrained : bool, default=False
            As in :meth:`eta`, for a one-hot attribute given as ``columns`` (see the
            note on one-hot attributes above).
        n_samples : int or None, default=None
            **Data-independent route** (fitted or not): the ``sigma`` at which *no*
            training set of ``n_samples`` rows (unit weights, rows within ``data_norm``,
            ``|y| <= target_bound``) can have a per-example eta above ``target_eta``,
            from the bound below; ``aggregate``, ``columns`` and ``constrained`` are then
            ignored (the bound covers every aggregate and every subset of one row's
            values). It needs the DP view (``data_norm``; no or a penalised intercept;
            ``target_bound`` for least squares) and two classes. It is conservative:
            the eta reached on real data is usually well below ``target_eta``.

            The bound: every coordinate penalised, :math:`\\lVert H^{-1} \\rVert \\le
            1 / (n\\alpha)`; the columns of :math:`J_i = -H^{-1}[l''_i \\tilde x_i w^\\top
            + l'_i E,\\; -\\tilde x_i]` have norms bounded by :math:`l''_{\\max} R \\Theta
            + L` (features) and :math:`R` (label), with :math:`\\Theta` the largest
            minimiser norm the penalty allows and :math:`L` the derivative bound of the
            DP view (derived in ``sklearn_privacy/mechanisms/_output_perturbation.py``),
            so :math:`\\eta_i \\le \\sqrt{(l''_{\\max} R \\Theta + L)^2 + R^2}
            / (n \\alpha \\sigma)`. Without
            the DP view (an unpenalised intercept, no ``data_norm``) no data-independent
            bound on eta exists: the fitted route is the only one.

        Returns
        -------
        sigma : float
            The output-perturbation noise scale to pass as ``sigma``.

        Raises
        ------
        ValueError
            ``target_eta`` not positive and finite, unknown ``aggregate``, or a noise
            scale that is not a positive finite float64 (e.g. every eta is zero); with
            ``n_samples``: no DP view, or more than two classes.
        """
        if not (isinstance(target_eta, Real) and np.isfinite(target_eta) and target_eta > 0):
            raise ValueError(f"target_eta must be a positive finite number; got {target_eta!r}.")
        if n_samples is not None:
            return self._public_eta_bound(n_samples) / float(target_eta)
        if aggregate not in ("max", "mean"):
            raise ValueError(f"aggregate must be 'max' or 'mean'; got {aggregate!r}.")
        constrained = check_flag(constrained, "constrained")
        engine = self._audit_engine()
        norms = np.sqrt(engine.per_example_sq_norms(self._resolve_columns(columns),
                                                    constrained=constrained))
        value = norms.max() if aggregate == "max" else norms.mean()
        with np.errstate(over="ignore", under="ignore"):
            sigma = value / target_eta
        if not (np.isfinite(sigma) and sigma > 0):
            raise ValueError(
                f"target_eta={target_eta!r}: the noise scale reaching it ({value!r} / "
                f"{target_eta!r}) is not a positive finite float64"
                + (" (every eta is zero for these columns)." if value == 0 else ".")
            )
        return float(sigma)
