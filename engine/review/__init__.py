"""Memory review: duplicates, conflicts and facts worth promoting to MEMORY.md."""
