"""The build's settings are read from mkdocs.yml once, the same way by every driver: the MkDocs hook
(MkDocs, ProperDocs) and ``ainotes site-assets`` (after Zensical) see the same folders, tags, bibliography
and addresses, and the ``ainotes.markdown`` options move the presets and the bibliography for both."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from mkdocs.config import load_config

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.project import read_project
from sitebuild import REPO, make_fixture

PAGES = {"index.md": "# Home\n", "a.md": "---\ntags: [training]\n---\n# A\n\nProse.\n"}


def _hook_site(config_file: Path) -> NotesSite:
    """The site ``hooks/notes.py`` makes for a MkDocs build of ``config_file``."""
    spec = importlib.util.spec_from_file_location("notes_hook_under_test", REPO / "hooks" / "notes.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    config = load_config(config_file=str(config_file))
    hook.on_startup(command="build")
    hook.on_config(config)
    site = config.mdx_configs["ainotes.markdown"]["site"]
    assert isinstance(site, NotesSite)
    return site


def test_options_under_ainotes_markdown_reach_both_drivers_alike(tmp_path):
    root = make_fixture(tmp_path / "project", PAGES)
    (root / "presets").rename(root / "gpus")
    config = root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "   ainotes.markdown.extension]",
        "   {ainotes.markdown: {presets_dir: gpus, bibliography: works.bib, tags: {training: Training runs}}}]"),
        encoding="utf-8")
    with config.open("a", encoding="utf-8") as extra:
        extra.write("site_url: https://notes.example.org/x/\nsite_description: About the notes\n")
    from_hook, settings = _hook_site(config), read_project(config).settings
    assert from_hook.settings == settings
    assert settings.presets_dir == root / "gpus" and [p.id for p in from_hook.presets] == ["h100", "plain"]
    assert settings.bibliography_path == root / "docs" / "works.bib"
    assert dict(settings.tags) == {"training": "Training runs"}
    assert (settings.site_url, settings.site_description) == ("https://notes.example.org/x/", "About the notes")


def test_tags_that_are_not_a_mapping_name_mkdocs_yml(tmp_path):
    root = make_fixture(tmp_path / "project", PAGES)
    config = root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "   ainotes.markdown.extension]", "   {ainotes.markdown: {tags: [training, hardware]}}]"), encoding="utf-8")
    with pytest.raises(InputError, match=r"mkdocs\.yml: 'ainotes.markdown: tags' must map each tag to a line"):
        read_project(config)
