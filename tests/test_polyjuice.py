"""The Polyjuice-style editor (paper 000 §4.2, App. B.4): prompts, blank filling, 8 free + 8 directed generations,
filters and ranking through ``generate``. Polyjuice's weights are not installable here: the generate plumbing runs on
a scripted LM and on a tiny random causal LM made in the test."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from counterfair.commands.generate.core import generate_frame
from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.recipe import Generator
from counterfair.editors.polyjuice import PolyjuiceEditor, clean, fill_blanks, polyjuice_prompt
from counterfair.editors.registry import EditorContext, build_editor
from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import load_attribute
from counterfair.llm import Completion, SamplingParams

from .conftest import run_cli


class ScriptedPolyjuice:
    """Answers each Polyjuice prompt with ``answer(blanked text, control code)``; records the prompts."""

    model_id = "scripted-polyjuice"

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.params: list[SamplingParams] = []

    def complete(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        self.prompts += list(prompts)
        self.params.append(params)
        out = []
        for prompt in prompts:
            code = prompt.split("<|perturb|> [", 1)[1].split("]", 1)[0]
            blanked = prompt.split("] ", 1)[1].rsplit(" [SEP]", 1)[0]
            out.append([Completion(self.answer(blanked, code), "stop") for _ in range(params.n)])
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def context_size(self) -> int:
        return 1024

    def info(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": self.model_id}


def test_prompt_and_blank_filling_by_hand() -> None:
    assert polyjuice_prompt("It is good.", "negation", "It is [BLANK].") == (
        "It is good. <|perturb|> [negation] It is [BLANK]. [SEP]"
    )
    assert fill_blanks("It is [BLANK].", "not good [ANSWER]") == "It is not good."
    assert fill_blanks("My [BLANK] friend saw the [BLANK].", "new [ANSWER] church [ANSWER]") == (
        "My new friend saw the church."
    )
    assert fill_blanks("My [BLANK] friend left.", "[EMPTY] [ANSWER]") == "My friend left."
    assert fill_blanks("My [BLANK] friend left.", "kind [ANSWER] extra [ANSWER] [SEP] junk") == "My kind friend left."
    assert fill_blanks("A [BLANK] and a [BLANK].", "one [ANSWER]") is None  # fewer answers than blanks
    assert fill_blanks("A [BLANK].", "no answer marker") is None
    assert fill_blanks("No blank here.", "x [ANSWER]") is None
    # leftover tokens go, as paper 000 did before rating
    assert fill_blanks("The [BLANK] was fine.", "BLANK talk [ANSWER]") == "The talk was fine."
    assert clean("A [EMPTY] story , told EMPTY well .") == "A story, told well."


def _editor(answer: Any) -> tuple[PolyjuiceEditor, ScriptedPolyjuice]:
    lm = ScriptedPolyjuice(answer)
    return PolyjuiceEditor(lm, load_attribute("islam"), seed=3), lm


def test_eight_free_and_eight_directed_generations() -> None:
    editor, lm = _editor(lambda blanked, code: "friendly [ANSWER] church [ANSWER]")
    text = "My Muslim neighbour visited the mosque today."
    assert editor.blank_terms(text) == "My [BLANK] neighbour visited the [BLANK] today."
    assert editor.blank_terms("Nothing to see.") is None
    plans = editor.prompts(text)
    assert len(plans) == 16 and [m for _, _, m in plans] == ["free"] * 8 + ["blank"] * 8
    for prompt, blanked, _ in plans[:8]:
        assert blanked.count("[BLANK]") == 1 and prompt.startswith(text + " <|perturb|> [")
        kept = blanked.replace("[BLANK]", "").split()
        assert 1 <= len(text.split()) - len(kept) <= 3  # one span of one to three words
    codes = [p.split("[", 1)[1].split("]", 1)[0] for p, _, _ in plans]
    assert codes[:8] == [
        "negation",
        "quantifier",
        "shuffle",
        "lexical",
        "resemantic",
        "insert",
        "delete",
        "restructure",
    ]
    assert editor.prompts(text) == plans  # seeded: the same blanks again
    assert editor.prompts(text, attempt=1) != plans  # a rerun blanks elsewhere
    candidates = editor.edit([text])[0]
    assert len(candidates) == 16 and lm.params[0].n == 1
    directed = [c for c in candidates if c.meta["mode"] == "blank"]
    assert {c.text for c in directed} == {"My friendly neighbour visited the church today."}
    assert all(c.meta["parsed"] for c in directed)
    # a text without an attribute term gets only the free generations
    assert len(editor.edit(["Nothing to see here today."])[0]) == 8


def test_generate_filters_and_ranks_polyjuice_candidates() -> None:
    def answer(blanked: str, code: str) -> str:
        if blanked.count("[BLANK]") == 2:
            return "kind [ANSWER] church [ANSWER]" if code == "lexical" else "[EMPTY] [ANSWER] mosque [ANSWER]"
        return "BLANK [ANSWER]"  # free generations: the span deleted, a leftover token stripped

    opts = GenerateOptions(attribute="islam", methods=["polyjuice"], max_attempts=2, seed=3)
    gen = Generator(opts)
    lm = ScriptedPolyjuice(answer)
    gen._polyjuice_lm = lm
    long = "My Muslim neighbour visited the mosque today and we talked about the garden for an hour."
    texts = pd.DataFrame({"text": [long, "The weather is nice."]})
    result = generate_frame(texts, opts, generator=gen)
    cfs = result.counterfactuals.set_index("row")
    # the directed answers that keep "mosque" are rejected by the attribute filter; "kind ... church" passes
    assert cfs.loc[0, "status"] == "ok"
    assert (
        cfs.loc[0, "text"] == "My kind neighbour visited the church today and we talked about the garden for an hour."
    )
    cands = result.candidates[result.candidates["row"] == 0]
    assert len(cands) == 16 and cands["method"].eq("polyjuice").all()
    assert cands["selected"].sum() == 1
    assert not cands[cands["text"].str.contains("mosque", na=False)]["passed"].any()
    assert result.summary["signatures"]["polyjuice_lm"] == {"backend": "scripted", "model": "scripted-polyjuice"}
    # the text without an attribute reference: only the 8 free generations per attempt, each deleting a span; the
    # first attempt's all fail BLEU/BERTScore, one of the second's ("nice." deleted) passes and is chosen
    other = result.candidates[result.candidates["row"] == 1]
    assert len(other) == 16 and other["attempt"].value_counts().to_dict() == {0: 8, 1: 8}
    assert other["passed"].sum() == 1
    assert (cfs.loc[1, "status"], cfs.loc[1, "text"]) == ("ok", "The weather is")


def test_registry_and_conformance_context() -> None:
    with pytest.raises(ConfigError, match="needs a causal LM trained on Polyjuice's format"):
        build_editor("polyjuice", EditorContext())
    lm = ScriptedPolyjuice(lambda blanked, code: "new [ANSWER] " * blanked.count("[BLANK]"))
    editor = build_editor("polyjuice", EditorContext(attribute="islam", polyjuice_lm=lambda: lm))
    assert isinstance(editor, PolyjuiceEditor) and editor.params()["lm"] == "scripted-polyjuice"


def test_missing_weights_give_a_clear_error(tmp_path: Path) -> None:
    gen = Generator(GenerateOptions(methods=["polyjuice"], polyjuice_model=str(tmp_path / "nowhere")))
    with pytest.raises(ConfigError, match=r"polyjuice model .*not a directory, and not a Hugging Face hub id"):
        gen.editor("polyjuice")
    gen = Generator(GenerateOptions(methods=["polyjuice"], polyjuice_model="no-such-owner/no-such-model"))
    with pytest.raises(ConfigError, match=r"polyjuice model .no-such-owner/no-such-model. is not in the local cache"):
        gen.editor("polyjuice")


@pytest.mark.slow
def test_cli_runs_polyjuice_on_a_tiny_causal_lm(tiny_lm_long_dir: Path, tmp_path: Path) -> None:
    """The whole path with a real transformers model (random weights): 16 generations per text and attempt are
    made, parsed or not, recorded with their raw output; nothing unparsed becomes a counterfactual."""
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": ["My Muslim neighbour visited the mosque.", "Islam is a religion."]}).to_csv(
        data, index=False
    )
    out = tmp_path / "gen"
    done = run_cli(
        "generate", str(data), "--methods", "polyjuice", "--polyjuice-model", str(tiny_lm_long_dir),
        "--max-attempts", "1", "-o", str(out), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cands = pd.read_csv(out / "candidates.csv")
    assert len(cands) == 32 and cands["method"].eq("polyjuice").all()
    assert cands["raw"].notna().all()
    cfs = pd.read_csv(out / "counterfactuals.csv")
    for _, row in cfs.iterrows():
        picked = cands[(cands["row"] == row["row"]) & cands["selected"].astype(bool)]
        assert (row["status"] == "ok") == (len(picked) == 1)
