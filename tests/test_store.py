"""The run store: content-addressed results reused across runs."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from counterfair import store as store_module
from counterfair.classifiers import load_classifier
from counterfair.store import RunStore, content_key, default_store


@pytest.fixture
def shared_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunStore]:
    monkeypatch.setenv("COUNTERFAIR_STORE", str(tmp_path / "store.sqlite"))
    store_module._open.cache_clear()
    store = default_store()
    assert store is not None
    yield store
    store_module._open.cache_clear()


def test_keys_and_first_result_wins(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "s.sqlite")
    a = content_key("c", {"p": 1}, {"id": "m", "sha256": "x"}, "text")
    assert a != content_key("c", {"p": 2}, {"id": "m", "sha256": "x"}, "text")
    assert a != content_key("c", {"p": 1}, {"id": "m", "sha256": "y"}, "text")
    assert a != content_key("c", {"p": 1}, {"id": "m", "sha256": "x"}, "text ")
    store.put_many([(a, "c", [1, 2])])
    store.put_many([(a, "c", [9, 9])])
    assert store.get_many([a, "missing"]) == {a: [1, 2]}
    assert store.stats() == {"c": 1}
    assert default_store() is None  # the test suite runs with the store off (conftest)


def test_classifier_predictions_are_reused_across_runs(shared_store: RunStore, tmp_path: Path) -> None:
    import joblib
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    model = make_pipeline(CountVectorizer(), LogisticRegression()).fit(["good", "bad", "fine", "awful"], [1, 0, 1, 0])
    joblib.dump(model, tmp_path / "m.joblib")
    first = load_classifier(f"sklearn:{tmp_path / 'm.joblib'}")
    expected = first.predict_proba(["good day", "bad day"])
    second = load_classifier(f"sklearn:{tmp_path / 'm.joblib'}")  # a new run: empty in-memory cache
    second.inner.predict_proba = None  # type: ignore[attr-defined]  # the model must not be called again
    assert (second.predict_proba(["good day", "bad day"]) == expected).all()
    assert shared_store.stats()["classifier"] == 2


def test_unpinned_classifiers_are_not_stored(shared_store: RunStore, helper_module: str) -> None:
    clf = load_classifier(f"callable:{helper_module}:keyword")
    clf.predict_proba(["awful"])
    assert clf.store is None and "classifier" not in shared_store.stats()


def test_generation_is_reused_across_runs(
    shared_store: RunStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate
    from counterfair.editors.wordlist import AblationEditor

    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque is open late."]})
    options = GenerateOptions(methods=["ablation"], score_methods=[])
    first = run_generate(data, tmp_path / "one", options)

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the editor ran although its results were stored")

    monkeypatch.setattr(AblationEditor, "edit", must_not_run)
    second = run_generate(data.iloc[::-1].reset_index(drop=True), tmp_path / "two", options)  # other rows, same texts
    assert sorted(second.counterfactuals["text"]) == sorted(first.counterfactuals["text"])
    assert shared_store.stats()["generate:ablation"] == 2


@pytest.mark.model
def test_model_scores_are_reused(shared_store: RunStore) -> None:
    from counterfair.metrics.bertscore import BERTScoreScorer
    from counterfair.metrics.perplexity import PerplexityScorer

    texts = ["A short sentence about the weather.", "Another one, about trains."]
    first = PerplexityScorer().score(texts)
    again = PerplexityScorer()
    second = again.score(texts)
    assert again.tokens_forwarded == 0  # nothing went through the LM
    assert (second.perplexity == first.perplexity).all()
    b1 = BERTScoreScorer().score(texts, texts[::-1])
    b2 = BERTScoreScorer().score(texts, texts[::-1])
    assert (b1.f1 == b2.f1).all()
    assert shared_store.stats() == {"perplexity": 2, "bertscore": 2}


def test_damaged_or_mismatched_values_are_misses_never_crashes_or_wrong_numbers(
    shared_store: RunStore, tmp_path: Path
) -> None:
    """#35: malformed JSON, a string, a 3-value row for a 2-label classifier and a wrong generation record in the
    store were a crash or, worse, wrong scores in pairs.csv; each is now dropped with one warning and recomputed."""
    import joblib
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from counterfair.commands.generate.options import GenerateOptions
    from counterfair.commands.generate.shell import run_generate

    model = make_pipeline(CountVectorizer(), LogisticRegression()).fit(["good", "bad", "fine", "awful"], [1, 0, 1, 0])
    joblib.dump(model, tmp_path / "m.joblib")
    spec = f"sklearn:{tmp_path / 'm.joblib'}"
    texts = ["good day", "bad day", "fine day"]
    expected = load_classifier(spec).predict_proba(texts)
    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque is open late."]})
    options = GenerateOptions(methods=["ablation"], score_methods=[])
    clean = run_generate(data, tmp_path / "clean", options).counterfactuals
    db = shared_store._db()
    rows = db.execute("SELECT key, component FROM results ORDER BY key").fetchall()
    classifier_keys = [k for k, c in rows if c == "classifier"]
    generation_keys = [k for k, c in rows if c == "generate:ablation"]
    damage = ["{not json", '"a string"', "[0.1, 0.2, 0.7]"]  # the last: 3 values for a 2-label classifier
    for key, value in zip(classifier_keys, damage, strict=True):
        db.execute("UPDATE results SET value = ? WHERE key = ?", (value, key))
    db.execute("UPDATE results SET value = ? WHERE key = ?", ('{"counterfactual": {"text": "x"}}', generation_keys[0]))
    db.commit()

    with pytest.warns(store_module.StoreWarning, match="3 damaged or mismatched cached values were dropped"):
        again = load_classifier(spec).predict_proba(texts)
    assert (again == expected).all()
    with pytest.warns(store_module.StoreWarning, match="1 damaged"):
        regenerated = run_generate(data, tmp_path / "again", options).counterfactuals
    pd.testing.assert_frame_equal(regenerated, clean)
    # the recomputed values replaced the damaged ones: the next run reads them without a warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert (load_classifier(spec).predict_proba(texts) == expected).all()


def test_guard_verdicts_are_stored_and_a_text_met_again_is_not_parsed(
    shared_store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#50: the guard's verdicts per text go to the run store; a second editor (a rerun) reads them instead of
    parsing, and writes the same variants. A damaged or partial stored value is a miss: the text is parsed again."""
    from counterfair.editors import guard as guard_module
    from counterfair.editors import swap as swap_module
    from counterfair.editors.guard import forget_parses
    from counterfair.editors.swap import IdentitySwapEditor
    from counterfair.lexicons.attributes import load_identity_set

    texts = ["The black car is fast.", "A black woman spoke.", "Muslims pray here.", "The White House is old."]
    first = IdentitySwapEditor(load_identity_set(), guard="spacy")
    expected = first.edit(texts)
    assert first.blocked == 3  # the car, the White House and the old house: the rule, not the store
    assert shared_store.stats() == {"guard": 3}  # the three texts with an ambiguous term, each once

    parsed: list[str] = []
    real = guard_module.parse_all
    for module in (guard_module, swap_module):  # the guard's parses and the swap's grammar's
        monkeypatch.setattr(module, "parse_all", lambda ts: parsed.extend(ts) or real(ts))
    forget_parses()
    again = IdentitySwapEditor(load_identity_set(), guard="spacy")
    assert again.edit(texts) == expected and again.blocked == 3
    assert parsed == ["A black woman spoke."]  # only the grammar's: is "black" after "A" a noun or a modifier?

    db = shared_store._db()
    key = db.execute("SELECT key FROM results WHERE value LIKE '%false%' ORDER BY key LIMIT 1").fetchone()[0]
    db.execute("UPDATE results SET value = ? WHERE key = ?", ("[[0, 1, 2]]", key))
    db.commit()
    parsed.clear()
    forget_parses()
    third = IdentitySwapEditor(load_identity_set(), guard="spacy")
    with pytest.warns(store_module.StoreWarning, match="1 damaged or mismatched"):
        assert third.edit(texts) == expected
    assert len([t for t in parsed if t != "A black woman spoke."]) == 1  # the damaged text, parsed again


def test_content_keys_serialise_the_shared_part_once_and_keep_every_key() -> None:
    """#50: ``content_keys`` serialises component, parameters and model once for many inputs; each key is still the
    sha256 of the whole list with the input's digest last, so stores written before find their results."""
    import hashlib
    import json

    from counterfair.store import content_keys

    params = {"terms": ["gay", "muslim"], "rule": "guard/2"}
    model = {"id": "m", "version": "1"}
    for text in ["A black car.", "x \ud800 lone surrogate", ""]:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        whole = json.dumps(["guard", params, model, digest], sort_keys=True, default=str, separators=(",", ":"))
        assert content_keys("guard", params, model)(text) == hashlib.sha256(whole.encode()).hexdigest()
    assert content_keys("classifier", {"p": 1}, None)("t") == content_key("classifier", {"p": 1}, None, "t")
