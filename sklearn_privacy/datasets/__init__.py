"""Loaders for the real data sets bundled with the package.

The compressed files live in ``sklearn_privacy/datasets/data`` together with
``ATTRIBUTION.txt`` (sources and licenses); no loader touches the network.
:func:`make_count_data` simulates a count table (no real records).
"""

from ._adult import load_adult
from ._counts import make_count_data
from ._iwpc import load_iwpc
from ._mnist import load_mnist, load_mnist01

__all__ = ["load_adult", "load_iwpc", "load_mnist", "load_mnist01", "make_count_data"]
