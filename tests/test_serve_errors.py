"""``mkdocs serve`` shows an author's mistake on the page being edited (and in the terminal), where
``mkdocs build --strict`` stops on it: the build each serve rebuild runs, in this process, with the
hooks told the command as MkDocs tells them."""

from __future__ import annotations

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort, PluginError

from sitebuild import make_fixture

pytestmark = [pytest.mark.build, pytest.mark.xdist_group("serve_errors")]

BROKEN = ("# A\n\nProse with {{ ridge h10 }} in it.\n\n```roofline\npresets: [h100]\ntitel: typo\n```\n\n"
          "$$\n\\frac{a}{\n$$\n\nThe end.\n")


def _build(project, command: str) -> None:
    config = load_config(config_file=str(project / "mkdocs.yml"), site_dir=str(project / "site"), strict=True)
    config.plugins.on_startup(command=command, dirty=False)
    try:
        build(config)
    finally:
        config.plugins.on_shutdown()


def test_serve_shows_each_mistake_in_its_place_and_says_it(tmp_path, capsys):
    project = make_fixture(tmp_path / "project", {"index.md": "# Home\n", "a.md": BROKEN})
    _build(project, "serve")
    page = (project / "site" / "a" / "index.html").read_text(encoding="utf-8")
    err = capsys.readouterr().err
    boxes = page.count('class="admonition failure ainotes-error"')
    inline = page.count('<span class="ainotes-error" role="alert">')
    assert (boxes, inline) == (2, 1), page  # the fence and the formula; the inline figure
    assert "Prose with" in page and "The end." in page  # the rest of the page is there
    assert "a.md:3: unknown preset &#x27;h10&#x27;" in page  # escaped, at the form's line
    assert "a.md:7: unknown key &#x27;titel&#x27; in roofline fence" in page  # the key's line
    assert "a.md:10: math" in page
    for where in ("a.md:3: unknown preset", "a.md:7: unknown key 'titel'", "a.md:10: math"):
        assert f"ERROR   -  {where}" in err, err
    assert "Traceback" not in err


def test_serve_shows_a_front_matter_or_citation_mistake_on_its_page(tmp_path, capsys):
    pages = {"index.md": "# Home\n", "a.md": "---\ntag: [x]\n---\n# A\n\nText.\n",
             "b.md": "# B\n\nAs shown [@nobib] and [@open too.\n"}
    project = make_fixture(tmp_path / "project", pages)
    _build(project, "serve")
    a = (project / "site" / "a" / "index.html").read_text(encoding="utf-8")
    b = (project / "site" / "b" / "index.html").read_text(encoding="utf-8")
    assert "a.md:2: unknown front-matter key &#x27;tag&#x27;: did you mean &#x27;tags&#x27;?" in a and "Text." in a
    assert "b.md:3: citation [@nobib], but there is no bibliography" in b
    assert "b.md:3: citation &#x27;[@open too.&#x27; is never closed" in b
    err = capsys.readouterr().err
    assert "ERROR   -  a.md:2: unknown front-matter key 'tag'" in err and "ERROR   -  b.md:3: citation" in err


def test_a_strict_build_still_stops_on_the_first_mistake(tmp_path, caplog):
    project = make_fixture(tmp_path / "project", {"index.md": "# Home\n", "a.md": BROKEN})
    with pytest.raises((PluginError, Abort)):
        _build(project, "build")
    assert "a.md:10: math" in caplog.text  # block math is read before the paragraphs' inline forms
    assert not (project / "site" / "a" / "index.html").exists()
