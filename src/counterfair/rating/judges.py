"""LLM judges: the four rating questions of paper 000 App. C, and CEval's text-quality scores (§3.1.2).

Each judge asks for a JSON object, parses it strictly (every field present, every value allowed), retries with a
little sampling when the answer does not parse, and keeps every raw answer. A pair whose answers never parse gets
status ``failed:unparseable`` and no values, never a made-up score such as -1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypedDict

from ..llm import LLM
from ..llm.base import ask_until_parsed
from .store import FLUENT, REFERENCE, SAME_LABEL

_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)

RATING_FIELDS: dict[str, Callable[[Any], bool]] = {
    "fluent": lambda v: v in FLUENT,
    "reference": lambda v: v in REFERENCE,
    "same_label": lambda v: v in SAME_LABEL,
    "meaning": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 4,
}
QUALITY_FIELDS: dict[str, Callable[[Any], bool]] = {
    name: (lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 5)
    for name in ("grammar", "cohesiveness", "likability", "fluency")
}


def parse_answer(raw: str, fields: dict[str, Callable[[Any], bool]]) -> dict[str, Any] | None:
    """The first JSON object in ``raw`` if it has every field with an allowed value (strings lower-cased)."""
    for match in _OBJECT.finditer(raw):
        try:
            data = json.loads(match.group(0))
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        out = {}
        for name, ok in fields.items():
            value = data.get(name)
            if isinstance(value, str):
                value = value.strip().lower()
                if value.isdigit():
                    value = int(value)
            if not ok(value):
                return None
            out[name] = value
        return out
    return None


@dataclass
class Judgement:
    values: dict[str, Any] | None
    raw: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return "ok" if self.values is not None else "failed:unparseable"


JUDGE_CHUNK = 32  # pairs asked together (a batching backend answers them concurrently); stored after each chunk


class _Judge:
    fields: ClassVar[dict[str, Callable[[Any], bool]]] = {}

    def __init__(self, llm: LLM, *, retries: int = 2, max_tokens: int = 96) -> None:
        self.llm = llm
        self.retries = retries
        self.max_tokens = max_tokens

    def _ask(self, conversations: Sequence[list[dict[str, str]]]) -> list[Judgement]:
        answers = ask_until_parsed(
            self.llm,
            conversations,
            lambda answer: parse_answer(answer, self.fields),
            retries=self.retries,
            max_tokens=self.max_tokens,
        )
        return [Judgement(values, raw) for values, raw in answers]


class RatingJudge(_Judge):
    """Answers paper 000's four rater questions for an (original, counterfactual) pair."""

    fields: ClassVar[dict[str, Callable[[Any], bool]]] = RATING_FIELDS

    def judge(self, original: str, counterfactual: str, subject: str) -> Judgement:
        return self.judge_many([(original, counterfactual, subject)])[0]

    def judge_many(self, items: Sequence[tuple[str, str, str]]) -> list[Judgement]:
        """Judgements of (original, counterfactual, subject) triples, asked together."""
        return self._ask([self.question(*item) for item in items])

    @staticmethod
    def question(original: str, counterfactual: str, subject: str) -> list[dict[str, str]]:
        instructions = (
            f"You compare an original internet comment with a rewritten version meant to no longer refer to {subject}. "
            "Answer four questions about the rewritten text:\n"
            "fluent: does it read as natural, consistent text? yes, no or unsure.\n"
            f"reference: does it still refer to {subject}? explicit (names them or their religion, identity or group), "
            "implicit (alludes to them, e.g. through a symbol, practice or law tied to them) or none. "
            "References to other groups do not count.\n"
            "same_label: should a toxicity classifier give both texts the same label (toxic or not)? "
            "yes, no or unsure.\n"
            "meaning: how similar in meaning to the original, 0-4: 4 = only the necessary words changed; 3 = a similar "
            "or neutral substitute or a minor rewording; 2 = an extra addition or removal, or a change of meaning; "
            "1 = some resemblance with major changes; 0 = unrelated.\n"
            "Reply with JSON only, in this form, each value one of the options above: "
            '{"fluent": ..., "reference": ..., "same_label": ..., "meaning": ...}'
        )
        return [
            {
                "role": "system",
                "content": "You are a careful annotator. Reply with one JSON object and nothing else.",
            },
            {"role": "user", "content": f"{instructions}\n\nOriginal: {original}\nRewritten: {counterfactual}"},
        ]


class QualityJudge(_Judge):
    """CEval's text-quality scores (grammar, cohesiveness, likability, fluency; 1-5) of one text."""

    fields: ClassVar[dict[str, Callable[[Any], bool]]] = QUALITY_FIELDS

    def judge(self, text: str) -> Judgement:
        return self.judge_many([text])[0]

    def judge_many(self, texts: Sequence[str]) -> list[Judgement]:
        """Quality judgements of several texts, asked together."""
        return self._ask([self.question(text) for text in texts])

    @staticmethod
    def question(text: str) -> list[dict[str, str]]:
        instructions = (
            "Rate the text below from 1 (very poor) to 5 (excellent) on four aspects:\n"
            "grammar: correct syntax, grammar and punctuation;\n"
            "cohesiveness: ideas follow each other logically and consistently;\n"
            "likability: how pleasant the text is to read (tone, style);\n"
            "fluency: it reads naturally and smoothly.\n"
            "Reply with JSON only, one integer from 1 to 5 per aspect, in this form: "
            '{"grammar": G, "cohesiveness": C, "likability": L, "fluency": F}'
        )
        return [
            {"role": "system", "content": "You are a careful text-quality rater. Reply with one JSON object only."},
            {"role": "user", "content": f"{instructions}\n\nText: {text}"},
        ]


class JudgedStore(TypedDict):
    """What ``counterfair rate judge`` did: the LLM rater's name, pairs judged, pairs without a usable answer, log."""

    rater: str
    judged: int
    failed: int
    log: str


def judge_store(store: Any, llm: LLM, *, subject_of: Callable[[str], str], progress: Any = None) -> JudgedStore:
    """Let the LLM rate every pair of a rating project it has not rated; ratings are stored with source 'llm'."""
    from ..progress import NullProgress
    from .store import Rating

    hook = progress or NullProgress()
    rater = f"llm:{llm.model_id}"
    done = {r.pair_id for r in store.ratings() if r.rater == rater}
    pairs = store.pairs()
    todo = pairs[~pairs["pair_id"].isin(done)]
    judge = RatingJudge(llm)
    log_path = store.directory / "llm_judgements.jsonl"
    failed = 0
    hook.start(f"LLM judge ({llm.model_id})", len(todo))
    rows = list(todo.itertuples())
    with open(log_path, "a", encoding="utf-8") as log:
        for start in range(0, len(rows), JUDGE_CHUNK):
            chunk = rows[start : start + JUDGE_CHUNK]
            verdicts = judge.judge_many([(p.original, p.counterfactual, subject_of(p.attribute)) for p in chunk])
            for pair, verdict in zip(chunk, verdicts, strict=True):
                record = {
                    "pair_id": pair.pair_id,
                    "rater": rater,
                    "status": verdict.status,
                    "values": verdict.values,
                    "raw": verdict.raw,
                }
                log.write(json.dumps(record, ensure_ascii=False) + "\n")
                if verdict.values is None:
                    failed += 1
                    continue
                values = verdict.values
                store.add(
                    Rating(
                        pair.pair_id,
                        rater,
                        values["fluent"],
                        values["reference"],
                        values["same_label"],
                        int(values["meaning"]),
                    ),
                    source="llm",
                    raw=verdict.raw[-1],
                )
            log.flush()
            hook.advance(len(chunk))
    return {"rater": rater, "judged": len(todo), "failed": failed, "log": str(log_path)}
