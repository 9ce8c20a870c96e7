"""Each executed tutorial downloadable as a Jupyter notebook, with its outputs.

myst-nb writes every notebook it executes to ``<build>/jupyter_execute/<docname>.ipynb``,
outside the site. This extension puts a link under the title of each such page and, once the
site is written, copies the notebook next to the page's HTML, so the link works on any copy of
the site (served or opened from disk).
"""

from __future__ import annotations

import html
import posixpath
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def _notebooks(env) -> list[str]:
    """The documents myst-nb read as notebooks (it records their kernelspec)."""
    return sorted(d for d in env.found_docs if "kernelspec" in env.metadata.get(d, {}))


def _add_link(app, doctree, docname: str) -> None:
    """Under the page's title: "Download this page as a notebook: <name>.ipynb"."""
    if app.builder.format != "html" or docname not in _notebooks(app.env):
        return
    page = app.builder.get_target_uri(docname)
    uri = posixpath.relpath(docname + ".ipynb", posixpath.dirname(page) or ".")
    name = html.escape(posixpath.basename(uri))
    # raw HTML for the anchor's download attribute: a browser saves the file rather than
    # showing its JSON
    text = nodes.raw("", f'<p class="notebook-download">Download this page as a Jupyter '
                         f'notebook, with its outputs: <a href="{html.escape(uri)}" download>'
                         f'<code>{name}</code></a></p>', format="html")
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None:
        section.insert(1, text)  # after the title


def _copy_notebooks(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    executed = Path(app.env.mystnb_config.output_folder)
    for docname in _notebooks(app.env):
        source = executed / f"{docname}.ipynb"
        if not source.is_file():
            LOGGER.warning(f"{docname}: no executed notebook at {source} to offer for download")
            continue
        target = Path(app.outdir) / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def setup(app):
    app.connect("doctree-resolved", _add_link)
    app.connect("build-finished", _copy_notebooks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
