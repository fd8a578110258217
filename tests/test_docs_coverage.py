"""The documentation site lists everything public: every name of a public module's
``__all__`` has an API entry, every API page and every user-guide page is in an explicit
toctree, and the landing page points to the tools a reader looks for."""

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "doc"

PUBLIC_MODULES = ["sklearn_privacy", "sklearn_privacy.fil", "sklearn_privacy.attacks",
                  "sklearn_privacy.werm", "sklearn_privacy.multicalibration",
                  "sklearn_privacy.datasets", "sklearn_privacy.utils",
                  "sklearn_privacy.preprocessing", "sklearn_privacy.model_selection",
                  "sklearn_privacy.report", "sklearn_privacy.privacy",
                  "sklearn_privacy.mechanisms", "sklearn_privacy.metrics",
                  "sklearn_privacy.linear_model"]


def _load(name, path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The autosummary parser of the docs build (``doc/_guide_links.py``), tested here.
_autosummary_entries = _load("guide_links", DOC / "_guide_links.py").autosummary_entries


def _resolve(module, name):
    obj = importlib.import_module(module)
    for part in name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(f"{obj.__name__}.{part}")
    return obj


def _documented_objects():
    objects = set()
    for page in (DOC / "api").glob("*.rst"):
        for module, name in _autosummary_entries(page.read_text()):
            objects.add(id(_resolve(module, name)))
    return objects


def test_autosummary_parser_sees_entries():
    text = ("X\n=\n\n.. currentmodule:: sklearn_privacy\n\n.. autosummary::\n"
            "   :toctree: ../generated\n\n   FILLogisticRegression\n   ~fil.audit\n\nText\n")
    assert _autosummary_entries(text) == [("sklearn_privacy", "FILLogisticRegression"),
                                          ("sklearn_privacy", "fil.audit")]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_name_has_an_api_entry(module):
    documented = _documented_objects()
    mod = importlib.import_module(module)
    missing = [name for name in mod.__all__
               if not name.startswith("_") and id(getattr(mod, name)) not in documented]
    assert not missing, f"{module}: no API entry for {missing}"


def test_public_exceptions_have_an_api_entry():
    from sklearn_privacy import exceptions

    documented = _documented_objects()
    public = [name for name, obj in vars(exceptions).items()
              if isinstance(obj, type) and issubclass(obj, BaseException)
              and obj.__module__ == exceptions.__name__ and not name.startswith("_")]
    assert public
    assert [name for name in public if id(getattr(exceptions, name)) not in documented] == []


def _toctree_entries(text):
    return re.findall(r"^   ([a-z0-9_/]+)\s*$", text, flags=re.M)


def test_every_api_page_is_in_the_api_toctree():
    listed = set(_toctree_entries((DOC / "api" / "index.rst").read_text()))
    pages = {p.stem for p in (DOC / "api").glob("*.rst")} - {"index"}
    assert pages == listed


def test_every_guide_page_is_listed_explicitly_in_reading_order():
    listed = _toctree_entries((DOC / "user_guide" / "index.rst").read_text())
    pages = {p.stem for p in (DOC / "user_guide").glob("*.rst")} - {"index"}
    assert len(listed) == len(set(listed))
    assert set(listed) == pages          # nothing left to the automatic "More" list
    path = ["fil", "dp_view", "end_to_end_claims", "choosing_sigma", "fil_audit", "irfil",
            "attacks", "attack_uncertainty", "auditing", "publish", "werm",
            "multicalibration", "multicalibration_diagnostics", "private_selection",
            "release", "scaling_out"]
    assert [p for p in listed if p in path] == path


def test_landing_page_maps_the_tools():
    text = (DOC / "index.rst").read_text()
    guarantees = text.split("What is guaranteed")[1].split("Which tool answers")[0]
    tool_map = text.split("Which tool answers which question")[1]
    for name in ("privacy_claim", "one_run_audit", "PrivacyReport", "fil.audit",
                 "RandomStoppingSearch", "BoundedScaler", "DPStandardScaler",
                 "FILPoissonRegressor"):
        assert name in tool_map, name
    for name in ("privacy_claim", "one_run_audit", "fil.audit", "RandomStoppingSearch",
                 "DPStandardScaler", "BoundedScaler", "PrivacyReport"):
        assert name in guarantees, name


def test_gallery_follows_the_reading_path():
    import importlib.util

    spec = importlib.util.spec_from_file_location("doc_conf", DOC / "conf.py")
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    examples = sorted((ROOT / "examples").glob("*.py"), key=lambda p: conf._gallery_order(str(p)))
    names = [p.name for p in examples if p.name not in ("__init__.py", "conftest.py")]
    listed = [n for n in names if n in conf._GALLERY_ORDER]
    assert listed == [n for n in conf._GALLERY_ORDER if n in names]
    assert names[: len(listed)] == listed          # examples not listed come after
    assert names[0] == "fil_mnist_leakage.py"
    key = conf._gallery_order
    assert sorted(["/x/zz_new.py", "/x/aa_new.py", "/x/attacks_iwpc.py"], key=key) == [
        "/x/attacks_iwpc.py", "/x/aa_new.py", "/x/zz_new.py"]


# ---------------------------------------------------------------- API <-> user guide links
def test_every_api_page_links_to_a_guide_section_that_links_back():
    """Each of the API pages gets a "User guide" link (the templates print
    ``guide_sections``), to a section whose text cross-references the object (the way
    back); the section's label is the one ``add_section_labels`` puts before its heading."""
    links = _load("guide_links", DOC / "_guide_links.py")
    names = links.api_names()
    assert len(names) >= 80
    sections = links.guide_sections(names)
    assert sorted(set(names) - set(sections)) == []          # every API page has a link
    for name, (label, _page_title, title) in sections.items():
        page, k = label[len("guide-"):].rsplit("-", 1)
        text = (DOC / "user_guide" / f"{page}.rst").read_text(encoding="utf-8")
        sec_title, body = links.sections(text)[int(k)]
        assert sec_title == title
        short = name.rsplit(".", 1)[1]
        assert re.search(r":(?:class|func|meth|obj|exc|attr):`[^`]*\b" + short + r"\b", body), (
            name, label)
    for template in ("class.rst", "base.rst"):
        text = (DOC / "_templates" / "autosummary" / template).read_text()
        assert "guide_sections.get(fullname)" in text and "User guide:" in text


def test_guide_sections_leave_out_objects_no_section_cites():
    links = _load("guide_links", DOC / "_guide_links.py")
    got = links.guide_sections(["numpy.linalg.svd", "sklearn_privacy.PrivacyReport"])
    assert set(got) == {"sklearn_privacy.PrivacyReport"}


def test_section_labels_go_before_every_heading():
    links = _load("guide_links", DOC / "_guide_links.py")
    source = ["=====\nTitle\n=====\n\nText.\n\nPart one\n--------\n\n>>> 1\n1\n\n"
              "Part two\n~~~~~~~~\nMore.\n"]
    links.add_section_labels(None, "user_guide/page", source)
    lines = source[0].splitlines()
    assert lines[0] == ".. _guide-page-0:" and lines[2] == "====="
    assert lines[lines.index("Part one") - 2] == ".. _guide-page-1:"
    assert lines[lines.index("Part two") - 2] == ".. _guide-page-2:"
    untouched = ["Title\n=====\n"]
    links.add_section_labels(None, "api/page", untouched)
    assert untouched == ["Title\n=====\n"]


# ---------------------------------------------------------------- offline documentation
def test_docs_build_offline_without_catch_all_ignores(tmp_path):
    """MathJax is bundled (no CDN), intersphinx reads local inventories that list every
    external name with its project's address, and no reference is ignored."""
    conf = _load("doc_conf", DOC / "conf.py")
    assert "sphinx-mathjax-offline" in conf.extensions and "sphinx_copybutton" in conf.extensions
    assert not hasattr(conf, "mathjax_path")
    assert conf.nitpick_ignore_regex == [] and not getattr(conf, "nitpick_ignore", [])
    assert set(conf.intersphinx_mapping) >= {"python", "numpy", "scipy", "sklearn"}
    for url, inventory in conf.intersphinx_mapping.values():
        assert url.startswith("https://") and Path(inventory).is_file()
    projects = conf._read_objects()
    assert projects["sklearn"][0] == "https://scikit-learn.org/stable/"
    paths = conf._write_inventories(projects, tmp_path)
    sphinx_inventory = pytest.importorskip("sphinx.util.inventory")
    import io

    data = paths["sklearn"].read_bytes()
    inv = sphinx_inventory.InventoryFile.load(io.BytesIO(data), "https://x/", lambda *a: a[1])
    inv = getattr(inv, "data", inv)   # Sphinx >= 8.2 wraps the mapping
    item = inv["py:class"]["sklearn.pipeline.Pipeline"]
    uri = getattr(item, "uri", None) or item[2]
    assert uri == "https://x/modules/generated/sklearn.pipeline.Pipeline.html" \
                  "#sklearn.pipeline.Pipeline"
