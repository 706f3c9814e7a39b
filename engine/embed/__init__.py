"""Embedding: the provider protocol and choice, remote HTTP providers and local models shipped in packages."""
