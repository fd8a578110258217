"""The eigenvalue solver of an earlier revision, for before/after rows in one run.

``load(rev)`` reads ``sklearn_privacy/fil/_secular.py`` at git revision ``rev`` (the
repository must be a git checkout) and returns its ``largest_eigenvalue_rank2``;
``patched(fn)`` makes the engine use it (the starting points of the current solver are
dropped: the old one had none), on all poles (``all_poles()``: the current solver without
skeleton poles).
"""

from __future__ import annotations

import contextlib
import subprocess
import types
from pathlib import Path

import numpy as np

import sklearn_privacy.fil._eta._engine as engine_module

#: Last revision before the Newton-on-psi solver (bisection branch for rows whose
#: largest eigenvalue lies below the top pole).
BEFORE = "a6a7b88"


def load(rev=BEFORE):
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(["git", "show", f"{rev}:sklearn_privacy/fil/_secular.py"],
                            cwd=root, capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("_secular_before")
    exec(compile(source, f"{rev}:_secular.py", "exec"), module.__dict__)
    return module.largest_eigenvalue_rank2


def load_or_none(rev=BEFORE):
    """``load(rev)``, or None (with a note) outside a git checkout."""
    try:
        return load(rev)
    except Exception as exc:  # not a git checkout, or git missing
        print(f"# before: unavailable ({exc})")
        return None


@contextlib.contextmanager
def all_poles():
    """The engine without skeleton poles (every row's secular sums over all p poles)."""
    original = engine_module.compress_poles
    engine_module.compress_poles = lambda d: None
    try:
        yield
    finally:
        engine_module.compress_poles = original


@contextlib.contextmanager
def patched(fn):
    original = engine_module.largest_eigenvalue_rank2

    def solver(s, d, At, vt, alpha, beta, *, x0=None, block_rows=None, offset=None,
               **kwargs):
        # the engine of that revision added the intercept row to the rotation and called
        # the solver once per cache-sized block
        if offset is not None:
            At += offset
        block_rows = block_rows or len(s)
        out = np.empty(len(s))
        for b in range(0, len(s), block_rows):
            sl = slice(b, b + block_rows)
            out[sl] = fn(s[sl], d, At[sl], vt, alpha[sl], beta[sl], **kwargs)
        return out

    engine_module.largest_eigenvalue_rank2 = solver
    try:
        with all_poles():
            yield
    finally:
        engine_module.largest_eigenvalue_rank2 = original
