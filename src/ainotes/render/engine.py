"""vl-convert, and what it makes: the only module that calls it (its import is refused anywhere else).

The producers (:class:`Engine`) render a Vega-Lite spec to SVG, PNG or compiled Vega and bundle the
Vega runtime; they run in the build's process or in a render worker, through the same methods, so a
worker's bytes are the build's bytes. Keys (:func:`cache_key`) carry the engine's versions.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from collections import Counter, OrderedDict
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any, NamedTuple

from ainotes.base import cache
from ainotes.base.fonts import FONT_FAMILY

log = logging.getLogger("ainotes.render")


def fonts_dir() -> Path:
    """The fonts the package ships (``ainotes/assets/fonts``): every chart's text is set in them."""
    return Path(str(resources.files("ainotes") / "assets" / "fonts"))


@functools.cache
def _vlc() -> Any:
    """vl-convert, imported on first use (parsing and checking a page's fences never loads it), with
    the package's fonts registered: the layout measures text in the font the charts name
    (:data:`ainotes.charts.theme.FONT`), whatever fonts the machine has or lacks."""
    import vl_convert

    vl_convert.register_font_directory(str(fonts_dir()))
    return vl_convert


@functools.cache
def fonts_digest() -> str:
    """SHA-256 over the shipped fonts (each file's name, then its bytes): part of every render's key."""
    digest = hashlib.sha256()
    for path in sorted(fonts_dir().glob("*.ttf")):
        digest.update(path.name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


PNG_SCALE = 2.0  # device pixels per CSS pixel of the PNGs a site offers
# The Vega-only runtime: pages get specs compiled at build time, so they need neither
# Vega-Lite nor vega-embed (about 200 KB gzipped instead of 305 KB). vl-convert 1.9 binds a
# snippet's `vega` to vega's (missing) default export, i.e. null, so the snippet imports the
# namespace itself, by the module name vl-convert's bundler resolves from its own copy
# (nothing is fetched). Should a later vl-convert not resolve it, vega-embed's `vega`
# property is the same namespace, in the larger bundle.
RUNTIME_SNIPPET = (
    'import * as vegaModule from "https://cdn.jsdelivr.net/npm/vega@{version}/+esm"; window.vega = vegaModule;'
)
RUNTIME_FALLBACK_SNIPPET = "window.vega = vegaEmbed.vega;"


def vega_lite_version(spec: dict[str, Any]) -> str:
    """The Vega-Lite release to compile with: the one the spec's ``$schema`` names when
    vl-convert ships it (altair writes specs against that schema), else the newest."""
    shipped = _vlc().get_vegalite_versions()
    match = re.search(r"/vega-lite/v(\d+)\.(\d+)", str(spec.get("$schema", "")))
    if match:
        wanted = f"{match.group(1)}.{match.group(2)}"
        if wanted in shipped:
            return wanted
    return shipped[-1]


@functools.cache
def _engine_versions() -> dict[str, str]:
    return {"vl_convert": str(getattr(_vlc(), "__version__", "")), "vega": _vlc().get_vega_version(),
            "fonts": fonts_digest()}


def cache_key(kind: str, payload: Any, **options: Any) -> str:
    """A render's key: :func:`ainotes.base.cache.cache_key` with the vl-convert and Vega versions."""
    return cache.cache_key(kind, payload, versions=_engine_versions(), **options)


def still_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec a static picture is drawn from. A chart that names its still's plot size
    (``usermeta.ainotes.still``: ``{"width", "height"}``, see
    :func:`ainotes.charts.roofline.still_plot_size`) is laid out once, with autosize "pad" at
    that size, instead of twice by "fit"; any other spec as it is."""
    still = spec.get("usermeta", {}).get("ainotes", {}).get("still")
    if not isinstance(still, dict):
        return spec
    return {**spec, "autosize": {"type": "pad", "contains": "padding"},
            "width": still["width"], "height": still["height"]}


def with_shipped_font(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` with the shipped font as its default text font when its ``config`` names none. Vega's own
    default, "sans-serif", is whatever the machine has when the engine starts (nothing at all on a
    machine without fonts), so a still drawn from such a spec would differ between machines, and
    between processes started before and after a font package was installed."""
    config = spec.get("config")
    if isinstance(config, dict) and "font" in config:
        return spec
    return {**spec, "config": {**(config if isinstance(config, dict) else {}), "font": FONT_FAMILY}}


_LAYOUT_KEYS = ("width", "height", "autosize")
_CONTAINER_SIZE = "isFinite(containerSize()[{axis}]) ? containerSize()[{axis}] : 300"
COMPILED_BASES_KEPT = 32


def relayout(compiled: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any] | None:
    """The Vega that Vega-Lite compiles ``spec`` to, from ``compiled``, the same spec compiled at
    another size and with other ``usermeta``: what the compiler writes for a fixed size
    (``width``, ``height``, ``autosize`` at the top) or for ``"container"`` (the two size
    signals it declares first), and ``usermeta`` as given (the compiler would write a whole
    number over 2**32 in it as a float, ``1e12`` as ``1000000000000.0``: the same JSON value).
    ``None`` for any other layout. The tests compare it with the compiler's own output."""
    width, height, autosize = spec.get("width"), spec.get("height"), spec.get("autosize")
    out = {key: value for key, value in compiled.items() if key not in (*_LAYOUT_KEYS, "usermeta")}
    if "usermeta" in spec:  # passed through untouched (a phone still's differs in its size alone)
        out["usermeta"] = spec["usermeta"]
    if isinstance(autosize, str):
        autosize = {"type": autosize}
    if not isinstance(autosize, dict):
        return None
    out["autosize"] = autosize
    if isinstance(width, (int, float)) and isinstance(height, (int, float)):
        out["width"], out["height"] = width, height
        return out
    if width == "container" and height == "container":
        signals = [{"name": name, "init": _CONTAINER_SIZE.format(axis=axis),
                    "on": [{"update": _CONTAINER_SIZE.format(axis=axis), "events": "window:resize"}]}
                   for axis, name in enumerate(("width", "height"))]
        out["signals"] = [*signals, *compiled.get("signals", [])]
        return out
    return None


def svg_key(spec: dict[str, Any], version: str) -> str:
    return cache_key("svg", spec, vega_lite=version)


def png_key(spec: dict[str, Any], version: str, scale: float) -> str:
    return cache_key("png", spec, vega_lite=version, scale=float(scale))


def vega_key(spec: dict[str, Any], version: str) -> str:
    return cache_key("vega", spec, vega_lite=version)


def runtime_key() -> str:
    """The Vega runtime bundle's key (kept in :func:`ainotes.base.cache.shared_dir`)."""
    return cache_key("runtime", RUNTIME_SNIPPET, fallback=RUNTIME_FALLBACK_SNIPPET)


def assemble_runtime(bundle: str) -> str:
    """The runtime file from vl-convert's bundle; every addition to the file goes here.

    The bundle is an ES module's body; in a function it keeps its top-level names to itself
    when loaded by a classic <script>, as pages do."""
    return f'(function () {{"use strict";\n{bundle}\n}})();\n'


class Part(NamedTuple):
    """One render of a job: its kind, spec, Vega-Lite version and PNG scales (svg only)."""

    kind: str
    spec: dict[str, Any] | None
    version: str
    scales: tuple[float, ...]


class Engine:
    """The producers, with what they keep in one process: the counts of what vl-convert did (per
    output kind) and the last few compiled specs (:data:`COMPILED_BASES_KEPT`)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.compiled_bases: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def start(self) -> None:
        """Start vl-convert's V8 and load the newest Vega-Lite and Vega in it (about 0.8 s, once a
        process) by drawing a one-point chart; the next render is then as quick as every other."""
        _vlc().vegalite_to_svg({"mark": "point"}, vl_version=_vlc().get_vegalite_versions()[-1])

    def compile_vega(self, spec: dict[str, Any], version: str) -> dict[str, Any]:
        """``spec`` compiled to Vega. A chart's still, phone still and live view differ only in their
        layout (:data:`_LAYOUT_KEYS`), so the compiler runs once for all three in a process and each
        gets its layout put back (:func:`relayout`); the result is the compiler's own output."""
        if relayout({}, spec) is None:
            return _vlc().vegalite_to_vega(spec, vl_version=version)
        base = {key: value for key, value in spec.items() if key not in (*_LAYOUT_KEYS, "usermeta")}
        key = cache_key("vega-base", base, vega_lite=version)
        compiled = self.compiled_bases.get(key)
        if compiled is None:
            compiled = _vlc().vegalite_to_vega({**base, "width": 1, "height": 1, "autosize": {"type": "pad"}},
                                            vl_version=version)
            self.compiled_bases[key] = compiled
            while len(self.compiled_bases) > COMPILED_BASES_KEPT:
                self.compiled_bases.popitem(last=False)
        else:
            self.compiled_bases.move_to_end(key)
        relaid = relayout(compiled, spec)
        assert relaid is not None  # checked above
        return relaid

    def make_svg(self, spec: dict[str, Any], version: str) -> bytes:
        self.counts["svg"] += 1
        return _vlc().vega_to_svg(self.compile_vega(still_spec(with_shipped_font(spec)), version)).encode("utf-8")

    def make_png(self, svg_bytes: bytes, scale: float) -> bytes:
        # Rasterising the static SVG gives the same pixels as a second Vega run, in a third of the time.
        self.counts["png"] += 1
        return bytes(_vlc().svg_to_png(svg_bytes.decode("utf-8"), scale=scale))

    def make_vega(self, spec: dict[str, Any], version: str) -> bytes:
        self.counts["vega"] += 1
        return json.dumps(self.compile_vega(spec, version), sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    def make_runtime_bundle(self) -> bytes:
        """vl-convert's bundle of the Vega runtime (about a second): cached in :func:`shared_dir`."""
        self.counts["runtime"] += 1
        try:
            bundle = _vlc().javascript_bundle(snippet=RUNTIME_SNIPPET.format(version=_vlc().get_vega_version()))
        except Exception as exc:  # vl-convert raises a plain Exception when the bundler cannot resolve a module
            log.debug("render: Vega-only bundle failed (%s); using the vega-embed bundle", exc)
            bundle = _vlc().javascript_bundle(snippet=RUNTIME_FALLBACK_SNIPPET)
        return bundle.encode("utf-8")

    def run_part(self, kind: str, spec: dict[str, Any] | None, version: str, scales: tuple[float, ...]) -> list[bytes]:
        if kind == "svg" and spec is not None:
            svg_bytes = self.make_svg(spec, version)
            return [svg_bytes, *(self.make_png(svg_bytes, scale) for scale in scales)]
        if kind == "vega" and spec is not None:
            return [self.make_vega(spec, version)]
        if kind == "runtime":
            return [self.make_runtime_bundle()]
        raise ValueError(f"render: unknown request kind {kind!r}")

    def run_job(self, parts: Iterable[Part]) -> list[bytes]:
        """One job's outputs, part after part, through the producers the one-at-a-time functions
        call (so a worker's bytes are this process's bytes). Runs in a worker process, or here
        without one."""
        return [payload for part in parts for payload in self.run_part(*part)]
