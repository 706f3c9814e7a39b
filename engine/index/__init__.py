"""The index: the SQLite file (schema, store, lock), keeping it in step with the Markdown, chunking and FTS."""
