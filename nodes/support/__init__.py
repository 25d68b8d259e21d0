"""The support conversation's steps (graphs/support.py wires them) and the logic only they use."""
