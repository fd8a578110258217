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
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
exclude_patterns = ["_build", "generated/*.examples"]
html_theme = "alabaster"
intersphinx_mapping = {}
nitpicky = False
