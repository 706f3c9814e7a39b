"""Memory operations: daily notes and topics, flush drafting (extractive or LLM), appends and edits."""
