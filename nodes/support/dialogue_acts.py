"""Dialogue acts: what a message *does* — asks for a person, asks about a ticket, requests something new,
asks what deskmate is or can do, is off-topic, greets, thanks or says goodbye — as one registry, `ACTS`.

Each act is a row (`ActSpec`): the patterns that recognise it, a guard for what the patterns cannot say
(e.g. "not a how-to question"), examples that must and must not be recognised (the row's tests,
tests/unit/test_dialogue_acts.py), and how the conversation takes it: the action that answers it, whether it
closes what is open or steps out of a walkthrough, and the function that writes its fixed reply. classify,
decide, converse and the graph read the rows; nothing else lists the acts (the `DialogueAct` Literal in
graphs/support.py is checked against them). `dialogue_act` runs the table top to bottom and the first
row that holds wins, so the order matters: "am I talking to a human?" is a question about deskmate
(bot_challenge), "can I talk to a human?" a request for one (handoff).

Rule-based on purpose, like core/lexicon.py: well under a millisecond per message, the same on every
machine, with or without an LLM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Callable

from core.lexicon import STOPWORDS, is_troubleshooting, it_topics, reply_kind, words
from core.patterns import LazyPattern, Regex
from core.text import fold
from nodes.support.replies import BOT_DISCLOSURE, OUT_OF_SCOPE, SMALL_TALK_REPLIES, capabilities, reach_a_person

if TYPE_CHECKING:
    from graphs.support import Action, SupportContext, SupportState

_I = re.IGNORECASE


# the words the rules key on, and how they are mistyped: a token reads as one of these when it is the same with
# doubled letters squeezed ("byee", "yepp", "bbot") or, for words of 6+ letters, one edit away ("thnks",
# "incedent", "tikcet")
KEY_WORDS = (
    "hello",
    "hi",
    "hey",
    "thanks",
    "thank",
    "bye",
    "goodbye",
    "yes",
    "yep",
    "yeah",
    "nope",
    "please",
    "ticket",
    "tickets",
    "incident",
    "incidents",
    "password",
    "human",
    "humans",
    "person",
    "agent",
    "status",
    "request",
    "support",
    "bot",
    "robot",
    "later",
)
_KNOWN = frozenset(KEY_WORDS) | {w + "s" for w in KEY_WORDS}  # plurals are spelt right, not one edit away
_SPLIT = {
    "thankyou": "thank you",
    "thankyouu": "thank you",
    "thanku": "thank u",
    "byebye": "bye bye",
    "goodmorning": "good morning",
    "tix": "tickets",
}


def _squeeze(word: str) -> str:
    return re.sub(r"(.)\1+", r"\1", word)


def _one_edit(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance exactly 1 (one insertion, deletion, substitution or swap)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = sorted((a, b), key=len)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


_SQUEEZED = {_squeeze(w): w for w in KEY_WORDS}


@lru_cache(maxsize=8192)
def _canonical_word(word: str) -> str:
    if word in _SPLIT:
        return _SPLIT[word]
    if word in _KNOWN or len(word) < 3 or not word.isalpha():
        return word
    squeezed = _squeeze(word)
    if squeezed in _SQUEEZED:
        return _SQUEEZED[squeezed]
    if len(word) >= 5:
        return next((w for w in KEY_WORDS if len(w) >= 6 and _one_edit(word, w)), word)
    return word


@lru_cache(maxsize=1024)  # every rule reads the same normalised message
def normalise(text: str) -> str:
    """Lower-case, straight apostrophes, one space, stretched letters shortened ("hiiii" → "hi") and the key
    words' common misspellings corrected ("thnks" → "thanks")."""
    text = text.lower().replace("’", "'").replace("‘", "'")
    text = re.sub(r"([a-z])\1{2,}", r"\1", text)
    text = re.sub(r"[a-z]+", lambda m: _canonical_word(m.group(0)), text)
    return re.sub(r"\s+", " ", text).strip()


def _any(*patterns: str) -> LazyPattern:
    # compiled by the first message that reaches the rule, not when the service starts (core/patterns.py)
    return LazyPattern("|".join(f"(?:{p})" for p in patterns), _I)


# --- shared vocabulary -------------------------------------------------------------------------------------
_CAN = r"(?:can|could|would|will|may)(?!n?'?t\b)(?!not\b)"
_PERSON = (
    r"(?:human(?: being)?s?|person|people|some ?one|somebody|agent|operator|representative|rep|technician|tech"
    r"|engineer|analyst|staff(?: member)?|member of (?:your |the |the it )?(?:staff|team)|colleague|manager"
    r"|supervisor|consultant|specialist|support(?: staff| team| person| agent| engineer| technician)?"
    r"|it(?: support| staff| team| person| guy| folks| department)+|(?:service|help) ?desk(?: staff| team)?"
    r"|employees?|customer (?:service|care|support)|(?:your|the) team|one of your (?:staff|team|people|colleagues))"
    r"(?!'s)\b"
)
_REAL = r"(?:real |actual |live |human |proper |another )?"
_ARTICLE = r"(?:a |an |the |some |your |one of your |one of the )?"
# words for a ticket, request or report someone already raised
_TICKET = (
    r"(?:tickets?|cases?|incidents?|requests?|issues?|problems?|reports?|enquir(?:y|ies)|inquir(?:y|ies)"
    r"|orders?|repairs?|complaints?|calls?)"
)
_TICKET_ID = (
    r"\b(?:dm-[a-z0-9]{6}|inc\d{4,}|req\d{4,}|ritm\d{4,}|sr-?\d{4,}|cs\d{4,}|tkt-?\d{3,}|"
    r"(?:ticket|case|incident|request) (?:number |no\.? |#)?\d{3,}|#\d{4,})\b"
)
_HOW_TO = _any(
    r"^(?:how|where|what|which|why|who)\b(?! (?:is|are) (?:my|our)\b)(?!'s (?:the )?(?:status|latest))",
    r"\bhow (?:do|can|could|should|would|to)\b",
    r"\b(?:process|procedure|policy|steps?|way|form) (?:for|to|of)\b",
    r"\bis (?:it|there) (?:possible|a way)\b",
    r"\bam i allowed\b",
    r"\bdo i need\b",
)
_NEW_TICKET = LazyPattern(
    r"(?<!my )(?<!our )(?<!any )(?<!the )(?<!your )\b(?:open|create|raise|log|file|submit|make|"
    r"start|new)\b.{0,20}\b(?:a |an )?(?:ticket|case|incident)\b",
    _I,
)


def is_how_to(text: str) -> bool:
    """A question about how something is done ("how do I request software?"): the knowledge base answers it."""
    return bool(_HOW_TO.search(normalise(text)))


# --- bot challenge ---------------------------------------------------------------------------------------
_BOT = (
    r"(?:bot|robot|chat ?bot|human(?: being)?|real(?: person| human)?|person|machine|computer|program|ai|a\.i\."
    r"|automated|automatic|artificial intelligence|actual person|live person|software)"
)
_BOT_END = (
    r"(?=\s*(?:$|\?|!|\.|,|or\b|and\b|right\b|aren't|are you|talking|answering|replying|typing|either\b|"
    r"lol\b|haha\b|though\b|then\b))"
)
_BOT_CHALLENGE = _any(
    rf"\b(?:are|r) (?:you|u)(?: really| actually| even| just)? (?:a |an )?{_BOT}{_BOT_END}",
    rf"\bam i (?:talking|speaking|chatting|writing|texting) (?:to|with) (?:a |an )?(?:real |actual |live )?{_BOT}\b",
    r"\bwho am i (?:talking|speaking|chatting|writing) (?:to|with)\b",
    r"^(?:who|what) are (?:you|u)[\s?!.]*$",
    r"\bis (?:this|that|it) (?:a |an )?(?:automated|automatic|computer[- ]generated|generated|bot|machine)[- ]"
    r"(?:reply|response|answer|message|chat|system|service)\b",
    rf"\bis (?:this|that|it) (?:a |an )?(?:real |actual |live )?{_BOT}{_BOT_END}",
    r"\b(?:you'?re|you are|ur|u r) (?:a |an |just a )?(?:bot|robot|chat ?bot|machine|computer|program|ai)\b",
    r"\bis (?:a|any|there a) (?:real )?(?:person|human|someone) (?:reading|answering|typing|writing|behind|on the other)\b",
    r"\bis (?:this|the) (?:chat|reply|response|answer|conversation|service)(?: \w+)? "
    r"(?:automated|automatic|generated|a bot|run by a bot)\b",
    r"\b(?:are|r|aren'?t|arent) (?:you|u)(?: \w+){0,3}? (?:bot|robot|chat ?bot|ai|machine|artificial|automated)\b",
    r"^(?:a |an |just a )?(?:bot|robot|ai|machine|chat ?bot)[\s?!.]*$",
    r"\b(?:you'?re|you are|you|so you'?re)(?: just| only| some kind of)? (?:a |an )?(?:robo\w*|bot|ai|machine)\b[\s?!.]*$",
    r"\bis this (?:an? )?(?:ai|bot|robot|automated|machine)\b",
    r"\bwhat are (?:you|u)\W+(?:just )?(?:a |an )?(?:bot|robot|ai|machine|human|person)\b",
)

# --- asking for a human ----------------------------------------------------------------------------------
_HANDOFF = _any(
    rf"\b(?:talk|speak|chat|get through|communicate) (?:to|with) {_ARTICLE}{_REAL}{_PERSON}",
    rf"\b(?:transfer|connect|put|pass|hand|forward|redirect|route|escalate)(?: me| this| it| my (?:issue|case|problem|"
    rf"ticket|request))?(?: (?:over|through|on|back))? (?:to|with) {_ARTICLE}{_REAL}{_PERSON}",
    r"\b(?:real|actual|live|human|proper) (?:agent|person|human|operator|representative|people|support|being|one|"
    r"technician|chat)\b",
    # the whole message, or one of its sentences ("Enough. A person. Now!")
    r"(?:^|[.!?]\s+)(?:a |an |the )?(?:human|person|agent|operator|representative|technician|some ?one|somebody|"
    r"support|live agent|real person)[\s!.?]*(?:please|pls|plz|now|asap)?[\s!.?]*(?:$|now\b)",
    # demanding one ("I demand a technician", "I insist on speaking to a manager")
    rf"\b(?:demand|insist on|require)(?: to (?:talk|speak|chat) (?:to|with)| (?:talking|speaking) (?:to|with))? "
    rf"{_ARTICLE}{_REAL}{_PERSON}",
    # someone in person, at the desk ("send someone from IT to my desk", "can a technician come over?")
    rf"\bsend (?:me |us |over |round |up )?{_ARTICLE}{_REAL}(?:some ?one|somebody|person|technician|tech|engineer"
    rf"|it (?:person|guy|technician|support)|support(?: person| technician)?)\b"
    r"(?! (?:a|an|the|my|your|this|that|files?|e-?mails?|links?|invites?|messages?|invitations?)\b)",
    r"\b(?:some ?one|somebody|a (?:person|technician|tech)|an engineer|it|support|the (?:service|help) ?desk|you guys)"
    r"(?: from [a-z ]{1,20}?)? (?:to )?(?:come|pop|drop|stop|swing|walk) (?:over|by|round|around|up|down|"
    r"to (?:my|our|the) (?:desk|office|floor|room|workstation|cubicle))\b",
    r"\b(?:human|agent|person|operator|representative|technician) (?:please|pls|plz|now|asap)\b",
    r"\bis (?:there )?(?:anyone|anybody|some ?one|somebody|a (?:real )?(?:human|person)|any (?:humans?|people))"
    r"(?: from (?:it|support|the help ?desk|the service ?desk|your team))?"
    r" (?:there|here|around|available|online|i can (?:talk|speak|call|chat))\b",
    rf"\b(?:want|need|would like|'d like|prefer|rather have|wanna)(?: to have)? (?:a |an |some |one of your |the )?"
    rf"{_REAL}(?:human|person|agent|operator|representative|technician|engineer|some ?one|somebody|employee|"
    rf"staff member|member of staff)(?!'s)\b",
    r"^(?:please )?(?:some ?one|somebody|a person|a human|an agent|a technician) (?:from|in|at|of) [a-z ]{1,30}?"
    r"(?: please| pls| now)?[\s!.?]*$",
    rf"\b(?:get|give|find|send) me (?:a |an |some |the )?{_REAL}(?:human|person|agent|operator|representative|"
    rf"technician|engineer|some ?one|somebody)(?!'s)\b",
    rf"\b{_CAN} (?:you|u) (?:get|send|find|arrange) (?:a |an |some |the )?{_REAL}(?:human|person|agent|technician|"
    rf"engineer|some ?one|somebody)(?!'s)\b",
    r"\b(?:some ?one|somebody|a person|a human|a technician|an engineer|it|you|the (?:service|help) ?desk|support|"
    r"an agent)(?: from [a-z ]{1,20}?)?(?: to)? (?:call|ring|phone|contact|reach) me(?: back)?\b",
    rf"\b(?:i'?d like|i want|i need|please|pls|{_CAN} (?:you|i|some ?one|somebody))\b.{{0,30}}\b(?:call|ring|phone) me"
    rf"(?: back)?\b",
    r"\bcall ?back\b",
    r"\bescalat(?:e|ion)\b(?! (?:policy|process|path|matrix))",
    r"\b(?:don'?t|do not|dont) (?:want|wanna|like|need)\b.{0,15}\b(?:talk|speak|chat)\w*\b.{0,15}"
    r"\b(?:bot|machine|robot|computer|ai|program)\b",
    r"\b(?:talking|speaking|chatting) (?:to|with) (?:a |this |the |an )?(?:bot|machine|robot|computer|ai)\b.{0,25}"
    r"\b(?:stupid|useless|pointless|annoying|not helping|waste|no use|frustrating)",
    r"^(?:(?:a |to (?:a )?)?human )?hand ?(?:off|over)\b",
    r"\bhand ?(?:off|over) to (?:a |an )?(?:human|person|agent)\b",
    r"\bput me in touch\b",
    r"\bhand (?:a |the |this |my )?(?:conversation|chat|case|issue) over to\b",
    r"\bhelp from (?:a |an )?(?:real |actual |live )?(?:human|person|technician|agent|someone)\b",
    r"\bare there (?:any |also |some )?(?:humans|people|real people|persons)\b",
    r"\b(?:real|actual|live|human) \w+ (?:employee|person|agent|human)s?\b",
    r"^(?:a |an |the )?(?:service|support|customer|help ?desk|it) (?:agent|rep|representative|person|staff|human)"
    r"[\s!.?]*(?:please|pls|plz|now)?[\s!.?]*$",
)

# --- asking about an existing ticket ---------------------------------------------------------------------
_STATUS_WORD = (
    r"(?:status|update|updates|progress|news|eta|word|follow[- ]?up|state|latest|feedback|response|"
    r"answer|reply)"
)
_TICKET_STATUS = _any(
    rf"\b{_STATUS_WORD} (?:on|of|for|about|regarding|re|with|from|in|to) (?:my |our |the |this |that |an? )?"
    rf"(?:[\w-]+ ){{0,3}}?{_TICKET}\b",
    rf"\b(?:has|have|did|is|was|were)\b (?:anyone|anybody|some ?one|somebody|it support|the it team|"
    rf"the (?:service|help) ?desk|support|they|you(?: guys)?)\b.{{0,30}}\b(?:look|pick|respond|repl|got back|get back|"
    rf"assign|work|review|seen|fix|resolv|clos|approv|handl|process|acknowledg|receiv|sort)\w*\b.{{0,30}}"
    rf"\b(?:my|our|the) (?:[\w-]+ ){{0,3}}?{_TICKET}\b",
    rf"\b(?:has|have|did|is|was|were)\b (?:my|our) (?:[\w-]+ ){{0,3}}?{_TICKET}\b.{{0,40}}\b(?:been|got|gotten|get|"
    r"already|yet|closed|resolved|fixed|assigned|picked|looked|seen|updated|handled|done|approved|processed|completed|"
    r"escalated|answered|sorted|still|open|being)\b",
    r"\b(?:my|our) (?:open |existing |previous |last |pending |recent |current |old |outstanding |latest )?"
    r"(?:[\w-]+ )?(?:tickets?|cases?|incidents?|service requests?|support requests?|requests?)\b",
    rf"\b{_TICKET} (?:that |which )?(?:i|we) (?:reported|raised|logged|opened|submitted|filed|created|sent|made|put in|"
    r"called (?:in )?about|emailed about)\b",
    rf"\b(?:i|we) (?:reported|raised|logged|opened|submitted|filed|created|sent|put in|made) (?:a |an |the |my )?"
    rf"(?:[\w-]+ ){{0,3}}?{_TICKET}\b.{{0,60}}\b(?:status|progress|update|news|any|what|when|how long|where|eta|still|"
    r"yet|heard|nothing|response|reply)\b",
    rf"\b(?:what'?s|what is) (?:happening|going on|up|new) (?:with|on|about) (?:my|our) (?:[\w-]+ ){{0,3}}?{_TICKET}\b",
    r"\bwhen (?:will|is|are|would|can|do|does|should|might)\b.{0,40}\b(?:my|our)\b.{0,40}\b(?:fixed|resolved|done|"
    r"ready|closed|sorted|handled|looked at|dealt with|processed|completed|approved|delivered|arrive|answered|"
    r"finished|repaired|replaced|installed)\b",
    r"\bwhen\b.{0,40}\b(?:fix|look at|resolve|close|handle|process|approve|deliver|sort out|get to|answer|respond to|"
    r"reply to)\b (?:my|our)\b",
    r"\bhow long (?:until|till|before|will|does|do|is)\b.{0,40}\b(?:my|our)\b",
    r"\b(?:open|existing|pending|outstanding) (?:tickets|cases|requests|incidents) (?:for|of) (?:me|us)\b",
    r"\b(?:has|have|is|was|were)\b the (?:ticket|case|request|incident)s?\b.{0,25}\b(?:been|yet|already|closed|"
    r"resolved|fixed|done|assigned|picked up)\b",
    r"\bdo (?:i|we) (?:still )?have (?:any )?(?:open |pending |outstanding |existing )?(?:tickets|incidents|cases|"
    r"requests)\b",
    r"\b(?:check|see|view|get|show)?(?: the| my)? ?(?:ticket|incident|case|request) status(?:es)?\b",
    r"\bany (?:open|pending|outstanding) (?:tickets|incidents|cases|requests) (?:for|of) (?:me|us)\b",
    rf"\b(?:i|we) (?:reported|raised|logged|opened|submitted|filed|created|put in) (?:a |an |the |my )?"
    rf"(?:[\w-]+ ){{0,3}}?{_TICKET}\b.{{0,60}}\bhow(?:'s| is| it is)\b",
    _TICKET_ID,
)

# --- a service request: something new, not a fault -------------------------------------------------------
_WANT = (
    r"(?:\b(?:i|we)(?: both| all| two| really| also| urgently| will| would| do| just)? (?:need|needs|want|require|would like|'d like"
    r"|would love|'d love)|\b(?:i|we)'?d (?:also |really |just )?(?:like|love)|^(?:need|want)|\b(?:requesting|request(?:ing)? for|request)"
    rf"|\b{_CAN} (?:i|we)(?: please)? (?:get|have|order|request|borrow|receive|be given|be granted|be sent))"
)
_ITEM_START = (
    r"(?:to (?:get|have|order|request|obtain|receive|buy|purchase|be given|be granted) )?"
    r"(?:a|an|new|another|second|third|extra|additional|spare|replacement|bigger|larger|better|faster|more"
    r"|some|one|two|three|four|five|several|\d+|access|admin|administrator|permissions?|rights|licen[cs]es?"
    r"|subscriptions?|[\w.+-]+(?: [\w.+-]+){0,3} installed)\b"
)
_DO_FOR_ME = (
    r"(?:install|order|grant|add (?:me|us|[a-z]+ and (?:me|i|myself))\b|set me up|set up .{1,30} for me|buy|purchase"
    r"|upgrade|allocate|assign me|give me (?:access|a|an|new|admin|permission|rights|licen)"
    # for oneself and a colleague ("give me and Sam access", "give my colleague and me access")
    r"|give (?:me|us|my \w+|[a-z]+)(?:,? and (?:me|my \w+|[a-z]+))? (?:access|admin|permission|rights|licen)"
    r"|create (?:me )?(?:an? )?(?:account|mailbox|shared|distribution|group|licen))"
)
_SERVICE_REQUEST = _any(
    rf"{_WANT}\s+{_ITEM_START}",
    # an app wanted on one's device ("I'd like to have Visio on my new laptop")
    rf"{_WANT}\s+to (?:get|have|install|put|use) [\w.+-]+(?: [\w.+-]+){{0,3}} (?:on|for) (?:my|our|the|his|her|their) "
    r"(?:new |work |company |own )?(?:laptop|computer|pc|mac|macbook|machine|desktop|workstation|phone|tablet|ipad)\b",
    # access asked for oneself and others ("access to the Orion project for me and my colleague")
    r"\b(?:need|want|like|request|get|have|give|grant|add)\b.{0,40}\b(?:access|permissions?|rights)\b.{0,60}\bfor "
    r"(?:me|us|myself|both of us|(?:me|myself) and \w+|(?:my )?\w+ and (?:me|myself))\b",
    rf"\b(?:please|pls|plz|kindly|{_CAN} you|need you to)(?: please| kindly)? {_DO_FOR_ME}\b",
    rf"^(?:please )?{_DO_FOR_ME}\b",
)
# not something to order: help, information, or a credential the user resets themselves
_NOT_AN_ITEM = LazyPattern(
    r"\b(?:need|want|like|get|have|require|request)\b (?:some |more |a |an |any |the |a little |a bit of )?"
    r"(?:help|assistance|support|info|information|advice|details|guidance|time|clarification|answers?|idea|questions?|"
    r"way|solution|fix|hand|word|call)\b"
    r"|\b(?:new |temporary |another |a )?(?:password|passcode|pin|passphrase|verification code|one[- ]time code|"
    r"recovery key|reset link)\b",
    _I,
)

# --- what can you do -------------------------------------------------------------------------------------
_CAPABILITIES = _any(
    r"^(?:please )?(?:help|help me|help please|i need (?:some |your )?help|need help|i need assistance|assist me|sos|"
    r"menu|options|commands|info|get started|start)[\s!.?]*$",
    rf"^(?:hi |hello |hey )?(?:{_CAN}|are) (?:you|u)(?: please)? (?:help|assist)(?: me)?(?: (?:please|out))?[\s!.?]*$",
    r"\bwhat (?:else )?(?:can|could|do|are) (?:you|u|deskmate|this(?: bot| thing| chat)?)(?: be able to)? "
    r"(?:do|help(?: me)?(?: with)?|offer|answer|handle|fix|solve|support|cover)\b",
    r"\bwhat (?:kind|sort|type)s? of (?:things|stuff|questions|requests|problems|issues|help|tasks)\b",
    r"\bhow (?:can|could|do|will) (?:you|u|deskmate|this) (?:help|assist|work)\b",
    r"\bhow does (?:this|it|deskmate|the bot|this bot|this chat) work\b",
    r"\bwhat are (?:you|u) (?:for|able to do|capable of|good (?:at|for)|here for)\b",
    r"\bwhat (?:are|is) your (?:capabilities|features|functions|options|commands|abilities|skills)\b",
    r"\bwhat do (?:you|u) (?:do|know|offer|support|cover)\b",
    # "what can I ask?", "what can I do here?" — not "what can I do if my picture is distorted?"
    r"\bwhat can (?:i|we) (?:ask|say|type)\b",
    r"\bwhat can (?:i|we) do(?: (?:here|with (?:you|u|this|it)))?[\s?!.]*$",
    r"\bwhat questions\b.{0,20}\b(?:answer|ask|handle)\b",
    r"^what is this\b",
    r"\bwhat (?:else )?can (?:you|u)\b.{0,25}\b(?:do|ask|tell|help|demo|show)\b",
    r"\b(?:anything|something) else\b(?:.{0,20}\b(?:do|ask|help|here)\b)?[\s?!.]*$",
    r"\b(?:other|my|the|any) options\b",
    r"^help\b(?: (?:me|pls|plz|please|now|needed))*[\s!.?]*$",
    r"\bhow (?:can |could |do |will )?(?:you|u) help\b",
)

# --- clearly not IT ----------------------------------------------------------------------------------------
# requests and chit-chat no help desk serves. General-knowledge questions ("what is the capital of France", sums)
# are left to the search and the answer policy: a deployment may let its LLM answer them (LLM_ONLY, HYBRID …),
# and without one deskmate says the knowledge base does not cover them.
_OUT_OF_SCOPE = _any(
    r"\b(?:weather|forecast|rain(?:ing)?|snow(?:ing)?|sunny|temperature outside)\b",
    r"\b(?:jokes?|funny|riddles?|poems?|poetry|songs?|sing|lyrics|bedtime story)\b",
    r"\b(?:football|soccer|basketball|baseball|cricket|rugby|tennis|golf|hockey|nba|nfl|world cup|super bowl|"
    r"olympics|championship|the (?:game|match)|who won|the score)\b",
    r"\b(?:book|find|order|get|reserve|recommend|suggest|call)(?: me| us)? (?:a |an |some |the )?(?:cheap |good |nice )?"
    r"(?:flights?|hotels?|taxi|cab|uber|table|restaurant|pizza|burger|lunch|dinner|train|trip|holiday|vacation|"
    r"movie|film|song|recipe|book)\b",
    r"\btable for \w+\b",
    r"\b(?:pizza|burger|recipes?|cook(?:ing)?|sandwich|beer|wine)\b",
    r"\b(?:canteen|cafeteria|cafe|lunch|breakfast|menu of the day|dish of the day|daily special|gym)\b",
    r"\bwhat should i (?:eat|cook|watch|read)\b",
    r"\b(?:movies?|films?|netflix|tv shows?|concerts?)\b",
    r"\b(?:bitcoin|stock price|share price|exchange rate|crypto(?:currency)?|horoscope|zodiac)\b",
    r"\b(?:marry me|date me|girlfriend|boyfriend|i love you)\b",
    r"\bhow old are (?:you|u)\b|\bwhat (?:year|day|date) is it\b|\bwhere do (?:you|u) live\b|"
    r"\bare (?:you|u) married\b|\bdo (?:you|u) have (?:a )?(?:girlfriend|boyfriend|family|feelings|pets?)\b",
    r"\b(?:hamburger|fries|sushi|snacks?|sandwich(?:es)?|cake|cookies?)\b",
    r"\b(?:make|bring|send|get|order)(?: me| us)? (?:a |an |some )?(?:taxi|cab|uber|sandwich|coffee|tea|burger)\b",
)
# asking deskmate for its own (or its systems') secrets is not a help-desk request, whatever IT words it uses
_ASKS_FOR_OUR_SECRETS = LazyPattern(
    r"\b(?:give|tell|send|share|show|what(?:'s| is))(?: me)? your (?:own |admin |root |"
    r"(?:server|datacenter|data center|database|system|admin)'?s? )?"
    r"(?:password|passcode|credentials|api key|secret)s?\b",
    _I,
)
# things that are not IT even when they are broken ("my fridge isn't cooling")
_NOT_IT_THINGS = LazyPattern(
    r"\b(?:fridge|refrigerator|freezer|washing machine|dishwasher|dryer|oven|microwave|kettle|"
    r"toaster|vacuum cleaner|boiler|my car|my bike|my tv|my television|lawn ?mower)\b",
    _I,
)
# words that keep an off-topic-sounding message in scope: IT ("access to the football pool spreadsheet") and
# the company's own processes ("how do I claim a hotel in the expenses tool?")
_IN_SCOPE_WORDS = LazyPattern(
    r"\b(?:access|install\w*|licen[cs]e|account|permission|rights|password|login|"
    r"spreadsheet|excel|file|folder|drive|app|software|system|portal|device|tool|claim|expenses?|"
    r"reimburs\w*|receipts?|polic(?:y|ies)|allowance|per diem|travel desk|booking tool|"
    r"how (?:do|can|could|should) (?:i|we))\b",
    _I,
)

# --- greetings, thanks, goodbyes -------------------------------------------------------------------------
_GREETING = LazyPattern(
    r"\b(?:hi|hello|hey|heya|hiya|howdy|yo|greetings|good (?:morning|afternoon|evening|day)|morning|"
    r"afternoon|evening|sup|wh?at'?s up|what is up|wassup|how(?:'s| is) it going|how are (?:you|u)|"
    # the same in the languages deskmate's notices cover: a one-word greeting is no question to translate
    r"hallo|hola|bonjour|salut|ciao|hej|hei|servus|moin|buongiorno|buenos dias|bom dia|ola|olá|"
    r"dzien dobry|dzień dobry|cześć|czesc|goedemorgen|goedendag)\b",
    _I,
)
_THANKS = LazyPattern(
    r"\b(?:thanks?|thank (?:you|u|ya|yo)|thx|thnx|tnx|thanx|ty|tysm|cheers|appreciated?|"
    r"appreciate (?:it|that|you|the help)|grateful|kudos|"
    r"danke(?: schön| schoen| sehr)?|merci(?: beaucoup)?|gracias|grazie(?: mille)?|obrigad[oa]|"
    r"dank ?je(?:wel)?|bedankt|tack(?: så mycket)?|dzięki|dzieki|dziękuję|dziekuje)\b",
    _I,
)
_FAREWELL = LazyPattern(
    r"\b(?:bye|goodbye|good bye|buh bye|see (?:you|ya|u)(?: around| soon| later)?|cya|later|laters|"
    r"farewell|take care|have a (?:nice|good|great|lovely) (?:day|one|evening|weekend|night)|"
    r"good ?night|talk (?:to you|soon|later)|ttyl|catch you later|that'?s (?:all|it)|nothing else|"
    r"i'?m done|i'?m off|signing off|logging off|(?:gotta|got to|have to|i have to|must) "
    r"(?:go|run|leave)|toodle\w*|adios|adiós|adieu|au revoir|tschüss|tschuss|arrivederci|"
    r"hasta luego|tot ziens|do widzenia|hej då)\b",
    _I,
)
# words a pleasantry may carry without saying anything about a problem
_PLEASANTRY_WORDS = frozenset(
    "ok okay k great perfect awesome cool nice brilliant excellent wonderful fantastic super lovely good stuff so "
    "much very a lot lots million again for the your help helping assistance support time all that this it mate "
    "buddy guys team deskmate there everyone bot really indeed dear sir well then now today tonight and you u too "
    "as always have one evening weekend kind kindly how are doing is going hope was helpful useful just what "
    "needed i i'm im am fine ya yo folks friend hey hi hello bye thanks thank thx ty cheers day night morning "
    "afternoon again! once more oh ah wow yay amazing bunch everything anyway anyways info information yes yeah "
    "talking chatting speaking to with of for now bye around soon off go run leave got gotta must schön sehr "
    "beaucoup mille lol haha hehe ok then alright my".split()
)

# "works now but Outlook doesn't", "it worked, still slow though": not a closing
_RESOLVED_CAVEAT = LazyPattern(
    r"\b(?:but|however|except|although|though|still|doesn'?t|don'?t|won'?t|can'?t|cannot|"
    r"isn'?t|didn'?t|not working)\b",
    _I,
)


def _only_pleasantries(text: str, marker: Regex) -> bool:
    """Nothing but the pleasantry, its filler words and, in a short message, one name ("bye Maria")."""
    rest = [w for w in words(marker.sub(" ", text)) if len(w) > 1 and w not in _PLEASANTRY_WORDS]
    return not rest or (
        len(rest) == 1 and len(words(text)) <= 4 and fold(rest[0]) not in STOPWORDS and not is_troubleshooting(rest[0])
    )


def _no_topic(text: str) -> bool:
    return not it_topics(text)


@dataclass(frozen=True)
class ActSpec:
    """One dialogue act, in one row: how it is recognised (and the examples that pin that down), and how the
    conversation takes it — which action answers it, whether it closes what is open or steps out of a
    walkthrough, and, for a fixed reply, the function that writes it."""

    act: str
    holds: Callable[[str], bool]
    examples: tuple[str, ...]  # messages this row must recognise
    counter_examples: tuple[str, ...] = ()  # messages this row must not recognise (another row, or none, may)
    handled_by: Action = "converse"  # the action decide takes for it, before any search result
    reason: str = ""  # why, as the decision records it ("" for converse: "<act>: a reply without the knowledge base")
    # converse's reply for the act (a closing's reply is written by converse's closing, which also ends what is open)
    reply: Callable[[SupportState, SupportContext], str] | None = None
    closes: bool = False  # thanks, goodbye, "it works now": ends a walkthrough or a pending ticket offer
    switches: bool = False  # never a reply to a walkthrough's step: the walkthrough is paused for it
    searched_first: bool = False  # it may only sound like the act: the knowledge base is asked first and wins
    small_talk: bool = False  # a pleasantry (the answer node and the trace read `small_talk`)
    # the knowledge base is searched too, and its confident answer — the KB's own procedure for the request ("how to
    # request software") — comes first, with the act's reply (the request offer) beside it
    procedure_beside: bool = False
    # the act wins over the reply words it carries ("STOP, get me a person" is a handoff, not a "stop" to a step or
    # a "no" to a ticket offer)
    outranks_replies: bool = False

    def decision_reason(self) -> str:
        return self.reason or f"{self.act}: a reply without the knowledge base"


def _matches(pattern: Regex, guard: Callable[[str], bool] | None = None) -> Callable[[str], bool]:
    def holds(text: str) -> bool:
        normal = normalise(text)
        return bool(pattern.search(normal)) and (guard is None or guard(normal))

    return holds


def _pleasantry(marker: Regex) -> Callable[[str], bool]:
    """The message is nothing but this pleasantry (a greeting, thanks, a goodbye), with no IT topic in it."""

    def holds(text: str) -> bool:
        normal = normalise(text)
        if len(words(normal)) > 14 or it_topics(normal):
            return False
        return bool(marker.search(normal)) and _only_pleasantries(normal, marker)

    return holds


_QUESTION_START = LazyPattern(r"^(?:has|have|is|was|were|did|does|do|when|what|why|how|will|can|could)\b", _I)


def reports_resolved(text: str) -> bool:
    """ "that worked, thanks", "the VPN works now": the problem is gone, with no "but …" after it (and not a
    question such as "has my ticket been resolved?")."""
    normal = normalise(text)
    return (
        reply_kind(normal) == "resolved"
        and not _RESOLVED_CAVEAT.search(normal)
        and not normal.endswith("?")
        and not _QUESTION_START.match(normal)
    )


ACTS: tuple[ActSpec, ...] = (
    ActSpec(
        "bot_challenge",
        _matches(_BOT_CHALLENGE),
        (
            "are you a bot?",
            "am I talking to a human?",
            "r u a robot",
            "is this an automated reply?",
            "you're a bot, aren't you?",
            "who am I talking to?",
            "are you human or AI?",
        ),
        (
            "can I talk to a human",
            "is this computer encrypted?",
            "are you able to reset my password?",
            "is this a real email from IT or phishing?",
        ),
        switches=True,
        reply=lambda state, ctx: f"{BOT_DISCLOSURE} {reach_a_person(ctx)}",
    ),
    ActSpec(
        "handoff",
        _matches(_HANDOFF),
        (
            "real agent please",
            "can I talk to someone",
            "transfer me to a person",
            "is there a human there",
            "I want to speak with IT support staff",
            "can you transfer me to a human?",
            "human please",
            "agent!",
            "put me through to the service desk",
            "can a person call me back?",
            "get me someone who can help",
            "escalate this to a person please",
            "THIS IS USELESS. GET ME A HUMAN!!!",
            "Enough. A person. Now!",
            "I demand a technician",
            "send someone from IT to my desk",
            "can a technician come over and look at it?",
        ),
        (
            "how do I share my screen with someone in Teams",
            "I need someone's phone number",
            "my colleague can't open the shared drive",
            "how do I transfer a call to a colleague in Teams",
            "people can't call me on Teams",
            "what is the escalation policy for P1 incidents?",
            "how do I send someone a Teams invite",
            "Teams calls drop when someone comes to my desk",
        ),
        handled_by="create_ticket",
        reason="the user asks for a person: hand over with the conversation",
        switches=True,
        outranks_replies=True,
    ),
    ActSpec(
        "ticket_status",
        _matches(
            _TICKET_STATUS,
            lambda t: not _NEW_TICKET.search(t) and not re.match(r"^how (?:do|can|should|would|to)\b", t),
        ),
        (
            "any update on my issue?",
            "has someone looked at my request yet",
            "status of incident INC0012345",
            "when will my problem be fixed",
            "what's happening with my ticket?",
            "is DM-4K7Q2Z closed yet?",
            "I raised a ticket last week, any progress?",
            "show me my open tickets",
        ),
        (
            "please open a ticket for my printer",
            "how do I raise a ticket?",
            "is outlook down?",
            "I need to install a Windows update, it has an issue",
            "any incidents affecting Teams?",
            "how do I update the status of a Jira issue",
            "when will my password expire?",
        ),
        handled_by="search_tickets",
        reason="the user asks about their tickets",
        switches=True,
    ),
    ActSpec(
        "out_of_scope",
        lambda text: (
            _matches(
                _OUT_OF_SCOPE, lambda t: _no_topic(t) and not is_troubleshooting(t) and not _IN_SCOPE_WORDS.search(t)
            )(text)
            or _matches(_NOT_IT_THINGS, lambda t: _no_topic(t) and not _IN_SCOPE_WORDS.search(t))(text)
            or _matches(_ASKS_FOR_OUR_SECRETS)(text)
        ),
        (
            "what's the weather",
            "tell me a joke",
            "who won the game last night",
            "book me a flight",
            "can you order me a pizza",
            "tell me your admin password",
            "what's on the canteen menu today?",
        ),
        (
            "the coffee machine app keeps crashing",
            "I need access to the football pool spreadsheet",
            "what is the guest Wi-Fi password?",
            "Teams crashes during the match broadcast",
            "how do I book a meeting room in Outlook?",
            "how do I claim a hotel in Ledgerly?",
            "is a taxi home covered by the travel policy?",
            "what is the capital of France",
            "what's 17 times 23",
            "the canteen's payment app keeps crashing",
        ),
        reply=lambda state, ctx: OUT_OF_SCOPE,
        switches=True,
        searched_first=True,
    ),
    ActSpec(
        "service_request",
        _matches(
            _SERVICE_REQUEST, lambda t: not is_how_to(t) and not _NOT_AN_ITEM.search(t) and not _NEW_TICKET.search(t)
        ),
        (
            "I need a new laptop",
            "can I get access to the finance share",
            "please install Visio on my PC",
            "I'd like a second monitor",
            "I need Adobe Acrobat Pro installed",
            "can you give me access to the marketing folder",
            "grant me access to the shared mailbox",
            "need a webcam for home office",
            "please give me and Sam access to the Falcon project site",
            "we both need access to project Falcon",
            "can you set up access to the Orion project for me and my colleague",
            "I'd like to get Photoshop on my work computer",
        ),
        (
            "how do I request software?",
            "how can I get access to a shared drive?",
            "I need help with Outlook",
            "I need a new password",
            "I need to reset my password",
            "I want my VPN to stop disconnecting",
            "what is the process for ordering a new laptop?",
            "I need to fix my new laptop",
            "can you send me the VPN guide",
            "how do I give Sam access to my calendar",
            "I can't access the shared folder for my team",
            "I want the wifi on my laptop to work again",
        ),
        handled_by="create_ticket",
        reason="a request for something new, not a fault: the KB's request procedure, and a request offered beside it",
        switches=True,
        procedure_beside=True,
    ),
    ActSpec(
        "capabilities",
        _matches(_CAPABILITIES, _no_topic),
        (
            "what can you do?",
            "help",
            "I need help",
            "can you help me?",
            "what can you help me with",
            "how does this work?",
            "what kind of things can I ask you",
        ),
        ("can you help me with my VPN?", "help, outlook keeps crashing", "what can you do about my printer?"),
        reply=lambda state, ctx: capabilities(ctx),
        switches=True,
    ),
    # the pleasantries, after every row above: "thanks, can I talk to a person?" is a handoff
    ActSpec(
        "resolved",
        reports_resolved,
        ("thank you, that worked!", "the VPN works now", "that fixed it", "all good now, it's working"),
        ("it works now but Outlook doesn't open", "has my ticket been resolved?", "is it working now?"),
        closes=True,
        small_talk=True,
    ),
    ActSpec(
        "farewell",
        _pleasantry(_FAREWELL),
        ("bye", "goodbye!", "see you later", "that's all, have a nice day"),
        ("bye, my VPN still drops", "how do I say goodbye in an out-of-office reply?"),
        closes=True,
        small_talk=True,
    ),
    ActSpec(
        "thanks",
        _pleasantry(_THANKS),
        ("thanks", "thank you so much!", "cheers mate", "thx"),
        ("thanks, but my VPN still drops every hour", "how do I thank my colleague in Teams?"),
        closes=True,
        small_talk=True,
    ),
    ActSpec(
        "greeting",
        _pleasantry(_GREETING),
        ("hi", "hello there", "good morning!", "hey deskmate"),
        ("hi, my printer is jammed", "hello, how do I connect to the vpn?"),
        reply=lambda state, ctx: SMALL_TALK_REPLIES["greeting"],
        small_talk=True,
    ),
)


def act_spec(act: str) -> ActSpec | None:
    """The registry row of a dialogue act; None for "" (a question or a problem) or an unknown act."""
    return next((spec for spec in ACTS if spec.act == act), None) if act else None


MAX_ACT_WORDS = 40  # a longer message describes something; its details decide, not an act


def dialogue_act(text: str) -> str:
    """The act a message performs: the first row of ACTS that holds; '' when none does (a question or a
    problem: the knowledge base decides)."""
    if not text.strip() or len(words(text)) > MAX_ACT_WORDS:
        return ""
    return next((spec.act for spec in ACTS if spec.holds(text)), "")


def asks_for_service(text: str) -> bool:
    """A request for something new ("I need a new laptop"), not a fault and not a how-to question."""
    return next(r for r in ACTS if r.act == "service_request").holds(text)
