"""What every preset folder shares: its files, their YAML, one id per file, and the checks of a file's
text, sources and counts. The GPU, link and model loaders (:mod:`.gpus`, :mod:`.links`, :mod:`.models`)
each add their own keys and build their own value object.

Every mistake is one :class:`InputError` line naming the file (and the line, for YAML that does not
parse), the key, the rule and the value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import yaml

from ainotes.base import yamlread
from ainotes.base.errors import InputError
from ainotes.base.files import UnreadableFileError, path_state, read_user_text, short_path
from ainotes.base.textcheck import (
    MAX_NAME_CHARS,
    MAX_NOTES_CHARS,
    MAX_SOURCE_TITLE_CHARS,
    bad_character,
    closest,
    short,
    url_problem,
)
from ainotes.core import checks
from ainotes.core.hardware import Source, check_figure

__all__ = [
    "PRESETS_DIR_ENV", "PRESET_SUFFIXES", "FileCheck", "PresetLoader", "check_boolean", "check_figure",
    "check_file_name", "check_mapping", "check_sources", "check_text", "check_unique_ids", "check_url",
    "default_presets_dir", "duplicate_message", "folder_files", "kind", "load_folder", "parse_yaml",
    "short_path", "sources_of", "subfolder", "validate_paths",
]
T = TypeVar("T")

PRESET_SUFFIXES = (".yaml", ".yml")
PRESETS_DIR_ENV = "AINOTES_PRESETS_DIR"
SOURCE_SCHEMES = ("http", "https")
MAX_URL_CHARS = 2000


def default_presets_dir() -> Path:
    """``$AINOTES_PRESETS_DIR`` when set and non-empty, else ``./presets``."""
    configured = os.environ.get(PRESETS_DIR_ENV, "").strip()
    return Path(configured) if configured else Path("presets")


def subfolder(name: str, presets_dir: str | Path | None = None) -> Path:
    """``<presets dir>/<name>`` (``links``, ``models``), the presets folder being :func:`default_presets_dir`
    by default."""
    base = Path(presets_dir) if presets_dir is not None else default_presets_dir()
    return base / name


def folder_files(directory: str | Path, what: str) -> tuple[Path, ...]:
    """The ``*.yaml`` / ``*.yml`` files directly in ``directory``, sorted by name; an :class:`InputError`
    for a folder that is missing, is a file, or holds none. ``what`` names a file's kind (``preset``,
    ``link``, ``model``); the folder is the ``what``\\ s folder."""
    folder = Path(directory)
    state = path_state(folder)
    if state == "missing":
        raise InputError(f"{short_path(folder)}: {what}s folder does not exist")
    if state == "file":
        raise InputError(f"{short_path(folder)}: the {what}s folder is a file, not a folder")
    if state != "dir":
        raise InputError(f"{short_path(folder)}: the {what}s folder {state}")
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in PRESET_SUFFIXES)
    except OSError as exc:
        raise InputError(f"{short_path(folder)}: the {what}s folder cannot be read: {exc.strerror or exc}") from None
    if not files:
        raise InputError(f"{short_path(folder)}: {what}s folder holds no {what} files (*.yaml, *.yml)")
    return tuple(files)


def check_file_name(path: Path, what: str, pattern: re.Pattern[str], rule: str) -> str:
    """The id a preset file's name gives (its stem), or an :class:`InputError` naming the rule."""
    if path.suffix not in PRESET_SUFFIXES:
        raise InputError(f"{path}: a {what} file must end in .yaml or .yml")
    if not pattern.fullmatch(path.stem):
        raise InputError(f"{path}: the file name must be a {what} id ({rule}): {short(path.stem)}")
    return path.stem


def duplicate_message(path: str, item_id: str, earlier: str, what: str = "preset") -> str:
    """The one line for a ``what`` file (a GPU preset, a link, a model) whose id an ``earlier`` file took."""
    return f"{path}: duplicate {what} id {short(item_id)}: {earlier} has the same id"


def check_unique_ids(items: Iterable[T], id_of: Callable[[T], str], file_of: Callable[[T], str], what: str) -> None:
    """An :class:`InputError` (:func:`duplicate_message`) for the first item whose id an earlier file took."""
    first_file: dict[str, str] = {}
    for item in items:
        earlier = first_file.setdefault(id_of(item), file_of(item))
        if earlier != file_of(item):
            raise InputError(duplicate_message(file_of(item), id_of(item), earlier, what))


def load_folder(directory: str | Path, load_one: Callable[[Path], T], *, what: str,
                id_of: Callable[[T], str], file_of: Callable[[T], str]) -> list[T]:
    """Every file of the folder through ``load_one``, stopping at the first error (a missing or empty
    folder, a bad file, two files with the same id)."""
    items = [load_one(path) for path in folder_files(directory, what)]
    check_unique_ids(items, id_of, file_of, what)
    return items


@dataclass(frozen=True)
class FileCheck(Generic[T]):
    """The outcome of validating one file: the item it holds, or the one-line error."""

    path: str
    item: T | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.error is None


def validate_paths(paths: Iterable[str | Path], load_one: Callable[[Path], T], *, what: str,
                   id_of: Callable[[T], str]) -> tuple[FileCheck[T], ...]:
    """Check files and folders without stopping at the first error.

    Each folder contributes its files (:func:`folder_files`, or one error if it has none); each file
    gives one :class:`FileCheck`; a path that does not exist is one error. An id seen in an earlier
    file makes the later file an error (:func:`duplicate_message`).
    """
    found: list[FileCheck[T]] = []
    for given in paths:
        path = Path(given)
        state = path_state(path)
        if state == "dir":
            try:
                files: tuple[Path, ...] = folder_files(path, what)
            except InputError as exc:
                found.append(FileCheck(str(path), None, str(exc)))
                continue
        elif state == "file":
            files = (path,)
        elif state == "missing":
            found.append(FileCheck(str(path), None, f"{short_path(path)}: no such file or folder"))
            continue
        else:
            found.append(FileCheck(str(path), None, f"{short_path(path)}: {state}"))
            continue
        for file in files:
            try:
                found.append(FileCheck(str(file), load_one(file), None))
            except InputError as exc:
                found.append(FileCheck(str(file), None, str(exc)))
    first_file: dict[str, str] = {}
    for index, check in enumerate(found):
        if check.item is None:
            continue
        earlier = first_file.setdefault(id_of(check.item), check.path)
        if earlier != check.path:
            found[index] = FileCheck(check.path, None, duplicate_message(check.path, id_of(check.item), earlier, what))
    return tuple(found)


# --- reading -----------------------------------------------------------------


SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where built


class PresetLoader(SAFE_LOADER):  # type: ignore[valid-type,misc]  # a base chosen at import
    """Safe YAML loading that refuses duplicate keys and reads YAML 1.2 floats.

    PyYAML follows YAML 1.1, where ``1e3`` is a string; a preset author writing
    an exponent means a number, so it is resolved as one.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, Hashable):
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {short(key)}", key_node.start_mark
                        )
                    seen.add(key)
        return super().construct_mapping(node, deep=deep)


PresetLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def parse_yaml(path: Path, where: str) -> Any:
    """The file's YAML (:class:`PresetLoader`): one line naming the file for a file that is not a
    regular, bounded UTF-8 file (:func:`ainotes.base.files.read_user_text`), and the file and the line
    for YAML that does not parse or nests too deep (:mod:`ainotes.base.yamlread`)."""
    try:
        text = read_user_text(path)
    except UnreadableFileError as exc:
        raise InputError(f"{short_path(where)}: the file {exc}") from None
    loader = PresetLoader(text)
    try:
        return yamlread.load_text(text, loader)
    except yamlread.YamlMistakeError as exc:
        line = f"line {exc.line + 1}: " if exc.line is not None else ""
        raise InputError(f"{where}: {line}{'YAML does not parse: ' if exc.parse else ''}{exc.words}") from None
    finally:
        loader.dispose()


# A key a message names: 'memory_capacity_gb', 'peaks.tensor.fp8', 'node.inter_node_lnk'.
_NAMED_KEY = re.compile(r"'([A-Za-z0-9_.\[\]-]+)'")


def key_paths(text: str) -> dict[str, int]:
    """The 1-based line of every mapping key in a YAML text, by dotted path (``dense_fp16_tflops``,
    ``peaks.tensor.fp8``, ``peaks.tensor.fp8.sparse_tflops``, ``sources[0].url``); empty where the text does
    not compose."""
    try:
        root = yaml.compose(text, Loader=SAFE_LOADER)  # libyaml: its marks give the same lines, sooner
    except (yaml.YAMLError, RecursionError):
        return {}
    found: dict[str, int] = {}
    stack: list[tuple[Any, str]] = [(root, "")]
    while stack:  # a stack, not recursion: the parser has already refused a file nested too deep
        node, prefix = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                name = f"{prefix}{key_node.value}"
                found.setdefault(name, key_node.start_mark.line + 1)
                stack.append((value_node, f"{name}."))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                stack.append((item, f"{prefix[:-1]}[{index}]."))
    return found


def at_key_line(message: str, where: str, path: Path) -> str:
    """``message`` (``file: 'key' ...``) placed at the line of the first key it names that the file has,
    ``file:LINE: 'key' ...``, so that every mistake in a preset names the line to fix; unchanged where it
    names none the file holds (a missing key) or gives its line already."""
    prefix = f"{where}: "
    if not message.startswith(prefix) or message[len(prefix):].startswith("line "):
        return message
    try:
        lines = key_paths(read_user_text(path))
    except UnreadableFileError:
        return message
    rest = message[len(prefix):]
    line = next((lines[name] for name in _NAMED_KEY.findall(rest) if name in lines), None)
    return message if line is None else f"{where}:{line}: {rest}"


# --- checking ----------------------------------------------------------------


def kind(value: Any) -> str:
    """How a message names a YAML value's type: ``a string``, ``a mapping``, ``empty``."""
    return checks.kind(value)


def check_mapping(data: Any, where: str, allowed: Iterable[str], required: Iterable[str], *,
                  suggest: bool = False) -> None:
    """A document that is a mapping, with no key outside ``allowed`` (``suggest``: naming the closest
    allowed key) and every key of ``required``."""
    required = tuple(required)
    if data is None:
        raise InputError(f"{where}: the file is empty; expected a mapping with {', '.join(required)}")
    if not isinstance(data, dict):
        raise InputError(f"{where}: must be a mapping of keys to values, not {kind(data)}")
    allowed = tuple(allowed)
    for key in data:
        if key not in allowed:
            near = closest(key, allowed) if suggest else None
            hint = f" (did you mean {near!r}?)" if near is not None else ""
            raise InputError(f"{where}: unknown key {short(key)}{hint}; allowed keys: {', '.join(allowed)}")
    for key in required:
        if key not in data:
            raise InputError(f"{where}: missing required key {short(key)}")


def check_text(where: str, key: str, value: Any, *, one_line: bool = True, max_chars: int | None = None) -> None:
    """Text that is not empty, on one line (unless ``one_line=False``: ``notes``), at most ``max_chars``
    long (default: :data:`~ainotes.base.textcheck.MAX_NAME_CHARS` for one line, the notes' cap else), with
    no control character."""
    if not isinstance(value, str):
        raise InputError(f"{where}: {short(key)} must be text, not {kind(value)}: {short(value)}")
    if not value.strip():
        raise InputError(f"{where}: {short(key)} must not be empty: {short(value)}")
    if one_line and ("\n" in value or "\r" in value):
        raise InputError(f"{where}: {short(key)} must be one line: {short(value)}")
    cap = max_chars if max_chars is not None else (MAX_NAME_CHARS if one_line else MAX_NOTES_CHARS)
    if len(value.strip()) > cap:
        raise InputError(f"{where}: {short(key)} must be at most {cap:,} characters: {len(value.strip()):,} "
                         f"({short(value)})")
    bad = bad_character(value)
    if bad is not None:
        raise InputError(f"{where}: {short(key)} holds a control character ({bad}), which no page or SVG can show")


def check_boolean(where: str, key: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InputError(f"{where}: {short(key)} must be true or false: {short(value)}")


def check_url(where: str, key: str, value: Any) -> None:
    """An http(s) URL with a host, no spaces or control characters, that :func:`urllib.parse.urlsplit`
    can read (``https://[::1`` cannot: an unclosed IPv6 host), at most :data:`MAX_URL_CHARS` long."""
    if not isinstance(value, str):
        raise InputError(f"{where}: {short(key)} must be text, not {kind(value)}: {short(value)}")
    if not value.startswith(tuple(f"{scheme}://" for scheme in SOURCE_SCHEMES)):
        raise InputError(f"{where}: {short(key)} must be an http or https URL: {short(value)}")
    if len(value) > MAX_URL_CHARS:
        raise InputError(f"{where}: {short(key)} must be at most {MAX_URL_CHARS:,} characters: {len(value):,}")
    problem = url_problem(value)
    if problem is not None:
        raise InputError(f"{where}: {short(key)} {problem}: {short(value)}")
    if any(ch.isspace() or ord(ch) < 32 for ch in value) or bad_character(value):
        raise InputError(f"{where}: {short(key)} must be a full http(s) URL with a host and no spaces: {short(value)}")


def check_sources(where: str, value: Any) -> None:
    if not isinstance(value, list):
        raise InputError(f"{where}: 'sources' must be a list of {{title, url}}, not {kind(value)}: {short(value)}")
    if not value:
        raise InputError(f"{where}: 'sources' must name at least one source: []")
    for index, item in enumerate(value):
        at = f"sources[{index}]"
        if not isinstance(item, dict):
            raise InputError(
                f"{where}: {short(at)} must be a mapping with 'title' and 'url', not {kind(item)}: {short(item)}"
            )
        for key in item:
            if key not in ("title", "url"):
                raise InputError(f"{where}: unknown key {short(key)} in {short(at)}; allowed keys: title, url")
        for key in ("title", "url"):
            if key not in item:
                raise InputError(f"{where}: missing required key {f'{at}.{key}'!r}")
        check_text(where, f"{at}.title", item["title"], max_chars=MAX_SOURCE_TITLE_CHARS)
        check_url(where, f"{at}.url", item["url"])


def sources_of(data: Mapping[str, Any]) -> tuple[Source, ...]:
    """The checked ``sources`` list as :class:`Source` values."""
    return tuple(Source(title=item["title"].strip(), url=item["url"].strip()) for item in data["sources"])
