"""The notes as a catalogue: front matter, dates, tags, what is new, references and the feed.

Knows nothing of MkDocs, Markdown or the charts; imports only :mod:`ainotes.base`.
"""
