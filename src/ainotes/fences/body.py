"""A fence's body, read: YAML with every key's line, and one reader that names the line of a mistake.

Every fence kind's parser starts here: :func:`load_body` gives the mapping and the line of each
key and item, and a :class:`BodyReader` checks keys, types and values, raising
:class:`~ainotes.base.errors.InputError` as ``page.md:LINE: fence: what is wrong (what was meant)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import yaml

from ainotes.base import yamlread
from ainotes.base.errors import InputError
from ainotes.base.textcheck import MAX_NAME_CHARS, closest, short, unknown_id
from ainotes.core import checks
from ainotes.core.checks import FieldError, QuotedText

_T = TypeVar("_T")


MAX_PRESETS_PER_CHART = 16
MAX_TITLE_CHARS = MAX_NAME_CHARS  # the one cap of names and titles
MAX_FENCE_BODY_CHARS = 20_000


_CHART_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Fence:
    """One of our fences as Markdown found it: its kind, body and the 1-based line it opens on."""

    kind: str
    body: str
    start_line: int
    end_line: int | None = None  # its closing line, where known


# libyaml's parser where PyYAML has it (its wheels do): the same documents and lines, a few
# times faster than the pure-Python one, and every fence body of every build goes through it.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _LineLoader(_SAFE_LOADER):  # type: ignore[valid-type,misc]  # a base chosen at import
    """Safe YAML that also remembers the line of every mapping and of each of its keys."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.key_lines: dict[int, dict[object, int]] = {}
        self._keep_alive: list[dict | list] = []  # ids stay unique while the loader lives


def _construct_mapping_with_lines(loader: _LineLoader, node: yaml.MappingNode):
    data: dict = {}
    lines: dict[object, int] = {None: node.start_mark.line}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode):
            key = loader.construct_object(key_node)
            if key in lines:  # the second of two equal keys, at its own line
                above = key_node.start_mark.line - lines[key]
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {short(key)} ({above} line{'s' if above != 1 else ''} above "
                    "gives it already; keep one)", key_node.start_mark)
            lines[key] = key_node.start_mark.line
    loader.key_lines[id(data)] = lines
    loader._keep_alive.append(data)
    yield data
    data.update(loader.construct_mapping(node))


def _construct_sequence_with_lines(loader: _LineLoader, node: yaml.SequenceNode):
    data: list = []
    lines: dict[object, int] = {None: node.start_mark.line}
    lines.update({index: item.start_mark.line for index, item in enumerate(node.value)})
    loader.key_lines[id(data)] = lines
    loader._keep_alive.append(data)
    yield data
    data.extend(loader.construct_sequence(node))


def _construct_string(loader: _LineLoader, node: yaml.ScalarNode) -> str:
    """A string, marked :class:`~ainotes.core.checks.QuotedText` where quotes hold a number
    (``context: "8192"``), so that a whole-number key refuses the quotes by name."""
    text = loader.construct_scalar(node)
    if node.style in ("'", '"') and _looks_numeric(text):
        return QuotedText(text)
    return text


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


_LineLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping_with_lines)
_LineLoader.add_constructor("tag:yaml.org,2002:seq", _construct_sequence_with_lines)
_LineLoader.add_constructor("tag:yaml.org,2002:str", _construct_string)


def load_body(fence: Fence, where: str) -> tuple[dict[str, Any], dict[int, dict[object, int]]]:
    """The fence body's mapping and the 0-based line of every key and item (see :class:`BodyReader`);
    a body that is too long, is not YAML, nests too deep (:mod:`ainotes.base.yamlread`), repeats a key or
    is not a mapping is one line at the line to fix."""
    if len(fence.body) > MAX_FENCE_BODY_CHARS:
        raise InputError(
            f"{where}:{fence.start_line}: {fence.kind} fence body must be at most "
            f"{MAX_FENCE_BODY_CHARS} characters: {len(fence.body)}"
        )
    loader = None
    try:
        loader = _LineLoader(fence.body)  # the reader refuses control characters here
        data = yamlread.load_text(fence.body, loader) if fence.body.strip() else {}
    except yamlread.YamlMistakeError as exc:
        line = fence.start_line + 1 + (exc.line or 0)
        said = "is not valid YAML" if exc.parse else "cannot be read"
        raise InputError(f"{where}:{line}: {fence.kind} fence body {said}: {exc.words}") from None
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. unhashable keys
        problem = " ".join(str(exc).split())[:200]
        raise InputError(f"{where}:{fence.start_line}: {fence.kind} fence body cannot be read: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(
            f"{where}:{fence.start_line}: {fence.kind} fence body must be a YAML mapping of keys, "
            f"not {_type_name(data)}"
        )
    return data, loader.key_lines


class BodyReader:
    """Reads typed keys out of a fence body, raising page:line errors."""

    def __init__(
        self,
        fence: Fence,
        where: str,
        data: Mapping[str, Any],
        allowed: tuple[str, ...],
        key_lines: dict[int, dict[object, int]],
    ):
        self.fence, self.where, self.data = fence, where, data
        self.key_lines = key_lines
        self.lines = key_lines.get(id(data), {})
        for key in data:
            if key not in allowed:
                near = closest(str(key), allowed)
                hint = f": did you mean {near!r}?" if near is not None else ""
                self.fail(str(key), f"unknown key {short(str(key))} in {fence.kind} fence "
                                    f"(allowed: {', '.join(allowed)}){hint}")

    def fail(self, key: str, message: str, *, item: int | None = None) -> NoReturn:
        """Raise for ``key``, at its line in the page (the mapping's line if it is absent), or at
        the line of its list's ``item`` (0-based) where that list stands on lines of its own."""
        line = self.lines.get(key, self.lines.get(None))
        value = self.data.get(key) if isinstance(self.data, Mapping) else None
        if item is not None and isinstance(value, list):
            line = self.key_lines.get(id(value), {}).get(item, line)
        page_line = self.fence.start_line if line is None else self.fence.start_line + 1 + line
        raise InputError(f"{self.where}:{page_line}: {message}")

    def place(self, key: str) -> str:
        """``page.md:LINE`` of ``key`` (of the body's mapping where it lacks the key): where a check made
        only when the fence is drawn (a link or model id against the loaded presets) reports."""
        line = self.lines.get(key, self.lines.get(None))
        return f"{self.where}:{self.fence.start_line if line is None else self.fence.start_line + 1 + line}"

    def nested(self, data: Mapping[str, Any], allowed: tuple[str, ...]) -> BodyReader:
        return BodyReader(self.fence, self.where, data, allowed, self.key_lines)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"{short(key)} must be true or false: {short(value)}")
        return value

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        return self.checked(checks.whole_number, key, self.data.get(key, default), low=low, high=high)

    def text(self, key: str, max_chars: int = MAX_TITLE_CHARS) -> str | None:
        value = self.data.get(key)
        return None if value is None else self.checked(checks.one_line_text, key, value, max_chars=max_chars)

    def checked(self, check: Callable[..., _T], key: str, value: Any, *args: Any, **kwargs: Any) -> _T:
        """``check(value, 'key', key, ...)`` with its message placed at the key's line."""
        try:
            return check(value, short(key), key, *args, **kwargs)
        except FieldError as exc:
            self.fail(exc.field or key, str(exc))
            raise  # unreachable: fail raises

    def chart_id(self) -> str | None:
        value = self.data.get("id")
        if value is None:
            return None
        if not isinstance(value, str) or not _CHART_ID.match(value) or len(value) > 64:
            self.fail("id", f"'id' must be lowercase letters, digits and hyphens (at most 64): {short(value)}")
        return value

    def preset_ids(self, known: tuple[str, ...]) -> tuple[str, ...]:
        value = self.data.get("presets")
        if value is None or value == "all":
            return known
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value:
            self.fail("presets", f"'presets' must be a list of preset ids or 'all': {short(value)}")
        if len(value) > MAX_PRESETS_PER_CHART:
            self.fail("presets", f"'presets' may name at most {MAX_PRESETS_PER_CHART}: {len(value)}")
        ids = []
        for index, item in enumerate(value):
            if item not in known:
                self.fail("presets", f"{unknown_id('preset', item, known)}", item=index)
            if item not in ids:
                ids.append(item)
        return tuple(ids)


def _type_name(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number", bool: "true/false"}.get(
        type(value), type(value).__name__
    )
