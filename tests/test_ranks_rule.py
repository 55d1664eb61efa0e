"""One rank-count rule for the α–β model, wherever an author asks it: the ``collective-cost`` fence, the
inline ``{{ collective-time }}``, ``{{ crossover }}`` and ``{{ bus-factor }}`` forms and ``ainotes
collective-cost`` take any whole number of ranks from 2 to 1024 (48 GPUs are six nodes of eight), and
refuse any other count with the same words, at the page's line or the flag."""

from __future__ import annotations

import json
import re

import pytest

from ainotes.base.errors import InputError
from ainotes.build.site import NotesSite
from ainotes.cli import main
from ainotes.markdown.extension import convert_page
from preset_support import FIXTURE_PRESETS

RULE = "must be a whole number from 2 to 1024"


@pytest.fixture(scope="module")
def site() -> NotesSite:
    return NotesSite(FIXTURE_PRESETS)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["--presets-dir", str(FIXTURE_PRESETS), "collective-cost", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def fence(ranks: object) -> str:
    return f"# Cost\n\nSome words.\n\n```collective-cost\nop: all-reduce\nlink: nvlink-4\nranks: {ranks}\n```\n"


@pytest.mark.parametrize("ranks", ["1", "0", "1025", "2048", "-8"])
def test_the_form_the_fence_and_the_command_refuse_a_count_alike(site, capsys, ranks: str) -> None:
    with pytest.raises(InputError) as form:
        convert_page(site, f"x\n\n{{{{ collective-time all-reduce ranks={ranks} bytes=1e9 link=nvlink-4 }}}}\n",
                     "f.md", "f/")
    with pytest.raises(InputError) as drawn:
        convert_page(site, fence(ranks), "c.md", "c/")
    status, out, err = cli(capsys, "all-reduce", "--ranks", ranks, "--bytes", "1e9", "--link", "nvlink-4")
    assert str(form.value) == f"f.md:3: ranks= {RULE}: '{ranks}'"
    assert str(drawn.value) == f"c.md:8: 'ranks' {RULE}: {ranks}"  # the line of 'ranks:' in the page
    assert status == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"argument --ranks: {RULE}: '{ranks}'" in err


def test_a_fraction_is_told_to_write_the_whole_number_everywhere(site, capsys) -> None:
    with pytest.raises(InputError, match=re.escape(f"ranks= {RULE} (write 48): '48.0'")):
        convert_page(site, "{{ crossover all-reduce ranks=48.0 link=nvlink-4 }}\n", "f.md", "f/")
    with pytest.raises(InputError, match=re.escape(f"c.md:8: 'ranks' {RULE} (write 48): 48.0")):
        convert_page(site, fence("48.0"), "c.md", "c/")
    status, _, err = cli(capsys, "all-reduce", "--ranks", "48.0", "--bytes", "1e9", "--link", "nvlink-4")
    assert status == 2 and f"{RULE} (write 48): '48.0'" in err


def test_forty_eight_ranks_give_one_answer_in_the_form_the_command_and_the_chart(site, capsys) -> None:
    status, out, _ = cli(capsys, "all-reduce", "--ranks", "48", "--bytes", "1e9", "--link", "nvlink-4", "--json")
    assert status == 0
    record = json.loads(out)
    fastest = min(record["algorithms"], key=lambda a: a["time_s"])
    # What MPICH does at a count past a power of two, said once by the command (the model's note).
    assert "folds the 16 ranks past 32 into neighbours" in record["note"]
    text = convert_page(site, "{{ collective-time all-reduce ranks=48 bytes=1e9 link=nvlink-4 part=latency }} and "
                              "{{ crossover all-reduce ranks=48 link=nvlink-4 }}\n", "f.md", "f/")
    assert f"{fastest['latency_s'] * 1e6:.3g} µs" in text  # the fastest algorithm's latency term, as the form prints it
    change = record["best_changes"][0]["bytes"]
    assert f"{change / 1e9:.3g} GB" in text  # where the fastest algorithm changes, as the form prints it
    out = convert_page(site, fence(48).replace("ranks: 48", "ranks: 48\nid: six-nodes"), "c.md", "c/")
    assert site.charts["six-nodes"].about == {"op": "all-reduce", "ranks": 48, "link": "nvlink-4"}
    assert "All-reduce over 48 ranks on " in out  # the caption the chart opens with
    assert "Nine ranks: 1.78" in convert_page(site, "Nine ranks: {{ bus-factor all-reduce ranks=9 }}\n", "b.md", "b/")
