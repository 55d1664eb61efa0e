"""What the site knows about each note: title, dates, tags, changes, and what it draws on.

Knows nothing of MkDocs. One :class:`Catalogue` per build reads every page of the docs
folder once, from its own file (front matter included, whoever strips it before Markdown
runs), so that every builder — MkDocs, ProperDocs, Zensical, ``ainotes site-assets`` —
sees the same dates and tags, and a page that lists other notes (what is new, the tags
index, the feed) need not wait for them to be converted.

Front matter (YAML between ``---`` lines at the top of a page), all keys optional:

* ``title``, ``description``: as Material reads them; the title falls back to the page's
  first ``# heading``, the description (the feed's summary) to its first paragraph;
* ``created``, ``updated``: dates (``2026-11-29``);
* ``changes``: a mapping of date to one line on what changed (what is new lists them);
* ``tags``: a list of tags from the allowed list (``ainotes.markdown``'s ``tags`` setting);
* ``listed: false``: not a note (the home page, the index pages): no dates, not listed.

Dates. ``created`` is the front matter's, else the date of the oldest commit that touched
the file, else the file's modification time (a note not committed yet). ``updated`` is the
front matter's, else the newest commit's, else the last ``changes`` date, else ``created``.
Git is asked only where its history is complete: a shallow clone
(``git rev-parse --is-shallow-repository``) would date every page by the clone's one
commit, so a page that needs git then gets the fallbacks and the build warns, naming it
(hooks/notes.py prints the line, which a strict build survives).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import difflib
import functools
import hashlib
import logging
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from ainotes.base import yamlread
from ainotes.base.errors import InputError
from ainotes.base.textcheck import bad_character, short
from ainotes.notes import citations
from ainotes.notes.settings import UNSAFE_IN_THEME, NotesSettings

FRONT_MATTER = re.compile(r"\A-{3}[ \t]*\n(.*?\n)?(?:-{3}|\.{3})[ \t]*(?:\n|\Z)", re.S)
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t]*#*[ \t]*$")
_ATTR_LIST = re.compile(r"\s*\{[:#.][^}]*\}\s*$")
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_INLINE_MARKUP = re.compile(r"[*_`]+")
MAX_TAGS_PER_NOTE = 12


@dataclass(frozen=True)
class Change:
    date: dt.date
    text: str


@dataclass(frozen=True)
class Note:
    """One page of the docs folder, as its file and the git history describe it."""

    src: str  # path under docs_dir, POSIX
    url: str  # the page's URL relative to the site root ("" for the home page)
    title: str
    description: str | None
    created: dt.date | None
    updated: dt.date | None
    dates_from: str  # where the dates came from, in words, for messages and tests
    tags: tuple[str, ...] = ()
    changes: tuple[Change, ...] = ()
    listed: bool = True
    front_matter_lines: int = 0  # lines of front matter, delimiters included

    @property
    def was_updated(self) -> bool:
        return self.created is not None and self.updated is not None and self.updated > self.created


@dataclass(frozen=True)
class Event:
    """One line of "what is new": a note appeared, or changed."""

    date: dt.date
    note: Note
    kind: str  # "new" or "updated"
    text: str | None = None


@dataclass
class GitHistory:
    """Commit dates per file under the docs folder. ``state``: ``full``, ``shallow`` or
    ``none`` (not a git work tree, or no git); ``reason`` says why in words."""

    state: str
    reason: str = ""
    # src → dates of the commits that changed its text (front matter aside), newest first; the oldest is
    # when the text first appeared, at this path or, for a moved note, at the one it came from
    dates: dict[str, list[dt.date]] = field(default_factory=dict)


_GIT_TIMEOUT_S = 60


def read_git_history(docs_dir: Path, kept: dict[tuple[Path, str], GitHistory] | None = None) -> GitHistory:
    """One ``git log`` for the whole docs folder (paths relative to it) and one ``git cat-file`` for the
    versions it names.

    A commit counts for a note only if it changed the note's text: one that only edits the front
    matter, or only re-wraps lines, does not make it "updated"; a note moved to a new path keeps the
    dates of the text it came from (its first version there is a version seen before).

    ``kept``: histories an earlier build of this process read, by folder and commit: the history is
    a function of the commit checked out (``HEAD``), so a rebuild on the same commit reads no log."""
    def git(*args: str, stdin: bytes | None = None) -> bytes:
        return subprocess.run(["git", "-C", str(docs_dir), *args], capture_output=True, check=True, input=stdin,
                              timeout=_GIT_TIMEOUT_S, env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}).stdout

    try:
        inside, shallow = git("rev-parse", "--is-inside-work-tree", "--is-shallow-repository").decode().split()
    except (OSError, subprocess.SubprocessError, ValueError):
        return GitHistory("none", "not a git work tree")
    if inside != "true":
        return GitHistory("none", "not a git work tree")
    if shallow == "true":
        return GitHistory("shallow", "the git history is shallow (git rev-parse --is-shallow-repository: true)")
    if kept is not None:
        try:
            head = git("rev-parse", "--verify", "-q", "HEAD").decode().strip()
        except (OSError, subprocess.SubprocessError):
            head = ""  # no commit yet: read as a build would, keep nothing
        if head:
            key = (docs_dir.resolve(), head)
            if key not in kept:
                kept.clear()  # one commit's history at a time
                kept[key] = read_git_history(docs_dir)
            return kept[key]
    try:
        log = git("log", "--reverse", "--format=%x00%aI", "--raw", "--no-renames", "--no-abbrev", "--relative",
                  "--", ".").decode("utf-8", "replace")
        versions = _commit_versions(log)
        texts = _texts_of(git, sorted({blob for _, changes in versions for _, blob in changes}))
    except (OSError, subprocess.SubprocessError) as exc:
        return GitHistory("none", f"git log failed: {' '.join(str(exc).split())}")
    return _history_of(versions, texts)


def _commit_versions(log: str) -> list[tuple[dt.date, list[tuple[str, str]]]]:
    """Each commit of ``git log --raw``, oldest first: its date and the (path, blob) of each file it wrote."""
    commits = []
    for record in log.split("\0")[1:]:
        stamp, _, raw = record.partition("\n")
        try:
            day = dt.datetime.fromisoformat(stamp.strip()).date()
        except ValueError:
            continue
        changes = []
        for line in raw.split("\n"):
            fields, _, path = line.partition("\t")
            parts = fields.split()
            if len(parts) == 5 and parts[0].startswith(":") and not parts[4].startswith("D") and path:
                changes.append((path, parts[3]))
        commits.append((day, changes))
    return commits


def _texts_of(git: Callable[..., bytes], blobs: list[str]) -> dict[str, str]:
    """Each blob's text, front matter cut and white space collapsed (what a reader would see change)."""
    if not blobs:
        return {}
    out = git("cat-file", "--batch", stdin="".join(f"{blob}\n" for blob in blobs).encode())
    texts: dict[str, str] = {}
    at = 0
    for blob in blobs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # "missing": the history names an object this clone lacks
        size = int(header[2])
        text = out[at:at + size].decode("utf-8", "replace")
        at += size + 1
        texts[blob] = " ".join(FRONT_MATTER.sub("", text, count=1).split())
    return texts


def _history_of(versions: list[tuple[dt.date, list[tuple[str, str]]]], texts: dict[str, str]) -> GitHistory:
    history = GitHistory("full")
    last_text: dict[str, str] = {}
    first_path: dict[str, str] = {}  # text → the path that first held it
    for day, changes in versions:
        for path, blob in changes:
            text = texts.get(blob, blob)
            dates = history.dates.setdefault(path, [])
            previous = last_text.get(path)
            origin = first_path.get(text)
            if previous is None and origin is not None and origin != path:
                dates.extend(history.dates[origin])  # moved (or copied): the text's own dates
            elif previous is None or text != previous:
                dates.append(day)
            last_text[path] = text
            first_path.setdefault(text, path)
    for dates in history.dates.values():
        dates.reverse()
    return history


def slug(text: str) -> str:
    """An anchor-safe form of a tag or key: lowercase letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def page_url(src: str, use_directory_urls: bool = True) -> str:
    """A page's URL as MkDocs and Zensical give it: ``a/b.md`` → ``a/b/`` (or ``a/b.html``)."""
    stem = PurePosixPath(src).with_suffix("")
    if not use_directory_urls:
        return f"{stem.as_posix()}.html"
    if stem.name in ("index", "README"):
        parent = stem.parent.as_posix()
        return "" if parent == "." else f"{parent}/"
    return f"{stem.as_posix()}/"


# --------------------------------------------------------------------------
# Front matter


class _FrontMatterLoader(yaml.SafeLoader):
    """Safe YAML that leaves dates as text, so that a bad one (2026-13-01) gets a message with its line."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


@dataclass(frozen=True)
class FrontMatter:
    data: dict[str, Any]
    lines: dict[str, int]  # key (or "tags:N", "changes:DATE") → 1-based line in the file
    length: int  # lines it takes, delimiters included; 0 when there is none
    body: str


def split_front_matter(text: str, src: str) -> FrontMatter:
    """The page's front matter as data, each key's line, and the Markdown after it."""
    match = FRONT_MATTER.match(text)
    if match is None:
        return FrontMatter({}, {}, 0, text)
    block = match.group(1) or ""
    length = match.group(0).count("\n") + (0 if match.group(0).endswith("\n") else 1)
    try:
        node = yaml.compose(block, Loader=_FrontMatterLoader)
        data = yaml.load(block, Loader=_FrontMatterLoader)  # a SafeLoader, less timestamps
    except (ValueError, TypeError, RecursionError) as exc:  # unhashable keys, deep nesting
        raise InputError(f"{src}:2: front matter cannot be read: {' '.join(str(exc).split())}") from None
    except yaml.YAMLError as exc:  # at the line to fix, in the words fence bodies and presets get
        line = 2 + (yamlread.error_line(exc, block) or 0)
        raise InputError(f"{src}:{line}: front matter is not valid YAML: {yamlread.problem_words(exc)}") from None
    if data is None:
        return FrontMatter({}, {}, length, text[match.end():])
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise InputError(f"{src}:2: front matter must be a mapping of keys, got {short(data)}")
    lines: dict[str, int] = {}
    for key_node, value_node in node.value:
        key = str(key_node.value)
        lines[key] = key_node.start_mark.line + 2  # +1 for 1-based, +1 for the opening ---
        if isinstance(value_node, yaml.SequenceNode):
            for index, item in enumerate(value_node.value):
                lines[f"{key}:{index}"] = item.start_mark.line + 2
        elif isinstance(value_node, yaml.MappingNode):
            for item_key, _ in value_node.value:
                lines[f"{key}:{item_key.value}"] = item_key.start_mark.line + 2
    return FrontMatter({str(k): v for k, v in data.items()}, lines, length, text[match.end():])


def _date(value: object, where: str, key: str) -> dt.date:
    """A front-matter date; one later than tomorrow (UTC: any time zone's today passes) is a slip."""
    day: dt.date | None = None
    if isinstance(value, dt.datetime):
        day = value.date()
    elif isinstance(value, dt.date):
        day = value
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):  # not a date: the message below
            day = dt.date.fromisoformat(value.strip())
    if day is None:
        raise InputError(f"{where}: {key!r} must be a date such as 2026-11-29, got {short(value)}")
    today = dt.datetime.now(dt.UTC).date()
    if day > today + dt.timedelta(days=1):
        raise InputError(f"{where}: {key!r} is {day}, in the future (today is {today}): "
                         "give the date the note was written or changed")
    return day


def _text(value: object, where: str, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: {key!r} must be a line of text, got {short(value)}")
    bad = bad_character(value)
    if bad is not None:
        raise InputError(f"{where}: {key!r} holds the control character {bad}")
    return " ".join(value.split())


# Front-matter keys the theme (Material, under MkDocs, ProperDocs and Zensical alike) writes into the
# page's HTML as they are, unescaped: in <title>, <meta content="...">, the navigation.
THEME_TEXT_KEYS = ("title", "description", "author", "subtitle", "status", "icon")
# The keys read here, and the theme's own; another key a letter or two from one of these is a slip.
NOTE_KEYS = ("title", "description", "created", "updated", "changes", "tags", "listed")
THEME_KEYS = ("author", "subtitle", "status", "icon", "hide", "template", "search")


def _check_keys(fm: FrontMatter, src: str) -> None:
    """Refuse a key that is a slip for one of ours (``tag:`` for ``tags:``); other keys are other tools'."""
    known = (*NOTE_KEYS, *THEME_KEYS)
    for key in fm.data:
        if key in known:
            continue
        close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.75)
        if close:
            raise InputError(f"{src}:{fm.lines.get(key, 1)}: unknown front-matter key {short(key)}: "
                             f"did you mean {close[0]!r}? (the page would silently lose it)")


def _theme_text(value: object, where: str, key: str) -> None:
    if isinstance(value, str):
        bad = UNSAFE_IN_THEME.search(value)
        if bad is not None:
            raise InputError(f"{where}: {key!r} may not hold {bad.group()!r}: the theme writes it into the page's "
                             f"HTML as it is (write quotation marks as “ ” and spell out < and >): {short(value)}")


def check_tags(value: object, fm: FrontMatter, src: str, allowed: Mapping[str, str]) -> tuple[str, ...]:
    """The page's tags, each from ``allowed`` and listed once; an unknown one names its line and the closest
    allowed."""
    where = f"{src}:{fm.lines.get('tags', 1)}"
    if isinstance(value, str):
        listed = ", ".join(part.strip() for part in value.split(",") if part.strip()) or value
        raise InputError(f"{where}: 'tags' must be a list, got the text {short(value)}: write tags: [{listed}]")
    items = value
    if not isinstance(items, list):
        raise InputError(f"{where}: 'tags' must be a list of tags, got {short(value)}")
    if len(items) > MAX_TAGS_PER_NOTE:
        raise InputError(f"{where}: a note takes at most {MAX_TAGS_PER_NOTE} tags, got {len(items)}")
    tags: list[str] = []
    for index, tag in enumerate(items):
        line = f"{src}:{fm.lines.get(f'tags:{index}', fm.lines.get('tags', 1))}"
        if not isinstance(tag, str):
            raise InputError(f"{line}: a tag must be a word, got {short(tag)}")
        if tag not in allowed:
            if not allowed:
                raise InputError(f"{line}: unknown tag {tag!r}: mkdocs.yml allows no tags "
                                 "(list them under 'ainotes.markdown: tags:')")
            close = difflib.get_close_matches(tag, list(allowed), n=1, cutoff=0.0)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"{line}: unknown tag {short(tag)} (allowed: {', '.join(sorted(allowed))}){hint}")
        if tag in tags:
            first = fm.lines.get(f"tags:{items.index(tag)}", fm.lines.get("tags", 1))
            raise InputError(f"{line}: tag {tag!r} is listed twice (first at line {first}): list each tag once")
        tags.append(tag)
    return tuple(tags)


def first_heading(markdown_text: str) -> str | None:
    """The text of the first ``# heading`` outside fenced code, markup stripped."""
    fence: str | None = None
    for line in markdown_text.splitlines():
        opened = _FENCE_OPEN.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        heading = _HEADING.match(line)
        if heading:
            return _INLINE_MARKUP.sub("", _ATTR_LIST.sub("", heading.group(1))).strip() or None
    return None


# --------------------------------------------------------------------------
# The catalogue


def read_note(path: Path, src: str, settings: NotesSettings, history: GitHistory,
              needs_git: list[str]) -> Note:
    """One page's :class:`Note`. Raises :class:`InputError` naming ``src:line`` for bad front matter.

    ``needs_git`` collects the pages that a shallow history could not date."""
    text = path.read_text(encoding="utf-8")
    fm = split_front_matter(text, src)
    data = fm.data

    def where(key: str) -> str:
        return f"{src}:{fm.lines.get(key, 1)}"

    _check_keys(fm, src)
    listed = data.get("listed", True)
    if not isinstance(listed, bool):
        raise InputError(f"{where('listed')}: 'listed' must be true or false, got {short(listed)}")
    for key in THEME_TEXT_KEYS:
        if key in data:
            _theme_text(data[key], where(key), key)
    title = _text(data["title"], where("title"), "title") if "title" in data else first_heading(fm.body)
    description = _text(data["description"], where("description"), "description") if "description" in data else None
    tags = check_tags(data["tags"], fm, src, settings.tags) if "tags" in data else ()
    changes: list[Change] = []
    raw_changes = data.get("changes")
    if raw_changes is not None:
        if not isinstance(raw_changes, dict):
            raise InputError(f"{where('changes')}: 'changes' must map dates to a line each "
                             f"('2026-11-30: what changed'), got {short(raw_changes)}")
        for day, what in raw_changes.items():
            line = f"{src}:{fm.lines.get(f'changes:{day}', fm.lines.get('changes', 1))}"
            changes.append(Change(_date(day, line, "changes"), _text(what, line, f"changes: {day}")))
    changes.sort(key=lambda c: c.date, reverse=True)
    created, updated, sources = _dates(path, src, fm, changes, history, needs_git, listed=listed)
    if created is not None and updated is not None and updated < created:
        raise InputError(f"{where('updated')}: 'updated' ({updated}) is before 'created' ({created})")
    for change in changes:
        if created is not None and change.date < created:
            raise InputError(f"{src}:{fm.lines.get(f'changes:{change.date}', 1)}: change dated {change.date} "
                             f"is before 'created' ({created})")
    return Note(src=src, url=page_url(src, settings.use_directory_urls), title=title or PurePosixPath(src).stem,
                description=description, created=created if listed else None, updated=updated if listed else None,
                dates_from=", ".join(sources) or "none", tags=tags, changes=tuple(changes), listed=listed,
                front_matter_lines=fm.length)


def _dates(path: Path, src: str, fm: FrontMatter, changes: list[Change], history: GitHistory, needs_git: list[str],
           *, listed: bool) -> tuple[dt.date | None, dt.date | None, list[str]]:
    """(created, updated, where they came from): front matter, else git, else the file (module docstring)."""
    data = fm.data
    created = _date(data["created"], f"{src}:{fm.lines.get('created', 1)}", "created") if "created" in data else None
    updated = _date(data["updated"], f"{src}:{fm.lines.get('updated', 1)}", "updated") if "updated" in data else None
    sources = ["front matter"] if created is not None or updated is not None else []
    if not listed or (created is not None and updated is not None):
        return created, updated, sources
    commits = history.dates.get(src, []) if history.state == "full" else []
    if commits:
        created = created or commits[-1]
        updated = updated or max([commits[0], *(c.date for c in changes)])  # a change may not be committed yet
        sources.append("git history")
    elif history.state == "shallow":
        needs_git.append(src)
    if created is None:
        created = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC).date()
        sources.append("file time")
    if updated is None:
        updated = max([created, *(c.date for c in changes)])
    return created, updated, sources


@dataclass(eq=False)  # one per build (and per change of a page, under serve)
class Catalogue:
    """Every page of one build: its :class:`Note`, or the error its front matter holds."""

    settings: NotesSettings
    notes: dict[str, Note] = field(default_factory=dict)
    errors: dict[str, InputError] = field(default_factory=dict)
    history: GitHistory = field(default_factory=lambda: GitHistory("none"))
    warnings: list[str] = field(default_factory=list)
    summaries: dict[str, str] = field(default_factory=dict)  # first paragraph's text, from conversion
    uses: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)  # src → (kind, id) (backlinks)
    fence_pages: dict[str, list[str]] = field(default_factory=dict)  # fence kind → pages holding one
    stamp: tuple = ()
    kept: KeptCatalogue | None = field(default=None, repr=False)  # what earlier builds read (mkdocs serve)

    def note(self, src: str) -> Note | None:
        """The page's note; its front-matter error is raised here, when that page is built."""
        error = self.errors.get(src)
        if error is not None:
            raise error
        return self.notes.get(src)

    def listed(self) -> list[Note]:
        """The notes (``listed`` pages with dates), newest update first, then the newest note (updated the
        same day, a new note comes before older ones), then by title. A page whose front matter is wrong
        is left out here: its own conversion stops the build, naming it."""
        notes = [n for n in self.notes.values() if n.listed and n.updated is not None]
        return sorted(notes, key=lambda n: (-(n.updated or dt.date.min).toordinal(),
                                            -(n.created or dt.date.min).toordinal(), n.title.lower(), n.src))

    def events(self) -> list[Event]:
        """What is new: each note's creation and each change, newest first (a day's new notes first)."""
        events: list[Event] = []
        for note in self.listed():
            assert note.created is not None and note.updated is not None
            events.append(Event(note.created, note, "new"))
            events.extend(Event(c.date, note, "updated", c.text) for c in note.changes)
            latest = max((c.date for c in note.changes), default=note.created)
            if note.updated > latest:
                events.append(Event(note.updated, note, "updated"))
        # Within a day: new notes first, then changes that say what changed, then bare updates.
        order = {"new": 0, "updated": 1}
        return sorted(events, key=lambda e: (-e.date.toordinal(), order[e.kind], e.text is None,
                                             e.note.title.lower()))

    def tagged(self, tag: str) -> list[Note]:
        return sorted((n for n in self.listed() if tag in n.tags), key=lambda n: n.title.lower())

    def page_with(self, fence_kind: str) -> str | None:
        """The first page (by path) holding a fence of ``fence_kind``: where the tags index is, etc."""
        pages = self.fence_pages.get(fence_kind)
        return sorted(pages)[0] if pages else None

    def summary(self, note: Note) -> str:
        return note.description or self.summaries.get(note.src) or note.title

    @property
    def docs_dir(self) -> Path:
        assert self.settings.docs_dir is not None  # read_catalogue refuses settings without one
        return self.settings.docs_dir

    def bibliography(self) -> citations.Bibliography | None:
        """The build's bibliography, read once (``None`` where the file does not exist); its error,
        if it has one, is raised each time a page asks for it."""
        loaded = self._bibliography
        if isinstance(loaded, InputError):
            raise loaded
        return loaded

    @cached_property
    def _bibliography(self) -> citations.Bibliography | InputError | None:
        path = self.docs_dir / self.settings.bibliography
        return self.kept.bibliography(path, self._read_bibliography) if self.kept is not None \
            else self._read_bibliography()

    def _read_bibliography(self) -> citations.Bibliography | InputError | None:
        path = self.docs_dir / self.settings.bibliography
        if not path.is_file():
            return None
        try:
            return citations.load_bibliography(path, self.settings.bibliography_shown)
        except InputError as exc:
            return exc


def _stamp(settings: NotesSettings, pages: list[Path]) -> tuple:
    bib = settings.bibliography_path
    files = [*pages, bib] if bib is not None and bib.is_file() else pages
    return tuple((p.as_posix(), p.stat().st_mtime_ns, p.stat().st_size) for p in files)


@dataclass(frozen=True)
class PageScan:
    """What a page draws on, as the backlinks scan finds it: the presets its fences and forms name
    (``(kind, id)``), and the kinds of its fences in page order (``whats-new-page`` after a what's-new
    fence that lists everything)."""

    uses: frozenset[tuple[str, str]]
    fence_kinds: tuple[str, ...]


@dataclass(frozen=True)
class Scanner:
    """The backlinks scan of one build: ``scan(src, text)``; ``key`` is all it depends on besides the
    page's text (the presets loaded: equal keys and equal texts give equal scans)."""

    scan: Callable[[str, str], PageScan]
    key: object = None


def _apply_scan(catalogue: Catalogue, src: str, found: PageScan) -> None:
    catalogue.uses[src] = found.uses
    for kind in found.fence_kinds:
        catalogue.fence_pages.setdefault(kind, []).append(src)


OnDisk = Callable[[str, dict[str, object], Callable[[], Any]], Any]


class _NotKeptError(Exception):
    """Nothing to keep: the loader's outcome is an error or nothing."""


@functools.cache
def _pybtex_version() -> str:
    try:
        return metadata.version("pybtex")
    except metadata.PackageNotFoundError:
        return "unknown"


class KeptCatalogue:
    """The parts of a catalogue one build leaves the next in the same process (``mkdocs serve``): the git
    history of the commit checked out, each page's note and scan with the state of its file (size and
    modification time) or its text, and the bibliography with its file's state. A part is read again
    when what it was read from changed, so a rebuild reads the pages that changed, and gives the
    catalogue a clean build gives. Kept for one settings at a time."""

    def __init__(self, on_disk: OnDisk | None = None) -> None:
        self.settings: NotesSettings | None = None
        # Keeps a JSON value in the render cache for the next process (ainotes.build.kept.on_disk):
        # the bibliography, whose formatting (pybtex) costs a start more than anything else here.
        self.on_disk = on_disk
        self.histories: dict[tuple[Path, str], GitHistory] = {}
        self._notes: dict[str, tuple[tuple, Note | InputError, bool]] = {}
        self._scans: dict[str, tuple[object, str, PageScan]] = {}
        self._bibliography: tuple[tuple, citations.Bibliography | InputError | None] | None = None

    def for_settings(self, settings: NotesSettings) -> KeptCatalogue:
        """This, emptied first if it was kept for other settings (nothing read for them applies)."""
        if settings != self.settings:
            self.histories.clear()
            self._notes.clear()
            self._scans.clear()
            self._bibliography = None
            self.settings = settings
        return self

    def note(self, path: Path, src: str, history: GitHistory, needs_git: list[str]) -> Note:
        """:func:`read_note`, kept with what it depends on: the file's state (its time may date it), its
        dates in the git history, and today's date (a date in the future is refused)."""
        assert self.settings is not None
        info = path.stat()
        key = (info.st_size, info.st_mtime_ns, history.state, tuple(history.dates.get(src, ())),
               dt.datetime.now(dt.UTC).date())
        known = self._notes.get(src)
        if known is None or known[0] != key:
            shallow: list[str] = []
            try:
                outcome: Note | InputError = read_note(path, src, self.settings, history, shallow)
            except InputError as exc:
                outcome = exc
            known = self._notes[src] = (key, outcome, bool(shallow))
        _, outcome, undated = known
        if undated:
            needs_git.append(src)
        if isinstance(outcome, InputError):
            raise outcome
        return outcome

    def scan(self, scanner: Scanner, src: str, text: str) -> PageScan:
        known = self._scans.get(src)
        if known is None or known[0] != scanner.key or known[1] != text or scanner.key is None:
            known = self._scans[src] = (scanner.key, text, scanner.scan(src, text))
        return known[2]

    def bibliography(self, path: Path, load: Callable[[], citations.Bibliography | InputError | None]
                     ) -> citations.Bibliography | InputError | None:
        try:
            info = path.stat()
            key: tuple = (path, info.st_size, info.st_mtime_ns)
        except OSError:
            key = (path, None)
        if self._bibliography is None or self._bibliography[0] != key:
            self._bibliography = (key, self._read_bibliography(path, load))
        return self._bibliography[1]

    def _read_bibliography(self, path: Path, load: Callable[[], citations.Bibliography | InputError | None]
                           ) -> citations.Bibliography | InputError | None:
        """``load()``, or the entries an earlier process formatted from the same bytes (and pybtex)."""
        try:
            data = path.read_bytes() if self.on_disk is not None else None
        except OSError:
            data = None
        if self.on_disk is None or data is None:
            return load()
        outcome: list[citations.Bibliography | InputError | None] = []

        def entries() -> list[dict[str, Any]]:
            outcome.append(load())
            found = outcome[0]
            if not isinstance(found, citations.Bibliography):
                raise _NotKeptError  # a mistake is reported again each time; nothing kept
            return [dataclasses.asdict(entry) for entry in found.entries.values()]

        try:
            kept = self.on_disk("bibliography", {"sha256": hashlib.sha256(data).hexdigest(), "path": str(path),
                                                 "shown": self.settings.bibliography_shown if self.settings else "",
                                                 "pybtex": _pybtex_version()}, entries)
        except _NotKeptError:
            return outcome[0]
        return citations.Bibliography(path, {entry["key"]: citations.Entry(**entry) for entry in kept})

    def forget_pages_but(self, srcs: set[str]) -> None:
        for kept in (self._notes, self._scans):
            for src in [s for s in kept if s not in srcs]:
                del kept[src]


def read_catalogue(settings: NotesSettings, *, scan: Scanner | None = None,
                   kept: KeptCatalogue | None = None) -> Catalogue:
    """Every ``*.md`` under ``settings.docs_dir``; ``scan`` (backlinks) sees each page. ``kept``: the
    parts an earlier build of this process read (:class:`KeptCatalogue`), taken again where unchanged."""
    docs = settings.docs_dir
    if docs is None:
        raise ValueError("a notes catalogue needs settings with a docs_dir")
    kept = kept.for_settings(settings) if kept is not None else None
    catalogue = Catalogue(settings, kept=kept)
    pages = sorted(docs.rglob("*.md")) if docs.is_dir() else []
    catalogue.stamp = _stamp(settings, pages)
    catalogue.history = (read_git_history(docs, kept.histories if kept is not None else None) if pages
                         else GitHistory("none"))
    needs_git: list[str] = []
    for path in pages:
        src = path.relative_to(docs).as_posix()
        try:
            catalogue.notes[src] = (kept.note(path, src, catalogue.history, needs_git) if kept is not None
                                    else read_note(path, src, settings, catalogue.history, needs_git))
        except InputError as exc:
            catalogue.errors[src] = exc
        if scan is not None:
            text = path.read_text(encoding="utf-8")
            _apply_scan(catalogue, src, kept.scan(scan, src, text) if kept is not None else scan.scan(src, text))
    if kept is not None:
        kept.forget_pages_but({path.relative_to(docs).as_posix() for path in pages})
    if needs_git:
        named = ", ".join(needs_git[:5]) + (f" and {len(needs_git) - 5} more" if len(needs_git) > 5 else "")
        catalogue.warnings.append(
            f"ainotes: {catalogue.history.reason}, so it cannot date {named} (no 'created'/'updated' in front "
            "matter): they show their file's time or their 'created' date instead. Fetch the whole history "
            "(git fetch --unshallow; in CI, a full clone such as actions/checkout's fetch-depth: 0) or give the "
            "dates in front matter."
        )
    return catalogue


# --------------------------------------------------------------------------
# One catalogue per build (NotesSite), read again when a page changes (``mkdocs serve``, ``zensical serve``)

Warn = Callable[[str], None]


class CatalogueSource:
    """The catalogue of one build's settings: read on first use, and again when a page or the
    bibliography changed. ``warn`` hears the catalogue's warnings (MkDocs: its logger). ``kept``: what
    earlier builds of this process read (:class:`KeptCatalogue`)."""

    def __init__(self, settings: NotesSettings, warn: Warn | None = None, kept: KeptCatalogue | None = None) -> None:
        if settings.docs_dir is None:
            raise ValueError("a notes catalogue needs settings with a docs_dir")
        self.settings = settings
        self.warn: Warn = warn or logging.getLogger("ainotes").warning
        self.known: Catalogue | None = None
        self.kept = kept

    def current(self, scan: Scanner | None = None) -> Catalogue:
        known = self.known
        if known is not None:
            docs = known.docs_dir
            pages = sorted(docs.rglob("*.md")) if docs.is_dir() else []
            if known.stamp == _stamp(self.settings, pages):
                return known
        fresh = read_catalogue(self.settings, scan=scan, kept=self.kept)
        self.known = fresh
        for message in fresh.warnings:
            self.warn(message)
        return fresh


def known_catalogue(site: object) -> Catalogue | None:
    """The catalogue already read for ``site`` (a ``NotesSite``), if any (fence drawers and the feed use it)."""
    source = getattr(site, "notes", None)
    return source.known if isinstance(source, CatalogueSource) else None
