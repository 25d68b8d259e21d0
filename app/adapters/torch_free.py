"""Import a library as if torch were not installed, when it would load torch only to look at it.

spaCy's thinc imports torch whenever it is installed (for torch-backed models; the packaged names model is not
one), and so does anything importing spaCy, such as Presidio (which also tries transformers' pipelines). With the ONNX embedding backend nothing else in
the serving process needs torch, and importing it costs seconds and hundreds of MB: those imports run inside
`torch_hidden()`. When torch is already loaded (the torch backend) the libraries see it as usual.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Iterator

_HIDDEN = ("torch", "transformers", "sentence_transformers")  # the last two import torch


class _HideTorch:
    def find_spec(self, name: str, path=None, target=None):
        if name.split(".", 1)[0] in _HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: not needed here)", name=name)
        return None


@contextmanager
def torch_hidden() -> Iterator[None]:
    """Imports inside see no torch, unless it is already imported."""
    if "torch" in sys.modules:
        yield
        return
    finder = _HideTorch()
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
