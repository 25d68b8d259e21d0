"""Values that look like secrets and are public by design: what a web page or a shared link carries.

| name | what | example that stays |
|---|---|---|
| form token | an anti-forgery token in an HTML form or meta tag (it is sent to every visitor) | `<input type="hidden" name="csrf_token" value="…">`, `<meta name="csrf-token" content="…">` |
| signed link | the signature and key-pair id of a CDN or object-store link made to be shared | `?Expires=…&Signature=…&Key-Pair-Id=…`, `?X-Amz-Expires=3600&X-Amz-Signature=…` |

A span a secret rule found inside one of these is dropped (`public_by_design`); a password field's
value, a session cookie or an API key in the same page or link is not one of these and stays removed.
"""

from __future__ import annotations

import re

_FORM_TOKEN_NAME = re.compile(
    r"\b(?:name|id|property)\s*=\s*[\"']?(?:_?csrf[\w\-]*|[\w\-]*xsrf[\w\-]*|authenticity_token|csrfmiddlewaretoken|"
    r"__RequestVerificationToken|_token|anti-?forgery[\w\-]*)[\"'\s>]",
    re.I,
)
_TAG = re.compile(r"<(?:input|meta)\b[^<>]{0,600}>", re.I)
_URL = re.compile(r"https?://[^\s\"'<>]+", re.I)
# a link signed to be shared: CloudFront (Key-Pair-Id), S3/GCS presigned (X-Amz-/X-Goog- with an expiry)
_SIGNED_LINK = re.compile(r"[?&](?:Key-Pair-Id|X-Amz-Expires|X-Goog-Expires)=", re.I)
_SIGNED_PARAM = re.compile(
    r"[?&](?P<name>Signature|Key-Pair-Id|Policy|X-Amz-Signature|X-Goog-Signature|"
    r"X-Amz-Security-Token)=(?P<value>[^&#\s\"'<>]*)",
    re.I,
)


def public_by_design(text: str, start: int, end: int) -> bool:
    """True when `text[start:end]` sits in a form's anti-forgery token or in a signed link's signature."""
    window = max(0, start - 600)
    for tag in _TAG.finditer(text, window, min(len(text), end + 600)):
        if tag.start() <= start and end <= tag.end():
            return bool(_FORM_TOKEN_NAME.search(tag.group(0))) and "password" not in tag.group(0).lower()
    for url in _URL.finditer(text, max(0, start - 2000), min(len(text), end + 2000)):
        if url.start() <= start and end <= url.end() and _SIGNED_LINK.search(url.group(0)):
            return any(
                url.start() + m.start("value") <= start and end <= url.start() + m.end("value")
                for m in _SIGNED_PARAM.finditer(url.group(0))
            )
    return False
