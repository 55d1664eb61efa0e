"""Copyright and licence notices for the third-party code that ainotes ships.

The site and the standalone roofline pages carry the Vega runtime from vl-convert's
bundle (Vega under BSD-3-Clause, d3 modules under ISC, and a few more: the full list
is in ``assets/THIRD_PARTY_NOTICES.txt``). BSD-3-Clause asks that a binary
redistribution reproduce the notice "in the documentation and/or other materials
provided with the distribution"; a standalone page has no other materials, so the
notices travel inside the code itself:

* :func:`with_notices` puts them in a ``/*! ... */`` comment ahead of the runtime
  (``/*!`` is the form minifiers keep), which :func:`ainotes.render.runtime_js`
  returns; the site's ``assets/ainotes/vega.min.js`` and every standalone page are
  made from it;
* the build copies the text file to ``assets/ainotes/THIRD_PARTY_NOTICES.txt``,
  which every page's footer links (``overrides/partials/copyright.html``).
"""

from __future__ import annotations

import functools
from importlib import resources

NOTICES_FILE = "THIRD_PARTY_NOTICES.txt"


@functools.cache
def notices_text() -> str:
    """The notices, as shipped in the package's assets."""
    return (resources.files("ainotes") / "assets" / NOTICES_FILE).read_text(encoding="utf-8")


def js_comment() -> str:
    """The notices as one JavaScript comment that minifiers keep (``/*! ... */``)."""
    # "*/" would end the comment early; the notices have none, but a later edit might.
    body = notices_text().replace("*/", "* /").rstrip("\n")
    return f"/*!\n{body}\n*/\n"


def with_notices(code: str) -> str:
    """``code`` with the notices comment in front (once: already-prefixed code is returned as is)."""
    banner = js_comment()
    return code if code.startswith(banner) else banner + code
