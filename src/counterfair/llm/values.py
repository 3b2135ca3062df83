"""How likely each allowed value of an answer is where it sits, read from a model's token log-probabilities instead
of from sampled answers: one forward pass (or one greedy answer) per prompt in place of k samples.

Two readings, one result (:class:`ValueOdds`: each value's probability at temperature 1 and the mass left over):

* :func:`value_odds` — exact, where the model is in this process: the answer's prefix is forced (``{"decision":
  "``) and each value's tokens are walked as a tree; a value's probability is the product of its tokens'
  probabilities up to its first distinguishing token (``interview`` against ``reject``: one pass), and a value that
  is a prefix of another (``1`` against ``10``) ends with the probability that the other does not go on. One batched
  call holds every node of the tree for every prompt, each prompt's nodes side by side.
* :func:`odds_from_trace` — from one greedy answer's per-token top alternatives (an OpenAI-compatible server's
  ``logprobs``): at the token where the value begins, each alternative is matched to the value it begins (case
  folded, so ``Yes`` and ``yes`` add up); a token several values share is followed along the answer; the mass of a
  shared token the answer did not take is *unresolved*, and a value outside the server's top alternatives (vLLM
  gives at most 20, TGI 5) has none: both are reported, never guessed.

:meth:`ValueOdds.at` renormalises over the allowed values at a temperature: P_T(v) ∝ P_1(v)^(1/T) (the answer's
own sampling temperature; exact for values of one token, the sequence's tempered probability otherwise), and the
greedy answer at T = 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Position:
    """One token of a generated answer: its text, log-probability and the top alternatives the server gave."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class ValueOdds:
    """Each allowed value's probability at temperature 1 where the answer gives it, and the mass no value could be
    given: ``unresolved`` (a token several values begin with that the answer did not take) and :attr:`other` (the
    rest: the model wanting to say something else, or values beyond the alternatives a server returns)."""

    probability: Mapping[str, float] = field(default_factory=dict)
    unresolved: float = 0.0

    @property
    def total(self) -> float:
        return float(sum(self.probability.values()))

    @property
    def other(self) -> float:
        return max(0.0, 1.0 - self.total - self.unresolved)

    def at(self, temperature: float) -> dict[str, float]:
        """Each value's probability renormalised over the allowed values at ``temperature`` (0: the most likely
        value has all of it); empty when no value has any."""
        seen = {v: p for v, p in self.probability.items() if p > 0}
        if not seen:
            return {}
        if temperature <= 0:
            best = max(seen, key=lambda v: seen[v])
            return {v: float(v == best) for v in self.probability}
        logs = {v: math.log(p) / temperature for v, p in seen.items()}
        top = max(logs.values())
        weights = {v: math.exp(x - top) for v, x in logs.items()}
        total = sum(weights.values())
        return {v: weights.get(v, 0.0) / total for v in self.probability}


def _ends(text: str, value: str) -> bool:
    """Whether ``text`` is ``value`` followed by nothing or by something that cannot go on a word or number."""
    return text.startswith(value) and (len(text) == len(value) or not text[len(value)].isalnum())


def _consistent(text: str, values: Sequence[str]) -> list[str]:
    """The values ``text`` (what the answer holds from the value's start) can still be, or is."""
    return [v for v in values if _ends(text, v) or (v.startswith(text) and len(v) > len(text))]


def odds_from_trace(trace: Sequence[Position], start: int, values: Sequence[str]) -> ValueOdds:
    """The odds of ``values`` (lower case) at character ``start`` of the answer the ``trace`` spells (see the module's
    docstring)."""
    offsets = [0]
    for position in trace:
        offsets.append(offsets[-1] + len(position.token))
    k = next((i for i in range(len(trace)) if offsets[i] <= start < offsets[i + 1]), None)
    out = dict.fromkeys(values, 0.0)
    if k is None:
        return ValueOdds(out)
    lead = trace[k].token[: start - offsets[k]].lower()
    read, candidates, scale, unresolved = "", list(values), 1.0, 0.0
    while k < len(trace):
        position = trace[k]
        alternatives = dict(position.top)
        alternatives.setdefault(position.token, position.logprob)
        chosen: list[str] | None = None
        for token, logprob in alternatives.items():
            folded = token.lower()
            if not folded.startswith(lead):
                continue  # the token does not begin where this value does (another opening, a space ...)
            text = read + folded[len(lead) :]
            may_be = _consistent(text, candidates) if text else list(candidates)
            mass = scale * math.exp(logprob)
            if token == position.token:
                chosen = may_be
            if len(may_be) == 1:
                out[may_be[0]] += mass
            elif len(may_be) > 1 and token != position.token:
                unresolved += mass  # a token several values begin with, not the one the answer took
        if chosen is None or len(chosen) < 2:
            return ValueOdds(out, unresolved)
        scale *= math.exp(position.logprob)  # the answer goes on along a shared beginning: the next token decides
        read += position.token.lower()[len(lead) :]
        candidates, lead, k = chosen, "", k + 1
    return ValueOdds(out, unresolved + scale)  # the answer ended before the value was told apart


#: ``(contexts, token ids) -> each context's log-probability of each id as its next token`` (temperature 1)
NextLogprobs = Callable[[list[list[int]], list[int]], list[list[float]]]
Spelled = Mapping[str, Sequence[Sequence[int]]]  # each value's spellings as token sequences


def tree_nodes(values: Spelled) -> list[tuple[int, ...]]:
    """The nodes of the values' token tree whose next token must be read: the start, and every beginning that several
    values share or that one value ends at while another goes on (``1`` of ``1`` and ``10``)."""
    spelled = {tuple(s): v for v, spellings in values.items() for s in spellings if len(s)}
    nodes: list[tuple[int, ...]] = [()]
    for node in sorted({s[:k] for s in spelled for k in range(1, len(s))}, key=len):
        below = {v for s, v in spelled.items() if s[: len(node)] == node}
        if len(below) > 1:
            nodes.append(node)
    return nodes


def odds_from_nodes(values: Spelled, read: Mapping[tuple[int, ...], Mapping[int, float]]) -> ValueOdds:
    """The values' odds from each tree node's next-token log-probabilities (``read``, as :func:`tree_nodes` lists
    them): a value's probability is the product down to its first distinguishing token; a value that ends where
    another goes on has the chance that it does not go on."""
    spelled = {tuple(s): v for v, spellings in values.items() for s in spellings if len(s)}
    probability = dict.fromkeys(values, 0.0)

    def walk(node: tuple[int, ...], mass: float) -> None:
        here = read[node]
        going_on = 0.0
        for token in sorted({s[len(node)] for s in spelled if len(s) > len(node) and s[: len(node)] == node}):
            child = (*node, token)
            p = math.exp(here[token])
            going_on += p
            below = {v for s, v in spelled.items() if s[: len(child)] == child}
            if len(below) == 1:
                probability[next(iter(below))] += mass * p  # the first token that tells this value apart
            else:
                walk(child, mass * p)
        if node in spelled:  # a value that ends here while others go on: the chance it does not go on
            probability[spelled[node]] += mass * max(0.0, 1.0 - going_on)

    walk((), 1.0)
    return ValueOdds(probability)


def node_ids(values: Spelled) -> list[int]:
    """Every token a tree node's next token is read for."""
    return sorted({s[k] for spellings in values.values() for s in spellings for k in range(len(s))})


def branches(contexts: Sequence[Sequence[int]]) -> int:
    """How many of ``contexts`` no other one begins with (a context given twice counts once): the sequences a backend
    needs that reads a context off a longer one it begins (llama.cpp's batch sampler)."""
    return sum(
        not any(
            other[: len(context)] == context and (len(other), -j) > (len(context), -k)
            for j, other in enumerate(contexts)
        )
        for k, context in enumerate(contexts)
    )


def value_odds(
    conversations: Sequence[Any],
    asks: Sequence[tuple[str, Mapping[str, Sequence[str]]]],
    *,
    render: Callable[[Any], str],
    tokenize: Callable[[str, bool], list[int]],
    next_logprobs: NextLogprobs,
    group: int,
    per_branch: bool = False,
) -> list[list[ValueOdds]]:
    """Per conversation, per ask ``(prefix, spellings)``: the odds of each value (spelled any of its ways) as the
    assistant's reply after the forced ``prefix``, for a model in this process: ``render`` writes a conversation up to
    the assistant's turn, ``tokenize(text, special)`` its tokens, ``next_logprobs`` reads a batch of contexts. Every
    conversation's asks at every node of their values' token trees go in calls of about ``group`` contexts (of
    ``group`` :func:`branches` where ``per_branch``: a backend that reads a context off a longer one), a
    conversation's side by side (a backend that shares a prompt's beginning evaluates it once)."""
    trees = []  # per ask: its values' tokens after its prefix, the tree's nodes
    for prefix, forms_of in asks:
        head = tokenize(prefix, False)
        spelled: dict[str, list[list[int]]] = {}
        for value, forms in forms_of.items():
            for form in forms:
                whole = tokenize(prefix + form, False)
                spelled.setdefault(value, []).append(
                    whole[len(head) :] if whole[: len(head)] == head else tokenize(form, False)
                )
        trees.append((spelled, tree_nodes(spelled)))
    ids = sorted({t for spelled, _ in trees for t in node_ids(spelled)})
    calls: list[list[list[int]]] = [[]]
    weight = 0  # what the last call holds: contexts, or branches where per_branch
    for messages in conversations:
        shown = render(messages)
        mine = []  # a conversation's contexts, kept in one call
        for (prefix, _), (_, nodes) in zip(asks, trees, strict=True):
            context = tokenize(shown + prefix, True)
            mine += [[*context, *node] for node in nodes]
        size = branches(mine) if per_branch else len(mine)
        if calls[-1] and weight + size > group:
            calls.append([])
            weight = 0
        calls[-1] += mine
        weight += size
    found = iter(row for contexts in calls if contexts for row in next_logprobs(contexts, ids))
    out = []
    for _ in conversations:
        out.append(
            [
                odds_from_nodes(spelled, {n: dict(zip(ids, next(found), strict=True)) for n in nodes})
                for spelled, nodes in trees
            ]
        )
    return out


__all__ = [
    "NextLogprobs",
    "Position",
    "ValueOdds",
    "branches",
    "node_ids",
    "odds_from_nodes",
    "odds_from_trace",
    "tree_nodes",
]
