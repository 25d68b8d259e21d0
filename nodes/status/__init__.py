"""The status check's steps (graphs/status.py wires them)."""
