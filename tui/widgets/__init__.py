"""The panes: memory tree, search, editor, transcript viewer, index status."""
