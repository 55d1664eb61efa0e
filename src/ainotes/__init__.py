"""ainotes: a calculation core and chart pipeline for AI-systems notes.

The core (hardware, roofline, kernels, utilization, collectives) is pure Python
with no MkDocs or altair imports; ``ainotes.charts`` and ``ainotes.render`` turn
its results into Vega-Lite and SVG; ``hooks/notes.py`` and ``ainotes.cli`` are
thin adapters over the same pipeline.
"""

__version__ = "0.1.0"
