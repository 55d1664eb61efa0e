"""Measured files read into tables: nccl-tests logs, Nsight Compute CSVs, PyTorch profiler traces.

Each reader turns one file into a frozen value holding a :class:`pandas.DataFrame` and what the file
says about itself (the collective, the rank count, the GPU). A file that is none of these formats,
is cut short, or mixes two runs is a :class:`~ainotes.measurements.source.MeasuredFileError`: one
line naming the file and the line. :mod:`ainotes.measurements.fit` holds a collective's
measurement against the α–β model of :mod:`ainotes.core.collective_cost`.

This package sits beside ``presets`` and ``notes``: it uses ``core`` and ``base`` and pandas, never
MkDocs, Markdown, altair or vl-convert.
"""
