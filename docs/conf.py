"""Sphinx configuration of tenscontrol's documentation site.

Build it with warnings as errors, as CI does (.ci/run):

    sphinx-build -W --keep-going -b html docs docs/_build/html

The tutorials (docs/tutorials/*.md, MyST text notebooks) are executed by myst-nb on every build,
so a tutorial that no longer runs fails the build. Set TENSCONTROL_DOCS_EXECUTION=cache to reuse
outputs between local builds (the cache lives outside the repository).

The docs extra of pyproject.toml is all the build needs (CI builds it in a virtual environment
with nothing else). The site loads nothing from the network: MathJax is copied in from the
sphinx-mathjax-offline package, the theme bundles its fonts, and a tutorial's animation player
draws its icons itself. A cell that prints on stderr fails the build; each executed tutorial
links its notebook (docs/_ext/notebook_download.py); docs/_static/tenscontrol.css gives the
tutorials' outputs the page's width.
"""

import os
import re
import sys
from pathlib import Path

# Document, and run the tutorials on, the checkout this file is in (as the tests do), not a copy
# installed elsewhere; the notebooks' kernels inherit PYTHONPATH, and with it numba's kernel cache.
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # this site's own extensions
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

import tenscontrol  # noqa: E402

# The notebooks' kernels inherit this environment: small dense problems run faster with one BLAS
# thread, and a shared CI machine is not oversubscribed.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# On an empty numba cache (a fresh CI machine) the first cells compile the kernels, and the line
# tenscontrol prints on stderr meanwhile would fail the build's no-stderr check
# (nb_output_stderr below); a reader of the site needs no such line either.
os.environ["TENSCONTROL_COMPILE_NOTICE"] = "0"

project = "tenscontrol"
author = "the tenscontrol developers"
copyright = "2026, the tenscontrol developers"
version = release = tenscontrol.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
    "numpydoc",
    "myst_nb",
    "notebook_download",
]

# The site loads nothing from elsewhere, so it reads offline: MathJax 3 comes from the
# sphinx-mathjax-offline package (the docs extra), copied into _static/mathjax.
mathjax_path = "mathjax/tex-chtml.js"

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]
root_doc = "index"

# API reference: one generated page per public name (docs/reference/index.rst lists them by layer).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"          # the numpydoc "Parameters" sections carry the types
numpydoc_show_class_members = False  # dataclass fields are documented in the class docstring
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# MyST and myst-nb: dollar math in the theory page, notebooks executed on every build.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
nb_execution_mode = os.environ.get("TENSCONTROL_DOCS_EXECUTION", "force")
nb_execution_cache_path = str(Path.home() / ".cache" / "tenscontrol-docs" / "jupyter-cache")
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True
# A cell that prints on stderr (a warning, a progress bar) fails the build (-W): the pages show
# no builder's paths or noise.
nb_output_stderr = "error"
# No notebook displays ipywidgets; myst-nb would load their scripts from CDNs on such a page.
nb_ipywidgets_js = {}

html_theme = "pydata_sphinx_theme"
html_title = f"tenscontrol {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
}
# The primary sidebar lists the pages of the current section. The top-level pages have none,
# and the tutorials print reports and tables: these pages get its width (wide equations of the
# theory fit; the list of tutorials is one click away, under "Tutorials" in the header and the
# breadcrumbs).
html_sidebars = {page: [] for page in ("install", "studies", "cli", "theory", "notation", "api",
                                       "changelog", "tutorials/*")}
html_static_path = ["_static"]
html_css_files = ["tenscontrol.css"]


# tenscontrol's docstrings write norms and absolute values as plain text, |x| and ||u||_2, as
# the numpy docstring standard allows; reStructuredText would read |x| as a substitution. Escape
# the bars outside inline literals (grid-table lines, which start with "+-", "+=" or a bar and end
# with one, are left alone).
_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")


def _escape_bars(line: str) -> str:
    text = line.strip()
    if text.startswith(("+-", "+=")) or (text.startswith("|") and text.endswith("|")
                                         and text.count("|") >= 3):
        return line
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else p.replace("|", r"\|") for i, p in enumerate(parts))


def _escape_docstring_bars(app, what, name, obj, options, lines):
    lines[:] = [_escape_bars(line) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring_bars)
