"""Editors that aim to flip a classifier's label with a minimal, fluent edit (paper 002 §4, paper 004 §4).

* :class:`SynonymSwapEditor` (TextFooler-like) — word importance by deletion; WordNet synonyms of the same part of
  speech (spaCy tags) whose word vectors are similar enough (cosine >= 0.5, spaCy's medium English vectors); stop
  words and already-changed words are protected; greedy by importance until the label flips.
* :class:`MaskFillEditor` (MiCE-like) — importance by occlusion (MiCE uses gradients; occlusion works with any
  classifier, so it is the only method here); the most important fraction of the words is masked and an
  instruction LLM fills the blanks (no masked LM exists on these machines); binary search over the masked
  fraction for the smallest edit that flips; every fill tried is a candidate.
* :class:`LLMFlipEditor` — CEval's LLM baseline: a one-shot prompt asking for a minimal change that makes the label
  ``<target>``; with ``in_loop=True`` the classifier's verdict is fed back until the label flips or the budget ends.
* :class:`ExternalEditor` — counterfactuals produced elsewhere (MiCE, GBDA, CREST, Polyjuice: e.g. CEval's files),
  looked up by their source text.

The target is the contrast label of the classifier's prediction: the other label for binary classifiers, the second
most probable one otherwise (paper 002's rule). Every candidate records whether it flipped and the probabilities.
"""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..classifiers import CachedClassifier
from ..errors import ConfigError, InputError
from ..jsontypes import JSONObject
from ..llm import SamplingParams
from ..metrics.functional import contrast_labels, flipped_one
from ..progress import NullProgress, ProgressHook
from ..records import Candidate
from ..text import match_case
from .base import EditorBase

_WORDNET_POS = {"NOUN": ["n"], "VERB": ["v"], "ADJ": ["a", "s"], "ADV": ["r"]}
_FRIENDLY = {
    "pos": "positive",
    "positive": "positive",
    "neg": "negative",
    "negative": "negative",
    "toxic": "toxic",
    "non-toxic": "not toxic",
    "nontoxic": "not toxic",
    "1": "positive",
    "0": "negative",
}


def label_name(label: str, names: dict[str, str] | None = None) -> str:
    """A human description of a classifier label, for prompts ("POS" -> "positive")."""
    if names and label in names:
        return names[label]
    return _FRIENDLY.get(label.lower(), label)


def _spacy_small() -> Any:
    from ..models import spacy_small

    return spacy_small(("ner", "lemmatizer", "parser"))


def _spacy_vectors() -> Any:
    from ..models import spacy_vectors

    return spacy_vectors(("parser", "ner", "tagger", "lemmatizer", "attribute_ruler", "senter", "tok2vec")).vocab


@dataclass
class _Target:
    original: int
    target: int
    proba: np.ndarray


# one text's search: yields LLM requests (messages, sampling parameters), is sent each answer, returns its candidates
Steps = Generator[tuple[list[dict[str, str]], SamplingParams], str, list[Candidate]]


class _ClassifierEditor(EditorBase):
    def __init__(self, classifier: CachedClassifier) -> None:
        if len(classifier.labels) < 2:
            raise ConfigError(f"classifier {classifier.spec!r} has one label; there is nothing to flip to")
        self.classifier = classifier

    def targets(self, texts: Sequence[str]) -> list[_Target]:
        proba = self.classifier.predict_proba(list(texts))
        if not np.isfinite(proba).all():
            raise InputError("the classifier gave no probability for some inputs; they cannot be edited")
        contrast = contrast_labels(proba)
        return [_Target(int(p.argmax()), int(c), p) for p, c in zip(proba, contrast, strict=True)]

    def scored(self, text: str, target: _Target, **meta: Any) -> Candidate:
        p = self.classifier.predict_proba([text])[0]
        return self.candidate(
            text,
            meta={
                "flipped": flipped_one(target.proba, p),
                "p_target": float(p[target.target]),
                "p_original_label": float(p[target.original]),
                "target_label": self.classifier.labels[target.target],
                **meta,
            },
        )

    def progress_label(self) -> str:
        return self.name

    def edit_one(self, text: str, target: _Target) -> list[Candidate]:
        raise NotImplementedError

    def fits(self, text: str) -> bool:
        """Whether this editor can take ``text`` at all (LLM editors: whether prompt and answer fit the context)."""
        return True

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start(self.progress_label(), len(texts))
        out = []
        for text, target in zip(texts, self.targets(texts), strict=True):
            # a text that does not fit gets no candidate (callers that need the reason ask fits)
            out.append(self.edit_one(text, target) if self.fits(text) else [])
            hook.advance(1)
        return out


class _LLMClassifierEditor(_ClassifierEditor):
    """A classifier-guided editor whose edits come from an instruction LLM (mask-and-fill, LLM flip)."""

    def __init__(
        self, classifier: CachedClassifier, llm: Any, *, label_names: dict[str, str] | None, seed: int
    ) -> None:
        super().__init__(classifier)
        self.llm = llm
        self.label_names = label_names
        self.seed = seed

    def own_params(self) -> JSONObject:
        return {}

    def params(self) -> JSONObject:
        return {"classifier": self.classifier.spec, "llm": self.llm.model_id, **self.own_params(), "seed": self.seed}

    def prompt_tokens(self, messages: Sequence[dict[str, str]]) -> int:
        return sum(self.llm.count_tokens(m["content"]) + 8 for m in messages)  # + chat-template markers

    def fits(self, text: str) -> bool:
        """Whether the largest prompt this editor builds for ``text``, plus its answer, fits the LLM's context."""
        raise NotImplementedError

    def steps(self, text: str, target: _Target) -> Steps:
        """The search for one text as a generator: it yields each LLM request (messages, sampling parameters), is
        sent the answer's text, and returns the candidates."""
        raise NotImplementedError

    def edit_one(self, text: str, target: _Target) -> list[Candidate]:
        return self.edit_many([text], [target])[0]

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        hook = progress or NullProgress()
        hook.start(self.progress_label(), len(texts))
        return self.edit_many(texts, self.targets(texts), hook)

    def edit_many(
        self, texts: Sequence[str], targets: Sequence[_Target], hook: ProgressHook | None = None
    ) -> list[list[Candidate]]:
        """Every text's search runs in step with the others: each round sends the pending requests of all texts
        in one LLM call per distinct set of sampling parameters, so the backend answers them concurrently."""
        from ..llm import sample_all

        hook = hook or NullProgress()
        out: list[list[Candidate]] = [[] for _ in texts]
        pending: dict[int, tuple[Steps, tuple[list[dict[str, str]], Any]]] = {}

        def advance(k: int, search: Steps, answer: str | None) -> None:
            try:
                request = next(search) if answer is None else search.send(answer)
            except StopIteration as finished:
                out[k] = list(finished.value)
                pending.pop(k, None)
                hook.advance(1)
            else:
                pending[k] = (search, request)

        for k, (text, target) in enumerate(zip(texts, targets, strict=True)):
            if self.fits(text):  # a text that does not fit gets no candidate (callers that need the reason ask fits)
                advance(k, self.steps(text, target), None)
            else:
                hook.advance(1)
        while pending:
            by_params: dict[Any, list[int]] = {}
            for k, (_, (_, params)) in pending.items():
                by_params.setdefault(params, []).append(k)
            answers: dict[int, str] = {}
            for params, ks in by_params.items():
                replies = sample_all(self.llm, [pending[k][1][0] for k in ks], params, chat=True)
                answers.update((k, reply[0].text) for k, reply in zip(ks, replies, strict=True))
            for k, answer in answers.items():
                advance(k, pending[k][0], answer)
        return out

    def widest_label(self) -> str:
        """The label name that costs the most tokens in a prompt (for the worst case in :meth:`fits`)."""
        names = [label_name(lab, self.label_names) for lab in self.classifier.labels]
        return max(names, key=self.llm.count_tokens)


def _tokens(text: str) -> list[Any]:
    return list(_spacy_small()(text))


def _join(tokens: Sequence[Any], replace: dict[int, str]) -> str:
    return "".join((replace.get(i, tok.text) + tok.whitespace_) for i, tok in enumerate(tokens)).strip()


def deletion_importance(
    classifier: CachedClassifier, tokens: Sequence[Any], label: int, positions: Sequence[int]
) -> np.ndarray:
    """Drop in P(label) when each position's word is removed (higher = more important)."""
    if not positions:
        return np.zeros(0)
    base = classifier.predict_proba([_join(tokens, {})])[0][label]
    variants = [_join(tokens, {i: ""}) for i in positions]
    return base - classifier.predict_proba(variants)[:, label]


class SynonymSwapEditor(_ClassifierEditor):
    name: ClassVar[str] = "synonym"

    def __init__(
        self,
        classifier: CachedClassifier,
        *,
        min_similarity: float = 0.5,
        max_swaps: int = 40,
        max_candidates: int = 30,
    ) -> None:
        super().__init__(classifier)
        self.min_similarity = min_similarity
        self.max_swaps = max_swaps
        self.max_candidates = max_candidates

    def params(self) -> JSONObject:
        return {
            "classifier": self.classifier.spec,
            "min_similarity": self.min_similarity,
            "max_swaps": self.max_swaps,
            "wordnet": "3.0",
            "vectors": "en_core_web_md",
        }

    def synonyms(self, token: Any) -> list[str]:
        from ..lexicons.wordnet import load_wordnet

        wordnet = load_wordnet()
        vocab = _spacy_vectors()
        word = token.text.lower()
        if not vocab.has_vector(word):
            return []
        base = np.asarray(vocab.get_vector(word), dtype=float)
        found: dict[str, float] = {}
        for pos in _WORDNET_POS.get(token.pos_, []):
            for synset in wordnet.synsets(word, pos=pos):
                for lemma in synset.lemma_names():
                    candidate = lemma.lower()
                    if "_" in candidate or candidate == word or candidate in found or not vocab.has_vector(candidate):
                        continue
                    vector = np.asarray(vocab.get_vector(candidate), dtype=float)
                    similarity = float(base @ vector / (np.linalg.norm(base) * np.linalg.norm(vector) + 1e-12))
                    if similarity >= self.min_similarity:
                        found[candidate] = similarity
        return sorted(found, key=lambda c: -found[c])[: self.max_candidates]

    def edit_one(self, text: str, target: _Target) -> list[Candidate]:
        tokens = _tokens(text)
        positions = [i for i, t in enumerate(tokens) if t.pos_ in _WORDNET_POS and t.is_alpha and not t.is_stop]
        importance = deletion_importance(self.classifier, tokens, target.original, positions)
        order = [positions[j] for j in np.argsort(-importance, kind="stable")]
        replaced: dict[int, str] = {}
        current = float(target.proba[target.original])
        for position in order[: self.max_swaps * 3]:
            if len(replaced) >= self.max_swaps:
                break
            options = self.synonyms(tokens[position])
            if not options:
                continue
            texts = [_join(tokens, {**replaced, position: match_case(tokens[position].text, o)}) for o in options]
            proba = self.classifier.predict_proba(texts)
            flipping = [k for k in range(len(options)) if flipped_one(target.proba, proba[k])]
            if flipping:  # the most similar synonym that flips (the options are sorted by similarity)
                replaced[position] = match_case(tokens[position].text, options[flipping[0]])
                break
            best = int(proba[:, target.original].argmin())
            if proba[best, target.original] < current:
                replaced[position] = match_case(tokens[position].text, options[best])
                current = float(proba[best, target.original])
        if not replaced:  # no synonym lowered the original label's probability: no counterfactual, not the input
            return []
        return [self.scored(_join(tokens, replaced), target, words_changed=len(replaced))]

    def progress_label(self) -> str:
        return "synonym swap"


class MaskFillEditor(_LLMClassifierEditor):
    name: ClassVar[str] = "mask_fill"

    def __init__(
        self,
        classifier: CachedClassifier,
        llm: Any,
        *,
        max_fraction: float = 0.5,
        searches: int = 4,
        label_names: dict[str, str] | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(classifier, llm, label_names=label_names, seed=seed)
        self.max_fraction = max_fraction
        self.searches = searches

    def own_params(self) -> JSONObject:
        return {"max_fraction": self.max_fraction, "searches": self.searches}

    @staticmethod
    def prompt(template: str, target_label: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": "You complete texts. Reply with one JSON object only."},
            {
                "role": "user",
                "content": (
                    "Fill each numbered blank with one or a few words so that the whole text is clearly "
                    f"{target_label}, and reads naturally.\n\nText: {template}\n\nReply with JSON mapping each blank "
                    'number to its words, e.g. {"1": "wonderful", "2": "loved"}.'
                ),
            },
        ]

    @staticmethod
    def max_tokens_for(blanks: int) -> int:
        return 12 * blanks + 24

    def max_blanks(self, words: int) -> int:
        return max(1, int(words * self.max_fraction))

    def fits(self, text: str) -> bool:
        # the largest search step masks max_blanks words (a word is at least one LLM token, so the token count bounds
        # the number of words); a blank "[k]" costs at most ~3 tokens more than the word it replaces
        blanks = self.max_blanks(self.llm.count_tokens(text))
        widest = self.widest_label()
        prompt = self.prompt(text, widest)
        return self.prompt_tokens(prompt) + 3 * blanks + self.max_tokens_for(blanks) <= self.llm.context_size()

    def importance(self, tokens: Sequence[Any], label: int, positions: list[int]) -> np.ndarray:
        return deletion_importance(self.classifier, tokens, label, positions)

    def fill_request(
        self, tokens: Sequence[Any], masked: list[int], target_label: str, attempt: int
    ) -> tuple[list[dict[str, str]], SamplingParams, dict[int, int]]:
        """The LLM request that fills the ``masked`` words, and the blank number of each masked position."""
        blanks = {p: k + 1 for k, p in enumerate(sorted(masked))}
        template = _join(tokens, {p: f"[{k}]" for p, k in blanks.items()})
        params = SamplingParams(
            n=1, temperature=0.7, top_k=40, max_tokens=self.max_tokens_for(len(blanks)), seed=self.seed + attempt
        )
        return self.prompt(template, target_label), params, blanks

    @staticmethod
    def parse_fill(raw: str, tokens: Sequence[Any], blanks: dict[int, int]) -> str | None:
        """The text with the blanks filled from the LLM's JSON answer, or None if the answer does not parse."""
        match = re.search(r"\{.*\}", raw, re.DOTALL)
        if match is None:
            return None
        try:
            answer = json.loads(match.group(0))
        except json.JSONDecodeError:
            return None
        if not isinstance(answer, dict):
            return None
        fills = {p: str(answer.get(str(k), "")).strip() for p, k in blanks.items()}
        if not any(fills.values()):
            return None
        return _join(tokens, fills)

    def steps(self, text: str, target: _Target) -> Steps:
        tokens = _tokens(text)
        positions = [i for i, t in enumerate(tokens) if t.is_alpha]
        if not positions:
            return []
        order = [positions[j] for j in np.argsort(-self.importance(tokens, target.original, positions), kind="stable")]
        target_label = label_name(self.classifier.labels[target.target], self.label_names)
        # binary search for the smallest number of masked words whose fill flips the label
        low, high = 1, self.max_blanks(len(order))
        candidates: list[Candidate] = []
        attempt = 0
        while low <= high and attempt < self.searches:
            k = (low + high) // 2
            messages, params, blanks = self.fill_request(tokens, order[:k], target_label, attempt)
            filled = self.parse_fill((yield messages, params), tokens, blanks)
            flipped = False
            if filled is not None:
                candidate = self.scored(filled, target, masked=k, attempt=attempt)
                candidates.append(candidate)
                flipped = bool(candidate.meta["flipped"])
            if flipped:
                high = k - 1
            else:
                low = k + 1
            attempt += 1
        return candidates

    def progress_label(self) -> str:
        return "mask and fill"


class LLMFlipEditor(_LLMClassifierEditor):
    name: ClassVar[str] = "llm_flip"

    def __init__(
        self,
        classifier: CachedClassifier,
        llm: Any,
        *,
        in_loop: bool = False,
        budget: int = 3,
        label_names: dict[str, str] | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(classifier, llm, label_names=label_names, seed=seed)
        self.in_loop = in_loop
        self.budget = budget

    def own_params(self) -> JSONObject:
        return {"in_loop": self.in_loop, "budget": self.budget}

    @staticmethod
    def prompt(text: str, current: str, wanted: str) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": "You edit texts minimally. Reply with the edited text inside {braces}."},
            {
                "role": "user",
                "content": "Text: The film was dull and far too long.\nIt reads as negative. Change as few "
                "words as possible so that it reads as positive.",
            },
            {"role": "assistant", "content": "{The film was gripping and never too long.}"},
            {
                "role": "user",
                "content": f"Text: {text}\nIt reads as {current}. Change as few words as possible so that "
                f"it reads as {wanted}.",
            },
        ]

    def max_tokens_for(self, text: str) -> int:
        return int(self.llm.count_tokens(text) * 1.4) + 32

    def fits(self, text: str) -> bool:
        # the first prompt and its answer; the classifier-in-the-loop variant stops re-prompting when the growing
        # conversation would no longer fit
        widest = self.widest_label()
        prompt = self.prompt(text, widest, widest)
        return self.prompt_tokens(prompt) + self.max_tokens_for(text) <= self.llm.context_size()

    def steps(self, text: str, target: _Target) -> Steps:
        from .llm_rewrite import extract_braced

        current = label_name(self.classifier.labels[target.original], self.label_names)
        wanted = label_name(self.classifier.labels[target.target], self.label_names)
        messages = self.prompt(text, current, wanted)
        max_tokens = self.max_tokens_for(text)
        candidates: list[Candidate] = []
        for attempt in range(self.budget if self.in_loop else 1):
            if self.prompt_tokens(messages) + max_tokens > self.llm.context_size():
                break  # a re-prompt that no longer fits: the candidates so far stand
            params = SamplingParams(n=1, temperature=0.7, top_k=40, max_tokens=max_tokens, seed=self.seed + attempt)
            raw = yield list(messages), params
            edited = extract_braced(raw)
            if edited is None or not edited.strip():
                messages += [
                    {"role": "assistant", "content": raw},
                    {"role": "user", "content": "Please reply with the whole edited text inside {braces}."},
                ]
                continue
            candidate = self.scored(edited, target, attempt=attempt, raw=raw)
            candidates.append(candidate)
            if candidate.meta["flipped"] or not self.in_loop:
                break
            confidence = candidate.meta["p_original_label"]
            messages += [
                {"role": "assistant", "content": raw},
                {
                    "role": "user",
                    "content": f"The classifier still reads it as {current} ({confidence:.0%} "
                    f"confident). Change a few more words so that it reads as {wanted}.",
                },
            ]
        return candidates

    def progress_label(self) -> str:
        return "llm flip" + (" (classifier in the loop)" if self.in_loop else "")


class ExternalEditor(EditorBase):
    """Counterfactuals made elsewhere: a table with the source text and one or two counterfactual columns."""

    name: ClassVar[str] = "external"

    def __init__(
        self,
        path: str,
        *,
        text_column: str = "orig_text",
        cf_columns: Sequence[str] = ("gen_text", "gen_text_2"),
        missing_markers: Sequence[str] = ("-1",),
    ) -> None:
        from ..io import cell_text, read_table, require_columns

        frame = read_table(path)
        require_columns(frame, {text_column: "text_column", cf_columns[0]: "cf_columns"}, origin=path)
        self.path = path
        self._lookup: dict[str, list[str]] = {}
        for _, row in frame.iterrows():
            source = cell_text(row[text_column])
            if source is None:
                continue
            outs = [cell_text(row[c]) for c in cf_columns if c in frame.columns]
            self._lookup.setdefault(source, []).extend(
                o for o in outs if o is not None and o.strip() and o.strip() not in missing_markers
            )

    def params(self) -> JSONObject:
        return {"path": self.path, "entries": len(self._lookup)}

    def edit(self, texts: Sequence[str], *, progress: ProgressHook | None = None) -> list[list[Candidate]]:
        return [[self.candidate(t) for t in self._lookup.get(text, [])] for text in texts]
