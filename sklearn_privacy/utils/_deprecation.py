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
    warn_renamed(f"{where}: the parameter {old}= was renamed {new}=", new=f"{new}=",
                 since=since, removed=removed, stacklevel=4)
    return old_value


def warn_renamed(what: str, *, new: str, since: str = "0.3", removed: str = "0.4",
                 reason: str = "", stacklevel: int = 3) -> None:
    """The ``FutureWarning`` of a renamed spelling (the only place the package emits one).

    Parameters
    ----------
    what : str
        The old spelling and what happened to it (``"EtaDisplay.groups was renamed
        EtaDisplay.group_codes"``).
    new : str
        What to use instead.
    since, removed : str
        The release that renamed it and the one that removes the old spelling.
    reason : str, default=""
        Why, appended to the message.
    stacklevel : int, default=3
        As in :func:`warnings.warn`, counted from the caller of this function's caller.
    """
    warnings.warn(f"{what} in {since} and the old spelling will be removed in {removed}; "
                  f"use {new} instead.{' ' + reason if reason else ''}", FutureWarning,
                  stacklevel=stacklevel)
