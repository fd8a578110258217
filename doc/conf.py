"""Sphinx configuration for sklearn_privacy."""

import logging
import os
import re
from pathlib import Path

import sklearn_privacy

os.environ.setdefault("MPLBACKEND", "Agg")

project = "sklearn_privacy"
author = "The sklearn_privacy developers"
copyright = "2026, The sklearn_privacy developers"
release = sklearn_privacy.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_gallery.gen_gallery",
]
# Formulas are typeset by MathJax, loaded from its CDN by default. For a build read offline,
# point SPHINX_MATHJAX_PATH at a local MathJax 2 (e.g. Debian's libjs-mathjax:
# file:///usr/share/javascript/mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML).
if os.environ.get("SPHINX_MATHJAX_PATH"):
    mathjax_path = os.environ["SPHINX_MATHJAX_PATH"]
autosummary_generate = True
templates_path = ["_templates"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
exclude_patterns = ["_build", "generated/*.examples"]
autosummary_ignore_module_all = False
# Signatures without type hints (as scikit-learn's API pages): the numpydoc sections give
# the types, and hints of private base classes would be unresolvable references.
autodoc_typehints = "none"
# Fitted attributes (eta_, epsilon_, ...) as attribute entries, so :attr: links resolve.
numpydoc_attributes_as_param_list = False
# The in-page table of contents lists methods by their own name (eta, fit, ...).
toc_object_entries_show_parents = "hide"

# pydata-sphinx-theme: the theme of scikit-learn, numpy and fairlearn. Wide content column
# (code is not cut), API pages with an in-page table of contents.
html_theme = "pydata_sphinx_theme"
html_title = f"sklearn_privacy {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "pygments_light_style": "tango",
    "pygments_dark_style": "monokai",
}
html_sidebars = {"index": [], "getting_started": [], "related_software": [], "citing": [],
                 "whats_new": []}
html_show_sourcelink = False

# Every cross-reference must resolve (-n -W). References into other projects resolve
# through intersphinx only when SPHINX_INTERSPHINX=1 (the build then fetches their
# inventories); offline, the default, they are ignored by the patterns below and render
# as plain text.
nitpicky = True
_EXTERNAL = r"(numpy|np|scipy|sklearn|pandas|pd|matplotlib|dask|distributed|joblib|polars|" \
            r"xarray|array-like|array_like|sparse|ndarray|DataFrame|Series|Axes|Figure|" \
            r"Generator|RandomState|Bunch|Pipeline|callable|estimator|object|optional|" \
            r"default|of|shape|or|int|float|bool|str|dict|list|tuple|None|type|Path|" \
            r"Interval|Real|Integral|collections|typing|abc|os|pathlib|numbers|" \
            r"BaseEstimator|ClassifierMixin|RegressorMixin|MetaEstimatorMixin|" \
            r"TransformerMixin|BaseCrossValidator|UserWarning|RuntimeWarning|Warning|" \
            r"ValueError|TypeError|Exception|RuntimeError|FutureWarning|" \
            r"NotFittedError|ConvergenceWarning|Any|Sequence|Mapping|Iterable|Callable|" \
            r"functools|math|re|warnings|pickle)\b.*"
nitpick_ignore_regex = [(r"py:.*", _EXTERNAL)]
# sphinx_gallery_conf holds a function (reset_argv): Sphinx cannot cache it, which only
# means a full re-read when conf.py changes.
suppress_warnings = ["config.cache"]

# Cross-references to the projects the library builds on. The inventories are fetched over
# the network at build time; without network access Sphinx cannot reach them, references
# to those projects then render as plain text, and the "failed to reach any of the
# inventories" message is shown as information rather than as a warning (see
# _IntersphinxOffline below), so that an offline `sphinx -W` build still passes.
intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "matplotlib": ("https://matplotlib.org/stable", None),
} if os.environ.get("SPHINX_INTERSPHINX") == "1" else {}
intersphinx_timeout = 5

# Figures of the user guide: `.. plot::` blocks run their (doctest-format) code at build
# time; tests/test_user_guide.py runs the same code as doctests.
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 100)]
plot_rcparams = {"figure.figsize": (6.4, 4.0), "figure.dpi": 100}
plot_apply_rcparams = True

_EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _gallery_argv(gallery_conf, script_vars):
    """Command-line arguments of the examples in the rendered gallery (smaller settings)."""
    name = Path(script_vars["src_file"]).name
    return {
        "attacks_iwpc.py": ["--quick"],
        "multicalibration_adult.py": ["--quick"],
        "werm_mnist_adult.py": ["--quick", "--no-es", "--n-per-part", "400", "--epochs", "20",
                                "--datasets", "MNIST", "--out", "/tmp/sklearn_privacy_gallery"],
    }.get(name, [])


# The gallery runs every example at build time (about 40 s in total with the settings of
# _gallery_argv). A quick build of the other pages skips them:
# `python -m sphinx -n -W -b html -D plot_gallery=0 doc doc/_build/html`.
#: Order of the gallery: the user guide's reading path (FIL, its multiclass and count-data
#: variants, IRFIL, attacks, WERM, multicalibration). Examples not listed come last, by name.
_GALLERY_ORDER = ["fil_mnist_leakage.py", "plot_multiclass_mnist.py", "plot_count_data.py",
                  "plot_raw_input_fil.py", "mlp_exposure_adult.py", "irfil_mnist.py",
                  "irfil_attributes.py", "attacks_iwpc.py", "werm_mnist_adult.py",
                  "multicalibration_adult.py"]


def _gallery_order(path):
    """Sort key of an example file: its place in ``_GALLERY_ORDER``, then its name."""
    name = Path(path).name
    rank = _GALLERY_ORDER.index(name) if name in _GALLERY_ORDER else len(_GALLERY_ORDER)
    return rank, name


sphinx_gallery_conf = {
    "examples_dirs": str(_EXAMPLES),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"(__init__|conftest)\.py$",
    "reset_argv": _gallery_argv,
    "within_subsection_order": _gallery_order,
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    # "Examples using X" on every API page (the minigallery of the class template)
    "doc_module": ("sklearn_privacy",),
    "backreferences_dir": "generated/backreferences",
    "reference_url": {"sklearn_privacy": None},
    "show_signature": False,
    "min_reported_time": 5,
}


def _skip_generated_request_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_*_request methods whose docstrings point into its
    # own documentation; they are documented there.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


class _IntersphinxOffline(logging.Filter):
    """Show an unreachable intersphinx inventory (no network) as information, not a warning."""

    def filter(self, record):
        if record.levelno == logging.WARNING and "failed to reach any of the inventories" in str(
                record.msg):
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


_GUIDE = Path(__file__).resolve().parent / "user_guide"


def _list_every_guide_page(app, docname, source):
    """Append to the user guide's toctree every page of ``user_guide/`` it does not list.

    The toctree in ``user_guide/index.rst`` orders the pages; a new page is placed by
    adding one line there, and until then it is listed at the end rather than breaking
    the ``-W`` build with "document isn't included in any toctree".
    """
    if docname != "user_guide/index":
        return
    listed = set(re.findall(r"^   ([a-z0-9_]+)\s*$", source[0], flags=re.M))
    extra = sorted(p.stem for p in _GUIDE.glob("*.rst") if p.stem not in listed | {"index"})
    if extra:
        source[0] += "\n.. toctree::\n   :maxdepth: 1\n   :caption: More\n\n" + "".join(
            f"   {name}\n" for name in extra)


#: Labels of scikit-learn's documentation that the docstrings of inherited methods
#: (``score``, ``get_metadata_routing``, ...) refer to.
_SKLEARN_LABELS = {"accuracy_score", "r2_score", "metadata_routing", "User Guide",
                   "df_output_transform",
                   "sphx_glr_auto_examples_miscellaneous_plot_set_output.py"}


def _sklearn_labels(app, env, node, contnode):
    """Render references to scikit-learn's own labels as links to its documentation."""
    from docutils import nodes

    if node.get("refdomain") == "std" and node.get("reftype") == "ref" and (
            node.get("reftarget") in _SKLEARN_LABELS):
        target = node["reftarget"]
        url = f"https://scikit-learn.org/stable/search.html?q={target}"
        ref = nodes.reference("", "", internal=False, refuri=url)
        ref += contnode
        return ref
    return None


def setup(app):
    app.connect("missing-reference", _sklearn_labels)
    app.connect("autodoc-skip-member", _skip_generated_request_methods)
    app.connect("source-read", _list_every_guide_page)
    logging.getLogger("sphinx.sphinx.ext.intersphinx").addFilter(_IntersphinxOffline())
