"""Inline forms (``{{ ridge h100 }}``) and math: one registry of forms, evaluated at build time.
"""
