"""Control characters, and characters that change how text reads without being seen — one definition for every place text comes in
(chat messages, uploaded documents, the status page).

Bidi overrides and isolates make a name read differently from what it is ("guide \u202egnp.exe" shows as
"…exe.png"); zero-width spaces, word joiners, byte-order marks, soft hyphens and fillers hide inside words;
Unicode tag characters (U+E0000–E007F) spell ASCII nobody can see, the classic way to hide "ignore previous
instructions" from a reader but not from a model. Joiners (U+200C, U+200D) stay: emoji and several scripts
need them.
"""

from __future__ import annotations

import re

# control characters but tab, newline and carriage return; C1 controls; lone surrogates (JSON "\ud800" decodes
# to one, and nothing downstream can encode it); non-characters
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
INVISIBLE = re.compile(r"[\u202a-\u202e\u2066-\u2069\u200b\u2060\ufeff\u00ad\u034f\u115f\u1160\u17b4\u17b5"
                       r"\u180b-\u180f\u3164\uffa0\U000e0000-\U000e007f]")
