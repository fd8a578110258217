"""Closed-form quantities of weighted ERM (Kaplan et al., PETS 2024, Section 3)."""

from __future__ import annotations

from numbers import Real

import numpy as np

from ..utils.fixes import NumberInterval, StrOptions, validate_params

_SIZE = NumberInterval(Real, 0, np.inf, closed="neither")


def _as_real_vector(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (not booleans or strings); got dtype "
                        f"{arr.dtype}.")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, one entry per group; got "
                         f"shape {arr.shape}.")
    return arr.astype(np.float64)


def _check_groups(group_sizes, group_weights):
    sizes = _as_real_vector(group_sizes, "group_sizes")
    weights = _as_real_vector(group_weights, "group_weights")
    if sizes.shape != weights.shape:
        raise ValueError(
            "group_sizes and group_weights must have the same length (one entry per group); "
            f"got {sizes.size} and {weights.size}."
        )
    if np.any(~np.isfinite(sizes)) or np.any(sizes <= 0):
        raise ValueError(f"group_sizes must be positive and finite; got {sizes.tolist()}.")
    if (np.any(~np.isfinite(weights)) or np.any(weights < 0)
            or not np.isclose(weights.sum(), 1.0)):
        raise ValueError(
            f"group_weights must be finite, non-negative and sum to 1; got {weights.tolist()}."
        )
    return sizes, weights


@validate_params(
    {"group_sizes": ["array-like"], "group_weights": ["array-like"]},
    prefer_skip_nested_validation=True,
)
def effective_sample_size(group_sizes, group_weights) -> float:
    """Effective number of samples of a weighted empirical risk.

    ``N_eff = 1 / sum_g w_g^2 / N_g`` (Theorem 3.2 and Appendix A.2 of the WERM paper):
    the weighted risk concentrates like an unweighted risk over ``N_eff`` samples. It is
    largest, ``N = sum_g N_g``, when ``w_g = N_g / N``.

    Parameters
    ----------
    group_sizes : array-like of shape (n_groups,)
        Number of samples ``N_g`` of each group.
    group_weights : array-like of shape (n_groups,)
        Non-negative weights ``w_g`` summing to 1.

    Returns
    -------
    n_eff : float
        The effective sample size, between ``min_g N_g`` and ``N = sum_g N_g``.

    Raises
    ------
    TypeError
        If the sizes or weights are not real numbers (booleans and strings are refused).
    ValueError
        If the arrays are empty, not 1-D or of different lengths, a size is not positive
        and finite, or the weights are negative, not finite or do not sum to 1.

    Examples
    --------
    >>> from sklearn_privacy.werm import effective_sample_size
    >>> effective_sample_size([1000, 1000], [0.5, 0.5])
    2000.0
    >>> round(effective_sample_size([1000, 1000], [0.9, 0.1]), 1)
    1219.5
    """
    sizes, weights = _check_groups(group_sizes, group_weights)
    return float(1.0 / np.sum(weights**2 / sizes))


@validate_params(
    {
        "w": [NumberInterval(Real, 0, 1, closed="both")],
        "n_train": [_SIZE],
        "n_reference_samples": [_SIZE],
    },
    prefer_skip_nested_validation=True,
)
def epsilon_ratio(w: float, n_train: int, n_reference_samples: int) -> float:
    """Relative privacy ``eps_T / eps_R = (1 - w) / w * N_R / N_T`` of two-group WERM.

    Theorem 3.1 of the WERM paper: trained with a per-sample-clipped, noised optimiser
    (DP-SGD), the privacy loss of a group is proportional to the weight of one of its
    samples, ``w_g / N_g``. The ratio is a statement about such a training procedure;
    for a non-private learner it is the ratio the empirical attack advantages are
    expected to track, not a guarantee. ``inf`` when ``w = 0``.

    Parameters
    ----------
    w : float in [0, 1]
        Weight of the reference group.
    n_train, n_reference_samples : float
        Positive, finite sizes of the training and reference groups.

    Returns
    -------
    ratio : float
        ``eps_T / eps_R``: above 1 the training group leaks more than the reference
        group, below 1 less; ``inf`` when ``w = 0``.

    Raises
    ------
    TypeError
        If an argument is not a real number (booleans and strings are refused).
    ValueError
        If ``w`` is outside [0, 1] or a size is not positive and finite.

    Examples
    --------
    >>> from sklearn_privacy.werm import epsilon_ratio
    >>> epsilon_ratio(0.5, 1000, 1000)
    1.0
    >>> epsilon_ratio(0.9, 1000, 3000)
    0.333...
    """
    w, n_train, n_reference_samples = float(w), float(n_train), float(n_reference_samples)
    if w == 0:
        return float("inf")
    return float((1 - w) / w * n_reference_samples / n_train)


@validate_params(
    {
        "vc_dim": [_SIZE],
        "delta": [NumberInterval(Real, 0, 1, closed="neither")],
        "group_sizes": ["array-like"],
        "group_weights": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def generalization_bound(vc_dim, delta, group_sizes, group_weights) -> float:
    """Excess-risk term of Theorem 3.2 of the WERM paper (losses bounded in [0, 1]).

    With probability at least ``1 - delta``, the risk of the WERM minimiser exceeds the
    best risk in the hypothesis class by at most

    ``2 sqrt(VC / N_eff) sqrt(gamma_2 + log(N / VC)) + sqrt(2 ln(2 / delta) / N_eff)``,

    with ``gamma_2 = max(4 / VC, 1)``, ``N = sum_g N_g`` and ``N_eff`` from
    :func:`effective_sample_size` (Appendix A.2 generalises it to any number of groups).

    Parameters
    ----------
    vc_dim : float
        VC dimension of the hypothesis class (``n_features + 1`` for linear classifiers).
    delta : float in (0, 1)
        Failure probability: the bound holds with probability at least ``1 - delta``
        over the draw of the samples.
    group_sizes, group_weights : array-like
        As in :func:`effective_sample_size`.

    Returns
    -------
    bound : float
        Upper bound on the excess risk (risk of the WERM minimiser minus the best risk
        in the class), in units of the loss bounded in [0, 1].

    Raises
    ------
    TypeError
        If an argument is not real-valued (booleans and strings are refused).
    ValueError
        If ``vc_dim`` is not positive and finite or exceeds the total sample size
        ``sum(group_sizes)`` (the theorem needs ``N >= VC``; below it the bound is
        vacuous and its formula undefined), ``delta`` is not in (0, 1), or the groups are
        invalid as in :func:`effective_sample_size`.

    Examples
    --------
    >>> from sklearn_privacy.werm import generalization_bound
    >>> equal = generalization_bound(11, 0.05, [5000, 5000], [0.5, 0.5])
    >>> skewed = generalization_bound(11, 0.05, [5000, 5000], [0.97, 0.03])
    >>> bool(equal < skewed)
    True
    """
    vc_dim, delta = float(vc_dim), float(delta)
    sizes, _ = _check_groups(group_sizes, group_weights)
    n = sizes.sum()
    if vc_dim > n:
        raise ValueError(
            f"vc_dim={vc_dim:g} exceeds the total sample size sum(group_sizes)={n:g}; the "
            "bound of Theorem 3.2 needs at least as many samples as the VC dimension."
        )
    n_eff = effective_sample_size(group_sizes, group_weights)
    gamma2 = max(4.0 / vc_dim, 1.0)
    return float(2 * np.sqrt(vc_dim / n_eff) * np.sqrt(gamma2 + np.log(n / vc_dim))
                 + np.sqrt(2 * np.log(2 / delta) / n_eff))


@validate_params(
    {
        "setting": [StrOptions({"public_reference", "equal_privacy",
                                "high_reference_privacy"})],
        "n_train": [_SIZE],
        "n_reference_samples": [_SIZE],
    },
    prefer_skip_nested_validation=True,
)
def weight_for_setting(setting, n_train, n_reference_samples) -> float:
    """Reference weight ``w`` for the three privacy settings of the WERM paper.

    * ``"public_reference"``: reference data need no protection; ``w = 1`` (the training
      data are not used at all, the strongest training-data privacy).
    * ``"equal_privacy"``: ``eps_T = eps_R``, i.e. ``w = N_R / N``; this also maximises
      ``N_eff`` (``= N``), the best generalisation bound.
    * ``"high_reference_privacy"``: reference data must not leak; ``w = 0``.

    The paper selects its reported models empirically (attack-accuracy thresholds, see
    the evaluation example); these are the theory's starting points for the search.

    Parameters
    ----------
    setting : {"public_reference", "equal_privacy", "high_reference_privacy"}
        Which group must be protected, as described above.
    n_train, n_reference_samples : float
        Positive, finite sizes of the training and reference groups.

    Returns
    -------
    w : float in [0, 1]
        Weight of the reference group; the training group gets ``1 - w``.

    Raises
    ------
    TypeError
        If a size is not a real number (booleans are refused).
    ValueError
        If ``setting`` is unknown or a size is not positive and finite.

    Examples
    --------
    >>> from sklearn_privacy.werm import weight_for_setting
    >>> weight_for_setting("equal_privacy", 1000, 3000)
    0.75
    """
    n_train, n_reference_samples = float(n_train), float(n_reference_samples)
    if setting == "public_reference":
        return 1.0
    if setting == "high_reference_privacy":
        return 0.0
    return float(n_reference_samples / (n_train + n_reference_samples))
