"""Which fixes a message says were already tried, and which articles are about doing one of them again."""

from __future__ import annotations

import pytest

from nodes.support.tried_fixes import about_tried_fix, done_by, label, steps_tried, tried_fixes


@pytest.mark.parametrize(
    ("message", "tried"),
    [
        ("the desktop app shows a blank window since the update, reinstalling didnt help", ["reinstall"]),
        ("I already restarted my laptop twice but the mail app still crashes", ["restart"]),
        ("restarted the laptop twice, no luck", ["restart"]),
        ("tried clearing my browser cache and cookies, still get the error", ["clear_cache"]),
        ("even after a reboot the printer shows offline", ["restart"]),
        ("the chat app logs me out every morning; I logged out and back in but it keeps happening", ["sign_out"]),
        ("I updated the app and it still crashes", ["update"]),
        ("tried to reinstall the app and restarting made no difference", ["reinstall", "restart"]),
    ],
)
def test_a_fix_said_to_have_failed_is_read_as_tried(message, tried):
    assert tried_fixes(message) == tried


@pytest.mark.parametrize(
    "message",
    [
        "the sync client makes me log in again after every reboot",  # the problem's circumstance, not an attempt
        "the mail app crashes since this morning's update",
        "how do I reinstall the office apps",
        "a new colleague tried signing up and needs an invitation",
        "I can't install the app, reinstalling didn't help either",  # the question is about installing
    ],
)
def test_a_fix_named_without_saying_it_failed_is_not_read_as_tried(message):
    assert tried_fixes(message) == []


def test_an_article_whose_title_is_the_tried_fix_is_about_it():
    assert about_tried_fix(["reinstall"], "Installing the desktop app", "Install on Windows") == "reinstall"
    assert about_tried_fix(["restart"], "Restart the VPN client", "") == "restart"
    assert label("reinstall") == "reinstalling"


def test_a_troubleshooting_section_or_another_subject_is_not_about_the_tried_fix():
    assert about_tried_fix(["reinstall"], "Installing the desktop app", "Troubleshooting a blank window") == ""
    assert about_tried_fix(["reinstall"], "The VPN keeps disconnecting", "Use the other gateway") == ""
    assert about_tried_fix([], "Installing the desktop app", "Install on Windows") == ""


def test_only_the_first_steps_that_do_a_tried_fix_are_skipped():
    steps = ["Clear your browser cache and cookies.", "Restart the browser.", "Sign in again.", "Restart the router."]
    assert steps_tried(["clear_cache", "restart"], steps) == 2
    assert steps_tried(["restart"], ["Quit the app.", "Restart your computer."]) == 0  # never entered in the middle
    assert steps_tried(["reinstall"], steps) == 0
    assert done_by(["restart", "clear_cache", "reinstall"], steps[:2]) == ["restarting", "clearing the cache"]
