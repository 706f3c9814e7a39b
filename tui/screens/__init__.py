"""Modal screens: dialogs, help, flush review."""
