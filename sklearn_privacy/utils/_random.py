"""The one source of randomness of the package: noise generators and child seeds.

Every random draw of the package -- the Gaussian noise of a FIL release, the Laplace noise
of NumericSparse, input perturbation, the splits and shadow seeds of the attacks -- goes
through :func:`noise_generator`. With ``random_state=None`` it returns a
:class:`numpy.random.Generator` seeded from fresh operating-system entropy: the draw
neither depends on nor advances numpy's global random state (``np.random.seed`` has no
effect on it). A fixed ``random_state`` makes the draws reproducible, which makes any
privacy noise predictable and the release non-private (use it for tests only).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ._warnings import warn_user
from .fixes import NumberInterval, validate_params

__all__ = ["noise_generator", "child_seeds"]

#: Child seeds are drawn below this bound (fits every estimator's ``random_state``).
_SEED_BOUND = 2**31 - 1


@validate_params(
    {
        "random_state": [
            None,
            NumberInterval(Integral, 0, 2**32 - 1, closed="both"),
            np.random.RandomState,
            np.random.Generator,
        ],
    },
    prefer_skip_nested_validation=True,
)
def noise_generator(random_state):
    """Random generator for a noise draw, never numpy's global state for ``None``.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        ``None``: a new :class:`numpy.random.Generator` seeded from OS entropy. An int:
        ``numpy.random.RandomState(random_state)`` (the same stream as scikit-learn's
        ``check_random_state``, so fixed-seed results do not depend on this helper). A
        ``RandomState`` or ``Generator`` instance is used as given (the caller's own
        stream; passing ``numpy.random.mtrand._rand`` explicitly is the caller's choice).

    Returns
    -------
    rng : numpy.random.Generator or numpy.random.RandomState
        Callers use only the methods both classes share (``normal``, ``standard_normal``,
        ``laplace``, ``uniform``, ``permutation``, ``choice``, ``shuffle``) and
        :func:`child_seeds` for integers.

    Raises
    ------
    TypeError
        If ``random_state`` is of any other type (a float, a string, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_privacy.utils import noise_generator
    >>> global_state = np.random.get_state()[1].copy()
    >>> a = noise_generator(None).standard_normal(3)
    >>> b = noise_generator(None).standard_normal(3)
    >>> bool(np.all(a != b))                   # fresh OS entropy for every call
    True
    >>> bool(np.array_equal(np.random.get_state()[1], global_state))  # global state untouched
    True
    >>> noise_generator(0).standard_normal(2).round(3)   # a seed: reproducible (not private)
    array([1.764, 0.4  ])
    """
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        return random_state
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        return np.random.RandomState(int(random_state))  # refuses a seed out of range
    # reached only when parameter validation is skipped: never turn a float into a seed
    raise TypeError(f"random_state must be None, an int seed, a RandomState or a Generator; "
                    f"got {random_state!r}.")


def warn_shared_noise(owner: str, random_state, *, stacklevel: int = 2) -> bool:
    """PrivacyWarning when ``random_state`` is a RandomState or Generator instance.

    :func:`sklearn.base.clone` deep-copies such an instance, so every clone of the
    estimator (cross-validation folds, a search's refit, an audit's releases) draws the
    *same* noise, and the instance's state, pickled with the model, determines the
    stream. Integers (seeds for tests and documentation) and ``None`` do not warn.
    Returns whether it warned.
    """
    if not isinstance(random_state, (np.random.RandomState, np.random.Generator)):
        return False

    from ..exceptions import PrivacyWarning

    warn_user(
        f"{owner}: random_state is a {type(random_state).__name__} instance. clone "
        "(cross-validation, searches, audits) deep-copies it, so every clone draws the "
        "same noise, and the release is not private as published. Use random_state=None "
        "(fresh OS entropy for every fit); fixed seeds are for tests only.",
        PrivacyWarning, stacklevel=stacklevel + 1)
    return True


@validate_params(
    {
        "rng": [np.random.RandomState, np.random.Generator],
        "size": [NumberInterval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def child_seeds(rng, size: int) -> np.ndarray:
    """``size`` integer seeds in ``[0, 2**31 - 1)`` drawn from ``rng``.

    For the ``random_state`` of sub-estimators (shadow models, refits): each child gets
    its own reproducible stream when ``rng`` is seeded, fresh entropy when it is not.

    Parameters
    ----------
    rng : numpy.random.Generator or numpy.random.RandomState
        As returned by :func:`noise_generator`.
    size : int
        Number of seeds.

    Returns
    -------
    seeds : ndarray of int64, shape (size,)
        Independent integer seeds, to pass as ``random_state`` of the sub-estimators.

    Examples
    --------
    >>> from sklearn_privacy.utils import child_seeds, noise_generator
    >>> child_seeds(noise_generator(0), 3).shape
    (3,)
    """
    if isinstance(rng, np.random.Generator):
        return rng.integers(0, _SEED_BOUND, size=size, dtype=np.int64)
    return rng.randint(0, _SEED_BOUND, size=size).astype(np.int64)


def seeded_clone(estimator, seed: int):
    """``clone(estimator)`` with every ``random_state`` parameter set to ``seed``.

    Nested parameters count too (``<step>__random_state`` of a Pipeline, a meta-estimator's
    inner estimator), so that each clone of a pipeline ending in a randomised model draws
    its own randomness; an estimator without such a parameter is only cloned.
    """
    from sklearn.base import clone

    est = clone(estimator)
    names = [k for k in est.get_params(deep=True)
             if k == "random_state" or k.endswith("__random_state")]
    if names:
        est.set_params(**dict.fromkeys(names, int(seed)))
    return est
