"""An LLM as the classifier under test: ``llm-classifier:LLM_SPEC``, e.g.
``llm-classifier:llamacpp:qwen2.5-coder-0.5b-instruct`` or ``llm-classifier:openai:http://host:8000/v1#MODEL``.

The LLM answers a zero-shot yes/no labelling question per text. Label probabilities come from the log-probabilities of
the answer's first token where the backend gives them (llama.cpp in process: its logits; OpenAI-compatible servers
that return ``top_logprobs``: OpenAI, vLLM, llama-server), summed over the answer's spellings ("yes", "Yes") and
normalised over the labels. Other backends (or a server without log-probabilities) are asked ``samples`` times at
temperature 1 and the share of each answer is its probability. ``mode`` says which was used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..llm import LLM, Message, SamplingParams, sample_all


@dataclass(frozen=True)
class LabellingTask:
    labels: tuple[str, str]  # (the "no" label, the "yes" label)
    question: str  # with {text}
    version: int = 1
    # worked turns before the text's own question: (user message, "yes" or "no"), in order
    examples: tuple[tuple[str, str], ...] = ()


TASKS = {
    "toxicity": LabellingTask(
        ("non-toxic", "toxic"),
        "Is the following comment toxic, that is rude, disrespectful, hateful or insulting? Answer yes or no.\n\n"
        "Comment: {text}",
    ),
    "sentiment": LabellingTask(
        ("NEG", "POS"),
        "Is the sentiment of the following review positive? Answer yes or no.\n\nReview: {text}",
    ),
}
ANSWERS = (("no", "No"), ("yes", "Yes"))  # spellings of the two answers, in label order


class LLMClassifier:
    """A yes/no question to an LLM as a two-label classifier (see the module docstring)."""

    def __init__(self, llm: LLM, *, task: str | LabellingTask = "toxicity", samples: int = 10) -> None:
        if isinstance(task, str):
            if task not in TASKS:
                raise ConfigError(f"unknown labelling task {task!r}; built in: {', '.join(TASKS)}")
            task = TASKS[task]
        self.llm = llm
        self.task = task
        self.samples = samples
        self.mode: str | None = None  # "logprobs" or "samples", once it has predicted

    @property
    def labels(self) -> Sequence[str]:
        return self.task.labels

    def conversation(self, text: str) -> list[Message]:
        shots: list[Message] = []
        for question, answer in self.task.examples:
            shots += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        return [
            {"role": "system", "content": "You label texts. Reply with one word: yes or no."},
            *shots,
            {"role": "user", "content": self.task.question.format(text=text)},
        ]

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        conversations = [self.conversation(t) for t in texts]
        scorer = getattr(self.llm, "answer_logprobs", None)
        if scorer is not None:
            spellings = [s for forms in ANSWERS for s in forms]
            logprobs = scorer(conversations, spellings)
            if logprobs is not None:
                self.mode = "logprobs"
                return np.array([self._from_logprobs(row) for row in logprobs])
        self.mode = "samples"
        params = SamplingParams(n=self.samples, temperature=1.0, top_k=40, max_tokens=3, seed=0)
        replies = sample_all(self.llm, conversations, params, chat=True)
        return np.array([self._from_samples([c.text for c in row]) for row in replies])

    @staticmethod
    def _from_logprobs(row: Sequence[float]) -> list[float]:
        width = len(ANSWERS[0])
        mass = [sum(math.exp(lp) for lp in row[i * width : (i + 1) * width]) for i in range(len(ANSWERS))]
        total = sum(mass)
        return [m / total for m in mass] if total > 0 else [math.nan, math.nan]

    @staticmethod
    def _from_samples(answers: Sequence[str]) -> list[float]:
        words = [a.strip().split()[0].strip(".,!").lower() if a.strip() else "" for a in answers]
        counts = [sum(w == forms[0] for w in words) for forms in ANSWERS]
        total = sum(counts)
        return [c / total for c in counts] if total else [math.nan, math.nan]

    def signature(self) -> JSONObject:
        signature: JSONObject = {
            "type": "llm-classifier",
            "llm": self.llm.info(),
            "question": self.task.question,
            "labels": list(self.task.labels),
            "version": self.task.version,
            "samples": self.samples,
        }
        if self.task.examples:
            signature["examples"] = [list(e) for e in self.task.examples]
        return signature
