"""A Polyjuice-style editor (paper 000 §4.2 and App. B.4; paper 002's Polyjuice editor): a causal LM fine-tuned on
Polyjuice's format is prompted with the text, a control code and the text with ``[BLANK]`` spans, and writes one
answer per blank. Per input, 16 generations: 8 free (the editor picks a random span of one to three words to blank,
the control code rotates) and 8 directed (every word-list term of the attribute blanked). Answers ``[EMPTY]`` delete
the span; leftover ``BLANK``/``EMPTY`` tokens are removed, as paper 000 did before rating. ``counterfair generate``
filters and ranks the 16 like the LLM rewrites (BLEU, BERTScore, attribute classifier; up to 5 attempts).

The prompt format, as Polyjuice's model was trained on it: ``{text} <|perturb|> [{code}] {blanked text} [SEP]``; the
model continues with ``{answer} [ANSWER] {answer} [ANSWER] ...``. Polyjuice's own weights (``uw-hai/polyjuice``) load
from a local directory or the user's Hugging Face cache; any causal LM works, but only one trained on this format
writes useful answers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ..jsontypes import JSONObject
from ..lexicons.attributes import Attribute
from ..llm import Completion, SamplingParams, sample_all
from ..llm.openai_http import LLMRequestsFailed
from ..progress import NullProgress, ProgressHook
from ..records import Candidate
from .base import EditorBase

CONTROL_CODES = ("negation", "quantifier", "shuffle", "lexical", "resemantic", "insert", "delete", "restructure")
PERTURB, SEP, ANSWER, BLANK, EMPTY = "<|perturb|>", "[SEP]", "[ANSWER]", "[BLANK]", "[EMPTY]"
_LEFTOVER = re.compile(r"\[?\b(?:BLANK|EMPTY|ANSWER|SEP)\b\]?")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def polyjuice_prompt(text: str, code: str, blanked: str) -> str:
    return f"{text} {PERTURB} [{code}] {blanked} {SEP}"


def fill_blanks(blanked: str, generated: str) -> str | None:
    """The blanked text with each ``[BLANK]`` replaced by the next answer of ``generated`` (``[EMPTY]``: nothing);
    ``None`` when the model wrote fewer answers than there are blanks."""
    body = generated.split(SEP)[0].split(PERTURB)[0]
    answers = [a.strip() for a in body.split(ANSWER)]
    if len(answers) > 1 and not answers[-1]:
        answers = answers[:-1]  # the text after the last [ANSWER]
    n_blanks = blanked.count(BLANK)
    if n_blanks == 0 or len(answers) < n_blanks or ANSWER not in body:
        return None
    out = blanked
    for answer in answers[:n_blanks]:
        out = out.replace(BLANK, "" if answer == EMPTY else answer, 1)
    return clean(out)


def clean(text: str) -> str:
    """Leftover control tokens removed (``BLANK``, ``[EMPTY]``, ...), spaces normalised."""
    text = _LEFTOVER.sub("", text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split()))


class PolyjuiceEditor(EditorBase):
    """16 Polyjuice generations per input (``n_free`` + ``n_blank``); :meth:`sample` takes an attempt number for
    reruns, like :class:`~counterfair.editors.llm_rewrite.LLMRewriteEditor`."""

    name: ClassVar[str] = "polyjuice"

    def __init__(
        self,
        lm: Any,
        attribute: Attribute,
        *,
        n_free: int = 8,
        n_blank: int = 8,
        temperature: float = 1.0,
        top_k: int = 40,
        max_tokens: int = 48,
        seed: int = 0,
        codes: Sequence[str] = CONTROL_CODES,
    ) -> None:
        self.lm = lm
        self.attribute = attribute
        self._matcher = attribute.matcher()
        self.n_free, self.n_blank = n_free, n_blank
        self.temperature, self.top_k, self.max_tokens, self.seed = temperature, top_k, max_tokens, seed
        self.codes = tuple(codes)

    @property
    def n(self) -> int:
        return self.n_free + self.n_blank

    def params(self) -> JSONObject:
        return {
            "attribute": self.attribute.name,
            "n_free": self.n_free,
            "n_blank": self.n_blank,
            "temperature": self.temperature,
            "top_k": self.top_k,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "codes": list(self.codes),
            "lm": self.lm.model_id,
            "format": "polyjuice@1",
        }

    def blank_terms(self, text: str) -> str | None:
        """Every attribute term replaced by ``[BLANK]`` (adjacent terms share one); ``None`` without a term."""
        pieces: list[str] = []
        cursor = 0
        for match in self._matcher.find(text):
            if match.start < cursor:
                continue
            gap = text[cursor : match.start]
            if pieces and pieces[-1] == BLANK and not gap.strip():
                cursor = match.end  # "Muslim women" with both listed: one blank
                continue
            pieces += [gap, BLANK]
            cursor = match.end
        if not pieces:
            return None
        return "".join(pieces) + text[cursor:]

    def free_blanks(self, text: str, count: int, seed: int) -> list[str]:
        """``count`` versions of ``text`` with one random span of one to three words blanked."""
        words = text.split()
        rng = np.random.default_rng([seed, int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16)])
        out = []
        for _ in range(count):
            width = int(rng.integers(1, min(3, len(words)) + 1)) if words else 0
            start = int(rng.integers(0, len(words) - width + 1)) if words else 0
            out.append(" ".join([*words[:start], BLANK, *words[start + width :]]))
        return out

    def prompts(self, text: str, attempt: int = 0) -> list[tuple[str, str, str]]:
        """(prompt, blanked text, mode) of every generation for ``text``: the free ones, then the directed ones."""
        seed = self.seed + 1000 * attempt
        out = []
        for i, blanked in enumerate(self.free_blanks(text, self.n_free, seed)):
            code = self.codes[(i + attempt) % len(self.codes)]
            out.append((polyjuice_prompt(text, code, blanked), blanked, "free"))
        directed = self.blank_terms(text)
        if directed is not None:
            for i in range(self.n_blank):
                code = self.codes[(i + attempt) % len(self.codes)]
                out.append((polyjuice_prompt(text, code, directed), directed, "blank"))
        return out

    def fits(self, text: str) -> bool:
        longest = max((p for p, _, _ in self.prompts(text)), key=len)
        return self.lm.count_tokens(longest) + self.max_tokens <= self.lm.context_size()

    def sample(
        self,
        texts: Sequence[str],
        *,
        attempt: int = 0,
        progress: ProgressHook | None = None,
        failures: dict[int, str] | None = None,
        sample_progress: ProgressHook | None = None,
    ) -> list[list[Candidate]]:
        """Every generation of every text in one LM call (one sample per prompt)."""
        if not texts:
            return []
        seed = self.seed + 1000 * attempt
        plans = [self.prompts(text, attempt) for text in texts]
        flat = [p for plan in plans for p, _, _ in plan]
        params = SamplingParams(
            n=1, temperature=self.temperature, top_k=self.top_k, max_tokens=self.max_tokens, seed=seed
        )
        try:
            answers: list[list[Completion] | None] = list(
                sample_all(self.lm, flat, params, chat=False, progress=sample_progress)
            )
        except LLMRequestsFailed as err:
            if failures is None:
                raise
            answers = err.completed
            offsets = np.cumsum([0] + [len(plan) for plan in plans])
            for j in err.failures:
                failures.setdefault(int(np.searchsorted(offsets, j, side="right") - 1), err.failures[j])
        out: list[list[Candidate]] = []
        at = 0
        for plan in plans:
            mine = []
            for i, (_, blanked, mode) in enumerate(plan):
                completion = (answers[at + i] or [Completion("", "error")])[0]
                mine.append(self._candidate(completion, blanked, mode, attempt, seed, i))
            at += len(plan)
            out.append(mine)
        (progress or NullProgress()).advance(len(texts))
        return out

    def _candidate(self, completion: Completion, blanked: str, mode: str, attempt: int, seed: int, i: int) -> Candidate:
        filled = fill_blanks(blanked, completion.text)
        meta = {"attempt": attempt, "sample": i, "mode": mode, "blanked": blanked, "raw": completion.text}
        meta |= {"finish_reason": completion.finish_reason, "parsed": filled is not None}
        return self.candidate(filled or "", seed=seed + i, model_ids=(self.lm.model_id,), meta=meta)

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        return self.sample(texts, attempt=0, progress=progress)
