"""The ``measured`` fence: a file under docs/ read as ``ainotes measured`` reads it, the same numbers."""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page

FIXTURES = Path(__file__).parent / "fixtures" / "measured"


@pytest.fixture()
def project(tmp_path):
    """A project root: presets (fixture copies) beside docs/ holding the measured files."""
    shutil.copytree(FIXTURES / "presets", tmp_path / "presets")
    shutil.copytree(FIXTURES / "nccl-tests", tmp_path / "docs" / "measured")
    shutil.copy(FIXTURES / "ncu" / "gemm-raw.csv", tmp_path / "docs" / "measured" / "gemm-raw.csv")
    return tmp_path


def _page(project: Path, body: str) -> str:
    return convert_page(NotesSite(project / "presets"), f"# M\n\n```measured\n{body}\n```\n", "notes/m.md", "notes/m/")


def _cells(html: str) -> list[list[str]]:
    rows = re.findall(r'<tr role="row">(.*?)</tr>', html)
    return [[unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
            for row in rows[1:]]


def _cli_rows(capsys, argv) -> list[list[str]]:
    assert main(["measured", *argv]) == 0
    table = capsys.readouterr().out.split("\n\n")[1].splitlines()
    return [re.split(r"\s{2,}", line.strip()) for line in table[2:]]


def test_page_and_command_print_the_same_numbers(project, capsys):
    html = _page(project, "file: docs/measured/gb200-nvl72-allreduce-partial.txt\nlink: nvlink-5")
    page_rows = _cells(html)
    cli_rows = _cli_rows(capsys, [str(project / "docs/measured/gb200-nvl72-allreduce-partial.txt"), "--presets-dir",
                                  str(project / "presets"), "--link", "nvlink-5"])
    assert page_rows == cli_rows and len(page_rows) == 5
    assert page_rows[0][:4] == ["536,870,912", "1806.7", "297.2", "586.1"]
    assert "the file's footer: 745.53" in unescape(html)
    assert 'href="../../measured/gb200-nvl72-allreduce-partial.txt" download' in html


def test_ncu_file_against_a_gpu_preset(project):
    html = _page(project, "file: docs/measured/gemm-raw.csv\npreset: a100")
    rows = _cells(html)
    assert rows[0][0] == "ampere_sgemm_128x64_nn" and rows[0][-1].endswith("%")
    # The precision each launch ran in (its FFMA counts; the FP16 GEMM's name and tensor count), as the command says.
    assert [row[1] for row in rows] == ["FP32 vector", "FP16 tensor"]
    assert "Note: a kernel" not in html and "Note: matrix FLOPs assume the mma shape" in unescape(html)


@pytest.mark.parametrize(("body", "words"), [
    ("file: ../secrets.txt", "must be a path under docs/"),
    ("file: /etc/passwd", "must be a path under docs/"),
    ("file: docs/../x.txt", "must be a path under docs/"),
    ("file: docs/measured/none.log", "docs/measured/none.log: no such file"),
    ("file: docs/measured/v100-two-runs-interleaved.txt", "v100-two-runs-interleaved.txt:9: rank 0 is listed twice"),
    ("file: docs/measured/gb200-nvl72-allreduce-partial.txt\nlink: nope", "unknown link 'nope'"),
    ("file: docs/measured/gemm-raw.csv\npreset: nope", "unknown preset 'nope'"),
])
def test_mistakes_are_one_line_naming_the_page(project, body, words):
    with pytest.raises(InputError) as caught:
        _page(project, body)
    message = str(caught.value)
    assert re.match(r"notes/m\.md:[45]: ", message) and words in message and "\n" not in message


def _new_process() -> None:
    """What a new ``mkdocs serve`` starts with: no parsed file and no cache entry in memory."""
    from ainotes.base import cache
    from ainotes.measurements.read import clear_cache

    cache.MEMO.clear()
    clear_cache()


def test_a_new_process_reads_the_kept_record_and_an_edited_file_again(project, monkeypatch):
    """The record a page draws from is kept on disk by the file's bytes: a new process draws the same page
    without parsing the file; an edited file (same size, other bytes) is parsed again and its page changes."""
    from ainotes.measurements import read

    body = "file: docs/measured/gb200-nvl72-allreduce-partial.txt\nlink: nvlink-5"
    first = _page(project, body)
    parsed: list[Path] = []
    real = read._read
    monkeypatch.setattr(read, "_read", lambda path, **kw: parsed.append(path) or real(path, **kw))
    _new_process()
    assert _page(project, body) == first and parsed == []
    log = project / "docs/measured/gb200-nvl72-allreduce-partial.txt"
    text = log.read_text()
    assert "1806.7" in text
    log.write_text(text.replace("1806.7", "1906.7", 1))  # the same size: only the bytes tell
    _new_process()
    edited = _page(project, body)
    assert len(parsed) == 1 and _cells(edited)[0][1] == "1906.7" and _cells(first)[0][1] == "1806.7"


def test_a_warm_start_imports_no_pandas(project, tmp_path):
    """A second process that draws a page with a measured file it has kept never imports pandas."""
    import os
    import subprocess
    import sys

    script = ("import sys\nfrom pathlib import Path\nfrom ainotes.build.site import NotesSite\n"
              "from ainotes.markdown.extension import convert_page\n"
              f"root = Path({str(project)!r})\n"
              "html = convert_page(NotesSite(root / 'presets'), '# M\\n\\n```measured\\n"
              "file: docs/measured/gb200-nvl72-allreduce-partial.txt\\nlink: nvlink-5\\n```\\n', 'notes/m.md', "
              "'notes/m/')\n"
              "print('1,806.7' in html or '1806.7' in html, 'pandas' in sys.modules)\n")
    env = {**os.environ, "AINOTES_CACHE_DIR": str(tmp_path / "render")}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True,
                           cwd=project).stdout.split() for _ in range(2)]
    assert runs == [["True", "True"], ["True", "False"]]
