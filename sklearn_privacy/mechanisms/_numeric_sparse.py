"""NumericSparse (Dwork & Roth, Algorithm 3): answer the few queries above a threshold."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..utils import noise_generator


class NumericSparse:
    """Epsilon-differentially private sparse vector with numeric answers.

    Implements NumericSparse of Dwork & Roth (2014, Algorithm 3, with delta = 0) for an
    adaptively chosen stream of queries. Each query has a *test value* ``f_t(D)`` of
    sensitivity ``test_sensitivity`` and, if it passes, numeric *answers* ``g_t(D)`` (a
    vector) with per-coordinate sensitivities ``answer_sensitivities``. With ``c`` the
    maximum number of positive answers:

    * budget split ``eps1 = test_fraction * eps`` (threshold tests; Dwork & Roth use
      8/9), ``eps2 = eps - eps1`` (answers, split evenly over the answer coordinates);
    * noisy threshold ``T + Lap(2 c D / eps1)``, drawn afresh after every positive answer;
    * each test compares ``f_t(D) + Lap(4 c D / eps1)`` with the noisy threshold;
    * a positive test releases ``g_t(D) + Lap(c D_k / eps2_k)`` per coordinate ``k``;
    * after ``c`` positive answers the mechanism halts (every later query gets None).

    Privacy (Dwork & Roth, Theorems 3.25-3.26 and composition): the tests are c runs of
    AboveThreshold with budget ``eps1 / c`` each; the answers are ``c`` Laplace releases
    of each coordinate with budget ``eps2_k / c``; in total ``eps`` for neighbouring data
    sets on which every test value moves by at most ``test_sensitivity`` and every answer
    coordinate by at most its sensitivity -- whatever the number of below-threshold
    queries and however the queries are chosen from earlier outputs. Nothing else about
    the data may be used to choose or skip queries (that would be an uncounted access).

    Parameters
    ----------
    epsilon : float > 0
        Total privacy budget ``eps`` of the whole stream of queries.
    max_answers : int >= 1
        ``c``.
    threshold : float
        Public threshold ``T``.
    test_sensitivity : float > 0
        Sensitivity ``D`` of every test value ``f_t``: the most one test value can move
        between neighbouring data sets.
    answer_sensitivities : sequence of float > 0
        Sensitivity ``D_k`` of each coordinate ``k`` of the answers ``g_t``; its length
        is the number of answer coordinates.
    test_fraction : float in (0, 1), default=8/9
        Share of the budget spent on the threshold tests.
    random_state : None, int, RandomState or Generator, default=None
        Noise source, see :func:`~sklearn_privacy.utils.noise_generator`: ``None`` draws
        from fresh OS entropy (never numpy's global state), which a private release
        requires; a fixed seed makes the noise reproducible and the release non-private.

    Attributes
    ----------
    n_answers_ : int
        Number of positive answers released so far.
    n_queries_ : int
        Number of queries asked so far (answered or not).
    halted_ : bool
        True once ``max_answers`` positive answers were released.
    epsilon_ : float
        Budget spent: ``eps`` once the first query is asked (the worst case is paid
        upfront), 0 before.
    delta_ : float
        Always 0 (pure DP).
    epsilon_reason_ : str
        What ``epsilon_`` covers.

    Raises
    ------
    ValueError, TypeError
        Non-finite, non-positive or non-numeric parameters (booleans and strings are
        refused), ``max_answers`` not an integer, ``test_fraction`` outside (0, 1).

    See Also
    --------
    sklearn_privacy.PrivateMulticalibrator : Private multicalibration, which spends its
        budget through this mechanism.

    Examples
    --------
    >>> from sklearn_privacy.mechanisms import NumericSparse
    >>> ns = NumericSparse(epsilon=1.0, max_answers=1, threshold=100.0, test_sensitivity=1.0,
    ...                    answer_sensitivities=[1.0], random_state=0)
    >>> ns.query(3.0, [3.0]) is None        # far below the threshold
    True
    >>> answer = ns.query(1000.0, [1000.0])  # far above: a noisy answer
    >>> ns.halted_, round(float(answer[0]) / 1000)
    (True, 1)
    """

    def __init__(self, epsilon, max_answers, threshold, test_sensitivity,
                 answer_sensitivities, test_fraction=8.0 / 9.0, random_state=None):
        self.epsilon = _positive_finite(epsilon, "epsilon")
        if isinstance(max_answers, (bool, np.bool_)) or not isinstance(max_answers, Integral):
            raise TypeError(f"max_answers must be an integer >= 1 (the number of positive "
                            f"answers c); got {max_answers!r}.")
        if max_answers < 1:
            raise ValueError(f"max_answers must be an integer >= 1; got {max_answers!r}.")
        self.max_answers = int(max_answers)
        self.threshold = _finite_real(threshold, "threshold")
        self.test_sensitivity = _positive_finite(test_sensitivity, "test_sensitivity")
        self.answer_sensitivities = _sensitivities(answer_sensitivities)
        frac = _finite_real(test_fraction, "test_fraction")
        if not 0 < frac < 1:
            raise ValueError(f"test_fraction must be in (0, 1) (the share of epsilon spent on "
                             f"the threshold tests); got {test_fraction!r}.")
        self.test_fraction = frac
        try:
            self._rng = noise_generator(random_state)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"random_state: {exc}") from None
        self.eps1 = frac * self.epsilon
        self.eps2 = self.epsilon - self.eps1
        c, d = self.max_answers, self.test_sensitivity
        sens = self.answer_sensitivities
        self.threshold_scale = 2.0 * c * d / self.eps1
        self.test_scale = 4.0 * c * d / self.eps1
        eps2_k = self.eps2 / sens.size
        self.answer_scales = c * sens / eps2_k
        scales = np.r_[self.threshold_scale, self.test_scale, self.answer_scales]
        if not np.all(np.isfinite(scales) & (scales > 0)):
            raise ValueError(
                "epsilon, max_answers and the sensitivities give a Laplace scale that is not "
                f"a positive finite float (scales {scales.tolist()}); use a larger epsilon "
                "or smaller sensitivities."
            )
        self.n_answers_ = 0
        self.n_queries_ = 0
        self.halted_ = False
        self.epsilon_ = 0.0
        self.delta_ = 0.0
        self.epsilon_reason_ = (
            "sparse vector technique with Laplace noise (Dwork & Roth, NumericSparse): "
            "(epsilon, 0)-DP for the data the queries read, paid in full at the first query")
        self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self.threshold_scale)

    def query(self, test_value, answer_values):
        """Test ``test_value`` against the noisy threshold; return noisy answers or None.

        Parameters
        ----------
        test_value : float
            ``f_t(D)``, finite.
        answer_values : array-like of shape (len(answer_sensitivities),)
            ``g_t(D)``, finite; one value per answer sensitivity (each coordinate gets its
            own Laplace draw).

        Returns
        -------
        answer : ndarray of shape (len(answer_sensitivities),) or None
            Noisy answers if the noisy test passed the noisy threshold, else None (always
            None once halted).

        Raises
        ------
        ValueError, TypeError
            Non-finite or non-numeric values, or a number of answer values different from
            the number of sensitivities. A refused query is not asked (no noise drawn).
        """
        test = _finite_real(test_value, "test_value", private=True)
        values = _finite_vector(answer_values, "answer_values", private=True)
        k = self.answer_sensitivities.size
        if values.size != k:
            raise ValueError(
                f"answer_values has {values.size} values but answer_sensitivities has {k}: "
                "each answer coordinate needs its own sensitivity (its noise and budget)."
            )
        if self.halted_:
            return None
        self.n_queries_ += 1
        self.epsilon_ = self.epsilon
        noisy = test + self._rng.laplace(0.0, self.test_scale)
        if noisy < self._noisy_threshold:
            return None
        return self._answer(values)

    def _query_lazy(self, approx_test, tolerance, exact):
        """``query(*exact())``, calling ``exact`` only when ``approx_test`` cannot decide.

        Same noise draws, same result and same accounting as :meth:`query` on the exact
        values, for a caller that holds an approximation ``approx_test`` of the test value
        with ``|approx_test - exact test value| <= tolerance``: a test that fails even
        with the tolerance added (the usual case far below the threshold) returns None
        without computing the exact values; otherwise ``exact()`` gives
        ``(test_value, answer_values)`` and the comparison is made on them. Values are
        trusted (internal use: finite by construction).
        """
        if self.halted_:
            return None
        self.n_queries_ += 1
        self.epsilon_ = self.epsilon
        noise = self._rng.laplace(0.0, self.test_scale)
        thr = self._noisy_threshold
        margin = tolerance + 1e-12 * (1.0 + abs(approx_test) + abs(noise) + abs(thr))
        if approx_test + noise < thr - margin:
            return None
        test, values = exact()
        if test + noise < thr:
            return None
        return self._answer(np.asarray(values, dtype=float))

    def _answer(self, values):
        """Noisy answers after a positive test; halt or redraw the threshold."""
        answer = values + self._rng.laplace(0.0, self.answer_scales)
        self.n_answers_ += 1
        if self.n_answers_ >= self.max_answers:
            self.halted_ = True
        else:
            self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self.threshold_scale)
        return answer


def _finite_real(value, name, *, private=False):
    """``value`` as a finite float; with ``private`` (a query's answer, computed from the
    data) the messages name the problem but never show the value."""
    shown = "" if private else f" {value!r}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}{shown}.")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {'NaN or infinity' if private else value!r}.")
    return value


def _positive_finite(value, name):
    value = _finite_real(value, name)
    if value <= 0:
        raise ValueError(f"{name} must be a positive finite number; got {value!r}.")
    return value


def _finite_vector(values, name, *, private=False):
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer)
                                 or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold real numbers; got "
                        f"{('dtype ' + str(arr.dtype)) if private else repr(values)}.")
    arr = arr.astype(float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of numbers; got shape "
                         f"{arr.shape}.")
    if not np.all(np.isfinite(arr)):
        bad = int(np.count_nonzero(~np.isfinite(arr)))
        raise ValueError(f"{name} must be finite; got {bad} NaN or infinite value(s)"
                         + ("." if private else f": {arr.tolist()}."))
    return arr


def _sensitivities(values):
    if values is None or isinstance(values, str):
        raise TypeError(f"answer_sensitivities must be a sequence of positive numbers; got "
                        f"{values!r}.")
    arr = _finite_vector(values, "answer_sensitivities")
    if np.any(arr <= 0):
        raise ValueError(f"answer_sensitivities must be positive; got {arr.tolist()}.")
    return arr
