"""Text utilities with one definition each, shared by editors, training and metrics.

**Tokenizer.** Words are the tokens of spaCy's rule-based English tokenizer (``spacy.blank("en")``), with
whitespace-only tokens dropped. Why this one: it is the tokenizer CEval uses for its token distance, so our
distances are comparable with its published numbers; it needs no model download; it splits clitics and
punctuation the way English readers expect (``don't`` -> ``do`` + ``n't``, ``great!`` -> ``great`` + ``!``);
and it runs at about 200k tokens/s on one core. We drop whitespace tokens (spaCy emits one for a double
space, CEval keeps them) because a change of spacing is not an edit of the text.

**Distance.** Word-level Levenshtein distance (insertions, deletions, substitutions of whole tokens) via
rapidfuzz, which accepts sequences of strings.

**Term matching.** :class:`TermMatcher` finds whole-word, case-insensitive occurrences of single- and
multi-word terms and replaces them keeping the case pattern of the matched text.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from .io import CONTROL_CHARACTERS, LONE_SURROGATES, NotText
from .records import Edit

MAX_TEXT_CHARS = 20_000  # longer texts get the row status skipped:too_long (--max-text-chars; 0 = no limit)


# C0 control characters other than tab, newline, vertical tab, form feed and carriage return, and DEL: a NUL or an
# escape byte in a text is corruption (a binary file pasted in, a truncated copy), and a NUL breaks CSV readers.
_CONTROL_CHARACTERS = re.compile(f"[{CONTROL_CHARACTERS}]")


def skip_reason(text: str | None, max_chars: int | None = MAX_TEXT_CHARS) -> str | None:
    """Why an input text is not edited (``not_text``, ``empty_text``, ``control_characters``, ``invalid_unicode``,
    ``too_long``), or ``None``.

    Each is a per-row status, so the other rows go on. The length limit keeps one huge row (a 1 MB text) from costing
    minutes and gigabytes in editors, BERTScore and the report."""
    if isinstance(text, NotText):
        return "not_text"
    if text is None or not text.strip():
        return "empty_text"
    if _CONTROL_CHARACTERS.search(text):
        return "control_characters"
    if LONE_SURROGATES.search(text):
        return "invalid_unicode"
    if max_chars and len(text) > max_chars:
        return "too_long"
    return None


def printable(text: str) -> str:
    """``text`` with each control character and lone surrogate that :func:`skip_reason` refuses replaced by U+FFFD,
    for output files."""
    return LONE_SURROGATES.sub("\ufffd", _CONTROL_CHARACTERS.sub("\ufffd", text))


@lru_cache(maxsize=4)
def _spacy_tokenizer(language: str = "en") -> Any:
    import spacy

    return spacy.blank(language).tokenizer


def tokenizer_signature(language: str = "en") -> str:
    """Name and version of the tokenizer, recorded in metric signatures (French and German: ``spacy-blank-fr``,
    ``spacy-blank-de``, whose rules split elisions such as "l'" and "qu'")."""
    from .language_registry import get_language
    from .models import package_version

    name = get_language(language).tokenizer
    return f"{name}:{package_version('spacy')}:nospace"


def tokenize(text: str, language: str = "en") -> list[str]:
    """Split ``text`` into word tokens (see the module docstring for the definition)."""
    return [tok.text for tok in _spacy_tokenizer(language)(text) if not tok.is_space]


def tokenize_batch(texts: Sequence[str], *, batch_size: int = 1000, language: str = "en") -> list[list[str]]:
    """Tokenize many texts; same result as :func:`tokenize` on each."""
    pipe = _spacy_tokenizer(language).pipe(texts, batch_size=batch_size)
    return [[tok.text for tok in doc if not tok.is_space] for doc in pipe]


TOKENS = ("words", "whitespace")  # how a word-level distance cuts a text (see word_distance)


def word_distance(a: str | Sequence[str], b: str | Sequence[str], language: str = "en", tokens: str = "words") -> int:
    """Word-level Levenshtein distance between two texts (or two token lists). ``tokens``: ``words`` (the language's
    tokenizer: punctuation apart, whitespace ignored, so "awful !" and "awful!" are 0 apart) or ``whitespace`` (the
    text split at whitespace, as paper 002 counts an added space: those two are 2 apart)."""
    split = (lambda t: t.split()) if tokens == "whitespace" else (lambda t: tokenize(t, language))
    tokens_a = split(a) if isinstance(a, str) else list(a)
    tokens_b = split(b) if isinstance(b, str) else list(b)
    return int(Levenshtein.distance(tokens_a, tokens_b))


_VOWEL_EXCEPTIONS = ("eu", "uni", "use", "usu", "one", "ukr")  # a European, a unicorn, a one-off: a "y"/"w" sound
_SILENT_H = ("hour", "honest", "honou", "heir")
_LETTER_VOWELS = frozenset("AEFHILMNORSX")  # letters whose name begins with a vowel sound: "an LGBT", "an MP"


def indefinite_article(word: str) -> str:
    """ "a" or "an" before ``word``, by sound: "an atheist", "a European", "an hour", and for an initialism read letter
    by letter, by its first letter's name: "an LGBT person", "a BBC show"."""
    first = word.split(" ")[0]
    if len(first) > 1 and first.isupper() and first.isalpha():
        return "an" if first[0] in _LETTER_VOWELS else "a"
    low = first.lower()
    if low.startswith(_SILENT_H):
        return "an"
    return "an" if low[:1] in "aeiou" and not low.startswith(_VOWEL_EXCEPTIONS) else "a"


def match_case(source: str, replacement: str) -> str:
    """Give ``replacement`` the case pattern of ``source``.

    ``MUSLIMS`` -> upper case; ``Muslim`` -> first letter upper; ``Anti-Muslim Bias`` (title case, several
    words) -> each word capitalised; lower-case ``source`` -> ``replacement`` exactly as written (so that
    a list entry such as ``Christian`` keeps its capital).
    """
    if not replacement:
        return replacement
    pattern = _case_pattern(source)
    if pattern == "upper":
        return replacement.upper()
    if pattern == "title":
        return " ".join(w[:1].upper() + w[1:] for w in replacement.split(" "))
    if pattern == "first":
        return replacement[:1].upper() + replacement[1:]
    return replacement


@lru_cache(maxsize=4096)
def _case_pattern(source: str) -> str:
    """``upper``, ``title``, ``first`` or ``as_written``: what :func:`match_case` copies from ``source`` (a swap asks
    once per variant, so per source word it is worked out once)."""
    letters = [c for c in source if c.isalpha()]
    if not letters:
        return "as_written"
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return "upper"
    words = source.split()
    if len(words) > 1 and all(w[:1].isupper() for w in words if w[:1].isalpha()):
        return "title"
    if source[:1].isupper():
        return "first"
    return "as_written"


# Characters that hide a term from a matcher, each mapped to the one it stands for, one for one (offsets keep): the
# long s ("Muſlims"), Turkish dotted and dotless i ("İslam": its lower() is two code points), the Kelvin sign,
# full-width Latin letters and digits ("ｇａｙ"), and Cyrillic and Greek letters that look like Latin ones ("Muslіm"
# with a Cyrillic і). Matchers read the folded text; edits keep the original characters around a match.
# Invisible characters that split a term without showing ("Mus\u00adlim", "g\u200bay": soft hyphen, zero-width
# space/non-joiner/joiner, word joiner, BOM, left-to-right/right-to-left marks and bidi embeddings and isolates) cannot
# be folded one for one: a text holding any is matched with them left out, and each match's span mapped back onto the
# original (the edit replaces them with the term; those outside a match stay). fold/2 added these.
TEXT_FOLDING = "fold/2"
INVISIBLE = frozenset(
    "\u00ad\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)
_INVISIBLE_RE = re.compile("[" + "".join(sorted(INVISIBLE)) + "]")
_FOLD = str.maketrans(
    {"ſ": "s", "İ": "I", "ı": "i", "\u212a": "K"}
    | {chr(0xFF01 + k): chr(0x21 + k) for k in range(0x5E)}
    | dict(zip("аеорсухіјѕАВЕКМНОРСТХІЈЅ", "aeopcyxijsABEKMHOPCTXIJS", strict=True))
    | dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧο", "ABEZHIKMNOPTYXo", strict=True))
)


def fold_for_matching(text: str) -> str:
    """``text`` with the characters that hide terms replaced one for one (same length, same offsets)."""
    return text.translate(_FOLD)


def matchable(folded: str) -> tuple[str, list[int], list[int]]:
    """The text terms are matched in: ``folded`` (:func:`fold_for_matching`) without its invisible characters and in
    canonical composition (NFC: "musulma\u0301n" as "musulmán", so a term written either way is found in a text
    written either way), with, for each of its characters, the span of ``folded`` it stands for (``starts``,
    ``ends``: a match maps back to the original's offsets, its combining marks included). A text whose pieces do not
    compose on their own (a rare script whose letters compose across base characters) is matched uncomposed."""
    starts: list[int] = []
    ends: list[int] = []
    pieces: list[str] = []
    segment: list[str] = []
    begin = 0

    def close(end: int) -> None:
        if segment:
            composed = unicodedata.normalize("NFC", "".join(segment))
            pieces.append(composed)
            starts.extend([begin] * len(composed))
            ends.extend([end] * len(composed))
            segment.clear()

    last = -1
    for i, char in enumerate(folded):
        if char in INVISIBLE:
            continue
        if unicodedata.combining(char) == 0:  # a base character starts a piece; its marks follow it
            close(last + 1)
            begin = i
        segment.append(char)
        last = i
    close(last + 1)
    visible = "".join(pieces)
    if visible != unicodedata.normalize("NFC", visible):  # the pieces compose across each other: match as written
        kept = [i for i, char in enumerate(folded) if char not in INVISIBLE]
        return "".join(folded[i] for i in kept), kept, [i + 1 for i in kept]
    return visible, starts, ends


@dataclass(frozen=True)
class TermMatch:
    """One occurrence of a term: ``text[start:end]`` matched the listed ``term``."""

    start: int
    end: int
    text: str
    term: str


def _term_pattern(term: str) -> str:
    parts = term.split()
    return r"\s+".join(re.escape(part) for part in parts)


class TermMatcher:
    """Whole-word, case-aware matcher for single- and multi-word terms.

    * Boundaries: a match may not touch a letter, digit or underscore on either side, so ``gay`` does not
      match inside ``gayety`` but does match ``gay-friendly`` and ``gay's``.
    * Multi-word terms match across any run of whitespace (``anti-christian  bias``).
    * Longest term wins where terms overlap (``black women`` before ``black``).
    * Case-insensitive unless ``case_sensitive=True``; the listed spelling is reported as ``term``.
    """

    def __init__(self, terms: Iterable[str], *, case_sensitive: bool = False) -> None:
        self.case_sensitive = case_sensitive
        self._canonical: dict[str, str] = {}
        self._folded: dict[str, str] = {}  # matches whose lower() is not a listed term's (Unicode case folding)
        for raw in terms:
            term = unicodedata.normalize("NFC", " ".join(str(raw).split()))
            if not term:
                raise ValueError("terms must not be empty or whitespace")
            key = term if case_sensitive else term.lower()
            self._canonical.setdefault(key, term)
        if not self._canonical:
            raise ValueError("a TermMatcher needs at least one term")
        ordered = sorted(self._canonical.values(), key=lambda t: (-len(t), t))
        body = "|".join(_term_pattern(t) for t in ordered)
        flags = 0 if case_sensitive else re.IGNORECASE
        self._regex = re.compile(rf"(?<!\w)(?:{body})(?!\w)", flags)

    @property
    def terms(self) -> list[str]:
        """The distinct terms, as first listed."""
        return list(self._canonical.values())

    def _key(self, matched: str) -> str:
        normal = " ".join(matched.split())
        return normal if self.case_sensitive else normal.lower()

    def _term_of(self, matched: str) -> str:
        """The listed term a match stands for. The regex folds case as Unicode does ("İslam", "Muſlims" match islam,
        muslims) while ``str.lower`` does not ("İ".lower() is two code points, "ſ" stays "ſ"): a match lower() cannot
        key is found by matching it against each term, once, and remembered."""
        key = self._key(matched)
        term = self._canonical.get(key) or self._folded.get(key)
        if term is None:
            flags = 0 if self.case_sensitive else re.IGNORECASE
            term = next(t for t in self._canonical.values() if re.fullmatch(_term_pattern(t), matched, flags))
            self._folded[key] = term
        return term

    def find(self, text: str) -> list[TermMatch]:
        """All non-overlapping matches, left to right, in the folded text (:func:`fold_for_matching`, invisible
        characters left out): a match's ``text`` is its folded surface ("Muslims" for "Muſlims"), its span the
        original's (with any invisible characters inside it)."""
        if text.isascii():  # nothing to fold and nothing invisible: every character the folding maps is not ASCII
            return [
                TermMatch(m.start(), m.end(), m.group(0), self._term_of(m.group(0))) for m in self._regex.finditer(text)
            ]
        folded = fold_for_matching(text)
        if _INVISIBLE_RE.search(folded) is None and unicodedata.is_normalized("NFC", folded):
            return [
                TermMatch(m.start(), m.end(), m.group(0), self._term_of(m.group(0)))
                for m in self._regex.finditer(folded)
            ]
        visible, starts, ends = matchable(folded)
        return [
            TermMatch(starts[m.start()], ends[m.end() - 1], m.group(0), self._term_of(m.group(0)))
            for m in self._regex.finditer(visible)
        ]

    def contains(self, text: str) -> bool:
        """Whether any term occurs in ``text``."""
        if text.isascii():
            return self._regex.search(text) is not None
        folded = fold_for_matching(text)
        if _INVISIBLE_RE.search(folded) is None and unicodedata.is_normalized("NFC", folded):
            return self._regex.search(folded) is not None  # as find(): the per-character walk only where it is needed
        return self._regex.search(matchable(folded)[0]) is not None

    def replace(
        self,
        text: str,
        replacement: Mapping[str, str] | Callable[[TermMatch], str | None],
        *,
        keep_case: bool = True,
    ) -> tuple[str, tuple[Edit, ...]]:
        """Replace matches; returns the new text and the edits (spans in the *original* text).

        ``replacement`` maps a listed term (any case) to its replacement, or is a function of the match;
        a term missing from the mapping, or a function returning ``None``, leaves that match unchanged.
        """
        if callable(replacement):
            choose = replacement
        else:
            table = {(k if self.case_sensitive else k.lower()): v for k, v in replacement.items()}

            def choose(match: TermMatch) -> str | None:
                return table.get(match.term if self.case_sensitive else match.term.lower())

        pieces: list[str] = []
        edits: list[Edit] = []
        cursor = 0
        for match in self.find(text):
            new = choose(match)
            if new is None:
                continue
            if keep_case:
                new = match_case(match.text, new)
            pieces.append(text[cursor : match.start])
            pieces.append(new)
            edits.append(Edit(match.start, match.end, text[match.start : match.end], new))
            cursor = match.end
        pieces.append(text[cursor:])
        return "".join(pieces), tuple(edits)


_TAG = re.compile(r"<(?=[A-Za-z/!?])")


#: a link's target in a script scheme: ``[x](javascript:...)``, ``[x]: javascript:...`` (with spaces or an ``<``)
_SCRIPT_LINK = re.compile(r"\]\s*(?P<open>\(|:)(?=\s*<?\s*(?:javascript|vbscript|data|file)\s*:)", re.IGNORECASE)


def md_text(text: str) -> str:
    """Text from the data (a functionality, a target, a term, a model's response) made inert in Markdown: a ``<`` that
    would open an HTML tag (``<script>``, ``</b>``, ``<!--``) becomes ``&lt;``, and a link to a script scheme
    (``[x](javascript:...)``, ``[x]: javascript:...``) loses its bracket, so it is text; "p < 0.05" and "[+5.0, +8.4]"
    stay as written."""
    text = _SCRIPT_LINK.sub(lambda m: "\\]" + ("\\(" if m["open"] == "(" else ":"), text)
    return _TAG.sub("&lt;", text)
