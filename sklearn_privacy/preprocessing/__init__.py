"""Preprocessing that keeps a published object's privacy claim finite.

- :class:`BoundedScaler` -- clip to declared bounds and rescale: no state learned from
  the rows (data-independent).
- :class:`DPStandardScaler` -- standardise with a differentially private mean and
  variance of bounded columns; its (epsilon, delta) composes with the model's in
  :func:`sklearn_privacy.privacy_claim`.
- :class:`DPQuantileScaler`, :class:`DPRowNormClipper` -- bounds when none can be
  declared: private quantiles of the columns (or of the row norms) by the exponential
  mechanism, pure DP, composed with the model in :func:`sklearn_privacy.privacy_claim`.
- :class:`PublicSchema` -- the public facts about the data (columns, dtypes, bounds,
  categories, label set) declared once; raw values mapped onto them by declared rules,
  and the matching encoder (:meth:`PublicSchema.make_encoder`).

Encoders need no new class: ``OneHotEncoder(categories=[...], handle_unknown="ignore")``
is recognised as data-independent by :func:`~sklearn_privacy.privacy_claim` when its
``categories_`` equal the declared categories with the declared dtype.
"""

from ._bounded import BoundedScaler
from ._dp_quantile import DPQuantileScaler, DPRowNormClipper
from ._dp_scaler import DPStandardScaler
from ._schema import PublicSchema

__all__ = ["BoundedScaler", "DPQuantileScaler", "DPRowNormClipper", "DPStandardScaler",
           "PublicSchema"]
