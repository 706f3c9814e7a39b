"""``python -m memdeck`` runs the command line."""

from memdeck.cli import main

main()
