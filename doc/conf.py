"""Sphinx configuration for sklearn_privacy."""

import os
import re
import sys
import zlib
from pathlib import Path

import sklearn_privacy

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _guide_links  # noqa: E402

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
    # MathJax 3 shipped in the package and copied into _build/html/_static/mathjax: the
    # formulas render without any network access (no CDN address in the pages)
    "sphinx-mathjax-offline",
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
    "numpydoc",
    "matplotlib.sphinxext.plot_directive",
    "sphinx_gallery.gen_gallery",
]
# The copy button copies code without the prompts and the output of doctest blocks.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
autosummary_generate = True
# Every API page links to the user-guide section that cites its object most
# (doc/_guide_links.py; the templates in _templates/autosummary print the link).
autosummary_context = {"guide_sections": _guide_links.guide_sections(_guide_links.api_names())}
templates_path = ["_templates"]
# Single backticks are code, as in scikit-learn's documentation: the docstrings inherited
# from scikit-learn (``score``, ``set_output``, ``get_feature_names_out``) and numpydoc's
# ``shape (`n_features_in_`,)`` use them for names, which the default role would italicise.
default_role = "literal"
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

# Every cross-reference must resolve (-n -W): references into other projects resolve
# through intersphinx against the local inventories below; nothing is ignored.
nitpicky = True
nitpick_ignore_regex = []
# sphinx_gallery_conf holds a function (the example order): Sphinx cannot cache it, which
# only means a full re-read when conf.py changes.
suppress_warnings = ["config.cache"]

# Cross-references to the projects the library builds on, offline: doc/_intersphinx/
# objects.txt lists every name of another project the documentation refers to, with its
# address in that project's documentation; _write_inventories turns it into one Sphinx
# inventory per project (doc/_build/intersphinx/<project>.inv) before intersphinx reads
# them. A reference to a name not listed there fails the -n -W build: add the name. With
# SPHINX_INTERSPHINX=1 the projects' full inventories are fetched over the network instead.
_INVENTORY_DIR = Path(__file__).resolve().parent / "_build" / "intersphinx"


_OBJECTS = Path(__file__).resolve().parent / "_intersphinx" / "objects.txt"


def _read_objects(path=_OBJECTS):
    """``{project: (base url, [(name, role, uri), ...])}`` of the local inventory table."""
    projects, current = {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):    # comment lines (addresses hold '#')
            continue
        m = re.fullmatch(r"\[(\S+)\]\s+(\S+)", line)
        if m:
            current = m.group(1)
            projects[current] = (m.group(2), [])
            continue
        name, role, uri = line.split()
        projects[current][1].append((name, role, uri))
    return projects


def _write_inventories(projects, directory=_INVENTORY_DIR):
    """One Sphinx (version 2) inventory file per project; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for project, (_, entries) in projects.items():
        body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in entries)
        header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: \n"
                  "# The remainder of this file is compressed using zlib.\n")
        paths[project] = directory / f"{project}.inv"
        paths[project].write_bytes(header.encode() + zlib.compress(body.encode()))
    return paths


_PROJECTS = _read_objects()
if os.environ.get("SPHINX_INTERSPHINX") == "1":
    intersphinx_mapping = {p: (url, None) for p, (url, _) in _PROJECTS.items()}
else:
    _PATHS = _write_inventories(_PROJECTS)
    intersphinx_mapping = {p: (url, str(_PATHS[p])) for p, (url, _) in _PROJECTS.items()}
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


# The gallery runs every example at build time (each is a small, fast version; the long
# studies are scripts in benchmarks/, not in the gallery). A quick build of the other pages
# skips them:
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
    # the computation-times page loads its table scripts from a CDN: not written
    "write_computation_times": False,
}


def _skip_generated_request_methods(app, what, name, obj, skip, options):
    # scikit-learn generates set_*_request methods whose docstrings point into its
    # own documentation; they are documented there.
    if name.startswith("set_") and name.endswith("_request"):
        return True
    return skip


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
    app.connect("source-read", _guide_links.add_section_labels)
