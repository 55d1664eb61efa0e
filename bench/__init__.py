"""Benchmarks of the notes site: build cost of the charts, scale, page weight, memory, chart sizes.

``python -m bench`` (``make bench``) prints one Markdown table and writes it,
with the machine it ran on, to ``bench/RESULTS.md``. Every build is a real
``python -m mkdocs build --strict`` in a subprocess, so nothing warmed in this
process (imports, the Vega engine) flatters the build numbers.

Modules: :mod:`bench.sites` (the trees that get built), :mod:`bench.builds`
(one timed build and its peak memory), :mod:`bench.weight` (bytes a page
loads), :mod:`bench.charts` (chart-level numbers, in process),
:mod:`bench.report` (rows, the table, the machine).
"""
