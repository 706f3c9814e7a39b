"""memdeck's bundled themes: TOML files mapped onto Textual themes by ``tui.themes``."""
