"""The only doors to the outside world; each implements a protocol from core/ports.py."""
