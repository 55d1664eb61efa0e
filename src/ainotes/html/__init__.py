"""HTML around drawn charts and tables: figures with their stills and embeds, standalone pages,
the notes' tables.
"""
