"""Sessions: the transcript model, reading transcripts robustly, and where sessions come from."""
