"""The only doors to the outside world; each implements a protocol from graphs/ports.py."""
