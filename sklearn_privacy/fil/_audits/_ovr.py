"""Fisher information loss of one-vs-rest compositions of FIL classifiers.

A fitted :class:`~sklearn.multiclass.OneVsRestClassifier` of ``K`` binary FIL logistic
regressions releases ``K`` parameter vectors, each with its own independent Gaussian
noise, all computed from the same training rows. Estimator ``k`` sees the rows' features
and the ``k``-th coordinate of the one-hot label. Independent releases add their Fisher
information: for any set ``S`` of data values, ``FIM_S = sum_k J_S^(k)T J_S^(k) /
sigma_k^2`` -- the FIM of the stacked Jacobian ``[J^(1) / sigma_1; ...; J^(K) /
sigma_K]`` -- and ``eta_S = sqrt(lambda_max(FIM_S))``. As for the multinomial model the
label is the one-hot vector restricted to the changes that keep it a distribution: its
``K - 1`` coordinates in the Helmert basis ``Q`` of the sum-zero vectors, so classifier
``k``'s label column enters with weight ``Q[k, c]`` in coordinate ``c``.

The per-example Jacobians of the binary estimators are formed explicitly here (``n x p x
(d + 1)`` per estimator, in row chunks): the composition is a compatibility path, not the
fast one. :class:`~sklearn_privacy.FILLogisticRegression` fits ``K`` classes natively.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from sklearn.multiclass import OneVsRestClassifier
from sklearn.utils.validation import check_is_fitted

from ..._glm._multinomial import helmert_basis
from .._base import BaseFILEstimator
from .._eta._engine import check_sigma_scaled

_CHUNK_BYTES = 48_000_000


def is_fil_ovr(estimator) -> bool:
    """True for a fitted OneVsRestClassifier whose estimators are all FIL estimators."""
    if not isinstance(estimator, OneVsRestClassifier):
        return False
    fitted = getattr(estimator, "estimators_", None)
    return bool(fitted) and all(isinstance(e, BaseFILEstimator) for e in fitted)


class OneVsRestAudit:
    """Audit view of a fitted ``OneVsRestClassifier`` of FIL classifiers.

    Offers ``eta`` and ``fisher_information`` of the ``K`` releases together (see the
    module docstring), with the columns of the estimators' input and ``d`` (or
    ``"label"``) for the label. Built by :func:`sklearn_privacy.fil.eta` and
    :func:`sklearn_privacy.fil.fisher_information`.
    """

    def __init__(self, ovr):
        check_is_fitted(ovr)
        if not is_fil_ovr(ovr):
            raise TypeError("OneVsRestAudit needs a fitted OneVsRestClassifier of FIL "
                            "estimators.")
        self.ovr = ovr
        self.estimators = list(ovr.estimators_)
        self.engines = [e._audit_engine() for e in self.estimators]
        first = self.engines[0]
        self.n, self.d = first.n, first.d
        for eng in self.engines[1:]:
            same_x = (eng.X is first.X or (
                eng.X.shape == first.X.shape and (
                    (sp.issparse(eng.X) and (eng.X != first.X).nnz == 0)
                    or (not sp.issparse(eng.X) and np.array_equal(eng.X, first.X)))))
            if not same_x or not np.array_equal(eng.omega, first.omega):
                raise ValueError(
                    "The one-vs-rest estimators were not fitted on the same rows and "
                    "weights; their releases cannot be audited together.")
        self.n_features_in_ = self.estimators[0].n_features_in_
        names = getattr(self.estimators[0], "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        self.K = len(self.engines) if len(self.engines) > 1 else 1
        self.sigmas = np.array([e._audit_sigma() for e in self.estimators], dtype=float)

    def _audit_engine(self):
        return self.engines[0]

    # ------------------------------------------------------------------ structure
    def _selector(self, order, constrained):
        K, d = self.K, self.d
        m = d + max(K - 1, 1)
        blocks = []
        for c in order:
            e = np.zeros((m, 1 if c < d else m - d))
            if c < d:
                e[c, 0] = 1.0
            else:
                e[d:, :] = np.eye(m - d)
            blocks.append(e)
        P = np.hstack(blocks)
        if constrained:
            if np.any(np.asarray(order) == d):
                raise ValueError("constrained=True applies to the one-hot columns of an "
                                 "input attribute; leave the label out of columns.")
            if len(order) < 2:
                raise ValueError("constrained=True needs at least two columns.")
            P = P @ helmert_basis(len(order))
        return P

    def _stacked(self, rows):
        """``[J^(k)_i / sigma_k]_k`` for the rows: (r, sum_k p_k, d + K - 1)."""
        feats = np.arange(self.d)
        parts = []
        if self.K == 1:
            eng = self.engines[0]
            J = eng.jacobian_columns(rows, feats, True)
            return J / self.sigmas[0]
        Q = helmert_basis(self.K)
        for k, eng in enumerate(self.engines):
            J = eng.jacobian_columns(rows, feats, True)  # (r, p_k, d + 1)
            full = np.concatenate([J[:, :, : self.d],
                                   J[:, :, self.d:] * Q[k][None, None, :]], axis=2)
            with np.errstate(over="ignore", under="ignore"):
                parts.append(full / self.sigmas[k])
        return np.concatenate(parts, axis=1)

    def _chunks(self, size, width):
        p_tot = sum(e.p for e in self.engines)
        step = max(1, int(_CHUNK_BYTES // (8 * p_tot * max(width, 1) * 2)))
        for start in range(0, size, step):
            yield slice(start, min(size, start + step))

    def _columns(self, columns):
        if columns is None:
            return np.arange(self.d + 1)
        return self.engines[0]._columns(columns)[2]

    # ------------------------------------------------------------------ public
    def eta(self, rows=None, columns=None, *, per_example=False, constrained=False):
        """eta of the ``K`` releases together (per example or of a set)."""
        order = self._columns(columns)
        P = self._selector(order, constrained)
        if per_example:
            idx = self.engines[0]._rows(rows)
            out = np.empty(idx.size)
            for sl in self._chunks(idx.size, P.shape[1]):
                J = self._stacked(idx[sl]) @ P
                G = np.einsum("ipm,ipn->imn", J, J)
                out[sl] = np.linalg.eigvalsh(G)[:, -1] if G.shape[1] > 1 else G[:, 0, 0]
            return np.sqrt(np.maximum(out, 0.0))
        idx = self.engines[0]._rows(rows, unique=True)
        p_tot = sum(e.p for e in self.engines)
        S = np.zeros((p_tot, p_tot))
        for sl in self._chunks(idx.size, P.shape[1]):
            J = self._stacked(idx[sl]) @ P
            S += np.einsum("ipm,iqm->pq", J, J)
        top = linalg.eigvalsh(S, subset_by_index=[p_tot - 1, p_tot - 1])[0]
        return float(np.sqrt(max(top, 0.0)))

    def fisher_information(self, rows=None, columns=None, *, dense=None):
        """Dense FIM of the values ``rows x columns`` (label: ``K - 1`` values)."""
        order = self._columns(columns)
        P = self._selector(order, False)
        idx = self.engines[0]._rows(rows, unique=True)
        size = idx.size * P.shape[1]
        if dense is False or size > 20_000:
            raise ValueError(
                "fisher_information of a one-vs-rest composition is dense only (at most "
                f"20000 data values; this subset has {size}). Select fewer rows/columns, "
                "or fit FILLogisticRegression on the K classes directly.")
        J = self._stacked(idx) @ P
        JS = J.transpose(1, 0, 2).reshape(J.shape[1], size)
        F = JS.T @ JS
        return check_sigma_scaled(F, np.abs(F).max(initial=0.0), 1.0,
                                  "the Fisher information matrix")
