"""Warnings that tests expect where they exercise the path that gives them.

Each mark filters one message of one warning class, for the tests it decorates only:
the same warning anywhere else in the suite is still printed, and where a warning is the
subject of a test that test asserts it with ``pytest.warns`` (named below). Nothing here is
a global filter: ``setup.cfg`` adds none for the package's own warning classes.
"""

import pytest

#: PrivateMulticalibrator's advice on its calibration data: the budget of noisy answers
#: ran out before the last cell, no cell is large enough to be corrected, an update moved
#: a cell by less than its sampling noise. Expected on the small data sets of the tests
#: that fit it for another purpose; asserted in tests/test_multicalibration_figures.py
#: and tests/test_multicalibration_counts.py.
MULTICALIBRATION_ADVICE = pytest.mark.filterwarnings(
    "ignore:.*(updates shifted a cell|The private fit|Some groups have no)"
    ":sklearn_privacy.exceptions.StatisticalWarning")

#: strip_for_release resetting a fixed seed to None (asserted in
#: tests/test_release_claims.py): expected where tests strip seeded fits.
STRIP_RESETS_SEED = pytest.mark.filterwarnings(
    "ignore:strip_for_release.*set to None:sklearn_privacy.exceptions.PrivacyWarning")

#: A Generator or RandomState instance as random_state (clones share its stream; asserted
#: in tests/test_release_claims.py): expected where tests pass one on purpose.
SEED_INSTANCE = pytest.mark.filterwarnings(
    "ignore:.*random_state is a (Generator|RandomState) instance"
    ":sklearn_privacy.exceptions.PrivacyWarning")

#: The DP linear models' "the noise dominates" warning, asserted in
#: tests/test_dp_linear_ssp.py; expected on the tens of rows of contract tests.
NOISE_DOMINATES = pytest.mark.filterwarnings(
    "ignore::sklearn_privacy.exceptions.NoiseDominatesWarning")

#: FIL with epsilon: the expected norm of the noise swamps the coefficients (asserted in
#: tests/test_dp_epsilon.py); expected on the small data of tests about other things.
FIL_NOISE_DOMINATES = pytest.mark.filterwarnings(
    "ignore:.*the expected norm of the noise:sklearn_privacy.exceptions.PrivacyWarning")

#: IRFIL's reweighting reports (weights concentrate, the attribute's eta not equalised),
#: asserted in tests/test_irfil.py and tests/test_irfil_attribute_warning.py; expected
#: where tests read IRFIL attributes on small data.
IRFIL_REWEIGHTING = pytest.mark.filterwarnings(
    "ignore:IRFIL.*(the reweighting concentrates|with sensitive_features)"
    ":sklearn_privacy.exceptions.PrivacyWarning")

#: The private boosting's "expected to lose to a constant" warning (asserted in
#: tests/test_additive.py): expected on the tens of rows of tests about other things.
BOOSTING_NOISE_DOMINATES = pytest.mark.filterwarnings(
    "ignore:DPBoosting.*expected to lose to a constant"
    ":sklearn_privacy.exceptions.NoiseDominatesWarning")
