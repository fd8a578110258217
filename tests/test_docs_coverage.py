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


def _autosummary_entries(text):
    """``(currentmodule, name)`` of every entry of the autosummary tables of an API page."""
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
                entries.append((module, line.strip()))
                continue
            in_table = False
    return entries


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
            "   :toctree: ../generated\n\n   FILLogisticRegression\n   fil.audit\n\nText\n")
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
