"""The GLM core of the FIL and the DP estimators: losses, exact minimisers, row bounds."""
