"""Hostile files and values: what a disk holds or a flag says never crashes, hangs, reads without end or
quietly means something else. Each case is one line naming the file, line or flag, and a non-zero exit
(or, for a damaged render cache, one warning and a fresh render).

The cases are those of an outside trial (issue 32): a 300-character ``--presets-dir``, an unreadable
IPv6 URL, nesting 5,000 deep, a FIFO and ``/dev/zero`` as preset files, a 10 MB name, DEL and NEL,
whole numbers written as fractions, a repeated fence key, a broken preset no page uses, and render-cache
entries of garbage behind a valid header.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from ainotes.base import cache
from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page
from ainotes.notes.citations import load_bibliography
from ainotes.presets.every import file_kind
from ainotes.presets.gpus import load_preset
from ainotes.presets.links import load_link
from ainotes.presets.models import load_model
from preset_support import FIXTURE_PRESETS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
MODELS = FIXTURES / "models-chapter" / "models"
LINKS = FIXTURE_PRESETS / "links"
LONG_DIR = "d" * 300  # longer than any file name may be (255 bytes): stat() fails with ENAMETOOLONG


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A presets folder of the fixture GPUs, links and models, as plain copies (safe to break)."""
    folder = tmp_path / "presets"
    folder.mkdir()
    for path in FIXTURE_PRESETS.glob("*.yaml"):
        shutil.copy(path, folder)
    shutil.copytree(LINKS, folder / "links")
    shutil.copytree(MODELS, folder / "models")
    return folder


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


# --- paths and files that cannot be read -------------------------------------------------------


@pytest.mark.parametrize("command", [["presets"], ["models"], ["links"], ["validate"],
                                     ["memory", "--model", "llama-3.1-8b"],
                                     ["inference", "--model", "llama-3.1-8b", "--preset", "h100"]])
def test_a_presets_dir_too_long_to_open_is_one_line(capsys, command):
    line = one_error_line(capsys, ["--presets-dir", LONG_DIR, *command])
    assert "File name too long" in line or "cannot be read" in line, line
    assert len(line) < 500, "the 300-character path is shortened in the message"


def test_the_environment_variable_too_long_to_open_is_one_line(capsys, monkeypatch):
    monkeypatch.setenv("AINOTES_PRESETS_DIR", LONG_DIR)
    line = one_error_line(capsys, ["models"])
    assert "cannot be read: File name too long" in line, line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_preset_file_is_refused_without_waiting(capsys, project):
    os.mkfifo(project / "models" / "pipe.yaml")
    line = one_error_line(capsys, ["--presets-dir", str(project), "models"])
    assert line.endswith("pipe.yaml: the file is a named pipe (FIFO), not a regular file"), line


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero here")
def test_a_link_to_a_device_is_refused_before_a_byte_is_read(capsys, project):
    (project / "models" / "zero.yaml").symlink_to("/dev/zero")
    line = one_error_line(capsys, ["--presets-dir", str(project), "models"])
    assert line.endswith("zero.yaml: the file is a device, not a regular file"), line


def test_a_preset_file_over_a_mebibyte_is_refused_by_its_size(project):
    path = project / "big.yaml"
    path.write_text("name: x\nnotes: " + "x" * (2**20) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"big\.yaml: the file is 1,048,5\d\d bytes, more than the 1,048,576"):
        load_preset(path)


# --- URLs, nesting, names, control characters ---------------------------------------------------


@pytest.mark.parametrize(("folder", "loader"), [("", load_preset), ("links", load_link), ("models", load_model)])
def test_an_unreadable_ipv6_url_is_one_line_in_every_kind_of_preset(project, folder, loader):
    path = next((project / folder).glob("*.yaml"))
    text = path.read_text(encoding="utf-8")
    url_at = text.index("url: ") + len("url: ")
    end = text.index("\n", url_at)
    path.write_text(text[:url_at] + '"https://[::1"' + text[end:], encoding="utf-8")
    with pytest.raises(InputError) as caught:
        loader(path)
    message = str(caught.value)
    opening = rf"^{re.escape(str(path))}(:\d+)?: 'sources\[0\]\.url' is not a URL a browser can open"
    assert re.match(opening, message), message
    assert "IPv6" in message and "\n" not in message


def test_an_unreadable_ipv6_url_in_the_bibliography_names_the_entry_line(tmp_path):
    bib = tmp_path / "references.bib"
    bib.write_text("@misc{good,\n  title = {A},\n}\n\n@misc{bad,\n  title = {B},\n  url = {https://[::1},\n}\n",
                   encoding="utf-8")
    with pytest.raises(InputError, match=r"^docs/references\.bib:5: entry 'bad': 'url' must be an http\(s\) URL"):
        load_bibliography(bib, "docs/references.bib")


@pytest.mark.parametrize("style", ["block", "flow"])
def test_notes_nested_five_thousand_deep_is_one_line_not_a_recursion_error(capsys, project, style):
    path = project / "models" / "llama-3.1-8b.yaml"
    text = path.read_text(encoding="utf-8")
    if style == "block":  # as deep as a mebibyte allows in block style
        deep = "notes:\n" + "".join("  " * level + "a:\n" for level in range(1, 700))
    else:
        deep = "notes: " + "[" * 5000 + "]" * 5000 + "\n"
    path.write_text(text + deep, encoding="utf-8")
    for command in (["validate", str(path)], ["--presets-dir", str(project), "models"]):
        main(command)
        err = capsys.readouterr().err
        assert "RecursionError" not in err and "Traceback" not in err
        assert "llama-3.1-8b.yaml: line " in err and "nested more than 32 levels deep" in err, err


def test_a_ten_megabyte_name_is_refused_by_the_one_name_cap(project):
    path = project / "models" / "llama-3.1-8b.yaml"
    text = path.read_text(encoding="utf-8")
    name_line = next(line for line in text.splitlines() if line.startswith("name:"))
    path.write_text(text.replace(name_line, "name: " + "N" * 200), encoding="utf-8")
    with pytest.raises(InputError, match=r"llama-3\.1-8b\.yaml(:1)?: 'name' must be at most 120 characters: 200"):
        load_model(path)


def test_the_cli_title_has_the_fences_cap(capsys, tmp_path):
    line = one_error_line(capsys, ["--presets-dir", str(FIXTURE_PRESETS), "roofline", "--preset", "h100",
                                   "--title", "T" * 20_000, "-o", str(tmp_path / "r.svg")])
    assert "--title" in line and "at most 120 characters" in line, line


@pytest.mark.parametrize("char", ["\x7f", "\x85", "\x9b"])
def test_del_and_c1_controls_are_refused_in_names_and_titles(project, char):
    path = project / "h100.yaml"
    text = path.read_text(encoding="utf-8")
    name_line = next(line for line in text.splitlines() if line.startswith("name:"))
    escaped = f'name: "H100 \\x{ord(char):02x} SXM"'
    path.write_text(text.replace(name_line, escaped), encoding="utf-8")
    refused = rf"h100\.yaml:[0-9]+: 'name' holds a control character \(U\+{ord(char):04X}\)"
    with pytest.raises(InputError, match=refused):
        load_preset(path)
    site = NotesSite(FIXTURE_PRESETS)
    page = f'# T\n\n```roofline\ntitle: "a \\x{ord(char):02x} b"\n```\n'
    with pytest.raises(InputError, match=rf"^page\.md:4: 'title' holds a control character \(U\+{ord(char):04X}\)"):
        convert_page(site, page, "page.md", "page/")


# --- one whole-number rule ----------------------------------------------------------------------


@pytest.mark.parametrize(("flag", "value", "meant"), [
    ("--zero", "1e-400", ""), ("--zero", "1.9999999999999999", " (write 2)"),
    ("--dp", "7.9999999999999999", " (write 8)"), ("--dp", "8.0", " (write 8)"), ("--tp", "1e0", " (write 1)"),
])
def test_flags_take_whole_numbers_written_as_whole_numbers(capsys, flag, value, meant):
    line = one_error_line(capsys, ["--presets-dir", str(FIXTURE_PRESETS.parent / "models-chapter"), "memory",
                                   "--model", "llama-3.1-8b", flag, value])
    assert flag in line and "must be a whole number" in line and value in line, line
    assert line.endswith(f"{meant}: {value!r}") or meant in line, line


@pytest.mark.parametrize(("kind", "body", "expected"), [
    ("inference-table", "models: [llama-3.1-8b]\npresets: [h100]\ncontext: \"8192\"\n",
     "page.md:6: 'context' must be a whole number, not quoted text (write 8192 without the quotes)"),
    ("collective", "op: all-reduce\nranks: 8.0\n",
     "page.md:5: 'ranks' must be a whole number from 2 to 8 (write 8): 8.0"),
    ("collective", "op: all-reduce\nranks: 1e3\n",
     "page.md:5: 'ranks' must be a whole number from 2 to 8 (write 1000)"),
])
def test_fences_take_whole_numbers_written_as_whole_numbers(kind, body, expected):
    site = NotesSite(FIXTURES / "models-chapter")
    page = f"# T\n\n```{kind}\n{body}```\n"
    with pytest.raises(InputError) as caught:
        convert_page(site, page, "page.md", "page/")
    assert str(caught.value).startswith(expected), str(caught.value)


def test_a_repeated_fence_key_is_refused_at_its_second_line():
    site = NotesSite(FIXTURE_PRESETS)
    page = "# T\n\n```roofline\ntitle: first\npresets: [h100]\ntitle: second\n```\n"
    with pytest.raises(InputError) as caught:
        convert_page(site, page, "page.md", "page/")
    assert str(caught.value) == ("page.md:6: roofline fence body cannot be read: duplicate key 'title' "
                                 "(2 lines above gives it already; keep one)")


# --- every preset file, on every build -----------------------------------------------------------


@pytest.mark.parametrize("folder", ["links", "models"])
def test_a_broken_preset_no_page_uses_still_stops_the_build(project, folder):
    (project / folder / "unused.yaml").write_text("name: [\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        NotesSite(project)
    assert str(caught.value).startswith(f"{project / folder / 'unused.yaml'}: line 1: YAML does not parse")


def test_a_model_file_outside_models_is_known_by_its_keys(tmp_path):
    moved = tmp_path / "llama-3.1-8b.yaml"
    shutil.copy(MODELS / "llama-3.1-8b.yaml", moved)
    shutil.copy(LINKS / "nvlink-4.yaml", tmp_path / "nvlink-4.yaml")
    shutil.copy(FIXTURE_PRESETS / "h100.yaml", tmp_path / "h100.yaml")
    assert [file_kind(tmp_path / name) for name in ("llama-3.1-8b.yaml", "nvlink-4.yaml", "h100.yaml")] == [
        "model", "link", "gpu"]


# --- the render cache ---------------------------------------------------------------------------


def _png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    raw = b"".join(b"\x00" + b"\x00\x00\x00" * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


SOUND = {
    "svg": b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="1" height="1"/></svg>',
    "png": _png(3, 2),
    "json": b'{"$schema": "https://vega.github.io/schema/vega/v5.json", "marks": []}',
}
GARBAGE = b"\x13\x37garbage that is no image and no JSON at all \xff\xfe" + bytes(range(16))


def _forge(path: Path, payload: bytes, kind: str) -> None:
    """What the trial did: garbage behind a recomputed, valid header (the kind kept)."""
    header = (f"ainotes-render {cache.CACHE_FORMAT} sha256={hashlib.sha256(payload).hexdigest()} "
              f"length={len(payload)} kind={kind}\n").encode("ascii")
    path.write_bytes(header + payload)


@pytest.mark.parametrize("kind", sorted(SOUND))
def test_a_sound_cache_entry_is_served(tmp_path, kind):
    path = tmp_path / f"{kind}.entry"
    assert cache.write_entry(path, SOUND[kind])
    assert cache.read_entry(path) == SOUND[kind]


@pytest.mark.parametrize("kind", sorted(SOUND))
@pytest.mark.parametrize("garbage", ["bytes", "truncated"])
def test_a_cache_entry_that_is_not_its_kind_is_dropped_with_a_warning(tmp_path, caplog, kind, garbage):
    path = tmp_path / f"{kind}.entry"
    assert cache.write_entry(path, SOUND[kind])
    _forge(path, GARBAGE if garbage == "bytes" else SOUND[kind][: len(SOUND[kind]) // 2], kind)
    with caplog.at_level(logging.WARNING, logger="ainotes.base.cache"):
        assert cache.read_entry(path) is None
    assert not path.exists(), "the damaged entry is deleted, so the next build renders it again"
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == 1 and f"{kind}.entry was damaged" in warnings[0], warnings


def test_a_damaged_entry_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("AINOTES_CACHE_DIR", str(tmp_path))
    cache.MEMO.clear()
    key = cache.cache_key("svg", {"test": "damaged entry"})
    made: list[int] = []

    def make() -> bytes:
        made.append(1)
        return SOUND["svg"]

    assert cache.cached(key, make) == SOUND["svg"]
    cache.MEMO.clear()
    _forge(cache.entry_path(key), GARBAGE, "svg")
    assert cache.cached(key, make) == SOUND["svg"]
    assert len(made) == 2
    assert cache.read_entry(cache.entry_path(key)) == SOUND["svg"], "the fresh render is kept"


@pytest.mark.parametrize(("kind", "body"), [
    ("collective-cost", "op: all-reduce\nranks: 8\ntitle: Cost\nlink: nvlink4\n"),
    ("inference-table", "models: [llama-3.1-8b]\npresets: [h100]\ntp: 2\nlink: nvlink4\n"),
])
def test_a_link_typo_is_reported_at_the_link_key_with_the_nearest_id(project, kind, body):
    site = NotesSite(project)
    page = f"# T\n\n```{kind}\n{body}```\n"
    with pytest.raises(InputError) as caught:
        convert_page(site, page, "page.md", "page/")
    message = str(caught.value)
    assert message.startswith("page.md:7: "), message  # the 'link:' line, not the fence's first
    assert "unknown link 'nvlink4' (did you mean 'nvlink-4'?" in message, message
