"""NumericSparse (Dwork & Roth, Algorithm 3): answer the few queries above a threshold."""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state


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
    max_answers : int >= 1
        ``c``.
    threshold : float
        Public threshold ``T``.
    test_sensitivity : float > 0
    answer_sensitivities : sequence of float > 0
    test_fraction : float in (0, 1), default=8/9
        Share of the budget spent on the threshold tests.
    random_state : int, RandomState instance or None

    Attributes
    ----------
    n_answers_ : int
    n_queries_ : int
    halted_ : bool
    epsilon_spent_ : float
        ``eps`` once the first query is asked (the worst case is paid upfront).

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
        if not (np.isfinite(epsilon) and epsilon > 0):
            raise ValueError(f"epsilon must be a positive finite number; got {epsilon!r}.")
        if int(max_answers) != max_answers or max_answers < 1:
            raise ValueError(f"max_answers must be a positive integer; got {max_answers!r}.")
        sens = np.asarray(answer_sensitivities, dtype=float)
        if test_sensitivity <= 0 or sens.ndim != 1 or np.any(sens <= 0):
            raise ValueError("Sensitivities must be positive.")
        self.epsilon = float(epsilon)
        self.max_answers = int(max_answers)
        self.threshold = float(threshold)
        self.test_sensitivity = float(test_sensitivity)
        self.answer_sensitivities = sens
        self._rng = check_random_state(random_state)
        if not 0 < test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1); got {test_fraction!r}.")
        self.eps1 = test_fraction * self.epsilon
        self.eps2 = self.epsilon - self.eps1
        c, d = self.max_answers, self.test_sensitivity
        self.threshold_scale = 2.0 * c * d / self.eps1
        self.test_scale = 4.0 * c * d / self.eps1
        eps2_k = self.eps2 / sens.size
        self.answer_scales = c * sens / eps2_k
        self.n_answers_ = 0
        self.n_queries_ = 0
        self.halted_ = False
        self.epsilon_spent_ = 0.0
        self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self.threshold_scale)

    def query(self, test_value, answer_values):
        """Test ``test_value`` against the noisy threshold; return noisy answers or None."""
        if self.halted_:
            return None
        self.n_queries_ += 1
        self.epsilon_spent_ = self.epsilon
        noisy = float(test_value) + self._rng.laplace(0.0, self.test_scale)
        if noisy < self._noisy_threshold:
            return None
        values = np.asarray(answer_values, dtype=float)
        answer = values + self._rng.laplace(0.0, self.answer_scales)
        self.n_answers_ += 1
        if self.n_answers_ >= self.max_answers:
            self.halted_ = True
        else:
            self._noisy_threshold = self.threshold + self._rng.laplace(0.0, self.threshold_scale)
        return answer
