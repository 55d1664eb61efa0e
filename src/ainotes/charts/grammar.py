"""A chart type's grammar: its Vega-Lite structure, built once with altair, filled with data per chart.

Building a layered chart with altair costs a few hundred milliseconds (import and
``to_dict``); filling in data costs microseconds. So a chart type states its
structure once, in a builder that uses altair and refers to everything that varies
from chart to chart through **named datasets** and **params** (``{"expr": "x_domain"}``
for a scale's domain, a legend's ``labelExpr`` reading a lookup param, and so on).
:meth:`Grammar.spec` then returns that structure with a chart's own datasets, param
values, title and theme config put in by name: no search and replace over the text.

The structure is cached twice: in-process, and in the render cache on disk
(:func:`ainotes.base.cache.memo_json`), keyed by the chart kind, the builder's variant and
a fingerprint of the code that builds it (:func:`code_fingerprint`), so that editing
the chart module or upgrading altair rebuilds it and nothing else does.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Callable, Hashable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from ainotes.base import cache
from ainotes.base.errors import InputError


@functools.cache
def code_fingerprint(*sources: str) -> str:
    """SHA-256 over altair's version and the given source files (paths), in the order given."""
    digest = hashlib.sha256(metadata.version("altair").encode())
    for source in sources:
        path = Path(source)
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def whole_numbers_as_ints(value: Any) -> Any:
    """``2.25e15`` written ``2250000000000000``, not ``2250000000000000.0``: the same number in
    JSON, two bytes shorter, which over every row keeps a spec small."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, list):
        return [whole_numbers_as_ints(item) for item in value]
    if isinstance(value, dict):
        return {key: whole_numbers_as_ints(item) for key, item in value.items()}
    return value


class Grammar:
    """One chart type's structure.

    ``build(variant)`` returns the Vega-Lite dict of the chart without data: named
    datasets it reads (``{"data": {"name": ...}}``) and params it declares (their values
    are placeholders). ``variant`` is a small hashable (``()`` when the type has one
    form). ``sources`` are the files whose code decides the structure.
    """

    def __init__(self, kind: str, build: Callable[[Hashable], dict[str, Any]], *sources: str):
        self.kind = kind
        self._build = build
        self._sources = tuple(sources) or (__file__,)
        self._memo: dict[Hashable, dict[str, Any]] = {}
        self.builds = 0  # how many structures altair has built in this process (tests count with it)

    def forget(self) -> None:
        """Drop this process's structures (the disk cache keeps its own)."""
        self._memo.clear()

    def _built(self, variant: Hashable) -> dict[str, Any]:
        self.builds += 1
        return self._build(variant)

    def structure(self, variant: Hashable = (), *, cached: bool = True) -> dict[str, Any]:
        """The structure for ``variant`` (a fresh copy); ``cached=False`` runs altair again."""
        if not cached:
            return self._built(variant)
        if variant not in self._memo:

            payload = {"variant": repr(variant), "code": code_fingerprint(*self._sources, __file__)}
            # shared: a structure depends on code and altair only, so a cold render cache keeps it
            self._memo[variant] = cache.memo_json(
                f"grammar-{self.kind}", payload, lambda: self._built(variant), shared=True,
                versions={"altair": _altair_version()},
            )
        return copy.deepcopy(self._memo[variant])

    def spec(
        self,
        *,
        datasets: Mapping[str, list[dict[str, Any]]],
        params: Mapping[str, Any],
        config: Mapping[str, Any],
        variant: Hashable = (),
        top: Mapping[str, Any] | None = None,
        cached: bool = True,
        exprs: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The structure with this chart's data in place.

        ``params`` sets each named param's ``value`` (a name the structure lacks is a
        programming error); ``exprs`` sets the ``expr`` of params the structure declares with
        one (expressions written for this chart's data, such as one term per GPU);
        ``config`` becomes the spec's ``config`` (the theme); ``top`` sets top-level
        properties such as ``title``.
        """
        spec = self.structure(variant, cached=cached)
        declared = {param["name"]: param for param in spec.get("params", [])}
        for name, value in params.items():
            if name not in declared:
                raise InputError(f"{self.kind} chart: the grammar has no param {name!r}")
            declared[name]["value"] = value
        for name, expr in (exprs or {}).items():
            if "expr" not in declared.get(name, {}):
                raise InputError(f"{self.kind} chart: the grammar has no expression param {name!r}")
            declared[name]["expr"] = expr
        spec.update(top or {})
        spec["datasets"] = dict(datasets)
        spec["config"] = deep_merge(spec.get("config", {}), config)
        return whole_numbers_as_ints(spec)


def deep_merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, dicts merged key by key (a theme's colours over
    the neutral config's sizes and fonts)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@functools.cache
def _altair_version() -> str:
    from importlib.metadata import version

    return version("altair")
