"""Privacy attacks as scikit-learn scorers (higher score = better privacy)."""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_array

from ._inversion import fredrikson_inversion, whitebox_inversion
from ._membership import ATTACKS, membership_inference

_METRICS = ("advantage", "balanced_accuracy", "auc")


def _row_keys(X, y):
    X = np.ascontiguousarray(np.asarray(X, dtype=float))
    y = np.asarray(y)
    return [X[i].tobytes() + repr(y[i]).encode() for i in range(X.shape[0])]


class _MembershipScorer:
    def __init__(self, X, y, attack, thresholds, metric, known_fraction, random_state):
        self.X = check_array(X, dtype=float)
        self.y = np.asarray(y)
        if self.y.shape[0] != self.X.shape[0]:
            raise ValueError("X_population and y_population have different numbers of rows.")
        self.attack, self.thresholds, self.metric = attack, thresholds, metric
        self.known_fraction, self.random_state = known_fraction, random_state
        self._keys = {}
        for i, key in enumerate(_row_keys(self.X, self.y)):
            self._keys.setdefault(key, []).append(i)

    def __call__(self, estimator, X, y):
        X = check_array(X, dtype=float)
        used = {}
        held_out = np.zeros(len(self.y), dtype=bool)
        for key in _row_keys(X, y):
            slots = self._keys.get(key)
            k = used.get(key, 0)
            if slots is None or k >= len(slots):
                raise ValueError(
                    "The evaluated rows are not rows of X_population: the membership scorer "
                    "takes the members to be the population rows outside the evaluated "
                    "fold, so pass the same X, y to the scorer and to fit / GridSearchCV."
                )
            held_out[slots[k]] = True
            used[key] = k + 1
        members = ~held_out
        result = membership_inference(
            estimator, self.X[members], self.y[members], X, y, attack=self.attack,
            thresholds=self.thresholds, known_fraction=self.known_fraction,
            random_state=self.random_state,
        )
        if self.metric == "advantage":
            return -result.advantage
        if self.metric == "balanced_accuracy":
            return 0.5 - result.balanced_accuracy
        return 0.5 - result.auc

    def __repr__(self):
        return (f"make_membership_scorer(attack={self.attack!r}, thresholds="
                f"{self.thresholds!r}, metric={self.metric!r})")


def make_membership_scorer(X_population, y_population, *, attack="confidence",
                           thresholds="per_class", metric="advantage", known_fraction=0.5,
                           random_state=0):
    """Scorer measuring membership-inference leakage inside cross-validation.

    Design: the scorer is built on the population ``X_population, y_population`` that is
    passed to ``fit`` / ``GridSearchCV.fit``. When called on a fitted estimator and the
    evaluated fold ``(X, y)``, it takes the fold as the non-members and the rest of the
    population -- the rows the estimator was trained on -- as the members, and runs
    :func:`membership_inference`. Nothing private to scikit-learn is used, no metadata
    routing is needed and the scorer works in ``GridSearchCV``, ``cross_validate`` and
    multi-metric ``refit``; the price is that the population is held by the scorer and the
    fold's rows are looked up by value (duplicated rows are matched as a multiset).
    The alternative -- audit state recorded on the fitted estimator -- would need the
    training rows kept on every estimator; this scorer works with any estimator, including
    pipelines and third-party models. Train scores (``return_train_score=True``) of this
    scorer are meaningless: called on the training fold it would take the held-out rows as
    the members.

    Parameters
    ----------
    X_population, y_population : array-like
        Everything given to ``fit`` of the search.
    attack, thresholds, known_fraction, random_state
        See :func:`membership_inference`.
    metric : {"advantage", "balanced_accuracy", "auc"}, default="advantage"
        The score is ``-advantage``, ``0.5 - balanced_accuracy`` or ``0.5 - auc``: higher is
        better privacy (0 = the attack does no better than chance).

    Returns
    -------
    scorer : callable ``scorer(estimator, X, y) -> float``

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from sklearn_privacy.attacks import make_membership_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(300, 4)); y = (X[:, 0] + rng.normal(size=300) > 0).astype(int)
    >>> scorer = make_membership_scorer(X, y)
    >>> scores = cross_val_score(DecisionTreeClassifier(random_state=0), X, y, cv=3,
    ...                          scoring=scorer)
    >>> bool(np.all(scores < -0.1))    # a fully grown tree leaks membership
    True
    """
    if metric not in _METRICS:
        raise ValueError(f"metric must be one of {_METRICS}; got {metric!r}.")
    # validate now: inside a search, errors at scoring time become error_score (nan)
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {ATTACKS}; got {attack!r}.")
    if thresholds not in ("global", "per_class"):
        raise ValueError(f"thresholds must be 'global' or 'per_class'; got {thresholds!r}.")
    if not 0 < known_fraction < 1:
        raise ValueError(f"known_fraction must be in (0, 1); got {known_fraction!r}.")
    return _MembershipScorer(X_population, y_population, attack, thresholds, metric,
                             known_fraction, random_state)


def _final_estimator(estimator):
    return estimator[-1] if isinstance(estimator, Pipeline) else estimator


class _InversionScorer:
    def __init__(self, columns, candidates, attack, n_draws, random_state):
        self.columns, self.candidates = columns, candidates
        self.attack, self.n_draws, self.random_state = attack, n_draws, random_state

    def __call__(self, estimator, X, y):
        if self.attack == "fredrikson":
            result = fredrikson_inversion(estimator, X, y, self.columns, self.candidates)
            return -result.accuracy
        final = _final_estimator(estimator)
        result = whitebox_inversion(
            final, self.columns, self.candidates,
            prior="empirical" if self.attack == "map" else None,
            n_draws=self.n_draws, random_state=self.random_state,
        )
        return -result.accuracy

    def __repr__(self):
        return f"make_attribute_inversion_scorer(attack={self.attack!r})"


def make_attribute_inversion_scorer(columns, candidates=None, *, attack="whitebox",
                                    n_draws=20, random_state=0):
    """Scorer measuring attribute inversion; the score is minus the attack's accuracy.

    ``attack="whitebox"`` and ``"map"`` play the adversary of the FIL threat model against
    the fitted estimator's own training rows, using its in-memory audit state (so they
    need a FIL estimator, possibly as the last step of a pipeline; ``columns`` index the
    features that estimator sees). The audit state lives only on the in-memory fitted
    estimator, never in a dump, and the scorer ignores the evaluated fold. ``n_draws``
    simulated releases are averaged. ``attack="fredrikson"`` is the black-box attack of
    :func:`fredrikson_inversion` on the evaluated rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from sklearn_privacy import FILLinearRegression
    >>> from sklearn_privacy.attacks import make_attribute_inversion_scorer
    >>> rng = np.random.RandomState(0)
    >>> X = np.column_stack([rng.normal(size=(300, 3)), rng.randint(0, 2, size=300)])
    >>> y = X @ [1.0, -1.0, 0.5, 1.0] + 0.1 * rng.normal(size=300)
    >>> grid = GridSearchCV(FILLinearRegression(alpha=1e-2, random_state=0),
    ...                     {"sigma": [1e-4, 1.0]}, cv=3,
    ...                     scoring={"r2": "r2", "inv": make_attribute_inversion_scorer([3])},
    ...                     refit="inv").fit(X, y)
    >>> grid.best_params_["sigma"], round(float(grid.cv_results_["mean_test_inv"][0]), 2)
    (1.0, -1.0)
    """
    if attack not in ("whitebox", "map", "fredrikson"):
        raise ValueError(f"attack must be 'whitebox', 'map' or 'fredrikson'; got {attack!r}.")
    return _InversionScorer(columns, candidates, attack, n_draws, random_state)
