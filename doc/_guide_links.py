"""Links between the API reference and the user guide, both ways.

Every section of a user-guide page gets a label, ``guide-<page>-<n>`` (``n`` counts the
page's sections from 0, the page title), inserted before its heading when the page is read
(:func:`add_section_labels`). :func:`guide_sections` finds, for every object documented in
``doc/api``, the guide section whose cross-references (``:class:``, ``:func:``, ...) point
to it most often; the autosummary templates print it under the object's title as a
"User guide" link. The way back is the section's own cross-reference to the object. A
public object that no guide section references has no entry, and ``tests/
test_docs_coverage.py`` fails, naming it.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent
GUIDE = DOC / "user_guide"

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|obj|attr|data|mod|exc):`([^`<]+?)`"
                   r"|:(?:py:)?(?:class|func|meth|obj|attr|data|mod|exc):`[^`<]*<([^`>]+)>`")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+])\1{2,}\s*$")
_CURRENT = re.compile(r"^\.\. (?:currentmodule|module|py:module):: (\S+)", re.M)


def _headings(lines):
    """Line numbers of the section titles of a page (a text line above an underline)."""
    out = []
    for i in range(len(lines) - 1):
        title, under = lines[i], lines[i + 1]
        if (title.strip() and not title.startswith((" ", ".. ")) and _UNDERLINE.match(under)
                and len(under.rstrip()) >= len(title.rstrip())
                and not _UNDERLINE.match(title)):
            out.append(i)
    return out


def sections(text):
    """``[(title, body), ...]`` of a page's sections in order (the page title first)."""
    lines = text.splitlines()
    heads = _headings(lines)
    bounds = [*heads, len(lines)]
    return [(lines[h].strip(), "\n".join(lines[h:bounds[k + 1]]))
            for k, h in enumerate(heads)]


#: The guide page that introduces an object which other pages cite more often.
HOME = {
    "sklearn_privacy.FILLogisticRegression": "fil",
    "sklearn_privacy.fil.eta": "choosing_sigma",
    "sklearn_privacy.fil.EtaDisplay": "fil",
    "sklearn_privacy.WERMClassifier": "werm",
    "sklearn_privacy.attacks.AttributeInversionResult": "attacks",
    "sklearn_privacy.privacy_claim": "end_to_end_claims",
    "sklearn_privacy.metrics.PrivacyUtilityDisplay": "release",
    "sklearn_privacy.multicalibration.MulticalibrationDisplay": "multicalibration",
    "sklearn_privacy.exceptions.PrivacyWarning": "release",
    "sklearn_privacy.PrivacyReport": "publish",
    "sklearn_privacy.RandomStoppingSearch": "private_selection",
    "sklearn_privacy.fil.audit": "fil_audit",
}


def label(page, k):
    return f"guide-{page}-{k}"


def add_section_labels(app, docname, source):
    """Sphinx ``source-read``: a label before every section heading of a guide page."""
    if not docname.startswith("user_guide/"):
        return
    page = docname.split("/", 1)[1]
    lines = source[0].splitlines()
    heads = _headings(lines)
    for k, h in reversed(list(enumerate(heads))):
        # an overline above the title belongs to the heading: the label goes above it
        at = h - 1 if h > 0 and _UNDERLINE.match(lines[h - 1]) else h
        lines[at:at] = [f".. _{label(page, k)}:", ""]
    source[0] = "\n".join(lines) + "\n"


def _resolve(name):
    """The object a dotted name denotes, or None."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for part in parts[cut:]:
                obj = getattr(obj, part)
        except AttributeError:
            return None
        return obj
    return None


def _targets(body, modules):
    """The objects that the cross-references of ``body`` point to."""
    found = []
    for m in _ROLE.finditer(body):
        target = (m.group(1) or m.group(2)).strip().lstrip("~.!")
        for prefix in ("", *(f"{mod}." for mod in modules)):
            obj = _resolve(prefix + target)
            if obj is not None:
                found.append(obj)
                break
    return found


def guide_sections(names):
    """``{name: (label, page title, section title)}`` for the dotted ``names``.

    The page is the one whose cross-references point to the object most often, the
    section that page's section with most of them (the first of equals in file order);
    names no section points to are left out.
    """
    objects = {name: _resolve(name) for name in names}
    counts = {}   # id(obj) -> {(page, k): count}
    titles = {}
    for path in sorted(GUIDE.glob("*.rst")):
        text = path.read_text(encoding="utf-8")
        modules = ["sklearn_privacy", *_CURRENT.findall(text)]
        secs = sections(text)
        for k, (title, body) in enumerate(secs):
            titles[(path.stem, k)] = (secs[0][0], title)
            for obj in _targets(body, modules):
                per = counts.setdefault(id(obj), {})
                per[(path.stem, k)] = per.get((path.stem, k), 0) + 1
    order = {key: i for i, key in enumerate(titles)}
    out = {}
    for name, obj in objects.items():
        per = counts.get(id(obj)) if obj is not None else None
        if per and name in HOME:
            per = {key: n for key, n in per.items() if key[0] == HOME[name]} or per
        if per:
            pages = {}
            for (page, _), n in per.items():
                pages[page] = pages.get(page, 0) + n
            best = max(per, key=lambda key: (pages[key[0]], per[key], -order[key]))
            out[name] = (label(*best), *titles[best])
    return out


def autosummary_entries(text):
    """``(currentmodule, name)`` of every entry of the autosummary tables of an API page.

    ``name`` is as written below the directive, relative to the current module, without a
    leading ``~``.
    """
    entries, module, in_table = [], None, False
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            module = m.group(1)
            continue
        if line.startswith(".. autosummary::"):
            in_table = True
            continue
        if in_table:
            if not line.strip() or line.strip().startswith(":"):
                continue
            if line.startswith("   "):
                entries.append((module, line.strip().lstrip("~")))
                continue
            in_table = False
    return entries


def api_names():
    """Dotted names of every object with a page in ``doc/api`` (autosummary entries)."""
    return [f"{module}.{name}"
            for page in sorted((DOC / "api").glob("*.rst"))
            for module, name in autosummary_entries(page.read_text(encoding="utf-8"))]
