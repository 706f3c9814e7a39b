"""memdeck's doors: the command line and the MCP server, both over the engine's public API."""
