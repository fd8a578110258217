"""Sphinx configuration for sklearn_privacy."""

import logging
import os
from pathlib import Path

import sklearn_privacy

os.environ.setdefault("MPLBACKEND", "Agg")

project = "sklearn_privacy"
author = "sklearn_privacy developers"
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
html_theme = "alabaster"
nitpicky = False
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
}
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


sphinx_gallery_conf = {
    "examples_dirs": str(_EXAMPLES),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"(__init__|conftest)\.py$",
    "reset_argv": _gallery_argv,
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
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


def setup(app):
    app.connect("autodoc-skip-member", _skip_generated_request_methods)
    logging.getLogger("sphinx.sphinx.ext.intersphinx").addFilter(_IntersphinxOffline())
