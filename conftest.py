"""Suite-wide fixtures for the tests and the doctests of the package."""

import sys

import pytest


@pytest.fixture(autouse=True)
def _close_figures():
    """Close the figures a test or a doctest left open (pyplot keeps them alive, and
    matplotlib warns past 20, which the suite turns into an error)."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")
