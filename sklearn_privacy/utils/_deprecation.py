"""Renamed parameters: the old spelling keeps working for one release, with a FutureWarning.

scikit-learn's convention: a parameter renamed in version ``X`` keeps its old name as a
keyword whose default is the string ``"deprecated"``; passing it warns with a
``FutureWarning`` naming the new name and the release that removes the old one (here
the next minor release: nothing was published to a package index before 1.0), and passing
both is an error.
"""

from __future__ import annotations

import warnings

DEPRECATED = "deprecated"


def renamed_parameter(new_value, old_value, *, old: str, new: str, where: str,
                      since: str = "0.3", removed: str = "0.4", new_default=None):
    """The value to use for a parameter renamed from ``old`` to ``new``.

    Parameters
    ----------
    new_value : object
        What the caller passed under the new name (``new_default`` when not passed).
    old_value : object
        What the caller passed under the old name (``"deprecated"`` when not passed).
    old, new : str
        The two names.
    where : str
        The function or method, for the messages (``"WERMClassifier.fit"``).
    since, removed : str
        The release that renamed the parameter and the one that removes the old name.
    new_default : object, default=None
        The default of the new name, to tell "not passed" from "passed".

    Returns
    -------
    value : object
        ``old_value`` when only the old name was given (after a ``FutureWarning``), else
        ``new_value``.

    Raises
    ------
    TypeError
        Both names were given.
    """
    if isinstance(old_value, str) and old_value == DEPRECATED:
        return new_value
    if new_value is not new_default:
        raise TypeError(f"{where} got both {new}= and its old name {old}=; pass {new}= only.")
    warnings.warn(
        f"{where}: the parameter {old}= was renamed {new}= in {since} and the old name will "
        f"be removed in {removed}; pass {new}= instead.",
        FutureWarning, stacklevel=3,
    )
    return old_value
