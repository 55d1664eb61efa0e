"""How a measured record is put in words, the same for ``ainotes measured`` and a page: figures with
their digits, percentages, durations, the nccl-tests table, a trace's step times.

Free of pandas and numpy, so that a page drawn from a kept record (:mod:`ainotes.measurements.kept`)
imports neither; :mod:`ainotes.measurements.report` builds the records and re-exports these.
"""

from __future__ import annotations

from ainotes.core.hardware import Preset


def figure(value: float | None, digits: int = 4) -> str:
    """A measured or modelled figure as the command and the page both print it: ``digits`` significant."""
    if value is None:
        return "—"
    if 10**digits <= abs(value) < 1e15:  # whole numbers past the digits: no exponent (19090, not 1.909e+04)
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def percent(value: float | None) -> str:
    """An error or a fraction as a signed percentage with one decimal: ``-32.7 %``."""
    return "—" if value is None else f"{value * 100:+.1f} %"


def roof_percent(fraction: float, decimals: int = 1) -> str:
    """A share of a roof with ``decimals`` decimals (``14.1 %``), or two significant digits where that would read
    0 though the kernel did some work (``0.0018 %``: an arange's 6 FLOPs against a memory roof)."""
    value = fraction * 100
    if 0 < value < 0.5 * 10.0**-decimals:
        return f"{value:.2g} %"
    return f"{value:.{decimals}f} %"


def duration(value_s: float) -> str:
    """A time with the unit that keeps it readable: ``4.265 µs``, ``1.515 ms``."""
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if value_s >= scale:
            return f"{value_s / scale:.4g} {unit}"
    return "0 s" if value_s <= 0 else f"{value_s / 1e-9:.4g} ns"


def nccl_table(record: dict) -> tuple[list[str], list[list[str]], set[int]]:
    """The nccl-tests table as the command and the page both print it: its head, its rows of cells
    (plain text) and the columns set right. With a model, its three columns take the in-place block's
    place, so the table fits a desk's column and a terminal; ``--json`` and the raw file keep both blocks."""
    model = {row["bytes"]: row for row in (record.get("model") or {}).get("rows", [])}
    head = ["bytes", "time µs", "algbw GB/s", "busbw GB/s"]
    head += ["model µs", "model's algorithm", "error"] if model else ["in-place µs", "in-place busbw GB/s"]
    rows = []
    for row in record["rows"]:
        out, inside = row["out_of_place"] or {}, row["in_place"] or {}
        cells = [f"{row['bytes']:,}", figure(out.get("time_us"), 6), figure(out.get("algbw_gbps")),
                 figure(out.get("busbw_gbps"))]
        if not model:
            cells += [figure(inside.get("time_us"), 6), figure(inside.get("busbw_gbps"))]
        else:
            hit = model.get(row["bytes"])
            cells += [figure(hit["time_s"] * 1e6) if hit else "—", hit["algorithm"] if hit else "—",
                      percent(hit["error"]) if hit else "—"]
        rows.append(cells)
    return head, rows, {0, 1, 2, 3, 4, 6} if model else {0, 1, 2, 3, 4, 5}


def preset_link_id(preset: Preset, ranks: int | None) -> str | None:
    """The link a run of ``ranks`` ranks on ``preset``'s nodes talks over (:func:`ainotes.core.topology.group_link`):
    the node's own link while the ranks fit in one node, the link between nodes past it; ``None`` without
    a node in the preset or a rank count."""
    from ainotes.core.topology import group_link

    if preset.node is None or not ranks:
        return None
    return group_link(preset, ranks).link_id


def step_time_text(found: dict) -> str:
    """A trace's ``step_times`` in words, as the command and the page both print them."""
    warmup = f", {found['steps'][0]['step']} left out as warm-up" if found["warmup_steps"] else ""
    return (f"median {duration(found['median_s'])} over {found['counted']} step{'s' if found['counted'] != 1 else ''} "
            f"(least {duration(found['min_s'])}, greatest {duration(found['max_s'])}){warmup}; "
            f"from {found['source']}")
