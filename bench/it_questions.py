"""Distinct IT-support questions for the latency benchmarks, written for them: templates × topics.

    from it_questions import distinct_questions
    questions = distinct_questions()          # > 1,000 different sentences, always in the same order

Real employees rarely send the same sentence twice, and a question seen before is answered from the
embedder's cache, so a benchmark that repeats its inputs measures that cache. Every sentence here is a
different text (so a different vector to compute), in the styles people write to a help desk: a how-to, a
complaint, a terse fragment, a polite request. The order interleaves topics and templates, so any prefix of
the list is a mix of both. Nothing here comes from an evaluation set.
"""

from __future__ import annotations

# (what the person is dealing with, the thing it concerns) — the thing reads after "my"/"the"
TOPICS: tuple[tuple[str, str], ...] = (
    ("connect to the VPN", "VPN"),
    ("reset my password", "password"),
    ("print a document", "printer"),
    ("set up two-factor authentication", "authenticator app"),
    ("find my disk encryption recovery key", "recovery key"),
    ("map the shared drive", "shared drive"),
    ("use my microphone in video calls", "microphone"),
    ("report a phishing email", "suspicious email"),
    ("request new software", "software request"),
    ("send email from my mail client", "outbox"),
    ("find the MAC address of my laptop", "network adapter"),
    ("speed up my slow laptop", "laptop"),
    ("join the office wifi", "wifi"),
    ("share my screen in a meeting", "screen sharing"),
    ("connect to a remote desktop", "remote desktop"),
    ("enrol my phone in device management", "work phone"),
    ("set up my email on a new phone", "mail app"),
    ("get rid of the certificate warning in my browser", "browser"),
    ("stop the password prompts in my mail client", "mail client"),
    ("free up disk space", "hard drive"),
    ("contact the service desk", "support ticket"),
    ("set up my account as a new starter", "new account"),
    ("install the printer driver", "printer driver"),
    ("unlock my locked account", "account"),
    ("connect a second monitor", "external monitor"),
    ("pair my bluetooth headset", "headset"),
    ("restore a deleted file", "deleted file"),
    ("back up my documents", "backup"),
    ("update my operating system", "system update"),
    ("install security updates", "antivirus"),
    ("get admin rights for an install", "admin rights"),
    ("sync my calendar", "calendar"),
    ("share a calendar with my team", "shared calendar"),
    ("set an out of office reply", "out of office message"),
    ("recover an email I deleted", "mailbox"),
    ("increase my mailbox quota", "mailbox quota"),
    ("access files when I am offline", "offline files"),
    ("use the webcam in a call", "webcam"),
    ("fix the docking station", "docking station"),
    ("charge my laptop", "laptop battery"),
    ("use the keyboard after a spill", "keyboard"),
    ("scan a document to email", "scanner"),
    ("connect to the guest network", "guest wifi"),
    ("change my multi-factor phone number", "MFA phone number"),
    ("get a new laptop", "laptop refresh"),
    ("encrypt a USB stick", "USB stick"),
    ("open a password protected PDF", "PDF"),
    ("clear the browser cache", "browser cache"),
    ("install the company certificate", "root certificate"),
    ("set up a distribution list", "mailing list"),
    ("book a meeting room", "room booking"),
    ("join a video meeting from my phone", "meeting app"),
    ("hear the other people in a call", "speakers"),
    ("log in to the HR portal", "HR portal"),
    ("reset my PIN", "PIN"),
    ("unlock my phone after too many attempts", "phone lock"),
    ("transfer files to a colleague", "file transfer"),
    ("find a file on the network share", "network share"),
    ("get access to a team folder", "folder permissions"),
    ("set up a shared mailbox", "shared mailbox"),
)

TEMPLATES: tuple[str, ...] = (
    "How do I {task}?",
    "how can i {task}",
    "I need to {task}, where do I start?",
    "What are the steps to {task} on Windows?",
    "Can you help me {task} on my Mac?",
    "is there a guide to {task} on linux",
    "I'm trying to {task} but it keeps failing",
    "Please explain how to {task}.",
    "What's the quickest way to {task}?",
    "I can't {task} since this morning",
    "who can help me {task}",
    "Is it possible to {task} from home?",
    "my {thing} is not working",
    "my {thing} stopped working after the update",
    "Something is wrong with my {thing}",
    "the {thing} keeps giving me an error",
    "Problem with {thing}",
    "{thing} broken again",
    "Any idea why my {thing} is so slow?",
    "I think my {thing} was set up wrong",
    "Where do I find the settings for my {thing}?",
    "Who do I ask about my {thing}?",
    "hi, quick question about the {thing}",
    "Need help with the {thing} asap",
)


def distinct_questions() -> list[str]:
    """Every template filled with every topic, interleaved (template i+k with topic k), each sentence once."""
    questions: list[str] = []
    seen: set[str] = set()
    for shift in range(len(TEMPLATES)):
        for k, (task, thing) in enumerate(TOPICS):
            template = TEMPLATES[(shift + k) % len(TEMPLATES)]
            text = template.format(task=task, thing=thing)
            if text[0].islower() and template[0] == "{":
                text = text[0].upper() + text[1:]
            if text.lower() not in seen:
                seen.add(text.lower())
                questions.append(text)
    return questions


if __name__ == "__main__":
    qs = distinct_questions()
    print(f"{len(qs)} distinct questions, e.g.:")
    for q in qs[:: max(1, len(qs) // 12)]:
        print("  ", q)
