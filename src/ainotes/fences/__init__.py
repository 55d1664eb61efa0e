"""Fence kinds: one module per kind, each with its parser and its drawer, behind
:mod:`ainotes.fences.body` (the fence body reader) and :mod:`ainotes.fences.registry`.
"""
