"""The bottom layer: errors, text checks, readable units, files, notices, formulas as expressions.

Imports nothing of ainotes above it and nothing of MkDocs, Markdown, altair or vl-convert.
"""
