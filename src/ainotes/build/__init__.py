"""One build: the site state (:class:`~ainotes.build.site.NotesSite`), kept drawings, the notes'
dates, tags, feed and references.
"""
