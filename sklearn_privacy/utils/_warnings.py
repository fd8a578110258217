"""Warnings reported at the user's call, wherever inside the package they are raised."""

from __future__ import annotations

import os
import sys
import sysconfig
import warnings

import joblib
import sklearn


def _library_dirs():
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [package] + [os.path.dirname(m.__file__) for m in (sklearn, joblib)]
    dirs += [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]]
    return tuple(os.path.normcase(os.path.realpath(d)) + os.sep for d in dirs)


_LIBRARY_DIRS = _library_dirs()


def _is_library(filename):
    if filename.startswith("<"):       # <frozen ...>, <string> of the library's own exec
        return filename.startswith("<frozen")
    return os.path.normcase(os.path.realpath(filename)).startswith(_LIBRARY_DIRS)


def user_stacklevel() -> int:
    """``stacklevel`` (for a ``warnings.warn`` called by the caller of this function) of
    the first frame outside sklearn_privacy, scikit-learn, joblib and the standard library.
    """
    frame = sys._getframe(2)           # the caller of warn_user
    level = 2
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1


def warn_user(message, category, stacklevel=None):
    """``warnings.warn`` reported at the user's line (``stacklevel`` is computed).

    Parameters
    ----------
    message : str
    category : subclass of :class:`~sklearn_privacy.exceptions.SklearnPrivacyWarning`
    stacklevel : ignored
        Kept so that call sites read like ``warnings.warn``; the level is found by
        walking the stack, which stays right when the call goes through scikit-learn
        (``cross_validate``, ``Pipeline``, ``_fit_context``) or a changed call depth.
    """
    warnings.warn(message, category, stacklevel=user_stacklevel())
