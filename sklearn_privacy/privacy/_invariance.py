"""Refit a published object on neighbouring raw data sets and list what differs."""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import numbers
import re
import types
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, clone

from ..utils._progress import run_tasks
from ..utils.fixes import HasMethods, NumberInterval, StrOptions, validate_params
from ._attributes import _estimators_in, _published_state, declaration
from ._neighbours import _neighbours

__all__ = ["Difference", "InvarianceReport", "NEIGHBOUR_KINDS", "neighbour_invariance"]

#: The neighbouring data sets :func:`~sklearn_privacy.privacy.neighbour_invariance` builds,
#: each from one row: seven of its values (the default), three of its index label in a
#: frame, three exotic raw values.
NEIGHBOUR_KINDS = ("extreme", "missing", "unseen_category", "stray_string", "new_label",
                   "duplicate", "repeat",
                   "index_new", "index_duplicate", "index_string",
                   "huge_int", "nat", "nested_array")
_DEFAULT_KINDS = NEIGHBOUR_KINDS[:7]

_MAX_DEPTH = 12
_PAGE_SEEDS = 3             # renderings of the page on D that tell noise from figures
_MAX_PAGE_DIFFS = 5         # page differences listed per neighbour


@dataclass(frozen=True)
class Difference:
    """One observable that differs between the object fitted on D and on a neighbour.

    Parameters
    ----------
    neighbour : str
        The kind of neighbour (see the ``kinds`` of
        :func:`~sklearn_privacy.privacy.neighbour_invariance`) and the row replaced.
    path : str
        Where in the object (``"pipeline.steps[0][1].sparse_output_"``), or the
        observable: ``"<warnings>"``, ``"<printed>"``, ``"<repr>"``, ``"<page>"``,
        ``"<transcript> path"``.
    what : str
        ``"value"``, ``"dtype"``, ``"shape"``, ``"type"``, ``"sparse format"``,
        ``"attributes"`` (present in one object only), ``"noise"`` (a refit on the
        same rows gave the same DP output: the noise is reproducible), ``"warnings"``
        (category, text or count), ``"printed"`` (text written to stdout/stderr during
        ``fit``), ``"repr"``, ``"page"`` (a figure or sentence of the shared page) or
        ``"transcript"`` (the data-independent part of a search's transcript).
    detail : str
        The two values (abridged).
    """

    neighbour: str
    path: str
    what: str
    detail: str

    def __str__(self):
        return f"[{self.neighbour}] {self.path}: {self.what} differs ({self.detail})"


@dataclass
class InvarianceReport:
    """What :func:`~sklearn_privacy.privacy.neighbour_invariance` found.

    Attributes
    ----------
    differences : list of Difference
        Every observable that differs between D and a neighbour, apart from the noise:
        non-noise attributes of the published object (value, dtype, shape, type, sparse
        format), reproducible noise, warnings, printed text, the repr, the shared page
        and search transcripts.
    refused : list of str
        Neighbours on which ``fit`` raised while it fitted on D (kind, row, exception
        type): whether a fit fails is observable too (see
        ``is_indistinguishable``).
    n_neighbours : int
        Number of neighbouring data sets fitted.
    """

    differences: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    n_neighbours: int = 0

    @property
    def is_invariant(self) -> bool:
        """No attribute of the published object differs (what a pickle holds; the other
        observables and refusals are counted apart, see ``is_indistinguishable``)."""
        return all(d.path.startswith("<") for d in self.differences)

    @property
    def is_indistinguishable(self) -> bool:
        """Nothing differs and no neighbour made ``fit`` fail: what a finite claim
        needs (a fit that fails on D' only tells D' from D with certainty)."""
        return not self.differences and not self.refused

    def paths(self) -> list[str]:
        """The distinct paths that differ, in order of discovery."""
        return list(dict.fromkeys(d.path for d in self.differences))

    def whats(self) -> list[str]:
        """The distinct kinds of difference (``Difference.what``), plus ``"fails"`` when
        a neighbour was refused, in order of discovery."""
        return list(dict.fromkeys([d.what for d in self.differences]
                                  + (["fails"] if self.refused else [])))

    def __str__(self):
        head = (f"InvarianceReport: {len(self.differences)} difference(s) over "
                f"{self.n_neighbours} neighbour(s), {len(self.refused)} refused")
        return "\n".join([head] + [f"  {d}" for d in self.differences[:50]]
                         + [f"  refused: {r}" for r in self.refused[:10]])

    __repr__ = __str__


# ------------------------------------------------------------------------ neighbours
def _short(v, width=60):
    text = repr(v)
    return text if len(text) <= width else text[:width - 3] + "..."


def _structure(a, b, path, name, out):
    """Type, shape, dtype and sparse format only (DP outputs: values are noise)."""
    if type(a) is not type(b):
        out.append(Difference(name, path, "type", f"{type(a).__name__} vs "
                                                  f"{type(b).__name__}"))
        return
    if isinstance(a, BaseEstimator):
        if type(a) is not type(b):
            out.append(Difference(name, path, "type", ""))
        return
    for attr, what in (("format", "sparse format"), ("shape", "shape"), ("dtype", "dtype")):
        va, vb = getattr(a, attr, None), getattr(b, attr, None)
        if va is not None and not isinstance(va, types.MethodType) and va != vb:
            out.append(Difference(name, path, what, f"{va} vs {vb}"))
            return
    # (a dict released by a DP mechanism -- a selected setting -- has keys that are
    # output too: a grid of dicts with different keys)
    if isinstance(a, list | tuple) and len(a) != len(b):
        out.append(Difference(name, path, "shape", f"length {len(a)} vs {len(b)}"))


def _same_scalar(a, b):
    try:
        if a == b:
            return True
    except Exception:  # noqa: BLE001 - incomparable objects
        return a is b
    try:
        return isinstance(a, numbers.Real) and math.isnan(a) and math.isnan(b)
    except TypeError:
        return False


def _diff(a, b, path, name, out, depth=0):
    if depth > _MAX_DEPTH:
        return
    if type(a) is not type(b):
        out.append(Difference(name, path, "type", f"{type(a).__name__} vs "
                                                  f"{type(b).__name__}"))
        return
    if isinstance(a, BaseEstimator):
        _diff_estimator(a, b, path, name, out, depth)
    elif isinstance(a, np.ndarray):
        if a.dtype != b.dtype:
            out.append(Difference(name, path, "dtype", f"{a.dtype} vs {b.dtype}"))
        elif a.shape != b.shape:
            out.append(Difference(name, path, "shape", f"{a.shape} vs {b.shape}"))
        elif a.dtype == object:
            for i, (u, v) in enumerate(zip(a.ravel(), b.ravel(), strict=True)):
                _diff(u, v, f"{path}[{i}]", name, out, depth + 1)
        elif not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif hasattr(a, "tocsr") and hasattr(a, "nnz"):       # scipy sparse
        if a.format != b.format or a.shape != b.shape or a.dtype != b.dtype:
            out.append(Difference(name, path, "sparse format",
                                  f"{a.format} {a.shape} vs {b.format} {b.shape}"))
        elif (a != b).nnz:
            out.append(Difference(name, path, "value", "sparse entries differ"))
    elif hasattr(a, "equals") and hasattr(a, "dtypes"):   # pandas objects
        if not a.equals(b):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(a, list | tuple):
        if len(a) != len(b):
            out.append(Difference(name, path, "shape", f"length {len(a)} vs {len(b)}"))
            return
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            _diff(u, v, f"{path}[{i}]", name, out, depth + 1)
    elif isinstance(a, dict):
        if list(a) != list(b):
            out.append(Difference(name, path, "attributes",
                                  f"keys {sorted(map(str, a))} vs {sorted(map(str, b))}"))
            return
        for k in a:
            _diff(a[k], b[k], f"{path}[{k!r}]", name, out, depth + 1)
    elif isinstance(a, str | bytes | numbers.Number | np.generic | type(None) | bool):
        if not _same_scalar(a, b):
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(a, type | types.FunctionType | types.BuiltinFunctionType |
                    types.ModuleType):
        if a is not b:
            out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))
    elif isinstance(getattr(a, "__dict__", None), dict):
        _diff(dict(vars(a)), dict(vars(b)), path, name, out, depth + 1)
    elif not _same_scalar(a, b):
        out.append(Difference(name, path, "value", f"{_short(a)} vs {_short(b)}"))


def _diff_estimator(a, b, path, name, out, depth):
    sa, sb = _published_state(a), _published_state(b)
    if set(sa) != set(sb):
        only = sorted(set(sa) ^ set(sb))
        out.append(Difference(name, path, "attributes", f"present in one only: {only}"))
    decl = declaration(a) or {}
    for key in sa:
        if key not in sb:
            continue
        if decl.get(key) == "dp":
            _structure(sa[key], sb[key], f"{path}.{key}", name, out)
        else:
            _diff(sa[key], sb[key], f"{path}.{key}", name, out, depth + 1)


def _dp_outputs(est, path="", out=None, depth=0):
    """``(path, value)`` of every attribute declared ``"dp"`` (for the repeat check)."""
    out = [] if out is None else out
    if depth > _MAX_DEPTH or not isinstance(est, BaseEstimator):
        return out
    decl = declaration(est) or {}
    for key, value in _published_state(est).items():
        if decl.get(key) == "dp":
            out.append((f"{path}.{key}", value))
        elif decl.get(key) == "child":
            stack = [(f"{path}.{key}", value)]
            while stack:
                p, v = stack.pop()
                if isinstance(v, BaseEstimator):
                    _dp_outputs(v, p, out, depth + 1)
                elif isinstance(v, list | tuple):
                    stack.extend((f"{p}[{i}]", u) for i, u in enumerate(v))
    return out


# ------------------------------------------------------------------------ observation
def _seed_everything(estimator, seed):
    """Set every nested ``random_state`` parameter to a child seed of ``seed`` (the same
    for D and each neighbour: common random numbers)."""
    names = sorted(k for k in estimator.get_params(deep=True)
                   if k == "random_state" or k.endswith("__random_state"))
    seeds = np.random.default_rng(seed).integers(0, 2 ** 31 - 1, size=len(names))
    # deepest first: setting an outer estimator's parameter must not undo an inner one
    for name, s in sorted(zip(names, seeds, strict=True), key=lambda t: -t[0].count("__")):
        estimator.set_params(**{name: int(s)})
    return estimator


def _transcripts(est):
    """``(path, transcript)`` of every fitted object that keeps a search transcript in
    its session (``n_runs_``, ``audit_results_``: audit state, never pickled)."""
    out, stack, seen = [], [("", est)], set()
    while stack:
        path, obj = stack.pop()
        if id(obj) in seen or len(seen) > 1000:
            continue
        seen.add(id(obj))
        cls = type(obj)
        if isinstance(getattr(cls, "audit_results_", None), property):
            entry = {}
            for attr in ("n_runs_", "audit_results_"):
                try:
                    entry[attr] = getattr(obj, attr)
                except Exception:  # noqa: BLE001 - audit state not there: nothing seen
                    entry[attr] = None
            out.append((path or cls.__name__.lower(), entry))
        children = []
        _estimators_in(list(_published_state(obj).values()), path, children)
        stack.extend((f"{path}/{type(c).__name__.lower()}", c) for _, c in children)
    return out


@dataclass
class _Observation:
    """Everything a user sees after one ``fit`` (and the page, when asked for)."""

    estimator: object = None
    error: tuple | None = None
    warnings: list = field(default_factory=list)
    printed: str = ""
    repr: str = ""
    transcripts: list = field(default_factory=list)
    page: object = None          # str, or ("error", type, message)


def _page_of(page, estimator, X, y, seed):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            shown = page(estimator, X, y, seed)
            if hasattr(shown, "page_template") and hasattr(shown, "page_accounting"):
                # a page that accounts for its noise: its template and its ledger
                return ("template", str(shown.page_template()), shown.page_accounting())
            return str(shown)
    except Exception as exc:  # noqa: BLE001 - a page that cannot be made is observed
        return ("error", type(exc).__name__, str(exc))


_PLACEHOLDER = re.compile(r"\[\[(D\d+|R) [a-z]+ from ([A\d ]*)\]\]")


def _ledger_problems(template, record):
    """What a template's placeholders stand for, checked against its ledger's record:
    every released figure is a Laplace release of ``sensitivity / epsilon`` scale, the
    budgets add up to no more than the page's, and every placeholder is an item of the
    record derived from released figures only."""
    if record is None:
        return ["the page keeps no ledger record"]
    found = []
    released = {r["id"]: r for r in record.get("released", [])}
    spent = sum(float(r["epsilon"]) for r in released.values())
    if spent > float(record["epsilon"]) * (1 + 1e-9):
        found.append(f"the released figures spend {spent:.6g}, above the page's budget "
                     f"{record['epsilon']:.6g}")
    if len(released) > int(record["n_queries"]):
        found.append(f"{len(released)} figures released, {record['n_queries']} planned")
    for r in released.values():
        if r.get("mechanism") != "laplace" or not np.isclose(
                float(r["scale"]) * float(r["epsilon"]), float(r["sensitivity"])):
            found.append(f"{r['id']} ({r['label']}): not a Laplace release of scale "
                         "sensitivity / epsilon")
    items = {i["id"]: i for i in record.get("items", [])}
    for i in items.values():
        bad = [f for f in i["inputs"] if f not in released]
        if bad or not i["inputs"]:
            found.append(f"{i['id']}: derived from {bad or 'nothing'}, not from released "
                         "figures")
    for m in _PLACEHOLDER.finditer(template):
        ident, inputs = m.group(1), m.group(2).split()
        if ident != "R" and ident not in items:
            found.append(f"placeholder {ident} is not an item of the ledger")
        if any(f not in released for f in inputs):
            found.append(f"placeholder {ident} names figures the ledger did not release")
    return found


def _observe(estimator, X, y, fit_params, fit_params_from_rows, common_seed,
             page=None, page_of=None, seed=None):
    """Fit a clone of ``estimator`` on ``(X, y)`` and record what a user sees; with
    ``page``, also render the page of the fitted ``page_of`` on these rows."""
    est = clone(estimator)
    if common_seed is not None:
        _seed_everything(est, common_seed)
    obs = _Observation()
    # a callable fit parameter is a declared rule (e.g. weights from the labels):
    # evaluated on the data set being fitted, so each neighbour gets its own
    params = {k: (v(X, y) if callable(v) else v) for k, v in fit_params.items()}
    printed = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, \
            contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        warnings.simplefilter("always")
        try:
            for name, rule in fit_params_from_rows.items():
                params[name] = rule(X, y)
            obs.estimator = est.fit(X, **params) if y is None else est.fit(X, y, **params)
        except Exception as exc:  # noqa: BLE001 - a failure is an observation
            obs.error = (type(exc).__name__, str(exc))
    obs.warnings = [(f"{w.category.__module__}.{w.category.__qualname__}",
                     str(w.message)) for w in caught]
    obs.printed = printed.getvalue()
    if obs.estimator is not None:
        obs.repr = repr(obs.estimator)
        obs.transcripts = _transcripts(obs.estimator)
    if page is not None:
        obs.page = _page_of(page, page_of, X, y, seed)
    return obs


# ------------------------------------------------------------------------ the page
_IMAGE = re.compile(r"data:image/[A-Za-z]+;base64,[A-Za-z0-9+/=]+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})?(?: UTC)?")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_HEX_TO_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopabcdef")


def _page_lines(page):
    """The page as lines of ``(template, numbers)``: every number taken out of its
    sentence, each embedded image replaced by a digest, the date of rendering dropped."""
    if isinstance(page, tuple):
        return [(f"<page not made: {page[1]}: {page[2]}>", [])]
    text = _IMAGE.sub(lambda m: "image:" + hashlib.sha1(
        m.group().encode()).hexdigest()[:16].translate(_HEX_TO_LETTERS), page)
    text = _DATE.sub("<date>", text)
    return [(_NUMBER.sub("#", line), _NUMBER.findall(line)) for line in text.splitlines()]


def _fill(template, numbers):
    parts = template.split("#")
    text = "".join(p + n for p, n in zip(parts, numbers + [""] * len(parts), strict=False))
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= 120 else text[:117] + "..."


def _before(template, numbers, i):
    """The words of a page line before its ``i``-th number (tags dropped)."""
    parts = template.split("#")
    text = "".join(p + n for p, n in zip(parts[:i + 1], numbers[:i] + [""], strict=False))
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", text)).strip()
    return text if len(text) <= 80 else "..." + text[-77:]


def _page_mask(references):
    """From renderings of the page on D with different seeds: ``None`` when the layout
    itself varies, else per line the template (None when it varies) and the positions of
    the numbers that stay the same (figures; the others come from the page's noise)."""
    pages = [_page_lines(p) for p in references]
    if len({len(p) for p in pages}) != 1:
        return None
    mask = []
    for lines in zip(*pages, strict=True):
        templates = {t for t, _ in lines}
        if len(templates) != 1 or len({len(ns) for _, ns in lines}) != 1:
            mask.append(None)
            continue
        fixed = [i for i, vals in enumerate(zip(*(ns for _, ns in lines), strict=True))
                 if len(set(vals)) == 1]
        mask.append((lines[0][0], lines[0][1], fixed))
    return mask


def _template_differences(reference, page, name, out):
    """A page that accounts for its noise: its template must be the same line for line,
    and its ledger the same and sound (:func:`_ledger_problems`)."""
    if not (isinstance(page, tuple) and page[0] == "template"):
        out.append(Difference(name, "<page>", "page", "a template on D, "
                                                      f"{_short(page, 120)} on the neighbour"))
        return
    for problem in _ledger_problems(page[1], page[2])[:_MAX_PAGE_DIFFS]:
        out.append(Difference(name, "<page>", "page", f"ledger: {problem}"))
    mine, theirs = reference[2] or {}, page[2] or {}
    if mine.get("released") != theirs.get("released"):
        out.append(Difference(name, "<page>", "page",
                              f"ledger: released {_short(mine.get('released'), 120)} vs "
                              f"{_short(theirs.get('released'), 120)}"))
    a, b = reference[1].splitlines(), page[1].splitlines()
    found = [f"{len(a)} lines vs {len(b)} lines"] if len(a) != len(b) else []
    found += [f"{_short(x, 160)!r} vs {_short(y, 160)!r}" for x, y in zip(a, b, strict=False)
              if x != y]
    for detail in found[:_MAX_PAGE_DIFFS]:
        out.append(Difference(name, "<page>", "page", detail))


def _page_differences(references, mask, page, name, out):
    """A sentence or figure of the shared page that changed with the neighbour's rows,
    although it stays the same across the page's own noise on D."""
    if isinstance(references[0], tuple) and references[0][0] == "template":
        _template_differences(references[0], page, name, out)
        return
    other = _page_lines(page)
    found = []
    if mask is None:            # the layout is random: the lines every rendering shares
        common = set.intersection(*(set(map(str, _page_lines(p))) for p in references))
        missing = common - set(map(str, other))
        found += [f"line {s[:80]} not on the neighbour's page" for s in sorted(missing)]
    elif len(other) != len(mask):
        found.append(f"{len(mask)} lines vs {len(other)} lines")
    else:
        for entry, (template, numbers) in zip(mask, other, strict=True):
            if entry is None:
                continue
            ref_template, ref_numbers, fixed = entry
            if template != ref_template or len(numbers) != len(ref_numbers):
                found.append(f"{_fill(ref_template, ref_numbers)!r} vs "
                             f"{_fill(template, numbers)!r}")
                continue
            moved = [i for i in fixed if numbers[i] != ref_numbers[i]]
            if moved:
                i = moved[0]
                found.append(f"{_before(ref_template, ref_numbers, i)!r} "
                             f"{ref_numbers[i]} vs {numbers[i]}")
    for detail in found[:_MAX_PAGE_DIFFS]:
        out.append(Difference(name, "<page>", "page", detail))


# ------------------------------------------------------------------------ comparison of
# what is seen besides the pickle
def _observable_differences(ref, obs, name, out):
    if Counter(ref.warnings) != Counter(obs.warnings):
        gone = sorted((Counter(ref.warnings) - Counter(obs.warnings)).items())
        new = sorted((Counter(obs.warnings) - Counter(ref.warnings)).items())
        out.append(Difference(name, "<warnings>", "warnings",
                              f"only on D: {_short(gone, 160)}; only on the "
                              f"neighbour: {_short(new, 160)}"))
    if ref.printed != obs.printed:
        out.append(Difference(name, "<printed>", "printed",
                              f"{_short(ref.printed, 160)} vs "
                              f"{_short(obs.printed, 160)}"))
    if ref.repr != obs.repr:
        out.append(Difference(name, "<repr>", "repr",
                              f"{_short(ref.repr)} vs {_short(obs.repr)}"))


def _transcript_differences(ref, obs, name, out):
    """Under common random numbers the settings drawn and the number of runs are the
    same on D and its neighbour unless the data steer the search; scores are noise
    (compared by shape)."""
    mine, theirs = dict(ref.transcripts), dict(obs.transcripts)
    for path in dict.fromkeys(list(mine) + list(theirs)):
        a, b = mine.get(path), theirs.get(path)
        where = f"<transcript> {path}"
        if a is None or b is None:
            out.append(Difference(name, where, "transcript", "present on one side only"))
            continue
        if a["n_runs_"] != b["n_runs_"]:
            out.append(Difference(name, where, "transcript",
                                  f"n_runs_ {a['n_runs_']} vs {b['n_runs_']}"))
        ra, rb = a["audit_results_"] or {}, b["audit_results_"] or {}
        for key in dict.fromkeys(list(ra) + list(rb)):
            va, vb = ra.get(key), rb.get(key)
            if isinstance(va, np.ndarray) and isinstance(vb, np.ndarray):
                if va.shape != vb.shape:
                    out.append(Difference(name, where, "transcript",
                                          f"{key} shape {va.shape} vs {vb.shape}"))
            elif _short(va) != _short(vb) or va != vb:
                out.append(Difference(name, where, "transcript",
                                      f"{key} {_short(va)} vs {_short(vb)}"))


def _fit_observed(estimator, X, y, fit_params, fit_params_from_rows, common_seed, page,
                  page_of, seed, name):
    return name, _observe(estimator, X, y, fit_params, fit_params_from_rows, common_seed,
                          page, page_of, seed)


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "y": [None, "array-like"],
        "rows": ["array-like"],
        "kinds": ["array-like", StrOptions({"all"})],
        "fit_params": [None, dict],
        "fit_params_from_rows": [None, dict],
        "page": [None, callable],
        "page_noise": ["boolean"],
        "common_random_numbers": [None, NumberInterval(numbers.Integral, 0, None,
                                                       closed="left")],
        "n_jobs": [None, numbers.Integral],
        "verbose": ["verbose"],
        "random_state": [None, NumberInterval(numbers.Integral, 0, None, closed="left"),
                         np.random.Generator],
    },
    prefer_skip_nested_validation=False,
)
def neighbour_invariance(estimator, X, y=None, *, rows=(0,), kinds=_DEFAULT_KINDS,
                         fit_params=None, fit_params_from_rows=None, page=None,
                         page_noise=False, common_random_numbers=None, n_jobs=None, verbose=0,
                         random_state=None) -> InvarianceReport:
    """Refit ``estimator`` on neighbouring raw data sets and report what a user would see
    differ.

    The adversary of a privacy claim sees the published object -- and everything else
    the library shows after a fit -- and knows every row but one. This check plays that
    game: for each row of ``rows`` it builds neighbouring data sets by replacing that
    row -- with extreme values (``+-1e9`` numbers, an unseen category), missing values,
    an unseen category, a stray string in a numeric column, a new label, a duplicate of
    another row, a new / duplicated / string index label, a Python int no float holds,
    ``NaT`` in the numeric columns, or an array inside a column -- and refits a clone of
    ``estimator`` on each. It then compares with the fit on ``(X, y)``:

    * every attribute of every object in the published state (what a pickle holds,
      walked as :func:`~sklearn_privacy.privacy_claim` walks it): attributes declared as
      the output of a DP mechanism (``"dp"``, see ``sklearn_privacy.privacy._attributes``)
      by type, shape, dtype and sparse format only (their values are noise), every other
      attribute by value too (arrays, sparse matrices, frames, nested estimators, lists,
      dicts, objects);
    * the warnings ``fit`` emits (category, text and how many of each), the text it
      prints, the repr of the fitted object, and whether ``fit`` fails;
    * with ``page``, the page a user shares, rendered from the object fitted on D and
      the neighbour's rows with the same seed: every sentence and figure must stay the
      same (with ``page_noise=True``, only those that stay the same across three
      renderings on D with different seeds: the others are the page's accounted noise);
    * with ``common_random_numbers``, the transcript a search keeps in its session
      (``n_runs_`` and the settings of ``audit_results_``; its noisy scores by shape):
      with the same seeds, a search whose draws do not depend on the data draws the same
      settings the same number of times.

    A ``"repeat"`` neighbour refits on the same rows: if the DP outputs come out
    identical, the noise is reproducible (a seed), and that is reported too (not under
    ``common_random_numbers``, where the seeds are the point).

    Under a finite claim the report must be indistinguishable (no difference, no
    refusal): any difference tells the neighbours apart with certainty, whatever the
    noise. ``is_invariant`` looks at the published object only.

    Parameters
    ----------
    estimator : estimator
        The unfitted object to publish (it is cloned for every fit).
    X : DataFrame or array-like of shape (n_samples, n_features)
        The raw rows. It must fit on them (the reference).
    y : array-like of shape (n_samples,) or None, default=None
        Targets.
    rows : sequence of int, default=(0,)
        The rows to replace (one neighbour set per row).
    kinds : sequence of str, default=the first seven of NEIGHBOUR_KINDS
        Which neighbours to build, among ``"extreme"``, ``"missing"``,
        ``"unseen_category"``, ``"stray_string"``, ``"new_label"``, ``"duplicate"``,
        ``"repeat"`` (the default), ``"index_new"``, ``"index_duplicate"``,
        ``"index_string"`` (frames only: the row keeps its values and gets a new label,
        the next row's label, or a string label; a pandas ``y`` follows),
        ``"huge_int"`` (``10**400`` in the first numeric column), ``"nat"`` (``NaT`` in
        the numeric columns) and ``"nested_array"`` (a length-2 array in the first
        non-numeric column); ``"all"`` for every kind.
    fit_params : dict or None, default=None
        Passed to every ``fit``. A callable value is a rule that computes the parameter
        from the rows: it is called as ``rule(X, y)`` on the reference data and on every
        neighbour, so that row-dependent parameters are recomputed for each (e.g.
        ``{"sample_weight": lambda X, y: compute_sample_weight("balanced", y)}``);
        passing the reference's weights as an array would reuse them for every
        neighbour and hide what one row changes.
    fit_params_from_rows : dict or None, default=None
        ``{name: rule}``: ``rule(X, y)`` is computed again on each data set's rows and
        passed to its ``fit`` as ``name`` -- weights derived from the rows (e.g.
        ``lambda X, y: compute_sample_weight("balanced", y)``) are recomputed for each
        neighbour, as a user would.
    page : callable or None, default=None
        ``page(fitted, X, y, seed) -> str``: the text a user shares about the object
        fitted on D, computed with the training rows ``X, y`` (e.g. the HTML of
        ``PrivacyReport.from_estimator(fitted, X, y, X_pop, y_pop,
        random_state=seed)``). It is rendered on D and on each neighbour's rows, with
        the object fitted on D and the same seed. A page that releases figures of the rows
        with noise of its own can return an object with ``page_template()`` and
        ``page_accounting()`` instead (a :class:`~sklearn_privacy.PrivacyReport`): its
        template (each element read from its noisy figures a placeholder) is then
        compared exactly, and its accounting separately: the same figures released on D
        and the neighbour, each a Laplace release whose scale is its sensitivity over its
        budget, the budgets within the page's, every placeholder derived from released
        figures only.
    page_noise : bool, default=False
        Whether the page releases figures of the rows with noise of its own (a budget
        the page states). Then it is also rendered with two other seeds on D, and the
        numbers that move with the seed are not compared. Otherwise every number is:
        a figure computed from the training rows changes with them, randomised or not.
    common_random_numbers : int or None, default=None
        Seed every nested ``random_state`` from this value, the same for D and its
        neighbours, and compare search transcripts; ``None``: the estimator's own
        ``random_state`` (the release as published) and no transcript.
    n_jobs : int or None, default=None
        Neighbours fitted in parallel by joblib (``None``: one at a time).
    verbose : int, default=0
        0: silent; 1: ``[neighbour_invariance] done k of N neighbours`` about ten
        times; 2 and more: after every neighbour, and joblib's own messages at
        ``verbose - 1``.
    random_state : None, int or Generator, default=None
        Signs of the extreme values and the seeds of the page's renderings.

    Returns
    -------
    report : InvarianceReport
        ``differences`` (empty when nothing a user sees depends on the replaced row),
        ``refused`` and ``n_neighbours``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from sklearn_privacy.privacy import neighbour_invariance
    >>> X = pd.DataFrame({"job": ["a", "b", "c"] * 30 + ["z"] * 10})
    >>> ct = ColumnTransformer([("cat", OneHotEncoder(categories=[["a", "b", "c"]],
    ...                                               handle_unknown="ignore"), ["job"])])
    >>> report = neighbour_invariance(ct, X, kinds=["unseen_category"])
    >>> report.paths()                  # one unknown category more: sparse output
    ['columntransformer.sparse_output_']
    >>> neighbour_invariance(ct.set_params(sparse_threshold=0), X,
    ...                      kinds=["unseen_category"]).is_invariant
    True

    A figure of a shared text computed from the training rows is caught too:

    >>> def page(fitted, X, y, seed):
    ...     return f"trained on {len(X)} rows, {(X['job'] == 'z').sum()} of them 'z'"
    >>> report = neighbour_invariance(ct, X, kinds=["duplicate", "index_new"], page=page,
    ...                               rows=[-1])
    >>> [d.what for d in report.differences]
    ['page']
    """
    fit_params = {} if fit_params is None else dict(fit_params)
    rules = _check_rules(fit_params_from_rows)
    rows = _check_rows(rows, X.shape[0] if hasattr(X, "shape") else len(X))
    kinds = _check_kinds(kinds)
    rng = np.random.default_rng(random_state)
    seeds = _page_seeds(page, rng, random_state)
    root = type(estimator).__name__.lower()
    crn = common_random_numbers
    reference = _observe(estimator, X, y, fit_params, rules, crn)
    if reference.error is not None:
        raise ValueError(f"X, y: the estimator does not fit on the reference data set "
                         f"({reference.error[0]}: {reference.error[1]}); give a data set "
                         "it fits on.")
    references, mask = [], None
    report = InvarianceReport()
    if page is not None:
        references = [_page_of(page, reference.estimator, X, y, seeds[0])]
        if not (isinstance(references[0], tuple) and references[0][0] == "template"):
            references += [_page_of(page, reference.estimator, X, y, s)
                           for s in (seeds[1:] if page_noise else [])]
            mask = _page_mask(references)
        else:   # its own ledger must be sound on D too
            for problem in _ledger_problems(references[0][1], references[0][2]):
                report.differences.append(Difference("reference", "<page>", "page",
                                                     f"ledger: {problem}"))
    tasks = [(estimator, Xn, yn, fit_params, rules, crn, page, reference.estimator,
              seeds[0], name) for name, Xn, yn in _neighbours(X, y, rows, list(kinds), rng)]
    for name, obs in run_tasks(_fit_observed, tasks, n_jobs=n_jobs, verbose=verbose,
                               who="neighbour_invariance", unit="neighbours"):
        _record_neighbour(report, reference, obs, name, references, mask, crn, root)
    return report


def _check_rules(fit_params_from_rows):
    """``fit_params_from_rows`` as a dict of callables ``rule(X, y)``."""
    rules = {} if fit_params_from_rows is None else dict(fit_params_from_rows)
    bad_rules = sorted(str(k) for k, v in rules.items() if not callable(v))
    if bad_rules:
        raise TypeError(f"fit_params_from_rows: every value must be a callable "
                        f"rule(X, y); not callable: {bad_rules}.")
    return rules


def _check_rows(rows, n):
    """``rows`` as non-negative positions among ``n`` rows (negative ones from the end)."""
    rows = list(np.atleast_1d(np.asarray(rows, dtype=object)))
    bad = [j for j in rows if isinstance(j, bool | np.bool_)
           or not isinstance(j, numbers.Integral) or not -n <= j < n]
    if not rows or bad:
        raise ValueError(f"rows: every entry must be an integer row index in [-{n}, {n}) "
                         f"(X has {n} rows); got {bad if bad else 'no row'}.")
    return [int(j) % n for j in rows]


def _check_kinds(kinds):
    """``kinds`` among ``NEIGHBOUR_KINDS`` (``"all"``: every one)."""
    kinds = NEIGHBOUR_KINDS if isinstance(kinds, str) and kinds == "all" else kinds
    unknown = sorted(set(kinds) - set(NEIGHBOUR_KINDS))
    if unknown:
        raise ValueError(f"kinds: unknown neighbour kinds {unknown}; choose among "
                         f"{NEIGHBOUR_KINDS}.")
    return kinds


def _page_seeds(page, rng, random_state):
    """Seeds of the page's own noise (``[0]`` without a page)."""
    seeds = [0]
    if page is not None:      # (drawn apart: the extreme values stay those of the seed)
        page_rng = (np.random.default_rng(rng.integers(2 ** 63))
                    if isinstance(random_state, np.random.Generator)
                    else np.random.default_rng([2 ** 31, *([] if random_state is None
                                                           else [int(random_state)])]))
        seeds = [int(s) for s in page_rng.integers(0, 2 ** 31 - 1, size=_PAGE_SEEDS)]
    return seeds


def _record_neighbour(report, reference, obs, name, references, mask, crn, root):
    """Add to ``report`` what one neighbour's refit shows that the reference does not."""
    report.n_neighbours += 1
    out = report.differences
    if obs.page is not None:
        _page_differences(references, mask, obs.page, name, out)
    if obs.error is not None:
        report.refused.append(f"{name}: {obs.error[0]}")
        return
    _observable_differences(reference, obs, name, out)
    if crn is not None:
        _transcript_differences(reference, obs, name, out)
    if name.startswith("repeat"):
        if crn is None:
            _noise_check(reference.estimator, obs.estimator, root, name, out)
        else:
            _diff_estimator(reference.estimator, obs.estimator, root, name, out, 0)
        return
    _diff_estimator(reference.estimator, obs.estimator, root, name, out, 0)


def _noise_check(reference, other, root, name, out):
    mine = dict(_dp_outputs(reference, root))
    for p, value in _dp_outputs(other, root):
        ref = mine.get(p)
        if isinstance(value, np.ndarray) and isinstance(ref, np.ndarray) and \
                value.dtype.kind == "f" and np.any(value != 0) and \
                np.array_equal(value, ref):       # (zeros: nothing released)
            out.append(Difference(
                name, p, "noise", "a refit on the same rows released the same "
                                  "values: the noise is reproducible (seeded)"))
