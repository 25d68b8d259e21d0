"""Language detection on short IT-support messages: accuracy, English false alarms, memory and latency.

    python bench/language.py            # py3langid as deskmate runs it (nodes/support/language.py thresholds)
    python bench/language.py --compare  # also lingua-language-detector and pycld2, when they are installed

The messages are deskmate's own (tests/fixtures/dialogue/languages.json): 15 per language in German, French,
Spanish, Italian, Portuguese, Dutch, Polish and Swedish, 30 English ones (some with foreign names or quoted
foreign error text) that must stay English, and short replies ("ok", "VPN?", "danke") that must not be judged.
A detector "recognises" a message when it names the right language at ≥ MIN_PROBABILITY (lingua's
probabilities are relative across languages, so its row is shown at several thresholds).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SENTENCES = json.loads((REPO / "tests" / "fixtures" / "dialogue" / "languages.json").read_text())
FOREIGN = ("de", "fr", "es", "it", "pt", "nl", "pl", "sv")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name: str, threshold: float) -> dict:
    """One detector in this (fresh) process: memory is the growth of the peak resident set while it loads."""
    from nodes.support.language import _LETTER_WORD, MIN_WORDS

    before, started = rss_mb(), time.perf_counter()
    detect = BUILDERS[name]()
    detect("warm up the model once")
    load_s, memory = time.perf_counter() - started, rss_mb() - before

    def language(text: str) -> str:
        if len(_LETTER_WORD.findall(text)) < MIN_WORDS:
            return ""
        code, probability = detect(text)
        return code if code != "en" and probability >= threshold else ""

    recognised = sum(language(t) == code for code in FOREIGN for t in SENTENCES[code])
    total = sum(len(SENTENCES[code]) for code in FOREIGN)
    english = [t for t in SENTENCES["en"] if language(t)]
    short = [t for t in SENTENCES["short"] if language(t)]
    texts = [t for code in (*FOREIGN, "en") for t in SENTENCES[code]]
    started = time.perf_counter()
    for text in texts * 5:
        detect(text)
    per_ms = (time.perf_counter() - started) * 1000 / (5 * len(texts))
    return {
        "detector": name,
        "threshold": threshold,
        "recognised": f"{recognised}/{total}",
        "english_misread": f"{len(english)}/{len(SENTENCES['en'])}",
        "short_misread": f"{len(short)}/{len(SENTENCES['short'])}",
        "load_s": round(load_s, 2),
        "memory_mb": round(memory),
        "ms": round(per_ms, 3),
    }


def py3langid():
    from app.adapters.language import Py3LangidDetector

    return Py3LangidDetector().detect


def lingua(low_accuracy: bool):
    def build():
        from lingua import Language, LanguageDetectorBuilder

        names = [
            "ENGLISH",
            "GERMAN",
            "FRENCH",
            "SPANISH",
            "ITALIAN",
            "PORTUGUESE",
            "DUTCH",
            "POLISH",
            "SWEDISH",
            "DANISH",
            "BOKMAL",
            "FINNISH",
            "CZECH",
            "TURKISH",
            "ROMANIAN",
            "HUNGARIAN",
        ]
        builder = LanguageDetectorBuilder.from_languages(*[getattr(Language, n) for n in names])
        detector = (
            (builder.with_low_accuracy_mode() if low_accuracy else builder).with_preloaded_language_models().build()
        )

        def detect(text):
            top = detector.compute_language_confidence_values(text)[0]
            return top.language.iso_code_639_1.name.lower(), float(top.value)

        return detect

    return build


def pycld2():
    import pycld2 as cld

    def detect(text):
        _, _, details = cld.detect(text)
        return details[0][1], details[0][2] / 100

    return detect


BUILDERS = {
    "py3langid (deskmate)": py3langid,
    "pycld2": pycld2,
    "lingua low-accuracy": lingua(True),
    "lingua high-accuracy": lingua(False),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", action="store_true", help="also the other detectors, if installed")
    args = parser.parse_args()
    from nodes.support.language import MIN_PROBABILITY

    runs = [("py3langid (deskmate)", MIN_PROBABILITY)]
    if args.compare:
        runs += [
            ("pycld2", MIN_PROBABILITY),
            ("lingua low-accuracy", 0.5),
            ("lingua high-accuracy", 0.5),
            ("lingua high-accuracy", 0.9),
        ]
    print(
        f"{'detector':<24} {'thr':>4} {'recognised':>10} {'EN misread':>10} {'short':>6} {'load s':>6} "
        f"{'MB':>5} {'ms/msg':>7}"
    )
    for name, threshold in runs:
        try:  # a fresh process per detector, so each one's memory is its own
            with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
                r = pool.submit(measure, name, threshold).result()
        except ImportError as exc:
            print(f"{name:<24} not installed ({exc.name})")
            continue
        print(
            f"{r['detector']:<24} {r['threshold']:>4} {r['recognised']:>10} {r['english_misread']:>10} "
            f"{r['short_misread']:>6} {r['load_s']:>6} {r['memory_mb']:>5} {r['ms']:>7}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
