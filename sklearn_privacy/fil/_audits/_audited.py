"""The audited scikit-learn models: FIL estimators fitted from a scikit-learn model's
coefficients, with ``release()`` returning a noisy copy of the user's own model.

:func:`~sklearn_privacy.fil.audit` builds them (``_sklearn``); pickles name this module.
"""

from __future__ import annotations

import copy

import numpy as np
from sklearn.multiclass import OneVsRestClassifier

from ...utils import noise_generator
from .._classification import FILLogisticRegression
from .._poisson import FILPoissonRegressor
from .._regression import FILLinearRegression

#: Fitted attributes of a scikit-learn model kept in a release (everything else ending in
#: ``_`` -- iteration counts, singular values, cross-validation scores -- is dropped).
_RELEASE_KEEP = ("coef_", "intercept_", "classes_", "n_features_in_", "feature_names_in_",
                 "alpha_")


class _AuditedMixin:
    """What an audit adds to a FIL estimator: the warm start, the polish and the release.

    The user's model (which holds the *exact* coefficients) is kept in memory only: it is
    removed from every pickle, as the rest of the audit state.
    """

    #: exact statistics of the rows, removed by ``strip_for_release``
    _strip_on_release = ("polish_distance_", "polish_relative_")

    def _fit_exact(self, X, y, sample_weight, theta_init=None):
        if theta_init is None:
            theta_init = self.__dict__.get("_theta_init")
        return super()._fit_exact(X, y, sample_weight, theta_init=theta_init)

    def __getstate__(self):
        state = dict(super().__getstate__())
        # polish_*: exact distances between the trained and the exact minimiser, audit
        # state as the rest (in memory only)
        for key in ("_source", "_theta_init", "polish_distance_", "polish_relative_",
                    "_raw_input"):
            state.pop(key, None)
        return state

    def __sklearn_privacy_attributes__(self):
        """The FIL estimator's kinds; the polish distances are exact statistics of the
        rows (``strip_for_release`` removes them)."""
        kinds = super().__sklearn_privacy_attributes__()
        why = ("rows", "the exact distance between the trained coefficients and the exact "
                       "minimiser; remove it with strip_for_release")
        kinds.update(polish_distance_=why, polish_relative_=why,
                     source_alpha_="constant", release_claim_="constant")
        return kinds

    def release(self, random_state=None, *, sigma: float | None = None):
        """A copy of the audited scikit-learn model (or pipeline) with noisy coefficients.

        The exact minimiser (the user's coefficients after polishing) plus one draw of
        :math:`\\mathcal N(0, \\sigma^2 I)` on every coefficient and intercept (all ``K
        (d + 1)`` numbers of a multinomial model: ``coef_`` ``(K, d)`` and ``K``
        intercepts) -- the output-perturbation mechanism whose FIL this object reports --
        written into a deep copy of the user's own model: same class, same parameters, ready to
        ``predict`` and to pickle. Data-dependent fitted attributes other than the
        coefficients (``n_iter_``, ``rank_``, ``singular_``, ``best_score_``,
        ``cv_results_``) are removed; ``classes_``, ``n_features_in_``,
        ``feature_names_in_`` and ``RidgeCV``'s selected ``alpha_`` are kept (see
        ``release_claim_`` for what that means for privacy). When a pipeline was audited,
        the whole pipeline is copied and its last step replaced.

        Parameters
        ----------
        random_state : int, RandomState instance, Generator or None, default=None
            Source of the noise: ``None`` draws from fresh OS entropy (required for a
            private release); a fixed seed is for tests only.
        sigma : float or None, default=None
            Noise scale of this release (``None``: the ``sigma`` of the audit). The etas
            of this object describe its own ``sigma``; at another scale they are
            multiplied by ``sigma_audit / sigma``.

        Returns
        -------
        model : estimator
            An instance of the audited model's class (a ``Pipeline`` of the same steps
            when a pipeline was audited).
        """
        source = self.__dict__.get("_source")
        if source is None:
            self._audit_engine()  # raises the clear error of a model loaded from a dump
            raise AttributeError("release is only available on the result of fil.audit.")
        new = type(self).__new__(type(self))
        new.__dict__.update(self.__dict__)
        if sigma is not None:
            new.sigma = float(sigma)
        new.random_state = random_state
        new._release(self._audit_engine().theta.copy())
        pipe, model = source
        out_model = copy.deepcopy(model)
        for key in list(vars(out_model)):
            if key.endswith("_") and not key.startswith("_") and key not in _RELEASE_KEEP:
                delattr(out_model, key)
        coef = np.asarray(new.coef_, dtype=float).reshape(np.shape(model.coef_))
        out_model.coef_ = coef
        if np.ndim(model.intercept_) == 0:
            out_model.intercept_ = (float(np.ravel(new.intercept_)[0])
                                    if self.fit_intercept else 0.0)
        else:
            shape = np.shape(model.intercept_)
            intercept = (np.ravel(new.intercept_).astype(float) if self.fit_intercept
                         else np.zeros(int(np.prod(shape))))
            out_model.intercept_ = intercept.reshape(shape)
        if pipe is None:
            return out_model
        out_pipe = copy.deepcopy(pipe)
        name = out_pipe.steps[-1][0]
        out_pipe.steps[-1] = (name, out_model)
        return out_pipe


class AuditedLinearRegression(_AuditedMixin, FILLinearRegression):
    """:class:`FILLinearRegression` fitted by :func:`audit` (adds ``release``)."""


class AuditedLogisticRegression(_AuditedMixin, FILLogisticRegression):
    """:class:`FILLogisticRegression` fitted by :func:`audit` (adds ``release``)."""


class AuditedPoissonRegressor(_AuditedMixin, FILPoissonRegressor):
    """:class:`FILPoissonRegressor` fitted by :func:`audit` (adds ``release``)."""


class AuditedOneVsRestClassifier(OneVsRestClassifier):
    """A ``OneVsRestClassifier`` of ``LogisticRegression`` audited by :func:`audit`.

    Its ``estimators_`` are the ``K`` audited binary models
    (:class:`~sklearn_privacy.FILLogisticRegression` fitted by :func:`audit` on
    ``y == classes_[k]``), so :func:`~sklearn_privacy.fil.eta`
    and :func:`~sklearn_privacy.fil.fisher_information` report the ``K`` independent
    releases together (their Fisher information adds). Adds :meth:`release` and
    ``polish_distances_`` (one per class).
    """

    def release(self, random_state=None, *, sigma: float | None = None):
        """A copy of the audited ``OneVsRestClassifier`` whose ``K`` models are released.

        Each binary model is released as :meth:`AuditedLogisticRegression.release`
        does (independent noise per model); the wrapper (and, for a pipeline, the
        preprocessing) is copied as it is.

        Parameters
        ----------
        random_state : int, RandomState instance, Generator or None, default=None
            Source of the noise (``None``: fresh OS entropy for every model).
        sigma : float or None, default=None
            Noise scale (``None``: the ``sigma`` of the audit).

        Returns
        -------
        model : OneVsRestClassifier or Pipeline
        """
        source = self.__dict__.get("_source")
        if source is None:
            for est in self.estimators_:  # the clear error of a model loaded from a dump
                if hasattr(est, "_audit_engine"):
                    est._audit_engine()
            raise AttributeError("release is only available on the result of fil.audit.")
        pipe, ovr = source
        states = _spawn(random_state, len(self.estimators_))
        out = copy.deepcopy(ovr)
        out.estimators_ = [est.release(random_state=rs, sigma=sigma)
                           for est, rs in zip(self.estimators_, states, strict=True)]
        if pipe is None:
            return out
        out_pipe = copy.deepcopy(pipe)
        out_pipe.steps[-1] = (out_pipe.steps[-1][0], out)
        return out_pipe

    def __getstate__(self):
        state = dict(super().__getstate__())
        # polish_distances_: exact distances to the minimisers, audit state
        for key in ("_source", "polish_distances_"):
            state.pop(key, None)
        return state

    def __sklearn_privacy_attributes__(self):
        """The audited models are walked; the label set is public when declared with
        ``audit(..., classes=...)``."""
        declared = self.__dict__.get("declared_classes_")
        labels = ("public" if declared is not None and np.array_equal(
            declared, self.label_binarizer_.classes_) else (
                "rows", "the label set found in y; pass classes=[...] to fil.audit"))
        return {"estimators_": "child", "label_binarizer_": labels, "classes_": labels,
                "declared_classes_": "constant", "release_claim_": "constant"}

    def __sklearn_privacy_claim__(self):
        """The wrapper (its label set, public) and the claims of its ``K`` models, which
        :func:`~sklearn_privacy.privacy_claim` composes (as for a plain
        ``OneVsRestClassifier`` of FIL estimators)."""
        from ...privacy._compose import StepClaim, step_claims

        out = [StepClaim("", type(self).__name__, "data_independent", 0.0, 0.0,
                         "wrapper: its own state is the label set (classes_), declared "
                         "public by the threat model; its audited models compose below")]
        for i, child in enumerate(self.estimators_):
            out += step_claims(child, f"estimators_[{i}]")
        return out


def _spawn(random_state, k):
    """``k`` independent noise sources from one ``random_state`` (``None`` stays None)."""
    if random_state is None:
        return [None] * k
    seeds = noise_generator(random_state).randint(0, 2**31 - 1, size=k)
    return [int(s) for s in seeds]
