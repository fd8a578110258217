"""The report's release section: what the pickle holds, training rows stored in it."""

from __future__ import annotations

import pickle
import warnings

import numpy as np

from ..attacks._validation import is_frame, n_rows, take_rows
from . import _verdicts as V
from ._common import _CHUNK
from ._disclosure import count_p_value, register_tests
from ._section import ReportSection
from ._structural import _row_hash


def _row_arrays(obj, width, path, out, depth=0, seen=None):
    """Every 2-D float array of ``width`` columns held by ``obj`` (attributes, nested)."""
    from sklearn.base import BaseEstimator

    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 3:
        return out
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if obj.ndim == 2 and obj.dtype.kind == "f" and obj.shape[1] == width and obj.size:
            out.append((path, obj))
        return out
    if hasattr(obj, "tocsr") and getattr(obj, "ndim", 0) == 2:
        if obj.shape[1] == width and obj.dtype.kind == "f" and obj.shape[0] <= 200_000:
            out.append((path, obj.toarray()))
        return out
    if isinstance(obj, BaseEstimator):
        for k, v in vars(obj).items():
            _row_arrays(v, width, f"{path}.{k}" if path else k, out, depth + 1, seen)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj[:1000]):
            _row_arrays(v, width, f"{path}[{i}]", out, depth + 1, seen)
    elif isinstance(obj, dict):
        for k, v in list(obj.items())[:1000]:
            _row_arrays(v, width, f"{path}[{k!r}]", out, depth + 1, seen)
    return out


def _verbatim_search(est, X):
    """Training rows that the published object holds, in any space it can be read in.

    Every step of a pipeline sees the training rows transformed by the steps before it;
    a fitted attribute of that step that has one column per input of the step (support
    vectors, stored samples, ...) is compared row by row (exact bits, float32 storage
    included) with the transformed training rows. A match is a training row the pickle
    reconstructs (through the inverse transforms of the steps before, when they are
    invertible, as a scaler's is). Returns ``(found, searched, reason)``, ``found`` a
    boolean mask over the training rows (None when the search could not run).
    """
    steps = list(est.steps) if hasattr(est, "steps") else [("model", est)]
    n = n_rows(X)
    found = np.zeros(n, bool)
    held = []
    current = X
    for i, (name, step) in enumerate(steps):
        if step is None or step == "passthrough":
            continue
        try:
            width = (current.shape[1] if hasattr(current, "shape")
                     else np.asarray(current).shape[1])
        except (IndexError, AttributeError):
            return None, "", f"the input of step '{name}' has no column count"
        arrays = _row_arrays(step, width, name, [])
        numeric_input = not is_frame(current) or all(
            str(t).startswith(("float", "int", "uint", "bool")) for t in current.dtypes)
        if arrays and not numeric_input:
            return None, "", (f"step '{name}' holds row-shaped arrays but its input has "
                           "non-numeric columns")
        for path, A in arrays:
            held.append(f"{path} ({A.shape[0]:,} row{'s' if A.shape[0] != 1 else ''})")
            single = A.dtype == np.float32          # compare at the stored precision
            stored = _row_hash(np.asarray(A, dtype=np.float64))
            for start in range(0, n, _CHUNK):
                rows = take_rows(current, np.arange(start, min(start + _CHUNK, n)))
                R = rows.toarray() if hasattr(rows, "toarray") else np.asarray(rows,
                                                                               dtype=float)
                if single:
                    R = R.astype(np.float32)
                found[start:start + R.shape[0]] |= np.isin(_row_hash(R), stored)
        if i == len(steps) - 1:
            break
        try:
            current = step.transform(current)
        except Exception as exc:  # noqa: BLE001 - the step's refusal ends the search
            # the exception's text can quote a training value: its type only on the page
            return None, "", (f"the training rows could not be pushed through step '{name}' "
                              f"({type(exc).__name__}; the message is in the private "
                              "channel)", f"{type(exc).__name__}: {exc}")
    where = (", ".join(held) if held else
             "no fitted attribute has one column per input of its step")
    searched = (f"every fitted array with one column per input of its step, compared with "
                f"the training rows as that step sees them: {where}")
    return found, searched, None


def _release_section(ctx):
    from ..utils import strip_for_release

    est = ctx["estimator"]
    sec = ReportSection("release", "What the pickled release holds")
    blob = pickle.dumps(est)
    sec.table.append(("pickle size", f"{len(blob):,} bytes"))
    fitted = sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("_"))
    sec.table.append(("fitted attributes", ", ".join(fitted) if fitted else "(pipeline)"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            strip_for_release(est)
        sec.table.append(("strip_for_release", "accepted"))
    except Exception as exc:  # noqa: BLE001 - its refusal is the finding
        sec.table.append(("strip_for_release", f"refused: {exc}"))
    X = ctx["X"]
    n = n_rows(X)
    try:
        found, searched, reason = _verbatim_search(est, X)
    except (TypeError, ValueError, MemoryError) as exc:
        found, searched, reason = None, "", (f"the search failed ({type(exc).__name__}; "
                                             "the message is in the private channel)",
                                             str(exc))
    if isinstance(reason, tuple):   # (what the page says, the exception: private)
        reason, detail = reason
        sec.private_table.append(("why the search could not run", detail))
    # the raw rows' bytes, as a second route (a copy kept outside any estimator)
    if reason is None and not is_frame(X) and not hasattr(X, "tocsr") \
            and len(blob) < 50_000_000:
        A = np.asarray(X)
        if A.dtype.kind == "f":
            rows = ctx["rng"].choice(n, size=min(50, n), replace=False)
            for i in rows:
                found[i] |= np.ascontiguousarray(A[i], dtype=np.float64).tobytes() in blob
            searched += f"; and the bytes of {rows.size} sampled raw rows"
    if reason is not None:
        sec.add(V.verbatim_verdict(0, n, searched=searched, not_checked_reason=reason))
        return sec
    # a count of training rows: each row adds 0 or 1 given the pickle (accounted)
    count = ctx["ledger"].figure("training rows the pickle holds", int(found.sum()),
                                 source="training", bound=1)
    shown = max(0, int(round(count.value)))
    ctx["ledger"].show(sec, "cell", ("training rows the pickle holds (Laplace noise of scale "
                                     f"{count.scale:.3g})", f"about {shown:,} of {n:,}"),
                       count)
    sec.private_table.append(("training rows the pickle holds (exact)",
                              f"{int(found.sum()):,} of {n:,}"))

    def write(rejected, adjusted, method):   # a finding tested with the page's others
        return [V.verbatim_verdict(shown if rejected[0] else 0, n, searched=searched,
                                   p_value=adjusted[0], method=method)]

    register_tests(ctx, sec, [count], [count_p_value(count)], write)
    return sec
