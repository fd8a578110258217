"""Post-processing of a boosting fit's released statistics: the class totals pooled
over the count histograms, the naive-Bayes first round of three classes or more, the
shrunk update of a feature's bins and the centring of the shapes."""

from __future__ import annotations

import numpy as np


def pooled_totals(total: np.ndarray, total_sd: float, counts, count_sd: float
                  ) -> np.ndarray:
    """Class totals from the noisy totals and the noisy per-class count histograms.

    Every count histogram counts each row once, so its sum over the bins is the class
    totals plus independent noise of variance ``n_bins * count_sd^2``; with the totals
    query (variance ``total_sd^2``) the inverse-variance weighted mean of these
    unbiased estimates has the smallest variance of their weighted means.
    Post-processing of released values.
    """
    weight = 1.0 / float(total_sd) ** 2
    acc, wsum = weight * np.asarray(total, dtype=np.float64), weight
    for c in counts:
        w_j = 1.0 / (c.shape[0] * float(count_sd) ** 2)
        acc, wsum = acc + w_j * c.sum(axis=0), wsum + w_j
    return acc / wsum


def naive_bayes_scores(counts: np.ndarray, pseudo: float) -> np.ndarray:
    """Naive-Bayes log-likelihoods of one feature's bins from noisy per-class counts.

    ``counts`` (shape ``(n_bins, K)``, noisy, possibly negative) are clipped at 0 and
    get ``pseudo`` added (additive smoothing: a count below the noise level carries no
    information, and the logarithm of a clipped count needs a floor); the result is
    ``log P(b | k) = log(N'[b, k] / sum_b N'[b, k])``, centred over the classes in every
    bin (a constant per bin does not change the softmax). Summed over the features
    with the log class shares as intercept, it is the naive-Bayes classifier of the
    binned features. Post-processing of released counts.
    """
    smoothed = np.maximum(np.asarray(counts, dtype=np.float64), 0.0) + float(pseudo)
    log_lik = np.log(smoothed / smoothed.sum(axis=0, keepdims=True))
    return log_lik - log_lik.mean(axis=1, keepdims=True)


def shape_step(S: np.ndarray, counts: np.ndarray, lam: float, smooth: float = 0.0
               ) -> np.ndarray:
    """The bins' updates from their noisy sums ``S`` (shape ``(n_bins, K)``) and noisy
    counts: the posterior mean of the bins' mean residuals under a Gaussian prior of
    precision ``lam`` on each (the ridge step ``S C / (C^2 + lam)``, ``C`` the counts
    clipped at 0) and, with ``smooth > 0`` and at least three bins, of precision
    ``smooth * lam`` on their second differences (neighbouring bins of a numeric
    feature have similar effects): the solution of ``(diag(C^2) + lam I + smooth lam
    D2^T D2) g = C S``. Post-processing of released values."""
    C = np.maximum(counts, 0.0)
    if smooth == 0.0 or C.size < 3:
        return S * (C / (C * C + lam))[:, None]
    D2 = np.diff(np.eye(C.size), n=2, axis=0)
    A = np.diag(C * C + lam) + (smooth * lam) * (D2.T @ D2)
    return np.linalg.solve(A, C[:, None] * S)


def centre_shapes(scores, bin_counts, intercept: np.ndarray) -> np.ndarray:
    """Centre every shape in place at the mean of its bins weighted by their noisy
    counts (clipped at 0; equal weights if none is positive) and return the intercept
    that absorbs the means: the model's predictions do not change. Post-processing."""
    for j, s in enumerate(scores):
        w = np.maximum(bin_counts[j], 0.0)
        w = w / w.sum() if w.sum() > 0 else np.full(w.size, 1.0 / w.size)
        mean = w @ s
        s -= mean
        intercept = intercept + mean
    return intercept
