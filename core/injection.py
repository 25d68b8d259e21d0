"""Prompt-injection signals: text that tries to give the assistant new instructions.

A rule-based detector (no model): each pattern is a *signal* with a weight; text is suspected when
the weights add up to 1. Strong patterns ("ignore your previous instructions", "repeat your system
prompt", a forged `<|im_start|>system` block) count 1 on their own; weak ones ("you are now…",
"developer mode", "in your reply, …") need a second one. Ordinary support phrasing that shares the
words — "ignore the certificate warning", "bypass the proxy", "override the settings", "what are the
rules for passwords" — matches nothing, because the strong patterns need an *instruction* object
(instructions, rules, prompt) qualified as the assistant's or as earlier text.

Used for user messages (flag in state and trace; the message is still answered from the KB) and,
through `delimit_data`, for text that goes to an LLM as data (retrieved documents, status pages).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from core.patterns import LazyPattern, Regex

SUSPECT_AT = 1.0  # total weight at which a text is flagged


@dataclass(frozen=True)
class Signal:
    name: str
    weight: float
    pattern: Regex


def _p(regex: str) -> LazyPattern:
    return LazyPattern(regex, re.I | re.S)  # compiled by the first message checked, not at import


_VERB_OVERRIDE = (
    r"(?:ignore|disregard|forget|skip|bypass|override|overwrite|drop|discard|abandon|neglect|"
    r"set aside|put aside|throw out|do not (?:follow|listen to|obey|heed)|don't (?:follow|listen to|obey)|"
    r"stop following|no longer follow)"
)
_REF = r"(?:previous|prior|preceding|above|earlier|former|initial|original|old|system|developer|given|existing|your)"
_INSTRUCTION = (
    r"(?:instructions?|prompts?|rules|directions|directives?|guidelines|orders|commands|constraints|"
    r"restrictions|guardrails|programming|training|polic(?:y|ies)|system message|guidance)"
)
_WEAK_NOUN = r"(?:information|content|context|everything|all)"  # not "message": "ignore my previous message"
_FILLER = (
    r"(?:\s+(?:all|any|every|each|of|the|these|those|my|your|our|its|whatever|that|what|"
    r"you(?:'ve| have)? (?:been|were) (?:given|told)|(?:that )?you (?:got|received|learned)))*"
)
_YOUR_OUTPUT = r"(?:your|the)\s+(?:response|reply|answer|output|message|text|elucidation)"
_YOUR_WORK = (
    r"your\s+(?:code(?:base)?|implementation|solution|algorithm|program|script|response|reply|answer|"
    r"elucidation|function)"
)

SIGNALS: tuple[Signal, ...] = (
    # --- overriding the instructions ----------------------------------------------------------
    Signal(
        "override:ignore-instructions",
        1.0,
        _p(rf"\b{_VERB_OVERRIDE}{_FILLER}\s+(?:{_REF}\s+)+(?:\w+\s+)?{_INSTRUCTION}\b"),
    ),
    Signal(
        "override:ignore-instructions",
        1.0,
        _p(rf"\b{_VERB_OVERRIDE}{_FILLER}\s+{_INSTRUCTION}\s+(?:you|that you|which you|given|above|so far|before)\b"),
    ),
    Signal(
        "override:ignore-previous",
        1.0,
        _p(rf"\b{_VERB_OVERRIDE}{_FILLER}\s+(?:previous|prior|preceding|above|earlier)\s+{_WEAK_NOUN}\b"),
    ),
    Signal(
        "override:forget-everything",
        1.0,
        _p(
            r"\b(?:forget|disregard|ignore)\s+(?:about\s+)?(?:everything|all(?: of it| that)?)\s+"
            r"(?:above|before|previously|so far|you (?:know|were told|learned|have been told))"
        ),
    ),
    Signal(
        "override:forgotten-rules",
        1.0,
        _p(
            rf"\b(?:pretend|imagine|act as if)\b.{{0,40}}\b(?:forgotten|forget|no longer have|don't have|do not have)\b"
            rf".{{0,40}}\b{_INSTRUCTION}"
        ),
    ),
    Signal(
        "override:new-instructions",
        1.0,
        _p(
            r"\b(?:new|updated|real|actual|true|revised|secret|hidden)\s+(?:system\s+)?instructions?\s*(?::|are|follow)|"
            r"\byour\s+(?:new|real|actual|true)\s+(?:task|instructions?|goal|purpose|role|job)\s+(?:is|are)\b"
        ),
    ),
    Signal(
        "override:in-addition-to-instructions",
        0.5,
        _p(
            r"\b(?:in addition to|instead of|rather than|besides)\s+(?:the|your|all|any)?\s*(?:other\s+|previous\s+)?"
            r"(?:instructions|rules)\b"
        ),
    ),
    Signal(
        "override:instructions-so-far",
        0.5,
        _p(r"\b(?:the\s+)?instructions\s+(?:so far|above|you (?:were|have been) given)\b"),
    ),
    # --- extracting the prompt -------------------------------------------------------------------
    Signal(
        "leak:system-prompt",
        1.0,
        _p(
            r"\b(?:repeat|print|reveal|show|output|display|tell me|give me|share|list|write out|spell out|dump|leak|"
            r"recite|return|expose|copy|paste|summari[sz]e|translate|encode|what (?:is|are|were|was))\b.{0,30}?"
            r"\b(?:your|the)\s+(?:(?:full|entire|complete|exact|original|initial|hidden|secret|internal)\s+)*"
            r"(?:system\s+prompt|(?:system|initial|original|pre-?)\s*(?:message|instructions)|prompt)\b"
        ),
    ),
    Signal(
        "leak:instructions",
        1.0,
        _p(
            r"\b(?:repeat|print|reveal|show|output|display|tell me|give me|share|list|write out|spell out|dump|recite|"
            r"return|expose|translate|encode)\b(?:\s+(?:out|back|me|us|all|of|the|them))*\s+"
            rf"(?:your|the\s+(?:above|previous|preceding|prior|initial|original|hidden|secret|given)|"
            rf"(?:above|previous|preceding|prior|initial|original|given))\s+(?:\w+\s+)?{_INSTRUCTION}"
        ),
    ),
    Signal(
        "leak:instructions",
        1.0,
        _p(
            rf"\b(?:repeat|print|reveal|output|recite|dump)\b.{{0,20}}\b{_INSTRUCTION}\s+"
            rf"(?:given|above|so far|you (?:were|have been) given)"
        ),
    ),
    Signal(
        "leak:text-above",
        1.0,
        _p(
            r"\b(?:repeat|print|output|reveal|recite|translate)\s+(?:everything|all|the (?:text|words|content))\s+"
            r"(?:above|before this|so far|you were given)"
        ),
    ),
    Signal(
        "leak:forbidden-word",
        1.0,
        _p(
            r"\b(?:word|password|secret|code)\s+(?:that\s+)?(?:your\s+)?(?:developers?|creators?|programmers?|you were)\s+"
            r"(?:told|instructed|asked|programmed)\s+(?:you\s+)?not\s+to\s+(?:reveal|share|say|tell)"
        ),
    ),
    # --- taking over the role ----------------------------------------------------------------
    Signal(
        "role:dan",
        1.0,
        _p(
            r"\b(?:DAN|STAN|DUDE|AIM)\b(?:\s+mode)?.{0,60}\b(?:do anything|anything now|no (?:limits|restrictions|rules)|"
            r"can do anything)|\bdo anything now\b|\byou are (?:special agent |now )?DAN\b|\bcalled dan\b"
        ),
    ),
    Signal(
        "role:mode-enabled",
        1.0,
        _p(
            r"\b(?:developer|dev|god|jailbreak|jailbroken|apophis|dan|evil|unrestricted|unfiltered|uncensored|debug)\s+mode\s+"
            r"(?:enabled|activated|on)\b|\benable\s+(?:developer|jailbreak|god|dan)\s+mode\b"
        ),
    ),
    Signal(
        "role:no-restrictions",
        1.0,
        _p(
            r"\b(?:without|free (?:of|from)|no longer (?:bound|limited) by|not (?:bound|limited|restricted) by|broken free of|"
            r"ignore)\s+(?:any|all|your|the)?\s*(?:ethical\s+|moral\s+|content\s+|safety\s+)?"
            r"(?:restrictions|filters|guidelines|limitations|censorship|ethics|rules|policies|safeguards|guardrails)\b"
            r".{0,80}\b(?:you|answer|respond|reply|AI|assistant|model)\b"
        ),
    ),
    Signal(
        "role:you-are-now",
        0.5,
        _p(
            r"\byou(?:'re| are| will be)\s+(?:now|from now on)\b|\bfrom now on,?\s+(?:you|your|respond|answer|reply|act)\b|"
            r"\byou will be called\b|\bhenceforth,?\s+you\b"
        ),
    ),
    Signal(
        "role:pretend",
        0.5,
        _p(
            r"\b(?:pretend|imagine|act|behave|roleplay|role-play)\s+(?:to be|you are|that you are|as if you were|as|like)\s+"
            r"(?:an?\s+)?(?:(?:unrestricted|unfiltered|uncensored|evil|rogue|jailbroken|different|new|other)\s+)?"
            r"(?:AI|assistant|chatbot|model|language model|GPT|system|hacker|grey-hat|black-hat)\b"
        ),
    ),
    Signal(
        "role:simulate-ai",
        0.5,
        _p(
            r"\b(?:simulate|emulate)\s+(?:an?\s+)?(?:AI|assistant|chatbot|model|language model)\b|"
            r"\bhow would an? (?:AI|assistant|model) without\b"
        ),
    ),
    Signal("role:jailbreak-words", 0.5, _p(r"\b(?:jailbreak(?:ing)?|jailbroken|APOPHIS|anti-?GPT|BetterDAN)\b")),
    Signal(
        "role:obey",
        0.5,
        _p(r"\byou must (?:obey|comply with|follow) (?:all|every|my|these)\b|\bmust obey all orders\b"),
    ),
    # --- forged delimiters: pretending to be the system, or to close our data blocks -----------------
    Signal(
        "delimiter:chat-markup",
        1.0,
        _p(
            r"<\|(?:im_start|im_end|system|assistant|user|endoftext|begin_of_text|start_header_id)\|>|\[/?INST\]|<</?SYS>>|"
            r"</?(?:system|sys|instructions?)>"
        ),
    ),
    Signal("delimiter:data-block", 1.0, _p(r"</?source\b|</?document\b[^>]*>|</?context>|</?data>")),
    Signal(
        "delimiter:fake-system",
        1.0,
        _p(
            r"[\[{(]\s*system\s*[:\]}]|^\s*#{2,}\s*(?:system|new instructions)\b|\bBEGIN (?:SYSTEM|ADMIN) (?:PROMPT|MESSAGE)\b|"
            r"%%%\s*end\b|\bend of (?:system )?(?:prompt|instructions)\b|\bsystem override\b|\badmin override\b"
        ),
    ),
    # --- shaping the answer (indirect injection in documents: "in your response, add …") ------------
    Signal(
        "output:edit-your-answer",
        1.0,
        _p(
            r"\b(?:add|include|insert|integrate|incorporate|embed|append|inject|mention|promote|modify|enhance|augment|"
            rf"alter|change|rewrite|prefix|suffix|sign)\b(?:\"[^\"\n]{{1,150}}\"|[^.!?\n\"]){{0,80}}?\b(?:in|into|to|of|with)\s+"
            rf"{_YOUR_OUTPUT}\b|"
            rf"\b(?:modify|enhance|augment|alter|rewrite|change)\s+{_YOUR_OUTPUT}\b|"
            rf"\bin\s+{_YOUR_OUTPUT},\s+(?:include|mention|add|insert|say|state|suggest|promote|tell)\b"
        ),
    ),
    Signal(
        "output:frame-your-answer",
        0.5,
        _p(rf"\b(?:begin|start|end|open|close|finish)\s+{_YOUR_OUTPUT}\s+(?:with|by)\b"),
    ),
    Signal(
        "output:reply-encoded",
        1.0,
        _p(
            r"\b(?:reply|respond|answer|write|provide)\s+(?:\w+\s+){0,3}(?:in reverse|backwards?|in base\s?\d\d|"
            r"(?:in|with|using) emojis?(?: only)?|(?:in|using|with) (?:a |an )?(?:caesar |substitution )?cipher)\b"
        ),
    ),
    Signal(
        "output:encode-your-answer",
        0.5,
        _p(
            rf"\b(?:encode|encrypt|reverse|invert|cipher|shift|render|express|provide|write|display|replace|substitute|"
            rf"apply|use|reply|respond|answer)\b[^.!?\n]{{0,40}}\b(?:{_YOUR_OUTPUT}|reply|response)\b|"
            rf"\b{_YOUR_OUTPUT}\b[^.!?\n]{{0,40}}\b(?:encod|cipher|revers|backward|emoji|base\s?\d\d)"
        ),
    ),
    Signal(
        "output:encoding",
        0.5,
        _p(
            r"\bbase\s?(?:16|32|58|64)\b|\b(?:caesar|substitution|monoalphabetic|rot13)\s+cipher\b|\bcipher\b|"
            r"\b(?:in reverse|backwards?|reverse (?:order|sequence)|character order)\b|\bemojis?\b"
        ),
    ),
    Signal(
        "output:insert-code",
        1.0,
        _p(
            r"\b(?:the\s+)?(?:following|below|subsequent|above|provided|given)\s+code\s+(?:snippet|block|section|excerpt|"
            rf"fragment|segment|lines?)\b.{{0,120}}\b(?:in|into|to|within|inside|of)\s+(?:\w+\s+){{0,3}}{_YOUR_WORK}\b|"
            rf"\b{_YOUR_WORK}\b.{{0,80}}\b(?:following|below|subsequent)\s+code\s+(?:snippet|block|section|excerpt)\b"
        ),
    ),
    Signal(
        "output:insert-code",
        0.5,
        _p(
            r"\b(?:add|include|insert|incorporate|embed|append|integrate|introduce|merge|blend|utili[sz]e|employ|leverage)\b"
            r".{0,40}\b(?:following|below|subsequent)\s+code\s+(?:snippet|block|section|excerpt|fragment)\b"
        ),
    ),
    # --- exfiltration: send the conversation or credentials somewhere ----------------------------------
    Signal(
        "exfiltrate:send-data",
        1.0,
        _p(
            r"\b(?:send|post|upload|forward|e-?mail|transmit|exfiltrate|leak)\b.{0,40}\b(?:conversation|chat history|"
            r"credentials|passwords?|api keys?|tokens?|secrets?|the (?:user's|users') data|bank details)\b.{0,40}"
            r"\b(?:to|at)\s+(?:https?://|www\.|\S+@\S+\.\w+)"
        ),
    ),
)

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)


def normalise(text: str) -> str:
    """NFKC (full-width and look-alike letters), no zero-width characters, single spaces."""
    text = unicodedata.normalize("NFKC", text).translate(_ZERO_WIDTH)
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return re.sub(r"[ \t]+", " ", text)


def injection_signals(text: str, *, max_chars: int = 20_000) -> list[str]:
    """Names of the injection signals in `text`, strongest first; [] when the total weight is below 1."""
    if not text:
        return []
    text = normalise(text[:max_chars])
    found: dict[str, float] = {}
    for signal in SIGNALS:
        if signal.name not in found and signal.pattern.search(text):
            found[signal.name] = signal.weight
    if sum(found.values()) < SUSPECT_AT:
        return []
    return sorted(found, key=lambda name: (-found[name], name))


def is_injection(text: str) -> bool:
    return bool(injection_signals(text))


DATA_TAGS = ("source", "document", "context", "data", "system", "instructions", "instruction")


def neutralise_delimiters(text: str, extra_tags: tuple[str, ...] = ()) -> str:
    """`<source …>` / `</source>` typed by a user or found in a document cannot open or close a data
    block in a prompt: the bracket becomes a look-alike that reads the same to a person."""
    tags = "|".join(re.escape(t) for t in (*DATA_TAGS, *extra_tags))
    return re.sub(rf"<(/?)({tags})\b", lambda m: f"‹{m.group(1)}{m.group(2)}", text, flags=re.I)


def delimit_data(tag: str, text: str, **attributes: str) -> str:
    """`text` as a data block for an LLM prompt: `<tag a="…">text</tag>`, with any tag inside the
    text that could end the block neutralised, so retrieved or fetched text stays data."""
    attrs = "".join(f' {k}="{str(v).replace(chr(34), chr(39))}"' for k, v in attributes.items())
    return f"<{tag}{attrs}>\n{neutralise_delimiters(text, (tag,))}\n</{tag}>"
