"""Dates, tags, what is new, feeds, references and backlinks in real builds of small fixture sites:
MkDocs (strict), and the same fixture through ProperDocs and through Zensical + ``ainotes site-assets``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import feedparser
import pytest

from sitebuild import REPO, make_fixture, run_build

# One worker runs this file (xdist_group): its fixture site is built once.
pytestmark = pytest.mark.xdist_group("notes_build")

SITE_URL = "https://notes.example.org/sub/"
TAGS = """\
      tags:
        training: Training runs
        hardware: "Chips: rates and bandwidth"
"""
BIB = """\
@article{palm,
  author = {Chowdhery, Aakanksha and others},
  title = {{PaLM}: Scaling Language Modeling with Pathways},
  journal = {Journal of Machine Learning Research}, year = {2023},
  url = {https://arxiv.org/abs/2204.02311},
}
@misc{sheet,
  author = {{Vendor}}, title = {H100 data sheet}, year = {2024},
  url = {https://example.com/h100},
}
@misc{zero, author = {Rajbhandari, Samyam}, title = {{ZeRO}}, year = {2020}}
"""
PAGES = {
    "index.md": """\
        ---
        listed: false
        ---
        # Home

        ```whats-new
        limit: 2
        ```

        ```note-cards
        ```
        """,
    "whats-new.md": "---\nlisted: false\n---\n# What is new\n\n```whats-new\n```\n",
    "tags.md": "---\nlisted: false\n---\n# Tags\n\n```tags-index\n```\n",
    "mfu.md": """\
        ---
        created: 2026-01-02
        tags: [training]
        description: What a job turns into model arithmetic.
        changes:
          2026-03-04: Added the PaLM row.
        ---
        # MFU

        PaLM counts attention [@palm, Appendix B], as ZeRO does not [@zero].
        On {{ name h100 }} the peak is {{ peak h100 }} [@palm;
        @sheet].

        `[@notacite]` stays code.
        """,
    "roofline.md": """\
        ---
        created: 2026-02-10
        updated: 2026-02-11
        tags: [hardware, training]
        ---
        # Roofline

        Where kernels land.

        ```presets-table
        ```
        """,
}


CONFIG = """\
site_name: Fixture notes
docs_dir: docs
hooks: [{hooks}]
theme:
  name: material
  custom_dir: {overrides}
  font: false
  palette:
    - scheme: default
      toggle: {{icon: material/weather-night, name: dark}}
    - scheme: slate
      toggle: {{icon: material/weather-sunny, name: light}}
extra_css: [assets/ainotes/notes.css, assets/ainotes/notes-meta.css]
plugins: [search]
markdown_extensions:
  - toc: {{permalink: true}}
  - pymdownx.superfences
  - ainotes.markdown:
{tags}nav: [index.md, whats-new.md, tags.md, mfu.md, roofline.md]
"""


def _project(root: Path, pages: dict[str, str] | None = None, *, site_url: str | None = SITE_URL) -> Path:
    """A fixture with the real hooks and theme overrides, two allowed tags and a small bibliography."""
    make_fixture(root, {**PAGES, **(pages or {})})
    text = CONFIG.format(hooks=REPO / "hooks" / "notes.py", overrides=REPO / "overrides", tags=TAGS)
    (root / "mkdocs.yml").write_text((f"site_url: {site_url}\n" if site_url else "") + text, encoding="utf-8")
    (root / "docs" / "references.bib").write_text(BIB, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    build = run_build(_project(tmp_path_factory.mktemp("notes")))
    assert build.returncode == 0, build.output
    return build


def _article(page: str) -> str:
    return re.search(r"<article.*?</article>", page, re.S).group(0)


def test_dates_and_tags_under_the_title(built):
    page = _article(built.page("mfu"))
    title_at, meta_at = page.index("<h1"), page.index('class="ainotes-page-meta"')
    assert title_at < meta_at < page.index("PaLM counts attention")
    assert ('Created <time datetime="2026-01-02">2 Jan 2026</time> · updated '
            '<time datetime="2026-03-04">4 Mar 2026</time>') in page
    assert '<a class="md-tag" href="../tags/#tag-training">training</a>' in page
    roofline = _article(built.page("roofline"))
    assert "updated <time datetime=\"2026-02-11\">" in roofline
    assert "ainotes-page-meta" not in _article(built.page(""))  # the home page is not a note


def test_whats_new_lists_changes_newest_first_and_home_shows_the_latest(built):
    page = _article(built.page("whats-new"))
    days = re.findall(r'<li class="ainotes-day"><time datetime="([\d-]+)"', page)
    assert days == ["2026-03-04", "2026-02-11", "2026-02-10", "2026-01-02"]
    events = re.findall(r'ainotes-event--(\w+)"><span class="ainotes-event-kind">[^<]*</span> <a href="([^"]+)">'
                        r"([^<]+)</a>(?: — ([^<]+))?", page)
    assert events == [
        ("updated", "../mfu/", "MFU", "Added the PaLM row."),
        ("updated", "../roofline/", "Roofline", ""),
        ("new", "../roofline/", "Roofline", ""),
        ("new", "../mfu/", "MFU", "What a job turns into model arithmetic."),
    ]
    home = _article(built.page(""))
    assert re.findall(r'<li class="ainotes-event[^"]*"', home).__len__() == 2
    assert '<a href="whats-new/">Everything that changed</a>' in home
    assert '<a href="feed.xml" type="application/rss+xml">RSS</a>' in home


def test_the_home_page_has_a_card_for_every_note_newest_first(built):
    cards = _article(built.page("")).split('<div class="grid cards"', 1)[1].split("</div>", 1)[0]
    linked = re.findall(r'<li><p><strong><a href="([^"]+)">([^<]+)</a></strong></p><p>([^<]*)</p>', cards)
    assert linked == [("roofline/", "Roofline", "Where kernels land."),  # created 2026-02-10: its first paragraph
                      ("mfu/", "MFU", "What a job turns into model arithmetic.")]  # created 2026-01-02
    assert '<a class="md-tag" href="tags/#tag-hardware">hardware</a>' in cards


def test_tags_index_lists_every_allowed_tag_and_its_notes(built):
    page = _article(built.page("tags"))
    hardware = re.search(r'<section class="ainotes-tag" id="tag-hardware">.*?</section>', page).group(0)
    training = re.search(r'<section class="ainotes-tag" id="tag-training">.*?</section>', page).group(0)
    assert "Chips: rates and bandwidth" in hardware and re.findall(r'href="([^"]+)"', hardware) == ["../roofline/"]
    assert re.findall(r'href="([^"]+)"', training) == ["../mfu/", "../roofline/"]


def test_citations_are_numbered_links_and_references_close_the_page(built):
    page = _article(built.page("mfu"))
    cites = re.findall(r'<span class="ainotes-cite">(.*?)</span>', page)
    numbers = [re.findall(r'href="#ref-(\d+)"[^>]*>(\d+)</a>', cite) for cite in cites]
    assert numbers == [[("1", "1")], [("2", "2")], [("1", "1"), ("3", "3")]]  # palm again is 1
    assert ", Appendix B]" in cites[0]
    assert "<code>[@notacite]</code>" in page
    assert '<h2 id="references">References' in page
    refs = re.findall(r'<li id="ref-(\d+)" value="\d+">(.*?)</li>', page)
    assert [n for n, _ in refs] == ["1", "2", "3"]
    assert refs[0][1].startswith("Aakanksha Chowdhery and others.") and "https://arxiv.org/abs/2204.02311" in refs[0][1]
    assert refs[1][1].startswith("Samyam Rajbhandari.")
    assert "references" in built.page("mfu").split('class="md-nav md-nav--secondary"')[1][:4000]  # in the contents


def test_backlinks_both_ways(built):
    roofline = _article(built.page("roofline"))
    row = re.search(r'<tr id="preset-h100">.*?</tr>', roofline).group(0)
    assert re.findall(r'href="([^"]+)">([^<]+)</a>', row) == [("../mfu/", "MFU")]  # {{ peak h100 }}, {{ name h100 }}
    plain = re.search(r'<tr id="preset-plain">.*?</tr>', roofline).group(0)
    assert "no note yet" in plain
    mfu = _article(built.page("mfu"))
    draws = mfu[mfu.index("Presets this note draws on"):]
    assert '<a href="../roofline/#preset-h100">H100 test</a>' in draws
    # The preset's source has the bibliography's URL: it is shown as that entry.
    assert "Vendor. H100 data sheet. 2024." in re.sub(r"<[^>]+>", "", draws) and "plain" not in draws


def test_feeds_are_valid_with_absolute_links(built):
    for name, version in (("feed.xml", "rss20"), ("atom.xml", "atom10")):
        parsed = feedparser.parse((built.site / name).read_bytes())
        assert not parsed.bozo, parsed.get("bozo_exception")
        assert parsed.version == version
        assert [e.link for e in parsed.entries] == [f"{SITE_URL}mfu/", f"{SITE_URL}roofline/"]
        assert parsed.entries[0].summary == "What a job turns into model arithmetic."
        assert parsed.entries[1].summary == "Where kernels land."  # its first paragraph
        assert parsed.entries[0].published_parsed[:3] == (2026, 1, 2)
    items = json.loads((built.site / "feed.json").read_text(encoding="utf-8"))["items"]
    assert [i["url"] for i in items] == [f"{SITE_URL}mfu/", f"{SITE_URL}roofline/"]
    head = built.page("mfu").split("</head>")[0]
    assert '<link rel="alternate" type="application/rss+xml" title="Fixture notes (RSS)" href="../feed.xml">' in head


@pytest.mark.parametrize(("page", "expected"), [
    ("---\ncreated: 2026-01-01\ntags:\n  - hardware\n  - trainign\n---\n# X\n",
     "x.md:5: unknown tag 'trainign' (allowed: hardware, training); did you mean 'training'?"),
    ("---\ncreated: 2026-01-01\n---\n# X\n\nText.\n\nSee [@plam] here.\n",
     "x.md:8: unknown citation key 'plam': docs/references.bib has no such entry; did you mean 'palm'?"),
    ("# X\n\n- a list\n- with [@palm, Table 2; @zeroo]\n",
     "x.md:4: unknown citation key 'zeroo'"),
    ("---\ncreated: 2026-01-01\n---\n# X\n\n[@palm @zero]\n", "x.md:6: citation [@palm @zero] is not [@key]"),
    ("---\ncreated: 2026-01-01\n---\n# X\n\nAs PaLM reports\n[@palm, Table 2 and so on.\n",
     "x.md:7: citation '[@palm, Table 2 and so on.' is never closed: end it with ']'"),
    ("---\ncreated: 2026-01-01\ndescription: '\"><script>alert(3)</script>'\n---\n# X\n",
     "x.md:3: 'description' may not hold '\"': the theme writes it into the page's HTML as it is"),
])
def test_strict_build_stops_at_page_and_line(tmp_path, page, expected):
    build = run_build(_project(tmp_path, {"x.md": page}))
    assert build.returncode != 0
    assert expected in build.output, build.output
    assert "Traceback" not in build.output


def test_a_broken_bibliography_names_its_line(tmp_path):
    project = _project(tmp_path)
    (project / "docs" / "references.bib").write_text(
        BIB + '@misc{bad, title = {X}, url = {javascript:alert(1)}}\n', encoding="utf-8")
    build = run_build(project)
    assert build.returncode != 0
    assert "docs/references.bib:12: entry 'bad': 'url' must be an http(s) URL" in build.output, build.output


def test_no_site_url_no_feed_and_no_feed_links(tmp_path):
    build = run_build(_project(tmp_path, site_url=None))
    assert build.returncode == 0, build.output
    assert not (build.site / "feed.xml").exists()
    assert "ainotes-feeds" not in build.page("whats-new")


# -- git dates in a real build, and a shallow clone -------------------------------------


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    if date:
        env |= {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def test_git_dates_in_a_full_clone_and_a_loud_shallow_one(tmp_path):
    repo = _project(tmp_path / "repo", {"gitdated.md": "# Git dated\n\nNo dates in front matter.\n"})
    _git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("site/\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "first", date="2025-05-06T08:00:00+00:00")
    with (repo / "docs" / "gitdated.md").open("a", encoding="utf-8") as page:
        page.write("\nMore.\n")
    _git(repo, "commit", "-q", "-am", "second", date="2025-07-08T08:00:00+00:00")
    build = run_build(repo)
    assert build.returncode == 0, build.output
    assert ('Created <time datetime="2025-05-06">6 May 2025</time> · updated '
            '<time datetime="2025-07-08">8 Jul 2025</time>') in build.page("gitdated")

    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow)], check=True,
                   capture_output=True)
    (shallow / "mkdocs.yml").write_text((repo / "mkdocs.yml").read_text(encoding="utf-8"), encoding="utf-8")
    build = run_build(shallow)
    assert build.returncode == 0, build.output  # a shallow CI checkout still builds, and says so loudly
    assert "WARNING -  " in build.output
    assert "the git history is shallow (git rev-parse --is-shallow-repository: true), so it cannot date gitdated.md" \
        in build.output, build.output


# -- the other builders -----------------------------------------------------------------


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (it is in the test extra)")
    return path


@pytest.mark.build
@pytest.mark.parametrize("builder", ["properdocs", "zensical"])
def test_properdocs_and_zensical_show_dates_tags_references_and_feeds(tmp_path, builder):
    project = _project(tmp_path)
    command = ([_tool("properdocs"), "build", "--strict", "-f", "mkdocs.yml", "-d", "site"] if builder == "properdocs"
               else [_tool("zensical"), "build", "--clean", "-f", "mkdocs.yml"])
    proc = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = project / "site"
    if builder == "zensical":
        assets = subprocess.run([sys.executable, "-m", "ainotes", "site-assets", "--config", "mkdocs.yml", "site"],
                                cwd=project, capture_output=True, text=True, timeout=600, check=False)
        assert assets.returncode == 0, assets.stdout + assets.stderr
    mfu = (site / "mfu" / "index.html").read_text(encoding="utf-8")
    assert '<time datetime="2026-01-02">2 Jan 2026</time>' in mfu
    assert mfu.count('class="md-tag"') == 1  # ours; Zensical's own row is switched off by overrides/partials/tags.html
    assert 'type="application/rss+xml"' in mfu.split("</head>")[0]
    assert re.findall(r'<li id="ref-(\d+)"', mfu) == ["1", "2", "3"]
    assert "Presets this note draws on" in mfu
    roofline = (site / "roofline" / "index.html").read_text(encoding="utf-8")
    assert '<tr id="preset-h100">' in roofline
    new = (site / "whats-new" / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<li class="ainotes-day"><time datetime="([\d-]+)"', new)[0] == "2026-03-04"
    parsed = feedparser.parse((site / "feed.xml").read_bytes())
    assert not parsed.bozo and [e.link for e in parsed.entries] == [f"{SITE_URL}mfu/", f"{SITE_URL}roofline/"]
