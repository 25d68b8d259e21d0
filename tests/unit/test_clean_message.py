"""What is removed from a typed message before anything else sees it."""

import pytest

from app.schemas import clean_message


@pytest.mark.parametrize("typed, kept", [
    ("outlook says \x1b[31mERROR\x1b[0m", "outlook says ERROR"),           # colours (CSI)
    ("\x1b[1;32mOK\x1b[K done", "OK done"),                                 # bold green, erase to end of line
    ("\x1b]0;ssh jdoe@host\x07prompt$ ls", "prompt$ ls"),                   # a window title (OSC, ended by BEL)
    ("\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\ text", "link text"),  # a hyperlink (OSC, ended by ST)
    ("tab\tand\nnewline stay\x00\x07", "tab\tand\nnewline stay"),
    ("   [31m is text when no escape precedes it  ", "[31m is text when no escape precedes it"),
])
def test_terminal_escape_sequences_go_whole_and_text_stays(typed, kept):
    assert clean_message(typed) == kept
