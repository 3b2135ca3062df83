"""Conformance: every editor in the registry, built through it as the commands build them, keeps the same contract —
one list of candidates per input in input order, candidates that name their editor and parameters, a stable
parameters hash, JSON-ready parameters, no crash on empty input, and a real edit where one is possible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from counterfair.classifiers import as_classifier
from counterfair.editors.registry import EditorContext, build_editor, editor_names
from counterfair.errors import ConfigError
from counterfair.records import Candidate

from .fakes import ScriptedLLM

BAD = ("boring", "dull", "terrible")
TEXTS = ["My Muslim neighbour made a boring film.", "A gay couple opened a boring cafe.", "Nothing here."]


def _answer(text: str, attempt: int, sample: int) -> str:
    if '"1"' in text or "[1]" in text:  # a mask-fill prompt: fill every blank
        return '{"1": "gripping", "2": "fresh", "3": "sharp", "4": "bright", "5": "warm"}'
    return "{" + text.replace("boring", "gripping").replace("Muslim ", "").replace("gay ", "") + "}"


class _PolyjuiceLM(ScriptedLLM):
    """Answers a Polyjuice prompt with "gripping" for each blank."""

    def __init__(self) -> None:
        super().__init__(lambda text, attempt, sample: text)

    def complete(self, prompts: Any, params: Any) -> Any:
        from counterfair.llm import Completion

        blanks = [p.rsplit("] ", 1)[-1].count("[BLANK]") for p in prompts]
        return [[Completion("gripping [ANSWER] " * max(n, 1), "stop")] * params.n for n in blanks]


def _context(tmp_path: Path) -> tuple[EditorContext, str]:
    llm = ScriptedLLM(_answer)

    def last_braces(messages: Any) -> str:
        return str(messages[-1]["content"].rsplit("{", 1)[-1].rsplit("}", 1)[0])

    llm._text_of = last_braces  # type: ignore[method-assign]
    classifier = as_classifier(
        lambda texts: np.array([[0.9, 0.1] if any(w in t.lower() for w in BAD) else [0.2, 0.8] for t in texts]),
        labels=["NEG", "POS"],
    )
    external = tmp_path / "cfs.csv"
    external.write_text("orig_text,gen_text\n" + "".join(f'"{t}","{t.replace("boring", "fine")}"\n' for t in TEXTS))
    context = EditorContext(
        attribute="islam",
        identities="muslim,christian,gay,straight",
        guard=None,
        llm=lambda: llm,
        classifier=classifier,
        polyjuice_lm=lambda: _PolyjuiceLM(),
    )
    return context, str(external)


@pytest.mark.parametrize("name", list(editor_names()))
def test_every_registered_editor_keeps_the_contract(name: str, tmp_path: Path) -> None:
    context, external = _context(tmp_path)
    editor = build_editor(f"external:{external}" if name == "external" else name, context)
    assert editor.name == name.removesuffix("_loop")  # llm_flip_loop is the llm_flip editor in its loop mode
    json.dumps(editor.params())  # parameters are JSON-ready: they go into signatures and run identities
    assert editor.params_hash() == editor.params_hash() and len(editor.params_hash()) == 12
    out = editor.edit(TEXTS)
    assert isinstance(out, list) and len(out) == len(TEXTS)
    for source, candidates in zip(TEXTS, out, strict=True):
        for cand in candidates:
            assert isinstance(cand, Candidate) and isinstance(cand.text, str)
            assert cand.editor == editor.name and cand.params_hash == editor.params_hash()
            # an edit changes the text; an LLM may answer with the input (the generate filters then reject it)
            assert cand.text != source or name in ("external", "llm")
    assert out[0], f"{name} made no candidate for {TEXTS[0]!r}"
    assert editor.edit([]) == []
    empty: Any = editor.edit([""])
    assert len(empty) == 1 and all(isinstance(c, Candidate) for c in empty[0])


def test_the_registry_names_what_it_needs() -> None:
    with pytest.raises(ConfigError, match="unknown editor 'mice'; the editors are: ablation"):
        build_editor("mice", EditorContext())
    with pytest.raises(ConfigError, match="the polyjuice editor needs a causal LM"):
        build_editor("polyjuice", EditorContext())
    with pytest.raises(ConfigError, match="the synonym editor needs the classifier"):
        build_editor("synonym", EditorContext())
    with pytest.raises(ConfigError, match=r"the llm editor needs an LLM \(--llm\)"):
        build_editor("llm", EditorContext())
    with pytest.raises(ConfigError, match="needs a file: external:PATH"):
        build_editor("external", EditorContext())


def test_the_parameters_hash_is_computed_once_until_a_parameter_is_set() -> None:
    from counterfair.editors.wordlist import AblationEditor
    from counterfair.lexicons.attributes import load_attribute

    editor = AblationEditor("islam")
    calls: list[int] = []
    params = editor.params
    editor.params = lambda: (calls.append(1), params())[1]  # type: ignore[method-assign]
    first = editor.params_hash()
    out = editor.edit(["My Muslim neighbour and the mosque.", "Muslim friends."])
    assert calls == [1] and {c.params_hash for cands in out for c in cands} == {first}  # once for every candidate
    editor.attribute = load_attribute("judaism")  # a parameter set: the hash is computed again
    assert editor.params_hash() != first and calls == [1, 1]


def test_the_swap_counters_are_not_parameters() -> None:
    from counterfair.editors.swap import IdentitySwapEditor

    editor = IdentitySwapEditor("muslim,christian", guard=None)
    first = editor.params_hash()
    editor.edit(["My Muslim neighbour."])  # updates found, blocked, last_counts
    assert editor.found == 1 and editor._cached_hash == first  # the hash is kept, not recomputed per call
