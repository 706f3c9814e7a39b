"""Embedding providers: remote HTTP endpoints (OpenAI-compatible, Gemini) and local models shipped in packages."""
