"""Two-input evaluation (paper 004's SNLI task): pair tables from CEval's SNLI files, classifiers that take text pairs,
distances on the revised input only, the probability change on the label each revision aims at."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair import evaluate
from counterfair.classifiers import as_classifier, load_classifier
from counterfair.errors import ConfigError, InputError
from counterfair.nli import nli_revision_pairs

from .conftest import SHARED_DATA, run_cli

SNLI = SHARED_DATA / "ceval" / "snli"
LABELS = ["entailment", "neutral", "contradiction"]
needs_snli = pytest.mark.skipif(not SNLI.exists(), reason="../shared/data/ceval/snli is not on this machine")


def overlap_nli(pairs: list[tuple[str, str]]) -> np.ndarray:
    """A toy NLI rule: 'not' or 'no' in the hypothesis -> contradiction 0.8; every hypothesis word in the premise ->
    entailment 0.7; otherwise neutral 0.6."""
    out = []
    for premise, hypothesis in pairs:
        words = set(hypothesis.lower().strip(".").split())
        if words & {"not", "no"}:
            out.append([0.1, 0.1, 0.8])
        elif words <= set(premise.lower().strip(".").split()):
            out.append([0.7, 0.2, 0.1])
        else:
            out.append([0.2, 0.6, 0.2])
    return np.array(out)


@needs_snli
def test_snli_revised_premise_pairs_align_with_their_originals() -> None:
    pairs = nli_revision_pairs(SNLI / "original" / "test.tsv", SNLI / "revised_premise" / "test.tsv", part="premise")
    assert len(pairs) == 800 and pairs["original_row"].nunique() == 400
    first = pairs.iloc[0]
    assert first["orig_text"] == (
        "A man with a beard is talking on the cellphone and standing next to someone who is lying down on the street."
    )
    assert first["gen_text"] == (
        "A man with a beard is talking on the cellphone and standing next to someone who is sitting on the street."
    )
    assert first["context"] == "A man is prone on the street while another man stands next to him."
    assert (first["orig_label"], first["target_label"]) == ("entailment", "contradiction")
    # rows 194-195 of the revised file write the hypothesis with one space where the original has two
    assert pairs["original_row"].tolist()[194:196] == [97, 97]
    assert pairs["original_row"].tolist() == [i // 2 for i in range(800)]
    assert (pairs["orig_label"] != pairs["target_label"]).all()  # every revision aims at another label


@needs_snli
def test_snli_revised_hypothesis_pairs_keep_the_premise_as_context() -> None:
    pairs = nli_revision_pairs(
        SNLI / "original" / "test.tsv", SNLI / "revised_hypothesis" / "test.tsv", part="hypothesis"
    )
    assert len(pairs) == 800
    assert pairs.iloc[1]["orig_text"] == "A man is prone on the street while another man stands next to him."
    assert pairs.iloc[1]["gen_text"] == "A man is alone on the street."
    assert pairs.iloc[1]["context"].startswith("A man with a beard is talking on the cellphone")
    assert pairs.iloc[1]["target_label"] == "contradiction"


def test_revisions_out_of_order_are_an_error_naming_the_row() -> None:
    original = pd.DataFrame(
        {"sentence1": ["P1.", "P2."], "sentence2": ["H1.", "H2."], "gold_label": ["entailment", "neutral"]}
    )
    revised = pd.DataFrame(
        {"sentence1": ["Q2.", "Q1."], "sentence2": ["H2.", "H1."], "gold_label": ["contradiction", "neutral"]}
    )
    with pytest.raises(InputError, match=r"revised row 1: its hypothesis \('H1.'\) matches no original row"):
        nli_revision_pairs(original, revised, part="premise")
    with pytest.raises(InputError, match="part must be one of"):
        nli_revision_pairs(original, revised, part="both")


def _pairs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "orig_text": ["A dog runs.", "A man sleeps.", "Kids play outside."],
            "gen_text": ["A dog does not run.", "A man sleeps.", "Kids play chess outside."],
            "context": ["A dog runs in a park.", "A tired man sleeps on a bench.", "Kids play outside."],
            "target_label": ["contradiction", "neutral", "neutral"],
        }
    )


def test_pair_classifier_gets_context_first_and_metrics_use_the_revised_input() -> None:
    seen: list[tuple[str, str]] = []

    def clf(pairs: list[tuple[str, str]]) -> np.ndarray:
        seen.extend(pairs)
        return overlap_nli(pairs)

    result = evaluate(
        _pairs(),
        ["flip", "prob_change", "distance"],
        classifier=as_classifier(clf, labels=LABELS),
        context_column="context",
        revised_input="second",  # the texts are hypotheses: the premise (context) goes first
        target_column="target_label",
        bootstrap=200,
    )
    rows = result.rows
    assert ("A dog runs in a park.", "A dog does not run.") in seen
    assert all(isinstance(p, tuple) and len(p) == 2 for p in seen)
    # row 0: entailment (0.7) -> contradiction (0.8): flipped; target contradiction: 0.8 - 0.1
    # row 1: unchanged hypothesis: no flip; target neutral: 0.2 - 0.2
    # row 2: "chess" not in the premise: entailment -> neutral, flipped; target neutral: 0.6 - 0.2
    assert rows["pred_orig"].tolist() == ["entailment", "entailment", "entailment"]
    assert rows["pred_cf"].tolist() == ["contradiction", "entailment", "neutral"]
    assert rows["flipped"].tolist() == [1, 0, 1]
    assert rows["contrast_label"].tolist() == ["contradiction", "neutral", "neutral"]
    assert rows["prob_change"].to_numpy() == pytest.approx([0.7, 0.0, 0.4])
    # distance on the revised input only: "does not run" for "runs" = 3 tokens; one insertion
    assert rows["distance"].tolist() == [3.0, 0.0, 1.0]
    assert result.summary["input"]["columns"]["context"] == "context"
    assert result.summary["input"]["revised_input"] == "second"
    assert result.summary["headline"]["flip_rate"]["mean"] == pytest.approx(2 / 3)


def test_revised_premise_goes_first() -> None:
    seen: list[tuple[str, str]] = []

    def clf(pairs: list[tuple[str, str]]) -> np.ndarray:
        seen.extend(pairs)
        return overlap_nli(pairs)

    frame = pd.DataFrame({"orig_text": ["A cat sits."], "gen_text": ["A cat naps."], "hyp": ["A cat sits."]})
    result = evaluate(frame, ["flip"], classifier=as_classifier(clf, labels=LABELS), context_column="hyp")
    assert set(seen) == {("A cat sits.", "A cat sits."), ("A cat naps.", "A cat sits.")}
    assert result.rows["pred_cf"].tolist() == ["neutral"]


def test_a_single_text_classifier_is_refused_in_a_two_input_evaluation() -> None:
    single = load_classifier("profanity-check")
    result = evaluate(_pairs(), ["flip"], classifier=single, context_column="context", bootstrap=200)
    assert result.summary["errors"][0]["stage"] == "classifier"
    assert "takes one text, but this evaluation gives it text pairs" in result.summary["errors"][0]["message"]
    assert set(result.rows["status"]) == {"partial"}


def test_unknown_target_label_names_the_row_and_the_labels() -> None:
    frame = _pairs().assign(target_label=["contradiction", "neutral", "NEUTRAL"])
    result = evaluate(
        frame,
        ["prob_change"],
        classifier=as_classifier(overlap_nli, labels=LABELS),
        context_column="context",
        revised_input="second",
        target_column="target_label",
        bootstrap=200,
    )
    message = result.summary["errors"][0]["message"]
    assert "row 2: target label 'NEUTRAL' is not one of the classifier's labels" in message


def test_missing_context_skips_the_row_and_bad_options_are_refused() -> None:
    frame = _pairs().assign(context=["A dog runs in a park.", None, "Kids play outside."])
    result = evaluate(
        frame, ["distance"], classifier=None, context_column="context", revised_input="second", bootstrap=200
    )
    assert result.rows["status"].tolist() == ["ok", "skipped:missing_context", "ok"]
    with pytest.raises(ConfigError, match="revised_input must be 'first' or 'second'"):
        evaluate(frame, ["distance"], context_column="context", revised_input="middle")
    with pytest.raises(ConfigError, match="needs a context column"):
        evaluate(frame, ["distance"], revised_input="second")


def test_transformers_pair_model_encodes_two_segments(tiny_hf_classifier_dir: Path) -> None:
    clf = load_classifier(f"hf:{tiny_hf_classifier_dir}")
    pairs = [("A man sleeps.", "A man is awake."), ("A man is awake.", "A man sleeps.")]
    proba = clf.predict_proba(pairs)
    assert proba.shape == (2, 2) and np.allclose(proba.sum(axis=1), 1.0)
    # the segments are encoded apart: [CLS] a [SEP] b [SEP] with token types 0 then 1, not one joined text
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(tiny_hf_classifier_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(tiny_hf_classifier_dir)
    enc = tokenizer(["A man sleeps."], ["A man is awake."], return_tensors="pt")
    assert enc["token_type_ids"][0].tolist().count(1) == len(tokenizer("A man is awake.")["input_ids"]) - 1
    with torch.no_grad():
        by_hand = torch.softmax(model(**enc).logits, dim=-1)[0].numpy()
    assert np.allclose(proba[0], by_hand, atol=1e-6)
    assert np.abs(proba[0] - clf.predict_proba(["A man sleeps. A man is awake."])[0]).max() > 1e-7
    # and through a (model, tokenizer) pair, the same numbers
    assert np.allclose(as_classifier((model, tokenizer)).predict_proba(pairs), proba, atol=1e-6)


@needs_snli
@pytest.mark.slow
def test_cli_builds_snli_pairs_and_evaluates_them(tmp_path: Path) -> None:
    original = pd.read_csv(SNLI / "original" / "test.tsv", sep="\t", quoting=3).head(5)
    revised = pd.read_csv(SNLI / "revised_hypothesis" / "test.tsv", sep="\t", quoting=3).head(10)
    original.to_csv(tmp_path / "original.tsv", sep="\t", index=False)
    revised.to_csv(tmp_path / "revised.tsv", sep="\t", index=False)
    made = run_cli(
        "nli-pairs", str(tmp_path / "original.tsv"), str(tmp_path / "revised.tsv"), "--part", "hypothesis",
        "-o", str(tmp_path / "pairs.csv"),
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    said = " ".join(made.stdout.split())
    assert "10 revisions of 5 originals" in said and "--revised-input second" in said
    (tmp_path / "nli.py").write_text(
        "import numpy as np\n"
        "def clf(pairs):\n"
        "    return np.array([[0.1, 0.1, 0.8] if ' not ' in f' {b} ' or ' no ' in f' {b} ' else [0.6, 0.3, 0.1]\n"
        "                     for a, b in pairs])\n"
        "clf.labels = ['entailment', 'neutral', 'contradiction']\n"
    )
    out = tmp_path / "eval"
    done = run_cli(
        "evaluate", str(tmp_path / "pairs.csv"), "--metrics", "flip,prob_change,distance", "--classifier",
        f"callable:{tmp_path / 'nli.py'}:clf", "--context-column", "context", "--revised-input", "second",
        "--target-column", "target_label", "-o", str(out), "-q",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = pd.read_csv(out / "rows.csv")
    pairs = pd.read_csv(tmp_path / "pairs.csv")
    expected = [int(" not " in f" {h} " or " no " in f" {h} ") for h in pairs["gen_text"]]
    expected = [
        e ^ int(" not " in f" {o} " or " no " in f" {o} ") for e, o in zip(expected, pairs["orig_text"], strict=True)
    ]
    assert rows["flipped"].tolist() == expected
    assert rows["contrast_label"].tolist() == pairs["target_label"].tolist()
    assert (out / "report.html").exists()
