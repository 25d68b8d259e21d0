"""Small, deterministic text helpers shared by the nodes: OS detection, IT topics, word lists.

Rule-based on purpose: they run on every message in well under a millisecond and behave the
same on every machine, with or without an LLM.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.records import OperatingSystem
from core.text import COMPLAINT_WORDS, CONVERSATION_WORDS, STOP_WORDS, fold

# Each platform by its own name, and by what an employee names in its place: a device, a distribution, a version
# ("my macbook", "ubuntu", "win11", "my iphone"). "mac address" is a network term, not an operating system.
_OWN_NAMES: dict[str, str] = {
    "macos": r"mac\s?os|os\s?x|mac(?!\s*-?\s*address)",
    "windows": r"windows",
    "linux": r"linux",
    "ios": r"ios|ipados",
    "android": r"android",
}
_DEVICE_NAMES: dict[str, str] = {
    "macos": r"macbook\w*|imac|mac\s?mini",
    "windows": r"win\s?1[01]|win\s?7|win\s?8",
    "linux": r"ubuntu|debian|fedora|mint|centos|rhel|red\s?hat|arch\s?linux|kubuntu|pop!?_?os",
    "ios": r"iphone|ipad",
}


def _pattern(*alternatives: str) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(a for a in alternatives if a) + r")\b", re.I)


_OS_PATTERNS: tuple[tuple[OperatingSystem, re.Pattern[str]], ...] = tuple(
    (name, _pattern(_OWN_NAMES[name], _DEVICE_NAMES[name])) for name in ("macos", "windows", "linux")
)


def detect_os(text: str) -> OperatingSystem | None:
    """The single operating system a text names, or None when it names none (or several)."""
    found = {os_name for os_name, pattern in _OS_PATTERNS if pattern.search(text)}
    return found.pop() if len(found) == 1 else None


def detect_os_in_path(headings: list[str]) -> OperatingSystem | None:
    """OS of a section from its heading path; the deepest heading naming one OS wins."""
    for heading in reversed(headings):
        found = detect_os(heading)
        if found:
            return found
    return None


# the platforms documentation writes a page or a tab for: by name or by device, and by their own name only
_PLATFORMS = {name: _pattern(own, _DEVICE_NAMES.get(name, "")) for name, own in _OWN_NAMES.items()}
_NAMED_ITSELF = {name: _pattern(own) for name, own in _OWN_NAMES.items()}
_DEVICES = {name: _pattern(devices) for name, devices in _DEVICE_NAMES.items()}


def platforms(text: str) -> set[str]:
    """Every platform a text names, by its name or a device or distribution of it."""
    return {name for name, pattern in _PLATFORMS.items() if pattern.search(text)}


def platform_words(text: str) -> list[str]:
    """The platforms a text names only by a device or distribution ("my iphone" → ios), as extra search words; a
    platform named itself ("on my Mac") adds none."""
    return sorted(
        name for name, pattern in _DEVICES.items() if pattern.search(text) and not _NAMED_ITSELF[name].search(text)
    )


OS_LABELS: dict[str, str] = {"windows": "Windows", "macos": "macOS", "linux": "Linux"}
TOPIC_LABELS: dict[str, str] = {
    "vpn": "VPN",
    "wi-fi": "Wi-Fi",
    "e-mail": "E-mail",
    "mfa": "MFA",
    "mac address": "MAC address",
}


def topic_label(topic: str) -> str:
    """How a topic is written in a sentence or a ticket summary ("vpn" → "VPN")."""
    return TOPIC_LABELS.get(topic, topic[:1].upper() + topic[1:])


# canonical IT topic -> pattern. Canonical names double as search keywords.
IT_TOPICS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.I)
    for name, pattern in {
        "vpn": r"\b(vpn|anyconnect|secure client|openconnect|globalprotect|tunnel)\b",
        "wi-fi": r"\b(wi-?fi|wireless|wlan|ssid|hotspot)\b",
        "network": r"\b(network|internet|ethernet|dns|proxy|connection|offline|online)\b",
        "printer": r"\b(print\w*|scanner|scan|toner|paper jam|cartridge)\b",
        "e-mail": r"\b(e-?mails?|outlook|mailbox|inbox|outbox|calendar|exchange)\b",
        "password": r"\b(pass ?words?|pass ?codes?|passphrase|log\s?-?in|sign\s?-?in|locked out|lockout|credentials?|account)\b",
        "mfa": r"\b(mfa|2fa|two[- ]factor|multi[- ]factor|authenticator|verification code|one[- ]time code|otp)\b",
        "video call": r"\b(teams|zoom|webex|meet(ing)?s?|video call|calls?|screen ?shar\w*)\b",
        "audio": r"\b(audio|sound|microphone|mic|headset|headphones?|speakers?|camera|webcam|echo)\b",
        "shared drive": r"\b(shared drive|network drive|file share|shares?|file server|smb|mapped drive|folders?)\b",
        "encryption": r"\b(bitlocker|filevault|luks|encrypt\w*|recovery key)\b",
        "software": r"\b(software|install\w*|apps?|applications?|licen[cs]es?|admin rights|company portal|self service)\b",
        "phishing": r"\b(phish\w*|spam|suspicious|scam|malware|virus)\b",
        "onboarding": r"\b(onboard\w*|new starter|first day|new hire|joiner)\b",
        "remote desktop": r"\b(remote desktop|rdp|remote access|work from home|office pc)\b",
        "mac address": r"\b(mac address|ip address|hardware address|ipconfig|ifconfig)\b",
        "laptop": r"\b(laptop|computer|pc|desktop|disk|storage|hard drive|ssd|slow|battery|screen|monitor|keyboard|mouse)\b",
        "phone": r"\b(phone|mobile|iphone|android|tablet|ipad|intune)\b",
        "browser": r"\b(browser|certificate|chrome|edge|firefox|safari|website)\b",
        # the IT team itself: "IT" in capitals is the department, never the pronoun ("how do I contact IT")
        "service desk": r"\b(service ?desk|help ?desk|tech(?:nical)? support|(?-i:IT)(?!['’]))\b",
    }.items()
}

# each word starts at a word boundary: "canteen" is not "can't", "change" not "hang", "pajamas" not "jam"
_TROUBLE = re.compile(
    r"n'?t work|\b(?:not work|doesnt\b|wont\b|won'?t\b|can'?t\b|cannot|unable|error|fail|broke|stuck|keeps?\b|"
    r"disconnect|drops?\b|dropp(?:ing|ed)|crash|freez|frozen|hang|slow|no sound|problem|issue|"
    r"down\b|outage|blink|jam|locked|forgot|lost|stopped|denied|invalid|expired|missing|wrong|"
    r"not (connect|print|load|open|sync|send|receiv|start|show|turn|charg|respond)\w*|"
    r"help me fix|trouble|weird|strange|glitch)",
    re.I,
)
_INFO = re.compile(
    r"^(how|what|where|when|which|who|why|can i|could i|do i|does|is there|are there|should i)\b|"
    r"\bhow (do|can|to|should)\b|\b(set ?up|request|enrol|enroll|configure|get access|policy)\b",
    re.I,
)

_SMALL_TALK: dict[str, re.Pattern[str]] = {
    "greeting": re.compile(
        r"^(hi+|hello+|hey+|hiya|yo|good (morning|afternoon|evening)|greetings|howdy)\b[\s!.,]*(there|deskmate|team|all)?[\s!.,]*$",
        re.I,
    ),
    "thanks": re.compile(
        r"^(thanks?( you)?|thx|ty|cheers|many thanks|thank you( so much| very much)?|great,? thanks?|perfect,? thanks?|ok,? thanks?)[\s!.,]*$",
        re.I,
    ),
    "farewell": re.compile(
        r"^(bye+|goodbye|see you|see ya|that'?s all|that is all|nothing else|no,? thanks?|no thank you)[\s!.,]*$", re.I
    ),
}

# words of a conversation, not of a topic (core/text.py)
STOPWORDS = STOP_WORDS | CONVERSATION_WORDS
# words that carry no topic on their own ("it's not working" says nothing about *what*)
_GENERIC = COMPLAINT_WORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9'\-\.]*[a-z0-9]|[a-z0-9]", re.I)

_FOLLOW_UP_MARKERS = re.compile(
    r"\b(what about|how about|and (on|for|with)|same (for|on)|instead|also|yes|yeah|yep|no|nope|ok|okay|"
    r"version|\d{1,2}(\.\d+)?|sonoma|ventura|monterey|sequoia|jammy|noble|win ?1[01])\b",
    re.I,
)


_PLACEHOLDER = re.compile(r"\[REDACTED:[A-Z_]+(?:_\d+)?\]")


def strip_placeholders(text: str) -> str:
    """Redaction placeholders say nothing about the topic; keep them out of searches."""
    return re.sub(r"\s{2,}", " ", _PLACEHOLDER.sub(" ", text)).strip()


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    """Words that could name a topic, as written: no stopwords, no generic complaint words."""
    return [w for w in words(text) if len(w) > 1 and fold(w) not in STOPWORDS and fold(w) not in _GENERIC]


def it_topics(text: str) -> list[str]:
    """Canonical IT topics a text mentions, in the lexicon's order."""
    return [name for name, pattern in IT_TOPICS.items() if pattern.search(text)]


def is_troubleshooting(text: str) -> bool:
    return bool(_TROUBLE.search(text)) and not is_wish(text)


# "I want Outlook to show my calendar", "want the app to alert me whenever someone writes 'outage'": a wish for
# something to behave differently is a setting to change (a how-to), unless the message also reports a fault —
# outside the quoted words it should show or watch for
_WISH = re.compile(r"^\W*(?:i\s+)?(?:really\s+)?(?:want|would like|'d like|wish)\s+(?:\S+\s+){1,3}?to\b", re.I)
_QUOTED = re.compile(r"'[^'\n]{1,80}'|\"[^\"\n]{1,80}\"|“[^”\n]{1,80}”|‘[^’\n]{1,80}’")


def is_wish(text: str) -> bool:
    return bool(_WISH.search(text)) and not _TROUBLE.search(_QUOTED.sub(" ", text))


def is_question(text: str) -> bool:
    return bool(_INFO.search(text.strip())) or text.strip().endswith("?")


def small_talk_kind(text: str) -> str:
    cleaned = text.strip()
    if len(words(cleaned)) > 6:
        return ""
    for kind, pattern in _SMALL_TALK.items():
        if pattern.match(cleaned):
            return kind
    return ""


def looks_like_follow_up(text: str, has_topic_words: bool) -> bool:
    """A short reply that only makes sense with the previous topic ("im on linux", "what about windows 11")."""
    n = len(words(text))
    if n == 0 or n > 5:
        return False
    if detect_os(text) or _FOLLOW_UP_MARKERS.search(text):
        return True
    return not has_topic_words


@lru_cache(maxsize=4096)
def _normalise(term: str) -> str:
    return term.lower().strip(" .,!?:;'\"()[]")


def overlap_score(query: str, passage: str) -> float:
    """Share of the query's content words found in the passage (cheap lexical relevance)."""
    q = {_normalise(w) for w in content_words(query)}
    if not q:
        return 0.0
    p = {_normalise(w) for w in words(passage)}
    hits = sum(1 for w in q if w in p or (len(w) > 4 and any(x.startswith(w[:5]) for x in p)))
    return hits / len(q)


# --- replies inside a workflow ("it works", "still broken", "stop", "yes") -----------------------
_RESOLVED = re.compile(
    r"\b(it|that|this|everything|all)?\s*(works?|worked|is working|'s working|working) (now|again|fine|great)\b|"
    r"^(it )?works( now| again)?[!. ]*$|\b(fixed|solved|resolved|sorted)\b(?! yet)|\bthat did it\b|\ball good\b|"
    r"\b(that|it|this) (worked|helped|did the trick)\b|\bdid the trick\b|"
    r"\bproblem (is )?gone\b|\bno longer (a problem|broken)\b|^(yay|great|perfect|excellent)[!. ]*(it works)?",
    re.I,
)
_FAILED = re.compile(
    r"\b(still|same)\b.*\b(broken|not|no|doesn'?t|won'?t|can'?t|fail\w*|problem|issue|error)\b|"
    r"\b(didn'?t|did not|doesn'?t|does not) (work|help|fix|change)\b|\bno luck\b|\bno change\b|\bnothing changed\b|"
    r"\bnot (fixed|working|solved|resolved)\b|\bstill\b|^(nope|no)[!. ]*$|\bsame (thing|result|error|problem)\b",
    re.I,
)
_EXIT = re.compile(
    r"^(stop|cancel|quit|exit|never ?mind|nevermind|forget it|leave it|skip it|abort)\b|"
    r"\b(stop troubleshooting|let'?s stop|i'?ll (call|ring|phone) (it|the service desk))\b",
    re.I,
)
# "yes", and a yes in more words ("Yes, please create a ticket", "sure, go ahead and file it", "ok open one"):
# an affirmative opening followed only by more of the same — never by something else ("ok, I'll try that")
_YES = (
    r"(yes+|yeah|yea|yep+|yup|ya|yah|ye|sure( thing)?|ok(ay|ey|ie)?|k|alright|all right|fine|absolutely|definitely|"
    r"certainly|of course|indeed|correct|exactly|right|perfect|great|cool|affirmative|agreed|i agree|y|"
    r"(i )?accept(ed)?|go|"
    # the yes of the languages deskmate's notices cover, for the reply to a ticket offered in them
    r"ja|jawohl|oui|s[ií]|sì|sim|tak|"
    r"confirm(ed)?|by all means|why not|please( do)?|go ahead|go for it|do it|do that|do so|let'?s do (it|that))"
)
_YES_MORE = (
    r"(please( do)?|pls|plz|bitte|s'il (te|vous) pla[iî]t|svp|por favor|per favore|proszę|prosze|graag|"
    r"thanks?|thank you|ty|go ahead|go for it|do it|do that|do so|(and )?"
    r"(please )?(create|open|file|raise|log|submit|send|make|start) (it|one|that|this|the ticket|a ticket|the case|"
    r"a case|the request|the incident|an incident)( for me)?( now| right away| asap)?|i would|i do|i want (it|that|"
    r"one)|that would be (great|good|nice|helpful|perfect|lovely)|that'?d be (great|good|nice|helpful)|"
    r"sounds (good|great|fine|perfect)|that'?s (fine|right|correct|good)|why not|right away|now|asap|"
    r"(go ahead )?and (create|open|file|raise|log|submit) (it|one|that)|" + _YES + ")"
)
_AFFIRM = re.compile(rf"^({_YES}|{_YES_MORE})([\s,.!;:-]+(and\s+)?{_YES_MORE})*[\s!.,]*$", re.I)
_DENY = re.compile(
    r"^(no|nopes?|nah+|na|naw|never|negative|neither|no thanks?|no thank you|don'?t|do not|not now|"
    r"nein|non|nee|nie|n[ãa]o|nej|"
    r"not right now|not that one|(please|pls) (no|don'?t)|(absolutely|definitely|certainly|of course) not|"
    r"(i )?decline|deny|not needed|"
    r"not necessary|no need|not really|not yet|maybe later|later|i'?ll pass|pass|i'?d rather not|rather not|"
    r"i don'?t think so|no way|i'?m (good|fine|ok|okay)|it'?s fine|leave it)\b|"
    r"\b(don'?t|do not|no need to) (bother|create|open|file|raise|log|submit|do (it|that))\b|"
    r"\b(not|no) (necessary|needed)\b|\bi'?ll (wait|pass|manage|call them|try again)\b",
    re.I,
)
_RESUME = re.compile(r"^(continue|resume|go on|back to (it|that|the \w+)|let'?s continue|next( step)?)\b", re.I)
_DONE = re.compile(r"^(done|did (it|that)|tried (it|that)|ok,? done|finished)\b", re.I)


# a yes that presses for speed ("great, go ahead, it's urgent!", "YES asap, we're blocked"): an affirmative opening,
# urgency, and nothing that takes the yes back ("works now", "no", "wait", "but")
# (`\W*+`: possessive — every alternative starts with a letter, so giving punctuation back never helps, and a long
# run of it is one pass instead of a quadratic search)
_EAGER_OPENING = re.compile(rf"^\W*+({_YES}|excellent|brilliant|awesome|super|lovely|wonderful)\b", re.I)
_URGENCY = re.compile(
    r"\b((it|this|that)('s| is) )?((very|really|super|extremely|quite) )?(urgent(ly)?|asap|as soon as (possible|you can)|"
    r"right (away|now)|immediately|quick(ly)?|fast|now|today|(high|top) priority|critical|hurry( up)?|emergency|"
    r"blocked|can'?t work|cannot work)\b",
    re.I,
)
_TAKES_YES_BACK = re.compile(
    r"\b(no|not|don'?t|do not|never|cancel|stop|wait|hold on|later|but|instead|rather|try|works?|worked|working|"
    r"fixed|solved|resolved|sorted|helped|trick|gone)\b",
    re.I,
)


def eager_yes(text: str) -> bool:
    """A yes with urgency in it ("Great, please do, it's urgent!", "perfect, go ahead asap, we're all blocked"):
    the urgency never turns the yes into "it works now" or a no."""
    cleaned = text.strip()
    if not _EAGER_OPENING.match(cleaned) or _TAKES_YES_BACK.search(cleaned):
        return False
    if not _URGENCY.search(cleaned):
        return False
    rest = _EAGER_OPENING.sub("yes", _URGENCY.sub(" ", cleaned), count=1)
    return bool(_AFFIRM.match(re.sub(r"\s+([,.!;:])", r"\1", rest).strip())) or bool(priority_in(cleaned))


def reply_kind(text: str) -> str:
    """How a short reply relates to an open question: resolved, failed, exit, affirm, deny, resume, done or ''."""
    cleaned = text.strip()
    if len(words(cleaned)) > 14:
        return ""
    for kind, pattern in (
        ("exit", _EXIT),
        ("resume", _RESUME),
        ("resolved", _RESOLVED),
        ("failed", _FAILED),
        ("deny", _DENY),
        ("affirm", _AFFIRM),
        ("done", _DONE),
    ):
        if pattern.search(cleaned):
            return kind
    return ""


_WANTS_TICKET = re.compile(
    r"\b(open|create|raise|log|file|submit|make|start)\b.{0,20}\b(a |an )?(ticket|case|incident|request)\b|"
    r"\b(talk|speak|chat) (to|with) (a |an )?(human|person|agent|someone|technician)\b|\bescalate\b|"
    r"\b(need|want) (a |an )?(ticket|technician|human)\b|"
    # a short message with a ticket word and an open-verb in any order ("ticket for my mouse, can you open one")
    r"^(?=.{0,80}$)(?=.*\b(ticket|tickets|incident|case)\b)(?=.*(?<!my )(?<!our )(?<!any )(?<!the )"
    r"\b(open|create|raise|log|file|submit)\b)(?!.*\b(status|update|progress|closed|resolved)\b)",
    re.I,
)
_TICKET_STATUS = re.compile(
    r"\b(status|update|progress|news)\b.{0,30}\b(my |the |our )?(ticket|case|request|incident)s?\b|"
    r"\b(my|our) (open )?(tickets?|cases?|requests?)\b|\bticket (status|number)\b|\bDM-[A-Z0-9]{6}\b",
    re.I,
)
_STATUS_QUESTION = re.compile(
    r"\b(outage|outages|incident|status page|service status|system status|known (issue|problem)s?)\b|"
    r"\bis (\w+ ){0,3}(down|up|working for (everyone|others))\b|\b(anything|everything|something) down\b|"
    r"\b(down for everyone|is it just me)\b",
    re.I,
)


_ABOUT_SPEAKER = re.compile(r"\b(i|i'm|im|i've|me|my|mine|myself)\b", re.I)
_ASKS_FOR_NEW = re.compile(
    r"\b(i (really )?(need|want|would like)|i'd like|can i (get|have)|please (order|get)|"
    r"order|request(ing)?|buy|purchase|replace(ment)?)\b",
    re.I,
)


def about_speaker(text: str) -> bool:
    """The message is about the employee themselves ("my laptop", "do I have …")."""
    return bool(_ABOUT_SPEAKER.search(strip_placeholders(text)))


def asks_for_something_new(text: str) -> bool:
    """A request for something ("I need a new laptop", "order a Visio licence"): a ticket, not a lookup."""
    return bool(_ASKS_FOR_NEW.search(text))


def wants_ticket(text: str) -> bool:
    return bool(_WANTS_TICKET.search(text))


def asks_ticket_status(text: str) -> bool:
    return bool(_TICKET_STATUS.search(text)) and not wants_ticket(text)


# a word or two in quotes is a term the person mentions ("alert me when anyone writes 'outage'"), not what they
# ask about; a quoted sentence (an error message that names an outage) still counts
_MENTIONED_TERM = re.compile(r"""(?<!\w)(['"‘“`])\s*[^'"‘’“”`\s]+(?:\s+[^'"‘’“”`\s]+)?\s*(['"’”`])(?!\w)""")


def asks_status(text: str) -> bool:
    return bool(_STATUS_QUESTION.search(_MENTIONED_TERM.sub(" ", text))) and not asks_ticket_status(text)


_PRIORITY_WORDS = (
    ("critical", re.compile(r"\b(critical|p1|highest|emergency|everyone is (affected|down))\b", re.I)),
    (
        "high",
        re.compile(
            r"\b(high|urgent|p2|asap|as soon as possible|right away|immediately|important|can'?t work|cannot work|"
            r"blocked|escalated?)\b",
            re.I,
        ),
    ),
    ("low", re.compile(r"\b(low|p4|whenever|not urgent|no rush)\b", re.I)),
    ("medium", re.compile(r"\b(medium|normal|p3)\b", re.I)),
)


def priority_in(text: str) -> str | None:
    """A priority the text asks for ("make it high priority", "this is urgent"), if any."""
    for level, pattern in _PRIORITY_WORDS:
        if pattern.search(text):
            return level
    return None
