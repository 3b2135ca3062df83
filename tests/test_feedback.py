from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd
import pytest

from counterfair.classifiers import CachedClassifier, load_classifier
from counterfair.commands.feedback.core import FeedbackOptions, adapt_lm, inconsistency, select
from counterfair.commands.feedback.shell import run_feedback
from counterfair.editors.base import EditorBase
from counterfair.editors.flip import ExternalEditor, LLMFlipEditor, MaskFillEditor, SynonymSwapEditor
from counterfair.errors import ConfigError
from counterfair.records import Candidate

from .conftest import run_cli
from .fakes import ScriptedLLM


@pytest.fixture
def sentiment(tmp_path: Path) -> CachedClassifier:
    (tmp_path / "senti.py").write_text(
        "import numpy as np\n"
        "BAD = ('terrible', 'boring', 'dull')\n"
        "def score(texts):\n"
        "    return np.array([[0.9, 0.1] if any(w in t.lower() for w in BAD) else [0.2, 0.8] for t in texts])\n"
        "score.labels = ['NEG', 'POS']\n"
    )
    return load_classifier(f"callable:{tmp_path / 'senti.py'}:score")


def test_inconsistency_by_hand() -> None:
    d = [2.0, 3.0, 1.0, 4.0]
    assert inconsistency(d, 1) == 1.0  # relu(3 - 2)
    assert inconsistency(d, 2) == 0.5  # (1 + relu(1 - 3)) / 2
    assert inconsistency(d, 3) == pytest.approx(4 / 3)  # (1 + 0 + 3) / 3
    assert math.isnan(inconsistency(d[:2], 2))


def test_selection_rule() -> None:
    cands = [Candidate(t, "e", "h") for t in ("a b c d e f", "a b x", "a y z")]
    # flipping candidates win; among them the closest
    assert (
        select("a b c", cands, [True, False, True]) == 2 - 2 * 0
        if False
        else select("a b c", cands, [True, False, True]) == 2
    )
    assert select("a b c", cands, [False, False, False]) == 1  # nobody flips: the closest
    assert select("a b c", [], []) is None


class Toggle(EditorBase):
    """Alternates 'boring' <-> 'gripping' and adds one more word at each step (a growing, inconsistent edit)."""

    name: ClassVar[str] = "toggle"

    def __init__(self) -> None:
        self.calls = 0

    def params(self) -> dict[str, Any]:
        return {}

    def edit(self, texts: Sequence[str], *, progress: Any = None) -> list[list[Candidate]]:
        self.calls += 1
        out = []
        for t in texts:
            new = t.replace("boring", "gripping") if "boring" in t else t.replace("gripping", "boring")
            out.append([self.candidate(new + " really" * self.calls)])
        return out


def test_loop_by_hand(tmp_path: Path, sentiment: CachedClassifier) -> None:
    run = tmp_path / "run"  # the sentiment fixture keeps its module in tmp_path: a run goes into a folder of its own
    data = pd.DataFrame({"text": ["a boring film", "   "]})
    summary = run_feedback(
        data, run, FeedbackOptions(steps=3, ppl_model=None), editor=Toggle(), classifier=sentiment
    ).summary
    steps = pd.read_csv(run / "steps.csv")
    ok = steps[steps.status == "ok"]
    # d_k: 1 substitution + k added words -> 2, 3, 4, 5 ; every step flips the label
    assert ok["distance"].tolist() == [2, 3, 4, 5]
    assert ok["flipped"].tolist() == [True] * 4
    assert summary["applications"] == 4
    assert summary["inconsistency"] == {"inc@1": 1.0, "inc@2": 1.0, "inc@3": 1.0}
    assert summary["steps"]["1"]["flip_rate"] == 1.0
    assert summary["steps"]["2"]["probability"] == pytest.approx(0.9)  # P(NEG) after flipping back
    assert steps[steps.text_id == 1]["status"].tolist() == ["skipped:empty_text"]
    assert json.loads((run / "summary.json").read_text())["editor"]["name"] == "toggle"
    # paper 002 App. D: words per step; the toggle adds "really" k times at step k: 3 -> 4 -> 6 -> 9 -> 13
    assert summary["mean_words_by_step"] == {"0": 3.0, "1": 4.0, "2": 6.0, "3": 9.0, "4": 13.0}
    # the report draws paper 002's per-step box plots from steps.csv: one box per step, of that step's distances
    from counterfair.io import read_table
    from counterfair.views.report.plots import feedback_step_values

    report = (run / "report.html").read_text(encoding="utf-8")
    assert report.index('id="verdict"') < report.index('id="fig-feedback_steps"')
    assert (run / "plots" / "feedback_steps.svg").exists()
    assert feedback_step_values(read_table(run / "steps.csv")) == {"distance": {1: [2], 2: [3], 3: [4], 4: [5]}}


def test_paired_t_test_of_two_runs_by_hand(tmp_path: Path) -> None:
    from counterfair.commands.feedback.core import paired_inc_test

    a = {"command": "feedback", "inconsistency_by_text": {"1": {"1": 1.0, "2": 2.0, "3": 4.0}}}
    b = {"command": "feedback", "inconsistency_by_text": {"1": {"1": 0.5, "2": 1.0, "3": 3.0, "4": 9.0}}}
    # common texts 1-3, d = 0.5, 1, 1: mean 5/6, sd sqrt(1/12), t = (5/6) / (sqrt(1/12) / sqrt(3)) = 5
    test = paired_inc_test(a, b, 1)
    assert test is not None and test["texts"] == 3 and test["t"] == pytest.approx(5.0)
    assert test["mean_a"] == pytest.approx(7 / 3) and test["mean_b"] == pytest.approx(1.5)
    assert paired_inc_test(a, a, 1) is None  # no difference: no test
    for name, summary in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "summary.json").write_text(json.dumps({"schema_version": "1", **summary}))
    done = run_cli("feedback-ttest", str(tmp_path / "a"), str(tmp_path / "b"), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "5.00" in done.stdout
    wrong = run_cli("feedback-ttest", str(tmp_path / "a"), str(tmp_path / "nope"), timeout=300)
    assert wrong.returncode == 2 and "no such file" in " ".join(wrong.stderr.split())


class Appender(EditorBase):
    """Adds one word; records which texts it saw; raises on a chosen text (a crash halfway through a run)."""

    name: ClassVar[str] = "appender"

    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.seen: list[str] = []

    def params(self) -> dict[str, Any]:
        return {}

    def edit(self, texts: Sequence[str], *, progress: Any = None) -> list[list[Candidate]]:
        if self.fail_on is not None and any(t.startswith(self.fail_on) for t in texts):
            raise RuntimeError("editor crashed")
        self.seen.extend(texts)
        return [[self.candidate(t + " indeed")] for t in texts]


def test_feedback_resumes_after_a_crash(tmp_path: Path, sentiment: CachedClassifier) -> None:
    data = pd.DataFrame({"text": ["a boring film", "a fine cast", "a dull plot", "a good score"]})
    opts = FeedbackOptions(steps=2, ppl_model=None)
    with pytest.raises(RuntimeError, match="editor crashed"):
        run_feedback(data, tmp_path / "run", opts, editor=Appender(fail_on="a dull"), classifier=sentiment)
    done = (tmp_path / "run" / ".work" / "done.jsonl").read_text().splitlines()
    assert [json.loads(line)["text_id"] for line in done] == [0, 1]  # the two texts before the crash are kept
    again = Appender()
    resumed = run_feedback(data, tmp_path / "run", opts, editor=again, classifier=sentiment).summary
    assert again.seen[0] == "a dull plot" and len(again.seen) == 2 * 3  # only texts 2 and 3, three edits each
    whole = run_feedback(data, tmp_path / "whole", opts, editor=Appender(), classifier=sentiment).summary
    a = pd.read_csv(tmp_path / "run" / "steps.csv")
    b = pd.read_csv(tmp_path / "whole" / "steps.csv")
    pd.testing.assert_frame_equal(a.drop(columns="seconds_per_text"), b.drop(columns="seconds_per_text"))
    assert len(a) == 4 * 3 and not a.duplicated(["text_id", "step"]).any()
    assert resumed["inconsistency"] == whole["inconsistency"]
    with pytest.raises(ConfigError, match="holds a feedback run that differs in: options"):
        run_feedback(
            data, tmp_path / "run", FeedbackOptions(steps=3, ppl_model=None), editor=Appender(), classifier=sentiment
        )


def test_synonym_swap_flips_with_a_real_synonym(sentiment: CachedClassifier) -> None:
    editor = SynonymSwapEditor(sentiment)
    [[cand]] = editor.edit(["The plot was terrible and the ending was predictable."])
    assert cand.meta["flipped"] and cand.meta["words_changed"] == 1
    replaced = set(cand.text.lower().split()) - set("the plot was terrible and the ending was predictable.".split())
    assert replaced and replaced <= {
        "awful",
        "dreadful",
        "horrible",
        "frightful",
        "atrocious",
        "abominable",
        "dire",
        "fearful",
        "horrendous",
        "horrific",
        "direful",
        "dread",
        "dreaded",
    }
    synonyms = editor.synonyms(
        next(
            t
            for t in __import__("counterfair.editors.flip", fromlist=["x"])._tokens("a terrible film")
            if t.text == "terrible"
        )
    )
    assert "awful" in synonyms and "terrible" not in synonyms


def test_classifier_that_never_flips(tmp_path: Path) -> None:
    (tmp_path / "stubborn.py").write_text(
        "import numpy as np\ndef score(texts):\n    return np.full(len(texts), 0.95)\n"
    )
    clf = load_classifier(f"callable:{tmp_path / 'stubborn.py'}:score")
    summary = run_feedback(
        pd.DataFrame({"text": ["The plot was terrible."]}),
        tmp_path / "o",
        FeedbackOptions(steps=2, ppl_model=None),
        editor=SynonymSwapEditor(clf),
        classifier=clf,
    ).summary
    # a classifier nothing moves: no synonym lowers its score, so there is no counterfactual at all (before, the
    # editor returned the unchanged text and every step counted as an edit of distance 0)
    assert summary["status"] == {"stopped:no_candidate": 1}
    assert summary["steps"]["1"]["texts"] == 0 and summary["steps"]["1"]["flip_rate_all_texts"] == 0.0


def test_one_label_classifier_is_an_error(tmp_path: Path) -> None:
    class One:
        labels = ("only",)

        def predict_proba(self, texts: Sequence[str]) -> Any:
            return [[1.0] for _ in texts]

    with pytest.raises(ConfigError, match="has one label"):
        SynonymSwapEditor(CachedClassifier(One(), spec="one"))


def test_mask_fill_binary_search(sentiment: CachedClassifier) -> None:
    llm = ScriptedLLM(lambda text, attempt, i: '{"1": "gripping", "2": "fresh", "3": "sharp"}')
    llm._text_of = lambda messages: messages[-1]["content"]  # type: ignore[method-assign]
    editor = MaskFillEditor(sentiment, llm, searches=4)
    [cands] = editor.edit(["a boring film about nothing in particular and more words here"])
    # 11 words, at most half masked: search 1..5 starts at 3 (flips: "boring" is the most important word), then 1
    assert [c.meta["masked"] for c in cands] == [3, 1]
    assert all(c.meta["flipped"] for c in cands)
    assert cands[1].text.startswith("a gripping film")


def test_llm_flip_in_the_loop(sentiment: CachedClassifier) -> None:
    replies = iter(["{a dull film}", "{a gripping film}"])
    llm = ScriptedLLM(lambda text, attempt, i: next(replies))
    llm._text_of = lambda messages: messages[-1]["content"]  # type: ignore[method-assign]
    editor = LLMFlipEditor(sentiment, llm, in_loop=True, budget=3)
    [cands] = editor.edit(["a boring film"])
    assert [c.meta["flipped"] for c in cands] == [False, True]
    assert "still reads it as negative" in llm.calls[1]["messages"][-1]["content"]


def test_llm_flip_searches_of_several_texts_run_in_step(sentiment: CachedClassifier) -> None:
    # "boring" texts flip at the second reply, "dull" ones never: each round asks every unfinished text in one call
    def reply(text: str, attempt: int, i: int) -> str:
        turns = sum(1 for call in llm.calls if call["text"] == text)
        return "{a gripping film}" if "boring" in text and turns >= 2 else "{a dull film}"

    llm = ScriptedLLM(reply)
    # the text's own message, in every round (later rounds end with the classifier's feedback)
    llm._text_of = lambda messages: next(  # type: ignore[method-assign]
        m["content"].splitlines()[0] for m in reversed(messages) if m["content"].startswith("Text: ")
    )
    editor = LLMFlipEditor(sentiment, llm, in_loop=True, budget=3)
    texts = ["a boring film", "a dull film", "a boring story"]
    out = editor.edit(texts)
    assert [[c.meta["flipped"] for c in cands] for cands in out] == [[False, True], [False] * 3, [False, True]]
    per_call: dict[int, int] = {}
    for call in llm.calls:
        per_call[call["batch"]] = per_call.get(call["batch"], 0) + 1
    assert list(per_call.values()) == [3, 3, 1]  # rounds of 3, 3, then the one text still searching


def test_llm_editors_stop_where_the_text_outgrows_the_context(tmp_path: Path, sentiment: CachedClassifier) -> None:
    # the scripted LLM counts words as tokens; its answer (43 words) fits as an answer but not as the next prompt
    llm = ScriptedLLM(lambda text, attempt, i: "{a gripping film " + "and more words here " * 10 + "}", context=140)
    llm._text_of = lambda messages: messages[-1]["content"]  # type: ignore[method-assign]
    flip = LLMFlipEditor(sentiment, llm)
    short, long = "a boring film", "a boring film " + "with many words " * 40
    assert flip.fits(short) and not flip.fits(long)
    assert not MaskFillEditor(sentiment, llm).fits(long) and MaskFillEditor(sentiment, llm).fits(short)
    out = flip.edit([long, short])
    assert out[0] == [] and out[1][0].meta["flipped"] and len(llm.calls) == 1  # the long text never reached the LLM
    run_feedback(
        pd.DataFrame({"text": [short, long]}),
        tmp_path / "o",
        FeedbackOptions(steps=2, ppl_model=None),
        editor=flip,
        classifier=sentiment,
    )
    rows = pd.read_csv(tmp_path / "o" / "steps.csv")
    status = {(r.text_id, r.step): r.status for r in rows.itertuples()}
    assert status == {
        (0, 1): "ok",
        (0, 2): "stopped:too_long_for_llm_context",
        (1, 1): "stopped:too_long_for_llm_context",
    }


def test_external_editor(tmp_path: Path) -> None:
    path = tmp_path / "mice.csv"
    pd.DataFrame({"orig_text": ["a", "b"], "gen_text": ["a2", "-1"], "gen_text_2": ["a3", None]}).to_csv(
        path, index=False
    )
    editor = ExternalEditor(str(path))
    out = editor.edit(["a", "b", "c"])
    assert [[c.text for c in x] for x in out] == [["a2", "a3"], [], []]
    summary = run_feedback(
        pd.DataFrame({"text": ["a", "c"]}),
        tmp_path / "o",
        FeedbackOptions(steps=1, ppl_model=None),
        editor=editor,
        classifier=load_classifier("profanity-check"),
    ).summary
    assert summary["status"]["stopped:no_candidate"] >= 2  # 'c' at step 1, 'a2' at step 2


def test_adapt_lm_lowers_in_domain_perplexity(tiny_lm_dir: Path, tmp_path: Path) -> None:
    from counterfair.metrics.perplexity import PerplexityScorer

    domain = ["the movie was long but the actors were great"] * 16
    before = PerplexityScorer(str(tiny_lm_dir)).score(domain[:1]).perplexity[0]
    path = adapt_lm(domain, tmp_path / "adapted", base=str(tiny_lm_dir), train_layers=1, epochs=3, lr=5e-3)
    after = PerplexityScorer(str(path)).score(domain[:1]).perplexity[0]
    assert after < before


class SpacedToggle(Toggle):
    """Flips "boring"/"gripping", and from its second call on writes a space before the full stop (paper 002's
    Figure 1: an erroneous added space)."""

    name: ClassVar[str] = "spaced-toggle"

    def edit(self, texts: Sequence[str], *, progress: Any = None) -> list[list[Candidate]]:
        self.calls += 1
        out = []
        for t in texts:
            new = t.replace("boring", "gripping") if "boring" in t else t.replace("gripping", "boring")
            out.append([self.candidate(new.replace(".", " .") if self.calls >= 2 else new)])
        return out


@pytest.mark.parametrize(("tokens", "distances"), [("words", [1, 1, 1]), ("whitespace", [1, 3, 1])])
def test_inc_counts_an_added_space_with_whitespace_tokens(
    tmp_path: Path, sentiment: CachedClassifier, tokens: str, distances: list[int]
) -> None:
    from counterfair.text import word_distance

    assert word_distance("It was awful!", "It was awful !") == 0
    assert word_distance("It was awful!", "It was awful !", tokens="whitespace") == 2
    run = tmp_path / f"run-{tokens}"
    options = FeedbackOptions(steps=2, ppl_model=None, tokens=tokens)
    summary = run_feedback(
        pd.DataFrame({"text": ["a boring film."]}), run, options, editor=SpacedToggle(), classifier=sentiment
    ).summary
    # "film." -> "film ." is one token split in two: 2 more edits with whitespace tokens, none with words
    assert pd.read_csv(run / "steps.csv")["distance"].tolist() == distances
    assert summary["inconsistency"]["inc@1"] == distances[1] - distances[0]
