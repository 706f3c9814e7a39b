"""Screens: the main workbench screen, and the modal ones over it (dialogs, help, flush review)."""
