"""The calculation core: precisions, hardware values, kernels, rooflines, utilisation, training jobs,
collectives and their cost, training memory and inference.

Pure Python over value objects; imports only :mod:`ainotes.base`.
"""
