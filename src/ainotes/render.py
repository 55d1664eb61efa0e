"""Vega-Lite specs to static SVG and PNG, compiled Vega, and standalone pages, through vl-convert.

Rendering a chart takes a few hundred milliseconds and a site renders each one
several times over (two themes, several formats, every build), so every result
goes through a content-addressed cache:

* key: SHA-256 of the canonical JSON of the spec, the output kind, the scale,
  the vl-convert, Vega and Vega-Lite versions and :data:`CACHE_FORMAT`;
* place: ``$AINOTES_CACHE_DIR``, else ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``;
* entry: one file, a header line ``ainotes-render <format> sha256=<hex> length=<n>``
  followed by the payload. An entry whose payload does not match its header
  (truncated, corrupted) is deleted and rendered again, never served;
* writes go to a temporary file in the same folder and are moved into place
  with :func:`os.replace`, so builds running at once never see half an entry.

An in-process memo sits in front of the disk. Output is deterministic: the same
spec gives byte-identical SVG.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import os
import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

import vl_convert as vlc

from ainotes import notices
from ainotes.files import write_atomic

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
CACHE_DIR_ENV = "AINOTES_CACHE_DIR"
MEMO_ENTRIES = 256
# The Vega-only runtime: pages get specs compiled at build time, so they need neither
# Vega-Lite nor vega-embed (about 200 KB gzipped instead of 305 KB). vl-convert 1.9 binds a
# snippet's `vega` to vega's (missing) default export, i.e. null, so the snippet imports the
# namespace itself, by the module name vl-convert's bundler resolves from its own copy
# (nothing is fetched). Should a later vl-convert not resolve it, vega-embed's `vega`
# property is the same namespace, in the larger bundle.
RUNTIME_SNIPPET = 'import * as vegaModule from "https://cdn.jsdelivr.net/npm/vega@{version}/+esm"; window.vega = vegaModule;'
RUNTIME_FALLBACK_SNIPPET = "window.vega = vegaEmbed.vega;"

_HEADER = re.compile(rb"ainotes-render (\d+) sha256=([0-9a-f]{64}) length=(\d+)\n")
_ENTRY_SUFFIX = ".entry"
_memo: OrderedDict[str, bytes] = OrderedDict()


# -- cache ---------------------------------------------------------------------


def cache_dir() -> Path:
    """Where rendered results are kept: ``$AINOTES_CACHE_DIR``, else
    ``${XDG_CACHE_HOME:-~/.cache}/ainotes/render``."""
    configured = os.environ.get(CACHE_DIR_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ainotes" / "render"


def clear_cache() -> int:
    """Delete every cache entry on disk (and forget the in-process memo); returns how many files went."""
    _memo.clear()
    folder = cache_dir()
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.iterdir():
        # Only our own files: entries and temporary files left by an interrupted write.
        if path.is_file() and (path.suffix == _ENTRY_SUFFIX or (path.name.startswith(".") and path.suffix == ".tmp")):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def _vega_lite_version(spec: dict[str, Any]) -> str:
    """The Vega-Lite release to compile with: the one the spec's ``$schema`` names when
    vl-convert ships it (altair writes specs against that schema), else the newest."""
    shipped = vlc.get_vegalite_versions()
    match = re.search(r"/vega-lite/v(\d+)\.(\d+)", str(spec.get("$schema", "")))
    if match:
        wanted = f"{match.group(1)}.{match.group(2)}"
        if wanted in shipped:
            return wanted
    return shipped[-1]


def cache_key(kind: str, payload: Any, **options: Any) -> str:
    """SHA-256 over everything that decides the output (canonical JSON, so key order in the spec does not matter)."""
    material = {
        "format": CACHE_FORMAT,
        "kind": kind,
        "input": payload,
        "options": options,
        "vl_convert": vlc.__version__,
        "vega": vlc.get_vega_version(),
    }
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _entry_path(key: str) -> Path:
    return cache_dir() / f"{key}{_ENTRY_SUFFIX}"


def _read_entry(path: Path) -> bytes | None:
    """The payload of a sound entry; ``None`` if missing. A damaged entry is deleted."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.debug("render cache: cannot read %s: %s", path, exc)
        return None
    header = _HEADER.match(data)
    if header is not None and int(header.group(1)) == CACHE_FORMAT:
        payload = data[header.end():]
        if len(payload) == int(header.group(3)) and hashlib.sha256(payload).hexdigest() == header.group(2).decode():
            return payload
    log.debug("render cache: damaged entry %s deleted", path)
    path.unlink(missing_ok=True)
    return None


def _write_entry(path: Path, payload: bytes) -> None:
    """Write an entry atomically (:func:`ainotes.files.write_atomic`), its checksum header first."""
    header = f"ainotes-render {CACHE_FORMAT} sha256={hashlib.sha256(payload).hexdigest()} length={len(payload)}\n"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, header.encode("ascii") + payload)
    except OSError as exc:  # a read-only or full disk costs speed, not correctness
        log.debug("render cache: cannot write %s: %s", path, exc)


def _cached(key: str, make: Any) -> bytes:
    payload = _memo.get(key)
    if payload is not None:
        _memo.move_to_end(key)
        return payload
    path = _entry_path(key)
    payload = _read_entry(path)
    if payload is None:
        payload = make()
        _write_entry(path, payload)
    _memo[key] = payload
    if len(_memo) > MEMO_ENTRIES:
        _memo.popitem(last=False)
    return payload


# -- outputs -------------------------------------------------------------------


def svg(spec: dict[str, Any]) -> str:
    """The chart as a static SVG document (text stays text, so it is searchable and scales)."""
    version = _vega_lite_version(spec)
    key = cache_key("svg", spec, vega_lite=version)
    return _cached(key, lambda: vlc.vegalite_to_svg(spec, vl_version=version).encode("utf-8")).decode("utf-8")


def png(spec: dict[str, Any], scale: float = 2.0) -> bytes:
    """The chart as a PNG, ``scale`` device pixels per CSS pixel."""
    version = _vega_lite_version(spec)
    key = cache_key("png", spec, vega_lite=version, scale=float(scale))
    # Rasterising the static SVG gives the same pixels as a second Vega run, in a third of the time.
    return _cached(key, lambda: bytes(vlc.svg_to_png(svg(spec), scale=scale)))


def vega(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec compiled to Vega, so pages can ship the smaller Vega-only runtime (a fresh dict each call)."""
    version = _vega_lite_version(spec)
    key = cache_key("vega", spec, vega_lite=version)
    compiled = _cached(
        key,
        lambda: json.dumps(vlc.vegalite_to_vega(spec, vl_version=version), sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False).encode("utf-8"),
    )
    return json.loads(compiled)


def _build_runtime() -> bytes:
    try:
        bundle = vlc.javascript_bundle(snippet=RUNTIME_SNIPPET.format(version=vlc.get_vega_version()))
    except Exception as exc:  # vl-convert raises a plain Exception when the bundler cannot resolve a module
        log.debug("render: Vega-only bundle failed (%s); using the vega-embed bundle", exc)
        bundle = vlc.javascript_bundle(snippet=RUNTIME_FALLBACK_SNIPPET)
    # The bundle is an ES module's body; in a function it keeps its top-level names to itself
    # when loaded by a classic <script>, as pages do.
    return f'(function () {{"use strict";\n{bundle}\n}})();\n'.encode("utf-8")


def memo_json(kind: str, payload: Any, make: Any) -> Any:
    """A JSON value that ``make()`` computes, cached like a render under ``kind`` and ``payload``.

    ``payload`` must hold everything the value depends on, code included: callers put a
    fingerprint of their source in it. A fresh copy each call."""
    key = cache_key(kind, payload)
    text = _cached(
        key,
        lambda: json.dumps(make(), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           allow_nan=False).encode("utf-8"),
    )
    return json.loads(text)


def runtime_js() -> str:
    """The Vega-only JavaScript runtime for a classic ``<script>``: sets ``window.vega`` and
    nothing else global. Deterministic for one vl-convert version. Starts with the
    third-party notices (:func:`ainotes.notices.with_notices`), so every file it goes into carries them."""
    key = cache_key("runtime", RUNTIME_SNIPPET, fallback=RUNTIME_FALLBACK_SNIPPET)
    return notices.with_notices(_cached(key, _build_runtime).decode("utf-8"))


def responsive(spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``spec`` that fills its container: ``width``/``height`` ``"container"`` and
    ``autosize: fit``, so the view takes the size of the box the static SVG reserved."""
    return {**spec, "width": "container", "height": "container",
            "autosize": {"type": "fit", "contains": "padding", "resize": True}}


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` become ``\\u003c`` ``\\u003e`` ``\\u0026``
    (so no ``</script>`` or ``<!--`` can end or bend the element), as do U+2028/U+2029."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def _inline_script(code: str) -> str:
    """JavaScript for an inline ``<script>``; a literal ``</script`` would end the element early."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)


_STANDALONE_CSS = """
:root{color-scheme:light dark}
body{margin:0;padding:16px;font:15px/1.5 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;background:BG}
.ainotes-standalone{max-width:1200px;margin:0 auto}
.ainotes-standalone__box{position:relative;width:100%;aspect-ratio:AR}
.ainotes-standalone__box>svg,.ainotes-standalone__view{position:absolute;inset:0;width:100%;height:100%}
.ainotes-standalone__view>svg{display:block}
.ainotes-standalone__controls{min-height:5.5em;color:FG}
.vega-bind{display:flex;flex-wrap:wrap;align-items:center;gap:.25em .75em;margin:.35em 0}
.vega-bind-name{font-weight:600}
.vega-bind input[type=range]{flex:1 1 12em;max-width:24em}
@media (max-width:600px){.ainotes-standalone__box{aspect-ratio:2/3}}
"""

_STANDALONE_JS = """
(function () {
  var root = document.querySelector(".ainotes-standalone");
  var spec = JSON.parse(document.getElementById("ainotes-spec").textContent);
  var box = root.querySelector(".ainotes-standalone__box");
  var container = root.querySelector(".ainotes-standalone__view");
  var view = new vega.View(vega.parse(spec), {
    renderer: "svg", container: container, bind: root.querySelector(".ainotes-standalone__controls"), hover: true
  });
  view.runAsync().then(function () {
    var still = box.querySelector(":scope > svg");
    if (still) still.remove();
  }).catch(function (error) { container.remove(); console.warn("ainotes chart:", error); });
})();
"""


def svg_size(svg_text: str) -> tuple[float, float]:
    """The width and height attributes of an SVG document's root, in CSS pixels."""
    match = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', svg_text)
    if not match:
        return (4.0, 3.0)
    return (float(match.group(1)), float(match.group(2)))


def static_svg_for_page(svg_text: str) -> str:
    """The static SVG ready to sit inside an HTML page: no XML declaration, with a ``viewBox``
    so it scales to the box that holds it, and hidden from assistive tech only if it says so."""
    text = re.sub(r"^\s*<\?xml[^>]*\?>\s*", "", svg_text)
    width, height = svg_size(text)
    if "viewBox=" not in text[: text.find(">")]:
        text = text.replace("<svg", f'<svg viewBox="0 0 {width:g} {height:g}"', 1)
    return text


def standalone_html(spec: dict[str, Any], *, title: str) -> str:
    """One self-contained HTML page: the static SVG (shown at once, and the whole chart
    without JavaScript), the Vega runtime and the compiled spec inline, nothing loaded
    from outside. ``title`` is escaped."""
    still = static_svg_for_page(svg(spec))
    width, height = svg_size(still)
    compiled = vega(responsive(spec))
    background = str(spec.get("config", {}).get("background", "#ffffff"))
    text_colour = str(spec.get("config", {}).get("title", {}).get("color", "#1f2329"))
    css = (_STANDALONE_CSS.replace("BG", _css_colour(background)).replace("FG", _css_colour(text_colour))
           .replace("AR", f"{width:g}/{height:g}"))
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>{css}</style>\n"
        "</head>\n<body>\n"
        '<main class="ainotes-standalone">\n'
        f'<div class="ainotes-standalone__box">{still}<div class="ainotes-standalone__view"></div></div>\n'
        '<div class="ainotes-standalone__controls"></div>\n'
        "<noscript><p>The interactive controls need JavaScript; the picture above is the chart as it opens.</p></noscript>\n"
        "</main>\n"
        f'<script type="application/json" id="ainotes-spec">{script_json(compiled)}</script>\n'
        f"<script>{_inline_script(runtime_js())}</script>\n"
        f"<script>{_STANDALONE_JS}</script>\n"
        "</body>\n</html>\n"
    )


def _css_colour(value: str) -> str:
    """A colour from the spec for the page's CSS; anything but a plain hex colour or name falls back."""
    return value if re.fullmatch(r"#[0-9a-fA-F]{3,8}|[a-zA-Z]+", value) else "#ffffff"
