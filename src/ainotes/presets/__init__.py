"""Preset files: YAML loading and checking for GPUs, interconnect links and models, into the
value objects of :mod:`ainotes.core`.
"""
