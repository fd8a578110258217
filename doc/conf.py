"""Sphinx configuration for sklearn_privacy."""

import sklearn_privacy

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
]
autosummary_generate = True
templates_path = ["_templates"]
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
exclude_patterns = ["_build", "generated/*.examples"]
html_theme = "alabaster"
intersphinx_mapping = {}
nitpicky = False


def _skip_generated_request_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_*_request methods whose docstrings point into its
    # own documentation; they are documented there.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


def setup(app):
    app.connect("autodoc-skip-member", _skip_generated_request_methods)
