"""Licences shipped with what we ship: the notices travel with the Vega runtime, wherever it goes."""

from __future__ import annotations

import re
import tomllib

import pytest

from ainotes import render
from ainotes.base import notices
from ainotes.charts.figure import VegaFigure
from ainotes.html import embed
from sitebuild import REPO

# A message from vega-util, in every Vega build: the runtime is in a file when this is.
RUNTIME_MARKER = "Access path missing open bracket"

# Code the runtime bundle holds (a string it keeps through minification) → the package that
# must then be named in the notices. If vl-convert's bundle changes, these keep the list honest.
BUNDLED = {
    RUNTIME_MARKER: "vega-util",
    "alphaDecay": "d3-force",  # the force simulation
    "treemap": "d3-hierarchy",
    "134217729": "robust-predicates",  # Shewchuk's splitter, 2^27 + 1
    "tableau10": "vega-scale",
}


def test_license_file_is_the_mit_licence_pyproject_declares():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the ainotes authors" in text
    assert "Permission is hereby granted, free of charge" in text
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"


def test_notices_name_each_licence_with_its_full_text():
    text = notices.notices_text()
    assert "Copyright (c) 2015-2023, University of Washington Interactive Data Lab" in text
    assert "Copyright 2010-2023 Mike Bostock" in text
    assert "Copyright 2008-2012 Charles Karney" in text  # GeographicLib's part of d3-geo
    # Each licence's own conditions, not just its name.
    assert "Neither the name of the copyright holder nor the names of its contributors" in text  # BSD-3
    assert "Permission to use, copy, modify, and/or distribute this software" in text  # ISC
    assert "Permission is hereby granted, free of charge" in text  # MIT
    assert "released into the public domain" in text  # Unlicense


def test_runtime_starts_with_the_notices():
    code = render.runtime_js()
    assert code.startswith("/*!\n")
    assert code.startswith(notices.js_comment())
    assert code.count(notices.js_comment()) == 1
    assert RUNTIME_MARKER in code


@pytest.mark.parametrize(("marker", "package"), sorted(BUNDLED.items()))
def test_every_package_found_in_the_runtime_is_named(marker, package):
    code = render.runtime_js()[len(notices.js_comment()):]
    if marker not in code:
        pytest.skip(f"this vl-convert's bundle has no {package}")
    assert re.search(rf"(?<![\w-]){re.escape(package)}(?![\w-])", notices.notices_text()), package


def test_with_notices_is_idempotent_and_keeps_the_comment_closed(monkeypatch):
    once = notices.with_notices("var x = 1;")
    assert notices.with_notices(once) == once
    assert once.endswith("*/\nvar x = 1;")
    monkeypatch.setattr(notices, "notices_text", lambda: "a */ b")
    assert notices.js_comment() == "/*!\na * / b\n*/\n"


def test_standalone_page_carries_the_notices_with_its_runtime():
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "data": {"values": [{"x": 1, "y": 2}]},
        "mark": "point",
        "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"}},
    }
    page = embed.standalone_html(VegaFigure(spec, None), title="t")
    assert RUNTIME_MARKER in page
    comment_at = page.find("/*!\nThird-party notices")
    assert 0 < comment_at < page.find(RUNTIME_MARKER)
    assert "University of Washington Interactive Data Lab" in page
