"""The indexing flow's phases: load → parse → chunk → embed → store."""
