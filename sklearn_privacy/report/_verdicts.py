"""Every sentence of the privacy report, each from one rule on numbers with uncertainty.

Each function takes the figures of one check (an estimate, its interval, a p-value, what
was searched) and returns a :class:`Verdict`: the outcome as a short key and the sentence
the page prints. The rules are the only place a sentence is made, so each can be tested
for its outcomes and at its boundaries. Two principles:

* a test statistic decides (interval or p-value at the report's ``confidence``), never a
  fixed margin on a point estimate; the interval and the p-value are in the sentence;
* a "no" is said only by a check that could have found a "yes"; a check that could not
  run says "not checked", an inconclusive one "cannot tell".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: outcome keys that should stop a reader from publishing as is
FLAGS = frozenset({"leaks", "verbatim", "below_baseline", "not_above_baseline",
                   "refuted", "population_differs", "below_chance", "beats_prior"})
#: structural findings (``report._structural``): disclosure the pickle proves, and a
#: model with fewer residual degrees of freedom than k
FLAGS = FLAGS | {"disclosive", "risk"}


@dataclass(frozen=True)
class Verdict:
    """One conclusion of the report: an outcome key and the sentence shown.

    Parameters
    ----------
    outcome : str
        Short key of the outcome (e.g. ``"leaks"``, ``"cannot_tell"``, ``"not_checked"``).
    text : str
        The sentence shown on the page.
    """

    outcome: str
    text: str

    @property
    def flagged(self) -> bool:
        """Whether the outcome is a finding a reader must act on before publishing."""
        return self.outcome in FLAGS

    def __str__(self) -> str:
        return self.text


def _ci(lo, hi, digits=3):
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _alpha(confidence):
    """The test level ``1 - confidence``, rounded (1 - 0.95 is 0.050000000000000044)."""
    return round(1.0 - float(confidence), 12)


def _half_level_note(p_value, low, confidence):
    """Why a one-sided p below ``1 - confidence`` is not a finding when the rule also needs
    the two-sided interval to exclude 0 (a one-sided test at half the level)."""
    level = _alpha(confidence)
    if p_value < level and not low > 0:
        return (f"; p is below {level:g} but above the {level / 2:g} at which the "
                f"{confidence:.0%} two-sided interval excludes 0")
    return ""


def _p(p):
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def claim_verdict(epsilon, delta):
    """The claim of the published object (from :func:`sklearn_privacy.privacy_claim`)."""
    if np.isfinite(epsilon):
        return Verdict("claimed", f"The published object is claimed ({epsilon:.3g}, "
                                  f"{delta:.2g})-differentially private with respect to one "
                                  "training row (a guarantee, unlike the measurements below).")
    return Verdict("no_claim", "No differential-privacy guarantee is claimed for the "
                               "published object (epsilon = inf); the sections below measure "
                               "what leaks, and measurements are not guarantees.")


def verbatim_verdict(n_found, n_checked, *, searched, not_checked_reason=None,
                     noise_threshold=None, confidence=0.95, p_value=None, method=None):
    """Whether training rows can be read back from the pickle.

    Parameters
    ----------
    n_found, n_checked : int
        Training rows found, among the rows checked (with ``noise_threshold``: the noisy
        count, 0 when it does not exceed the threshold).
    searched : str
        What was searched (said in the sentence, so that a "no" states its reach).
    not_checked_reason : str or None
        Why the search could not run; then the outcome is ``"not_checked"``.
    noise_threshold : float or None
        The count was released with Laplace noise; counts up to this threshold are what
        the noise alone reaches at ``confidence`` (one-sided). A "no" then says that the
        check finds a "yes" only above it.
    confidence : float
        Level of the threshold.
    p_value, method : float, str or None
        The count was released with Laplace noise and tested, with the page's other
        findings, by ``method`` (a multiple-comparison procedure at the page's false-alarm
        level): ``n_found`` is the noisy count when the test rejects "no row held", else
        0; ``p_value`` is the adjusted one-sided p-value.
    """
    if not_checked_reason is not None:
        return Verdict("not_checked", "Whether training rows can be read back from the "
                                      f"pickle was not checked: {not_checked_reason}.")
    if method is not None:
        test = f"one-sided {_p(p_value)} adjusted; {method}"
        if n_found > 0:
            return Verdict("verbatim", f"About {n_found:,} of the {n_checked:,} training "
                                       "rows can be read back from the pickle (a noisy "
                                       f"count; {test}; {searched}): publishing it "
                                       "publishes them.")
        return Verdict("none_found", f"No more of the {n_checked:,} training rows were found "
                                     "in the pickle than the noise of this page's count "
                                     f"explains ({test}); searched: {searched}.")
    if noise_threshold is not None:
        if n_found > 0:
            return Verdict("verbatim", f"About {n_found:,} of the {n_checked:,} training "
                                       "rows can be read back from the pickle (a noisy "
                                       f"count, above the {noise_threshold:.0f} that its "
                                       f"noise reaches at {confidence:.0%}; {searched}): "
                                       "publishing it publishes them.")
        return Verdict("none_found", f"No more of the {n_checked:,} training rows were found "
                                     "in the pickle than the noise of this page's count "
                                     f"allows (it detects more than {noise_threshold:.0f} "
                                     f"rows held, at {confidence:.0%}); searched: "
                                     f"{searched}.")
    if n_found > 0:
        return Verdict("verbatim", f"{n_found:,} of the {n_checked:,} training rows checked "
                                   f"can be read back from the pickle ({searched}): "
                                   "publishing it publishes them.")
    return Verdict("none_found", f"None of the {n_checked:,} training rows checked was found "
                                 f"in the pickle; searched: {searched}.")


def utility_verdict(metric, value, baseline_name, baseline, diff_low, diff_high, p_value,
                    n, confidence):
    """Is the release better than the trivial baseline on the population rows?

    ``diff_low, diff_high`` is the ``confidence`` interval of (score - baseline score) on
    the same ``n`` rows (paired). Above: the whole interval is above 0. Below: the whole
    interval is below 0. Otherwise "cannot tell", which is flagged too: a release that is
    not shown to beat the baseline has no use to trade privacy against.
    """
    head = (f"{metric} {value:.3f} on {n:,} population rows vs {baseline:.3f} for "
            f"{baseline_name}; difference {_ci(diff_low, diff_high)} at {confidence:.0%} "
            f"(one-sided {_p(p_value)})")
    if diff_low > 0:
        return Verdict("above_baseline", f"Useful: {head}.")
    if diff_high < 0:
        return Verdict("below_baseline", f"Flag: the release does worse than {baseline_name}"
                                         f": {head}. It has no utility to trade privacy "
                                         "against.")
    head += _half_level_note(p_value, diff_low, confidence)
    return Verdict("not_above_baseline", f"Flag: the release is not shown to beat "
                                         f"{baseline_name}: {head}.")


def membership_verdict(attack, auc, low, high, confidence, *, n_members, n_nonmembers,
                       leaks=None, p_value=None, method=None, population_differs=None,
                       noisy=False, below=None):
    """Membership inference against the chance level 0.5 of the AUC.

    Parameters
    ----------
    attack : str
        The attack's name.
    auc, low, high : float
        The AUC and its ``confidence`` interval.
    confidence : float
        The report's confidence.
    n_members, n_nonmembers : int
        Rows on each side.
    leaks : bool or None
        The decision of a multiple-comparison procedure over every membership test of
        the page (``method`` names it; ``p_value`` is the adjusted p-value). None: the
        interval decides (``low > 0.5``), for a page with this one test.
    p_value : float or None
        The (adjusted) one-sided p-value against 0.5, said in the sentence.
    method : str or None
        The multiple-comparison control, said in the sentence.
    population_differs : bool or None
        The outcome of the same page's two-sample test. An AUC below chance is read as
        "the population rows are most likely not from the training distribution" only
        when it is True; otherwise the sentence says what else can cause it.
    noisy : bool
        The AUC was released with noise (its interval covers the noise).
    below : bool or None
        The decision of the same procedure on "below chance" (the lower one-sided test).
        None: the interval decides (``high < 0.5``).
    """
    tail = (f"AUC {auc:.3f}{' (noisy)' if noisy else ''}, {confidence:.0%} interval "
            f"{_ci(low, high)}, {n_members:,} members and {n_nonmembers:,} non-members")
    if p_value is not None:
        tail += f", one-sided {_p(p_value)}" + (" adjusted" if method and "Holm" in method
                                                 else "")
    if method:
        tail += f"; {method}"
    decided_leak = (low > 0.5) if leaks is None else bool(leaks)
    if decided_leak:
        return Verdict("leaks", f"Membership leaks: the {attack} attack tells training rows "
                                f"from population rows better than chance ({tail}).")
    if (high < 0.5) if below is None else bool(below):
        if population_differs:
            why = ("and this page's two-sample test finds that the population rows differ "
                   "from the training rows: the population rows are most likely not from "
                   "the training distribution, and this comparison says nothing about "
                   "membership.")
        elif population_differs is None:
            why = ("A model rarely fits population rows better than its own training rows "
                   "by chance; a difference between the population and the training rows "
                   "would explain it (that test is not on this page). This comparison "
                   "says nothing about membership.")
        else:
            why = ("This page's two-sample test does not find the population rows "
                   "different from the training rows, so the cause is not established; "
                   "this comparison says nothing about membership.")
        where = ("the interval lies below 0.5" if below is None
                 else "significantly below 0.5 by the same correction")
        return Verdict("below_chance", f"The {attack} attack scores training rows *lower* "
                                       f"than population rows ({tail}; {where}). {why}")
    return Verdict("cannot_tell", f"Cannot tell: the {attack} attack does not separate "
                                  f"members from non-members at this sample size ({tail}; "
                                  "not significant). A stronger attack or more rows may.")


def group_membership_verdict(column, groups, confidence, *, rejected=None, adjusted=None,
                             method=None, hidden=0, min_group_size=None):
    """Per-group membership AUCs: which group's attack is above chance.

    ``groups`` is a list of ``(level, auc, low, high, n_members, n_nonmembers)``.
    ``rejected`` (one boolean per group) is the decision of the multiple-comparison
    procedure ``method`` over every membership test of the page, with ``adjusted``
    p-values; without it a group leaks when its interval lies above 0.5 (no correction).
    ``hidden`` groups were not shown (fewer than ``min_group_size`` people).
    """
    note = ""
    if hidden:
        note = (f" {hidden} group{'s' if hidden != 1 else ''} with fewer than "
                f"{min_group_size} people not shown.")
    if not groups:
        return Verdict("not_checked", f"Membership by '{column}' was not checked: no group "
                                      "has enough members and non-members." + note)
    if rejected is None:
        rejected = [g[2] > 0.5 for g in groups]
    above = [g for g, r in zip(groups, rejected, strict=True) if r]
    worst_i = max(range(len(groups)), key=lambda i: groups[i][2])
    worst = groups[worst_i]
    desc = (f"'{worst[0]}' (AUC {worst[1]:.3f}, {confidence:.0%} interval "
            f"{_ci(worst[2], worst[3])}, about {worst[4]:,} / {worst[5]:,} rows"
            + (f", adjusted one-sided {_p(adjusted[worst_i])}" if adjusted else "") + ")")
    how = f" ({method})" if method else ""
    if above:
        return Verdict("leaks", f"Membership leaks in {len(above)} of {len(groups)} groups "
                                f"of '{column}'{how}; the clearest: {desc}." + note)
    return Verdict("cannot_tell", f"Cannot tell for any group of '{column}' "
                                  f"({len(groups)} groups{how}): none is significant; the "
                                  f"highest lower limit is {desc}." + note)


def population_verdict(auc, low, high, p_value, confidence, n):
    """Classifier two-sample test: do the population rows resemble the training rows?"""
    tail = (f"held-out AUC of a classifier trained to tell them apart {auc:.3f} "
            f"{_ci(low, high)}, one-sided {_p(p_value)} against 0.5, {n:,} held-out rows")
    if p_value < _alpha(confidence):
        return Verdict("population_differs", f"Flag: the population rows differ from the "
                                             f"training rows ({tail}). Membership figures "
                                             "then mix membership with this difference.")
    return Verdict("population_alike", f"No difference between the population rows and the "
                                       f"training rows was detected ({tail}).")


def _inversion_tail(accuracy, low, high, prior, p_value, n):
    return (f"accuracy {accuracy:.3f} {_ci(low, high)} on {n:,} rows vs {prior:.3f} for "
            f"the most frequent value; exact binomial one-sided {_p(p_value)}")


def inversion_verdict(column, kind, accuracy, low, high, prior, p_value, n, confidence):
    """A categorical attribute: does the attack beat guessing the most frequent value?

    Decided by the exact one-sided binomial test of the accuracy against the prior
    baseline's rate, at level ``1 - confidence``.
    """
    tail = _inversion_tail(accuracy, low, high, prior, p_value, n)
    if p_value < _alpha(confidence):
        return Verdict("beats_prior", f"'{column}' leaks: the {kind} attack beats guessing "
                                      f"the most frequent value ({tail}).")
    return Verdict("cannot_tell", f"'{column}': the {kind} attack is not shown to beat "
                                  f"guessing the most frequent value ({tail}).")


def release_inversion_verdict(column, sigma, what, accuracy, low, high, prior, p_value, n,
                              confidence, *, n_draws, n_left_out=0):
    """A categorical attribute under a hypothetical noisy release of the audited parameters.

    The rule of :func:`inversion_verdict` (the exact one-sided binomial test of the
    accuracy against the prior baseline's rate, at level ``1 - confidence``) applied to
    the white-box attack on ``n_draws`` simulated releases of the audited minimiser with
    Gaussian noise of ``sigma`` (``what``: "weights" or "coefficients"). The published
    model carries no such noise, so the sentence is conditional, and a "not shown" says
    nothing about the published parameters. ``n_left_out`` sampled rows were not attacked
    (a candidate minimum of theirs is not certified, so the likelihood is undefined);
    the sentence then says the figures are about the other rows.
    """
    cond = f"If the {what} were released with Gaussian noise of sigma = {sigma:.4g}"
    tail = (_inversion_tail(accuracy, low, high, prior, p_value, n)
            + f"; {n_draws:,} simulated releases")
    if n_left_out:
        tail += (f"; {n_left_out:,} sampled rows left out, whose candidate minima are not "
                 "certified: the figures are about the other rows")
    who = "an adversary who knows every other training row and this row's other values"
    if p_value < _alpha(confidence):
        return Verdict("beats_prior", f"{cond}, '{column}' leaks: the white-box attack "
                                      f"({who}) beats guessing the most frequent value "
                                      f"({tail}).")
    return Verdict("cannot_tell", f"{cond}, the white-box attack on '{column}' ({who}) is "
                                  f"not shown to beat guessing the most frequent value "
                                  f"({tail}). This is about that noisy release only: the "
                                  f"published {what} carry no noise.")


def numeric_inversion_verdict(column, mae, baseline_mae, diff_low, diff_high, p_value, n,
                              confidence, *, without_model_mae=None, gain_low=None,
                              gain_high=None, gain_p_value=None):
    """A numeric attribute, in its own units: mean absolute error vs predicting the median.

    ``diff_low, diff_high``: interval of (baseline error - attack error), paired over rows.
    With ``without_model_mae`` (the same attack without querying the model) the verdict
    "leaks" needs the model's answers to lower the error too (``gain_p_value``): what the
    population's correlations reveal without the model is not a leak of the model.
    """
    tail = (f"mean absolute error {mae:.3g} vs {baseline_mae:.3g} for the median, "
            f"improvement {_ci(diff_low, diff_high, 3)} in the column's units on {n:,} rows, "
            f"one-sided {_p(p_value)}{_half_level_note(p_value, diff_low, confidence)}")
    beats = p_value < _alpha(confidence) and diff_low > 0
    if without_model_mae is None:
        if beats:
            return Verdict("beats_prior", f"'{column}' leaks: the regression attack "
                                          f"estimates it better than the median ({tail}).")
        return Verdict("cannot_tell", f"'{column}': the regression attack is not shown to "
                                      f"beat predicting the median ({tail}).")
    gain = (f"without querying the model {without_model_mae:.3g}, the model's answers "
            f"lower it by {_ci(gain_low, gain_high, 3)}, one-sided {_p(gain_p_value)}"
            f"{_half_level_note(gain_p_value, gain_low, confidence)}")
    if beats and gain_p_value < _alpha(confidence) and gain_low > 0:
        return Verdict("beats_prior", f"'{column}' leaks through the model: the regression "
                                      f"attack estimates it better than the median ({tail}) "
                                      f"and better than without the model ({gain}).")
    if beats:
        return Verdict("population_inference", f"'{column}': estimated better than the "
                                               f"median ({tail}), but the model's answers "
                                               f"are not shown to help ({gain}): the other "
                                               "columns and the label reveal it, not the "
                                               "model.")
    return Verdict("cannot_tell", f"'{column}': the regression attack is not shown to beat "
                                  f"predicting the median ({tail}).")


def audit_verdict(claimed_epsilon, bounds, confidence):
    """Empirical lower bounds on epsilon against the claim.

    ``bounds`` is a list of ``(name, epsilon_lower_bound)``.
    """
    if not bounds:
        return Verdict("not_checked", "No privacy audit was run (no canaries and no "
                                      "finite claim to audit).")
    name, best = max(bounds, key=lambda t: t[1])
    if np.isfinite(claimed_epsilon):
        if best > claimed_epsilon:
            return Verdict("refuted", f"Flag: the claimed epsilon = {claimed_epsilon:.3g} "
                                      f"is refuted: the {name} proves epsilon >= {best:.3g} "
                                      f"at {confidence:.0%}.")
        return Verdict("not_refuted", f"The claimed epsilon = {claimed_epsilon:.3g} is not "
                                      f"refuted (best audit lower bound {best:.3g} at "
                                      f"{confidence:.0%}, {name}); an audit can only refute "
                                      "a claim, not confirm it.")
    if best > 0:
        return Verdict("leaks", f"Without a claim, the audits show the training is not "
                                f"epsilon-DP for any epsilon below {best:.3g} "
                                f"(at {confidence:.0%}, {name}).")
    return Verdict("cannot_tell", f"The audits found no evidence of leakage at "
                                  f"{confidence:.0%} (lower bound 0): this proves nothing "
                                  "about privacy, and nothing is claimed.")


def fil_verdict(max_eta, median_eta, units="in the units of the model's inputs", *,
                per_column=None, n_columns=None, skipped=()):
    """The per-example Fisher information loss, in words, column by column.

    With ``per_column`` (``(column, largest eta of that column)`` pairs), the sentence gives
    the Cramer-Rao bound of each column in that column's own units: the standard deviation
    of an unbiased estimate of one value of the most exposed row of that column is at
    least ``1 / eta``. The whole-row eta mixes the units of every column, so it is given
    as eta, without a standard deviation in one unit. Without ``per_column``, the bound is
    given for the whole row in ``units``.
    """
    if per_column:
        bounds = "; ".join(f"'{c}' >= {1 / e:.2g}" for c, e in per_column)
        more = ""
        if n_columns is not None and n_columns > len(per_column) + len(skipped):
            more = (f" (the first {len(per_column) + len(skipped)} of {n_columns} columns, "
                    "the sensitive ones first)")
        if skipped:
            more += ("; not computed for " + ", ".join(f"'{c}'" for c in skipped))
        return Verdict("fil", "An unbiased adversary who knows every other training value "
                              "estimates one value of a row with standard deviation at least "
                              "1/eta of that value's column; for the most exposed row of "
                              "each column, in the column's own units (one-hot columns: "
                              f"their one-hot values): {bounds}{more}. The whole-row eta "
                              f"(all columns together, mixed units) is at most "
                              f"{max_eta:.2g}; half of the rows are below {median_eta:.2g}.")
    return Verdict("fil", f"An unbiased adversary who knows every other training value "
                          f"estimates a row's values with standard deviation at least "
                          f"1/eta: for the most exposed row 1/{max_eta:.2g} = "
                          f"{1 / max_eta:.2g} ({units}); half "
                          f"of the rows have eta below {median_eta:.2g}.")


def published_rows_verdict(count):
    """Rows the preprocessing publishes verbatim (``count``: a public parameter of the
    step, such as ``Nystroem(n_components)``)."""
    return Verdict("verbatim", f"The preprocessing publishes {count} training rows verbatim "
                               "(Nystroem components_): their eta is infinite whatever the "
                               "noise; the figures below describe the other rows.")
