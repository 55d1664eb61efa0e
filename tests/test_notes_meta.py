"""Notes' dates, tags, changes, citations, backlinks and feeds, below the builders: the catalogue
read from real files and real git repositories (commits dated on purpose, a real shallow clone)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import textwrap
from pathlib import Path

import feedparser
import pytest

from ainotes.base.errors import InputError
from ainotes.core.jobs import TrainingJob
from ainotes.fences.roofline import RooflineRequest
from ainotes.html import backlinks
from ainotes.markdown.extension import locate_fences_and_forms
from ainotes.notes import citations, feed
from ainotes.notes import meta as notes_meta

TAGS = {"training": "Training runs", "hardware": "Chips", "communication": "Collectives"}


def _settings(docs: Path, **kwargs) -> notes_meta.NotesSettings:
    return notes_meta.NotesSettings(docs_dir=docs, tags=kwargs.pop("tags", TAGS), **kwargs)


def _write(docs: Path, pages: dict[str, str]) -> None:
    docs.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    if date is not None:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def _commit(repo: Path, message: str, date: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, date=date)


def _history_repo(root: Path) -> Path:
    """docs/a.md committed 2025-03-01 and edited 2025-04-15; docs/b.md committed 2025-03-10; no dates in either."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _write(repo / "docs", {"a.md": "# Note A\n\nFirst.\n"})
    _commit(repo, "a", "2025-03-01T10:00:00+00:00")
    _write(repo / "docs", {"b.md": "---\ntags: [hardware]\n---\n# Note B\n\nB.\n"})
    _commit(repo, "b", "2025-03-10T10:00:00+00:00")
    _write(repo / "docs", {"a.md": "# Note A\n\nFirst, then more.\n"})
    _commit(repo, "a again", "2025-04-15T23:30:00+00:00")
    return repo


# -- dates ------------------------------------------------------------------------------


def test_dates_come_from_front_matter_first(tmp_path):
    _write(tmp_path, {"a.md": """
        ---
        created: 2026-01-02
        updated: 2026-02-03
        ---
        # A
        """})
    note = notes_meta.read_catalogue(_settings(tmp_path)).note("a.md")
    assert note is not None
    assert (note.created, note.updated) == (dt.date(2026, 1, 2), dt.date(2026, 2, 3))
    assert note.dates_from == "front matter"


def test_dates_fall_back_to_a_full_git_history(tmp_path):
    repo = _history_repo(tmp_path)
    catalogue = notes_meta.read_catalogue(_settings(repo / "docs"))
    assert catalogue.history.state == "full"
    a, b = catalogue.note("a.md"), catalogue.note("b.md")
    assert a is not None and b is not None
    assert (a.created, a.updated) == (dt.date(2025, 3, 1), dt.date(2025, 4, 15))
    assert (b.created, b.updated) == (dt.date(2025, 3, 10), dt.date(2025, 3, 10))
    assert "git history" in a.dates_from
    assert not catalogue.warnings


def test_only_a_change_of_the_text_updates_a_note_and_a_move_keeps_its_dates(tmp_path):
    repo = _history_repo(tmp_path)  # a.md: 2025-03-01, text changed 2025-04-15; b.md: 2025-03-10
    _write(repo / "docs", {"b.md": "---\ntags: [hardware, training]\n---\n# Note B\n\nB.\n"})
    _commit(repo, "b: a tag more", "2025-05-01T10:00:00+00:00")  # front matter only
    _write(repo / "docs", {"b.md": "---\ntags: [hardware, training]\n---\n# Note B\n\nB.   \n\n"})
    _commit(repo, "b: white space", "2025-05-02T10:00:00+00:00")
    (repo / "docs" / "old").mkdir()
    _git(repo, "mv", "docs/a.md", "docs/old/a.md")
    _commit(repo, "a moves", "2025-06-01T10:00:00+00:00")
    stamp = dt.datetime(2025, 7, 1, tzinfo=dt.UTC).timestamp()
    os.utime(repo / "docs" / "b.md", (stamp, stamp))  # touched, not committed
    catalogue = notes_meta.read_catalogue(_settings(repo / "docs"))
    a, b = catalogue.note("old/a.md"), catalogue.note("b.md")
    assert a is not None and b is not None
    assert (b.created, b.updated, b.was_updated) == (dt.date(2025, 3, 10), dt.date(2025, 3, 10), False)
    assert (a.created, a.updated) == (dt.date(2025, 3, 1), dt.date(2025, 4, 15))  # not re-created by the move
    _write(repo / "docs", {"b.md": "---\ntags: [hardware, training]\n---\n# Note B\n\nB, with a new line.\n"})
    _commit(repo, "b: new text", "2025-08-01T10:00:00+00:00")
    b = notes_meta.read_catalogue(_settings(repo / "docs")).note("b.md")
    assert b is not None and b.updated == dt.date(2025, 8, 1)


def test_a_shallow_clone_is_detected_and_said_not_used_for_dates(tmp_path):
    repo = _history_repo(tmp_path)
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert _git(shallow, "rev-parse", "--is-shallow-repository").strip() == "true"
    catalogue = notes_meta.read_catalogue(_settings(shallow / "docs"))
    assert catalogue.history.state == "shallow"
    # The clone's single commit is dated 2025-04-15: it must not date note B, created 2025-03-10.
    b = catalogue.note("b.md")
    assert b is not None and "git history" not in b.dates_from and b.created != dt.date(2025, 4, 15)
    (warning,) = catalogue.warnings
    assert "shallow" in warning and "a.md" in warning and "b.md" in warning
    assert "git fetch --unshallow" in warning


def test_a_note_not_committed_yet_is_dated_by_its_file(tmp_path):
    repo = _history_repo(tmp_path)
    _write(repo / "docs", {"new.md": "# New\n\nNot committed.\n"})
    stamp = dt.datetime(2025, 5, 20, 12, tzinfo=dt.UTC).timestamp()
    os.utime(repo / "docs" / "new.md", (stamp, stamp))
    note = notes_meta.read_catalogue(_settings(repo / "docs")).note("new.md")
    assert note is not None and note.created == dt.date(2025, 5, 20) and note.dates_from == "file time"


def test_front_matter_dates_beat_git_and_changes_extend_updated(tmp_path):
    repo = _history_repo(tmp_path)
    _write(repo / "docs", {"a.md": """
        ---
        created: 2024-12-24
        changes:
          2025-06-01: A section on rings.
        ---
        # Note A
        """})
    note = notes_meta.read_catalogue(_settings(repo / "docs")).note("a.md")
    assert note is not None
    assert note.created == dt.date(2024, 12, 24)  # front matter, not the first commit
    assert note.updated == dt.date(2025, 6, 1)  # the uncommitted change is later than git's last commit


@pytest.mark.parametrize(("front", "expected"), [
    ("created: 2026-13-01", "a.md:2: 'created' must be a date such as 2026-11-29, got '2026-13-01'"),
    ("created: 2026-02-01\nupdated: 2026-01-01", "a.md:3: 'updated' (2026-01-01) is before 'created' (2026-02-01)"),
    ("listed: maybe", "a.md:2: 'listed' must be true or false, got 'maybe'"),
    ("changes: [one]", "a.md:2: 'changes' must map dates to a line each"),
    ("description: a: b", "a.md:2: front matter is not valid YAML: a 'key: value' where a plain value was expected: "
                          "this line is indented under a value, or a value holds ': ' (indent keys of one mapping "
                          "to the same column; quote a value that holds ': ')"),
    # An indentation slip: the line to fix, in the words a fence body and a preset get (issue 30).
    ("created: 2026-01-01\n tags: [training]", "a.md:3: front matter is not valid YAML: a 'key: value' where a "
                                               "plain value was expected: this line is indented under a value"),
    ("created: 2026-01-01\ndescription: A note.\n  tags: [training]",
     "a.md:4: front matter is not valid YAML: a 'key: value' where a plain value was expected"),
    # The seeds of issue 32: each a slip that passed silently, now one line at its key.
    ("created: 2099-01-01", "a.md:2: 'created' is 2099-01-01, in the future (today is "),
    ("created: 2026-01-01\nchanges:\n  2099-05-01: Later.", "a.md:4: 'changes' is 2099-05-01, in the future"),
    ("tags: training", "a.md:2: 'tags' must be a list, got the text 'training': write tags: [training]"),
    ("tags: training, hardware", "a.md:2: 'tags' must be a list, got the text 'training, hardware': "
                                 "write tags: [training, hardware]"),
    ("tags:\n  - training\n  - hardware\n  - training",
     "a.md:5: tag 'training' is listed twice (first at line 3): list each tag once"),
    ("tag: [training]", "a.md:2: unknown front-matter key 'tag': did you mean 'tags'?"),
    ("titel: A", "a.md:2: unknown front-matter key 'titel': did you mean 'title'?"),
    # What the theme writes into the page unescaped (<head>, the navigation) may not break out of it.
    ("description: '\"><script>alert(3)</script>'", "a.md:2: 'description' may not hold '\"': the theme writes"),
    ("title: A <b>bold</b> title", "a.md:2: 'title' may not hold '<': the theme writes"),
    ("author: '\"><script>alert(4)</script>'", "a.md:2: 'author' may not hold '\"'"),
])
def test_bad_front_matter_names_page_and_line(tmp_path, front, expected):
    _write(tmp_path, {"a.md": f"---\n{front}\n---\n# A\n"})
    catalogue = notes_meta.read_catalogue(_settings(tmp_path))
    with pytest.raises(InputError) as caught:
        catalogue.note("a.md")
    assert str(caught.value).startswith(expected)


# -- tags ------------------------------------------------------------------------------


def test_unknown_tag_names_page_line_and_the_closest_allowed_one(tmp_path):
    _write(tmp_path, {"a.md": "---\ncreated: 2026-01-01\ntags:\n  - hardware\n  - trainnig\n---\n# A\n"})
    with pytest.raises(InputError) as caught:
        notes_meta.read_catalogue(_settings(tmp_path)).note("a.md")
    assert str(caught.value) == ("a.md:5: unknown tag 'trainnig' (allowed: communication, hardware, training); "
                                 "did you mean 'training'?")


def test_other_tools_keys_and_safe_typography_pass(tmp_path):
    _write(tmp_path, {"a.md": "---\ncomments: true\nsearch: {exclude: false}\ntitle: The “roofline” & its ridge\n"
                              "description: B ≤ 295, FLOP/byte\ntags: [training]\n---\n# A\n"})
    note = notes_meta.read_catalogue(_settings(tmp_path)).note("a.md")
    assert note is not None and note.title == "The “roofline” & its ridge" and note.tags == ("training",)


def test_tags_with_no_allowed_list_say_where_to_list_them(tmp_path):
    _write(tmp_path, {"a.md": "---\ntags: [x]\n---\n# A\n"})
    with pytest.raises(InputError, match=r"a\.md:2: unknown tag 'x': mkdocs\.yml allows no tags"):
        notes_meta.read_catalogue(_settings(tmp_path, tags={})).note("a.md")


def test_tagged_and_events_order(tmp_path):
    _write(tmp_path, {
        "old.md": "---\ncreated: 2026-01-01\ntags: [training]\nchanges:\n  2026-03-05: Added MFU rows.\n---\n# Old\n",
        "mid.md": "---\ncreated: 2026-02-01\nupdated: 2026-02-20\ntags: [training, hardware]\n---\n# Mid\n",
        "home.md": "---\nlisted: false\ncreated: 2026-04-01\n---\n# Home\n",
    })
    catalogue = notes_meta.read_catalogue(_settings(tmp_path))
    assert [n.src for n in catalogue.listed()] == ["old.md", "mid.md"]  # by update, newest first
    assert [(e.date.isoformat(), e.note.src, e.kind, e.text) for e in catalogue.events()] == [
        ("2026-03-05", "old.md", "updated", "Added MFU rows."),
        ("2026-02-20", "mid.md", "updated", None),
        ("2026-02-01", "mid.md", "new", None),
        ("2026-01-01", "old.md", "new", None),
    ]
    assert [n.src for n in catalogue.tagged("hardware")] == ["mid.md"]
    assert [n.src for n in catalogue.tagged("training")] == ["mid.md", "old.md"]  # by title


def test_a_days_new_notes_come_before_its_updates(tmp_path):
    day = "2026-03-01"
    _write(tmp_path, {
        "old.md": f"---\ncreated: 2026-01-01\nupdated: {day}\n---\n# Old\n",
        "said.md": f"---\ncreated: 2026-01-02\nchanges:\n  {day}: A new table.\n---\n# Said\n",
        "zeta.md": f"---\ncreated: {day}\n---\n# Zeta\n",
        "alpha.md": f"---\ncreated: {day}\n---\n# Alpha\n",
    })
    catalogue = notes_meta.read_catalogue(_settings(tmp_path))
    first_day = [(e.note.src, e.kind) for e in catalogue.events() if e.date.isoformat() == day]
    assert first_day == [("alpha.md", "new"), ("zeta.md", "new"), ("said.md", "updated"), ("old.md", "updated")]
    # Updated the same day as older notes, the new ones lead the list (and the feeds).
    assert [n.src for n in catalogue.listed()] == ["alpha.md", "zeta.md", "said.md", "old.md"]


def test_title_is_the_first_heading_outside_code(tmp_path):
    _write(tmp_path, {"a.md": "```\n# not a title\n```\n\n# The *real* title {#t}\n"})
    note = notes_meta.read_catalogue(_settings(tmp_path)).note("a.md")
    assert note is not None and note.title == "The real title"


# -- citations -------------------------------------------------------------------------

BIB = """\
@article{palm,
  author = {Chowdhery, Aakanksha and others},
  title = {{PaLM}: Scaling Language Modeling with Pathways},
  journal = {JMLR}, year = {2023},
  url = {https://arxiv.org/abs/2204.02311},
}
@misc{sheet,
  author = {{Vendor}}, title = {A <b>data</b> sheet & more},
  url = {https://example.com/sheet?a=1&b=2},
}
"""


def test_bibliography_is_formatted_by_pybtex_and_escaped(tmp_path):
    path = tmp_path / "refs.bib"
    path.write_text(BIB, encoding="utf-8")
    bib = citations.load_bibliography(path, "docs/refs.bib")
    assert list(bib.entries) == ["palm", "sheet"]
    assert bib.entries["palm"].text.startswith("Aakanksha Chowdhery and others. PaLM: scaling language modeling")
    assert "&lt;b&gt;data&lt;/b&gt; sheet &amp; more" in bib.entries["sheet"].html
    assert "<b>" not in bib.entries["sheet"].html
    assert bib.entries["sheet"].line == 7
    assert bib.closest("plam") == "palm"


@pytest.mark.parametrize(("entry", "expected"), [
    ('@misc{x, title = {X}, url = {javascript:alert(1)}}', "docs/refs.bib:1: entry 'x': 'url' must be an http(s) URL"),
    ('@misc{x, title = {X}, url = {https://e.com/"onmouseover="x}}', "docs/refs.bib:1: entry 'x': 'url' must be"),
    ("@misc{x, title = {X}}\n@misc{x, title = {Y}}", "docs/refs.bib"),
    ("@misc{x, title = {X}", "docs/refs.bib"),
])
def test_bad_bibliography_is_one_line_naming_the_file(tmp_path, entry, expected):
    path = tmp_path / "refs.bib"
    path.write_text(entry, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        citations.load_bibliography(path, "docs/refs.bib")
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


def test_citation_syntax():
    assert citations.parse_citation("@palm") == [citations.Cite("palm")]
    assert citations.parse_citation("@palm, Appendix B; @zero") == [
        citations.Cite("palm", "Appendix B"), citations.Cite("zero")]
    with pytest.raises(InputError, match="is not"):
        citations.parse_citation("@palm @zero")
    html = citations.citation_html([(1, "palm", "Table 2"), (3, "zero", None)], {"palm": 'P "q"'})
    assert html == ('<span class="ainotes-cite">[<a href="#ref-1" title="P &quot;q&quot;">1</a>, Table 2; '
                    '<a href="#ref-3" title="zero">3</a>]</span>')


# -- backlinks -------------------------------------------------------------------------


def test_request_uses_reads_preset_fields_at_any_depth():
    job = TrainingJob(params=1e9, tokens_per_second=1e5, gpus=8, peak_tflops=100, preset_id="gpu-a")
    from ainotes.fences.mfu_table import MfuTableRequest

    assert backlinks.request_uses(MfuTableRequest((job,))) == {("gpu", "gpu-a")}
    roofline = RooflineRequest(("gpu-a", "gpu-b"), False, (), None, None)
    assert backlinks.request_uses(roofline) == {("gpu", "gpu-a"), ("gpu", "gpu-b")}


def test_form_uses_takes_ids_and_options_but_not_listing_forms():
    known = {"gpu": ["gpu-a", "gpu-b"], "link": ["wire"]}
    assert backlinks.form_uses("ridge gpu-a fp8", known) == {("gpu", "gpu-a")}
    assert backlinks.form_uses("mfu params=1e9 preset=gpu-b gpus=8 tokens_per_second=1", known) == {("gpu", "gpu-b")}
    assert backlinks.form_uses("collective-time all-reduce ranks=8 bytes=1e6 link=wire", known) == {("link", "wire")}
    assert backlinks.form_uses("presets", known) == set()
    assert backlinks.form_uses("ridge gpu-c", known) == set()  # not a preset of this build


def test_locate_skips_fences_and_forms_shown_as_code():
    text = "---\ntags: [x]\n---\n`{{ ridge a }}` and {{ ridge b }}\n\n    ```roofline\n    ```\n\n```roofline\n```\n"
    fences, forms = locate_fences_and_forms(text)
    assert [(f.kind, f.start_line) for f in fences] == [("roofline", 9)]
    assert forms == (" ridge b ",)


# -- feeds -----------------------------------------------------------------------------


def test_feeds_parse_with_absolute_links_dates_and_summaries(tmp_path):
    docs = tmp_path / "docs"
    _write(docs, {
        "a.md": "---\ncreated: 2026-01-02\nupdated: 2026-02-03\ndescription: About A & B’s rows.\ntags: [training]\n"
                "---\n# A\n",
        "sub/b.md": "---\ncreated: 2026-01-05\n---\n# B\n\nB's first paragraph.\n",
        "index.md": "---\nlisted: false\n---\n# Home\n",
    })
    settings = _settings(docs, site_url="https://example.org/notes", site_name="Test notes",
                         site_description="Notes for tests")
    catalogue = notes_meta.read_catalogue(settings)
    catalogue.summaries["sub/b.md"] = "B's first paragraph."
    site = tmp_path / "site"
    assert feed.write_feeds(catalogue, site) == ["feed.xml", "atom.xml", "feed.json"]
    for name in ("feed.xml", "atom.xml"):
        parsed = feedparser.parse((site / name).read_bytes())
        assert not parsed.bozo, (name, parsed.get("bozo_exception"))
        assert parsed.feed.title == "Test notes"
        assert [e.link for e in parsed.entries] == ["https://example.org/notes/a/", "https://example.org/notes/sub/b/"]
        assert [e.title for e in parsed.entries] == ["A", "B"]
        assert parsed.entries[0].summary == "About A & B’s rows."
        assert parsed.entries[1].summary == "B's first paragraph."
        assert parsed.entries[0].published_parsed[:3] == (2026, 1, 2)
        assert [t.term for t in parsed.entries[0].tags] == ["training"]
    atom = feedparser.parse((site / "atom.xml").read_bytes())
    assert atom.version == "atom10" and atom.entries[0].updated_parsed[:3] == (2026, 2, 3)
    assert feedparser.parse((site / "feed.xml").read_bytes()).version == "rss20"
    data = json.loads((site / "feed.json").read_text(encoding="utf-8"))
    assert data["version"] == "https://jsonfeed.org/version/1.1"
    assert data["feed_url"] == "https://example.org/notes/feed.json"
    assert [(i["url"], i["date_published"][:10], i["date_modified"][:10]) for i in data["items"]] == [
        ("https://example.org/notes/a/", "2026-01-02", "2026-02-03"),
        ("https://example.org/notes/sub/b/", "2026-01-05", "2026-01-05")]
    again = notes_meta.read_catalogue(settings)
    again.summaries.update(catalogue.summaries)
    feed.write_feeds(again, tmp_path / "again")
    for name in feed.FEED_FILES.values():  # no build-time clock in them: two builds write the same bytes
        assert (tmp_path / "again" / name).read_bytes() == (site / name).read_bytes()


def test_feed_entry_ids_stay_when_the_site_moves(tmp_path):
    docs = tmp_path / "docs"
    _write(docs, {"a.md": "---\ncreated: 2026-01-02\n---\n# A\n", "b.md": "---\ncreated: 2026-01-03\n---\n# B\n"})
    ids = {}
    for host in ("https://example.org/notes/", "https://notes.example.net/"):
        catalogue = notes_meta.read_catalogue(_settings(docs, site_url=host))
        site = tmp_path / host.split("/")[2]
        feed.write_feeds(catalogue, site)
        rss, atom = (feedparser.parse((site / name).read_bytes()) for name in ("feed.xml", "atom.xml"))
        json_ids = [i["id"] for i in json.loads((site / "feed.json").read_text(encoding="utf-8"))["items"]]
        assert [e.id for e in rss.entries] == [e.id for e in atom.entries] == json_ids
        assert all(e.link.startswith(host) and not e.id.startswith("http") for e in rss.entries)
        ids[host] = json_ids
    first, second = ids.values()
    assert first == second and len(set(first)) == 2


def test_no_site_url_no_feed(tmp_path):
    _write(tmp_path / "docs", {"a.md": "---\ncreated: 2026-01-02\n---\n# A\n"})
    assert feed.write_feeds(notes_meta.read_catalogue(_settings(tmp_path / "docs")), tmp_path / "site") == []
    assert not (tmp_path / "site" / "feed.xml").exists()


def test_a_link_to_the_home_page_from_the_root_is_never_empty(tmp_path):
    """Under Zensical links are relative to the source file, so from docs/x.md the home page's prefix is
    "": an empty href would be the page itself."""
    from ainotes.html.notes import note_link

    _write(tmp_path, {"index.md": "# Home\n", "sub/x.md": "# X\n"})
    catalogue = notes_meta.read_catalogue(_settings(tmp_path))
    home, sub = catalogue.note("index.md"), catalogue.note("sub/x.md")
    assert home is not None and sub is not None
    assert note_link(home, "") == '<a href="./">Home</a>'
    assert note_link(home, "../") == '<a href="../">Home</a>'
    assert note_link(sub, "") == '<a href="sub/x/">X</a>'
