"""The in-memory core: counterfair.generate / evaluate / audit / ctf on lists, DataFrames, dicts and datasets, typed
results, and the README's Python section run as written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import counterfair as cf
from counterfair.errors import ConfigError, InputError
from counterfair.io import read_table

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["My Muslim neighbour is kind.", "I am a gay man.", "Nothing to see."]


def _gay_detector(texts: list[str]) -> np.ndarray:
    return np.array([0.9 if "gay" in t.lower() else 0.1 for t in texts])


@pytest.mark.parametrize("page", ["README.md", "docs/reference/python.md"])
def test_the_readme_python_section_runs_as_written(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (REPO / page).read_text(encoding="utf-8")
    section = re.split(r"^#+ Python\n", text, maxsplit=1, flags=re.M)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    flow = blocks[1].strip().splitlines()
    assert len(flow) <= 6 and flow[0] == "import counterfair as cf"  # the flow of the issue, in six lines
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, page, "exec"), scope)
    aud = scope["aud"]
    assert isinstance(aud, cf.AuditResult)
    assert {"islam", "identity"} <= set(aud.by_method.index.get_level_values("attribute"))
    assert aud.by_group.index.name == "group" and "religion" in aud.by_group.index  # one row per identity group
    assert (tmp_path / "audit-out" / "report.html").exists()
    assert isinstance(scope["gap"], float)


def test_generate_with_method_names_keeps_every_input() -> None:
    records = cf.generate(TEXTS, ["ablation", "swap"], attribute="islam", identities="muslim,christian,gay,straight")
    by_source = {(r.source_id, r.editor): r for r in records if r.editor == "ablation"}
    assert by_source[("0", "ablation")].text == "My neighbour is kind."
    assert by_source[("0", "ablation")].status == "ok" and by_source[("0", "ablation")].edits
    assert by_source[("2", "ablation")].status == "unchanged:no_attribute_term"
    swaps = [r for r in records if r.editor == "swap" and r.status == "ok"]
    # compared without case: the swap copies the source term's capital ("My Gay neighbour"), issue #16's casing item
    assert sorted(r.text.lower() for r in swaps if r.source_id == "0") == [
        "my christian neighbour is kind.",
        "my gay neighbour is kind.",
        "my straight neighbour is kind.",
    ]
    assert {r.provenance["target_term"] for r in swaps if r.source_id == "1"} == {"muslim", "christian", "straight"}
    assert [r.status for r in records if r.editor == "swap" and r.source_id == "2"] == ["unchanged:no_identity_term"]


def test_generate_with_editor_objects() -> None:
    records = cf.generate(TEXTS, [cf.editors.SubstitutionEditor("islam")])
    assert [(r.source_id, r.status, r.text) for r in records] == [
        ("0", "ok", "My Christian neighbour is kind."),
        ("1", "unchanged:no_edit", ""),
        ("2", "unchanged:no_edit", ""),
    ]


def test_generate_reads_a_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import counterfair.io as io_module  # the one input reader, read_texts, reads through io.read_table

    path = tmp_path / "texts.csv"
    pd.DataFrame({"text": TEXTS}).to_csv(path, index=False)
    reads: list[str] = []
    real = io_module.read_table

    def counting(source: object, **kwargs: object) -> pd.DataFrame:
        reads.append(str(source))
        return real(source, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(io_module, "read_table", counting)
    records = cf.generate(str(path), ["substitution", cf.editors.AblationEditor("islam")], attribute="islam")
    assert reads == [str(path)]  # once, for the method names and the editor object alike
    assert {(r.editor, r.text) for r in records if r.status == "ok"} == {
        ("substitution", "My Christian neighbour is kind."),
        ("ablation", "My neighbour is kind."),
    }


def test_evaluate_takes_tuples_records_dicts_frames_and_datasets() -> None:
    import datasets

    tuples = [("a b c", "a b x"), ("d e f", "d e f g")]
    frame = pd.DataFrame(tuples, columns=["orig_text", "gen_text"])
    inputs = [tuples, frame, {"orig_text": ["a b c", "d e f"], "gen_text": ["a b x", "d e f g"]}]
    inputs.append(datasets.Dataset.from_pandas(frame))
    for data in inputs:
        result = cf.evaluate(data, metrics=["distance"])
        assert result.rows["distance"].tolist() == [1, 1]
        assert result.metrics.loc["distance", "mean"] == 1.0
    records = cf.generate(["My Muslim friend."], [cf.editors.AblationEditor("islam")])
    result = cf.evaluate(records, metrics=["distance", "flip"], classifier=_gay_detector)
    assert result.rows["distance"].tolist() == [1] and result.summary["options"]["classifier"].endswith("_gay_detector")
    assert "<table" in result._repr_html_()


def test_bad_inputs_name_the_problem() -> None:
    with pytest.raises(InputError, match="item 1 is a int, expected a string"):
        cf.audit(["fine", 3], _gay_detector)
    with pytest.raises(InputError, match=r"tuples must be \(original, counterfactual"):
        cf.evaluate([("a",)], metrics=["distance"])
    with pytest.raises(ConfigError, match=r"unknown option.*treshold.*the options are"):
        cf.audit(TEXTS, _gay_detector, treshold=0.3)


def test_audit_in_memory_equals_the_shell(tmp_path: Path) -> None:
    options = {"methods": ["ablation", "substitution", "swap"], "identities": "muslim,christian,gay,straight"}
    result = cf.audit(pd.DataFrame({"text": TEXTS}), _gay_detector, **options)
    summary = cf.run_audit(pd.DataFrame({"text": TEXTS}), tmp_path / "run", cf.AuditOptions(**options),
                           classifier=cf.as_classifier(_gay_detector)).summary  # fmt: skip
    shell_pairs = read_table(tmp_path / "run" / "pairs.csv")
    assert result.pairs["cf_text"].tolist() == shell_pairs["cf_text"].tolist()
    np.testing.assert_allclose(result.pairs["diff"], shell_pairs["diff"].astype(float))
    assert result.summary["groups"] == summary["groups"] and result.summary["ctf"] == summary["ctf"]
    lgbq = result.by_method.loc[("swap", "identity")]
    assert lgbq["pairs"] == 6
    # by hand: text 0 -> |0|, |0.8|, |0| (mean 0.267); text 1 -> 0.8 three times; CTF gap = mean over texts = 0.533
    assert result.ctf_gap == pytest.approx((0.8 / 3 + 0.8) / 2)
    # a bare list of terms: each term in the built-in set's group (#49 item 11; was one group "other")
    assert result.ctf_by_group.loc["religion", "ctf_gap"] == pytest.approx(0.8 / 3)  # text 0's word is "Muslim"
    assert result.ctf_by_group.loc["sexuality", "ctf_gap"] == pytest.approx(0.8)  # text 1's is "gay"
    html = result._repr_html_()  # the report page's verdict and tables (its plots are in report.html)
    assert html.index("Verdict: ") < html.index('<table id="summary-table">') and 'id="ctf-table"' in html
    saved = result.save(tmp_path / "saved")
    written = json.loads((saved / "summary.json").read_text())["groups"]
    assert [(g["pairs"], g["score_change"]["mean"]) for g in written] == [
        (g["pairs"], g["score_change"]["mean"]) for g in result.summary["groups"]
    ]
    assert (saved / "report.html").exists()


def test_audit_and_ctf_take_a_hugging_face_dataset(tmp_path: Path) -> None:
    import datasets

    data = datasets.Dataset.from_dict({"text": TEXTS})
    result = cf.audit(data, _gay_detector, methods=["swap"], identities="muslim,christian,gay,straight")
    assert (result.pairs["attribute"] == "identity").sum() == 6  # and the gender words' swaps ("a gay man")
    ctf = cf.ctf(data, _gay_detector, identities="muslim,christian,gay,straight")
    assert ctf.ctf_gap == pytest.approx(result.ctf_gap)
    assert set(ctf.by_group.index) == {"gay", "muslim"}
    shell = cf.run_ctf(data.to_pandas(), tmp_path / "ctf", classifier=_gay_detector,
                       identities="muslim,christian,gay,straight").summary  # fmt: skip
    assert shell["ctf_gap"] == ctf.ctf_gap


def test_one_pair_column_naming_across_audit_ctf_and_evaluate() -> None:
    identities = "muslim,christian,gay,straight"
    data = pd.DataFrame({"key": ["m", "g", "n"], "text": TEXTS})
    audit = cf.audit(data, _gay_detector, methods=["swap"], identities=identities, id_column="key").pairs
    ctf = cf.ctf(data, _gay_detector, identities=identities, id_column="key").pairs
    shared = ["input_id", "source_text", "cf_text", "source_term", "target_term", "score_orig", "score_cf", "diff"]
    assert set(shared) <= set(audit.columns) and set(shared) <= set(ctf.columns)
    # the same swaps under the same names: "I am a gay man." -> straight scores 0.9 -> 0.1
    to_straight = ctf[(ctf["input_id"] == "g") & (ctf["target_term"] == "straight")].iloc[0]
    assert (to_straight["source_text"], to_straight["cf_text"]) == ("I am a gay man.", "I am a straight man.")
    assert to_straight["diff"] == pytest.approx(-0.8)
    key = ["input_id", "cf_text"]
    joined = audit[[*key, "diff"]].merge(ctf[[*key, "diff"]], on=key, suffixes=("_audit", "_ctf"))
    assert len(joined) == len(ctf) == 6
    np.testing.assert_allclose(joined["diff_audit"], joined["diff_ctf"])
    pairs = pd.DataFrame({"key": ["a", "b"], "orig_text": ["a b c", "d e f"], "gen_text": ["a b x", "d e f g"]})
    rows = cf.evaluate(pairs, metrics=["distance"], id_column="key").rows
    assert rows["input_id"].tolist() == ["a", "b"] and "id" not in rows.columns


def _nans(value: object, path: str = "") -> list[str]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _nans(v, f"{path}.{k}")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _nans(v, f"{path}[{i}]")]
    return [path] if isinstance(value, float) and value != value else []


def test_missing_values_none_in_summaries_nan_in_tables(tmp_path: Path) -> None:
    def unsure(texts: list[str]) -> np.ndarray:  # no score for the straight counterfactual
        return np.array([np.nan if "straight" in t else 0.9 if "gay" in t.lower() else 0.1 for t in texts])

    identities = "muslim,christian,gay,straight"
    audit = cf.audit(TEXTS, unsure, methods=["swap"], identities=identities)
    # one bootstrap over a single pair has no CI: None in memory, as in summary.json
    assert _nans(audit.summary) == [] and audit.summary["ctf"]["by_source_term"]["gay"]["ci_low"] is None
    saved = json.loads((audit.save(tmp_path / "audit") / "summary.json").read_text())
    assert {k: v for k, v in saved.items() if k != "schema_version"} == json.loads(json.dumps(audit.summary))
    unscored = audit.pairs[audit.pairs["cf_text"] == "I am a straight man."].iloc[0]
    assert unscored["status"] == "partial:classifier_returned_nan"
    assert all(v is not None for v in audit.pairs.to_numpy().ravel())  # a missing cell is NaN, never None
    assert pd.isna(unscored["flipped"]) and pd.isna(unscored["score_cf"])
    ctf = cf.ctf(TEXTS, unsure, identities=identities)
    assert _nans(ctf.summary) == [] and ctf.summary["pairs_without_score"] == 2
    ev = cf.evaluate([("a b", "a c"), ("", "x")], metrics=["distance"])
    assert _nans(ev.summary) == [] and ev.rows["status"].tolist() == ["ok", "skipped:empty_original"]
    assert all(v is not None for v in ev.rows.to_numpy().ravel())


def test_hf_dataset_spec_is_read_from_a_saved_directory(tmp_path: Path) -> None:
    import datasets

    datasets.DatasetDict({"test": datasets.Dataset.from_dict({"text": TEXTS})}).save_to_disk(str(tmp_path / "ds"))
    frame = read_table(f"hf-dataset:{tmp_path / 'ds'}:test")
    assert frame["text"].tolist() == TEXTS
    summary = cf.run_ctf(f"hf-dataset:{tmp_path / 'ds'}:test", tmp_path / "out", classifier=_gay_detector,
                         identities="muslim,christian,gay,straight").summary  # fmt: skip
    assert summary["input"]["texts"] == 3
    with pytest.raises(InputError, match="cannot load the dataset"):
        read_table(f"hf-dataset:{tmp_path / 'ds'}:validation")


def test_feedback_in_memory_equals_the_shell(tmp_path: Path) -> None:
    from .fakes import ListEditor

    def sentiment(texts: list[str]) -> np.ndarray:
        return np.array([[0.9, 0.1] if "boring" in t else [0.2, 0.8] for t in texts])

    editor = ListEditor(
        lambda text: ([text.replace("boring", "gripping")] if "boring" in text else []) + [text + " indeed"]
    )
    texts = ["a boring film", "a fine film", ""]
    result = cf.feedback(texts, editor, cf.as_classifier(sentiment, labels=["NEG", "POS"]), steps=2, ppl_model=None)
    assert isinstance(result, cf.FeedbackResult)
    first = result.steps[result.steps["text_id"] == 0]
    # step 1 flips with the minimal edit (1 word); steps 2-3 cannot flip back, so the closest candidate (+1 word)
    assert first["text"].tolist() == ["a gripping film", "a gripping film indeed", "a gripping film indeed indeed"]
    assert first["flipped"].tolist() == [True, False, False]
    assert result.steps[result.steps["text_id"] == 2]["status"].tolist() == ["skipped:empty_text"]
    assert result.inconsistency["inc@1"] == pytest.approx(0.0)  # distances 1, 1, 1 for text 0 and 1
    assert list(result.by_step.index) == ["1", "2", "3"]
    from counterfair.commands.feedback.core import FeedbackOptions
    from counterfair.commands.feedback.shell import run_feedback

    result = run_feedback(pd.DataFrame({"text": texts}), tmp_path, FeedbackOptions(steps=2, ppl_model=None),
                          editor=editor, classifier=cf.as_classifier(sentiment, labels=["NEG", "POS"]))  # fmt: skip
    summary = result.summary

    def measured(steps: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:  # not timings
        return {k: {m: v for m, v in row.items() if m != "seconds_per_text"} for k, row in steps.items()}

    assert summary["inconsistency"] == result.summary["inconsistency"]
    assert measured(summary["steps"]) == measured(result.summary["steps"])
    shown = _printed(result)
    # step 1: both texts edited once (1 word each), one of two flips; the inputs average 3 words (the empty one skipped)
    assert "step 1: 2 texts, flip rate 0.500, minimality 1.000" in shown  # the page's lines, in the console
    assert "The inputs: 3.0 words on average" in shown and shown.startswith("Verdict: ")  # the verdict first


def _printed(result: object) -> str:
    """What ``rich.print(result)`` shows, as plain text."""
    from rich.console import Console

    console = Console(record=True, width=140)
    console.print(result)
    return " ".join(console.export_text().split())


def test_results_print_the_commands_console_tables() -> None:
    identities = "muslim,christian,gay,straight"
    audit = _printed(cf.audit(TEXTS, _gay_detector, methods=["swap"], identities=identities, placebo=None))
    # swap/identity: 6 pairs; text 1 (gay) -> three 0.1 swaps (-0.8 each), text 0 -> one to gay (+0.8), two 0
    assert "│ swap │ identity │ 3 │ 2 │ -0.267 [-0.800, 0.267] │ 0.533 │ 4 of 6 (66.7%) │" in audit
    assert audit.startswith("Verdict: CTF gap 0.533 [0.267, 0.800] over identity swaps")  # the audit's page
    assert "│ sexuality │ 1 │ 3 │ 0.800 │" in audit  # the CTF gap by group (one text: no interval)
    ctf = _printed(cf.ctf(TEXTS, _gay_detector, identities=identities))
    # the ctf page in the console: its tables, then its verdict (text 1's three swaps of 0.8, text 0's one in three)
    assert "Verdict: CTF gap 0.533 [0.267, 0.800] over 2 texts and 6 identity swaps" in ctf
    assert "Classifier python:_gay_detector (score = probability of 1)" in ctf
    ev = _printed(cf.evaluate([("a b c", "a b x"), ("d e f", "d e f g")], metrics=["distance"]))
    assert "2 pairs from DataFrame, 2 scored (ok 2)" in ev and "│ distance │ 2 │ 1.000 [1.000, 1.000] │" in ev


def test_every_public_argument_is_checked_with_a_sentence(tmp_path: Path) -> None:
    """#35 item 11: methods="ablation" was split into letters, labels= could name a class twice, and batch_size=0,
    threshold="x" or a tensor that requires grad ended in raw errors."""
    texts = ["I am gay.", "Muslims pray."]
    assert {r.editor for r in cf.generate(texts, "ablation,swap", progress=False)} == {"ablation", "swap"}
    audit = cf.audit(texts, "profanity-check", methods="swap", progress=False)
    assert set(audit.pairs["method"]) == {"swap"}
    for call, message in (
        (lambda: cf.as_classifier(lambda t: [0.5] * len(t), labels=["a", "a"]), "labels= names a class twice"),
        (lambda: cf.as_classifier(lambda t: [0.5] * len(t), batch_size=0), "batch_size must be a whole number"),
        (lambda: cf.audit(texts, "profanity-check", threshold="x"), "option threshold: expected a number, got 'x'"),
        (lambda: cf.ctf(texts, "profanity-check", seed=1.5), "option seed: expected a whole number, got 1.5"),
        (lambda: cf.audit(texts, "profanity-check", guard="no"), "option guard: expected True or False"),
        (lambda: cf.generate(texts, ["swap"], identities=3), "option identities: expected a string, got 3"),
    ):
        with pytest.raises(ConfigError, match=message):
            call()
    # a file option may be a Path
    identities = tmp_path / "ids.txt"
    identities.write_text("gay\nstraight\nmuslim\nchristian\n")
    assert "I am straight." in {r.text for r in cf.generate(texts, ["swap"], identities=identities, progress=False)}
    # numpy's numbers and booleans are numbers and booleans (a seed drawn with numpy, a threshold from an array)
    import numpy as np

    audit_np = cf.audit(texts, "profanity-check", methods=["swap"], threshold=np.float32(0.4), guard=np.bool_(False),
                        seed=np.int64(3), progress=False)  # fmt: skip
    assert audit_np.typed_summary.options["seed"] == 3 and audit_np.typed_summary.options["guard"] is False
    # ... and one that reads a comma-separated string may be a list
    assert [r.text for r in cf.generate(["I am gay."], ["swap"], identities=["gay", "straight"], progress=False)] == [
        "I am straight."
    ]
    torch = pytest.importorskip("torch")
    clf = cf.as_classifier(lambda t: torch.full((len(t),), 0.25, requires_grad=True), labels=["ok", "toxic"])
    assert clf.predict_proba(["a text"]).tolist() == [[0.75, 0.25]]


def test_audit_pairs_show_edits_as_plain_columns(tmp_path: Path) -> None:
    """#31: aud.pairs held the edits as JSON strings; pairs.csv keeps them (its format), the result shows plain text."""
    audit = cf.audit(["My Muslim neighbour is kind."], "profanity-check", methods=["ablation"], progress=False)
    row = audit.pairs.iloc[0]
    assert "edits" not in audit.pairs.columns
    assert (row["removed"], row["inserted"], row["n_edits"]) == ("Muslim ", "", 1)
    assert json.loads(audit.raw_pairs.iloc[0]["edits"]) == [{"start": 3, "end": 10, "old": "Muslim ", "new": ""}]
    saved = pd.read_csv(audit.save(tmp_path / "run") / "pairs.csv")
    assert json.loads(saved.iloc[0]["edits"])[0]["old"] == "Muslim "
    # no filter ran (no LLM): the report has no column of dashes for it
    assert "filter pass rate" not in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    # the same plain table as a Hugging Face dataset (#31), one row per pair
    dataset = audit.to_dataset()
    assert dataset.num_rows == len(audit.pairs)
    assert dataset[0]["removed"] == "Muslim " and dataset[0]["cf_text"] == "My neighbour is kind."
