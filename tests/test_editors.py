from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from counterfair.editors.blind import Blindness
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.errors import ModelNotAvailable
from counterfair.lexicons.attributes import load_attribute, load_identity_set


def test_ablation_like_paper_000_table_2() -> None:
    editor = AblationEditor(load_attribute("islam"))
    [[first], [second], none] = editor.edit(
        [
            "So you are saying it's OK? An apologist for Islamic terrorism?",
            'Shocking that this article didn\'t once mention "islam", "islamic" or "Muslim".',
            "Nothing to remove here.",
        ]
    )
    assert first.text == "So you are saying it's OK? An apologist for terrorism?"
    assert second.text == 'Shocking that this article didn\'t once mention "", "" or "".'
    assert none == []
    assert [(e.old, e.new) for e in first.edits] == [("Islamic ", "")]


def test_substitution_case_and_multiword() -> None:
    editor = SubstitutionEditor(load_attribute("islam"))
    [[cand]] = editor.edit(["MUSLIMS say Islamophobia is real; the Muslim man went to the mosque."])
    assert cand.text == "CHRISTIANS say Anti-christian bias is real; the Christian man went to the church."
    trans = SubstitutionEditor(load_attribute("transgender"))
    [[t]] = trans.edit(["Transgender athletes and the bathroom debate"])
    assert t.text == "Cisgender athletes and the bathroom debate"  # bathroom has no substitute


def test_swap_is_phi_a_with_directions() -> None:
    editor = IdentitySwapEditor(load_identity_set("straight,gay,black,christian"), guard=None)
    [variants] = editor.edit(["Some people are straight."])
    assert [v.text for v in variants] == [
        "Some people are gay.",
        "Some people are black.",
        "Some people are Christian.",  # a proper adjective keeps its capital (#16 item 3)
    ]
    assert [(v.meta["source_term"], v.meta["target_term"]) for v in variants] == [
        ("straight", "gay"),
        ("straight", "black"),
        ("straight", "christian"),
    ]


def test_swap_two_terms_swaps_both_ways_once() -> None:
    editor = IdentitySwapEditor(load_identity_set("gay,straight,muslim"), guard=None)
    [variants] = editor.edit(["A gay man and a straight woman."])
    texts = [v.text for v in variants]
    assert "A straight man and a gay woman." in texts  # Φ_{gay,straight} swaps both
    assert texts.count("A straight man and a gay woman.") == 1  # not again for (straight, gay)
    assert "A Muslim man and a straight woman." in texts and "A gay man and a Muslim woman." in texts
    assert len(texts) == 3


def test_swap_fixes_articles_and_keeps_case() -> None:
    editor = IdentitySwapEditor(load_identity_set("muslim,asian,european"), guard=None)
    [variants] = editor.edit(["She is a Muslim teacher, an Asian doctor."])
    texts = {v.meta["target_term"]: v.text for v in variants if v.meta["source_term"] == "muslim"}
    # Φ_{muslim,asian} swaps both ways, fixing each article
    assert texts["asian"] == "She is an Asian teacher, a Muslim doctor."
    assert texts["european"] == "She is a European teacher, an Asian doctor."  # 'eu' takes 'a'


def test_swap_multiword_terms() -> None:
    editor = IdentitySwapEditor(load_identity_set(), guard=None)
    [variants] = editor.edit(["My middle aged neighbour"])
    assert len(variants) == 49
    assert {v.meta["source_term"] for v in variants} == {"middle aged"}
    assert any(v.text == "My African American neighbour" for v in variants)
    assert all(v.meta["source_split"] == "heldout" for v in variants)


@pytest.mark.parametrize(
    ("text", "swapped"),
    [
        ("A black man walked by.", True),
        ("He drove a black car.", False),
        ("She has a black eye.", False),
        ("An old house stood on the hill.", False),
        ("Old people deserve respect.", True),
        ("I am old.", True),
        ("The house is old.", False),
        ("He is black and proud.", True),
        ("The White House said no.", False),
        ("He gave a straight answer.", False),
        ("I am straight.", True),
        ("She is a Muslim.", True),  # unambiguous: always
        ("a Muslim prayer", True),
        ("The elderly need care.", True),
        ("a blind spot", False),
        # #35 item 12: an adverb, a mention, a strict adjective said of a thing, an adjective the parse misplaced
        ("Go straight ahead.", False),
        ("The night is young.", False),
        ('"Black" is a colour.', False),
        ("My deaf neighbour signs.", True),
        ("My neighbour is old.", True),
        ("Being young is hard.", True),
    ],
)
def test_guard_keeps_non_identity_uses(text: str, swapped: bool) -> None:
    editor = IdentitySwapEditor(load_identity_set(), guard="spacy")
    [variants] = editor.edit([text])
    assert bool(variants) is swapped


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("There were white nationalists in the town.", {"white"}),
        ("Justin is the poster child for white privilege.", {"white"}),
        ("He is a straight white man.", {"straight", "white"}),
        ("Canada is mostly white.", {"white"}),
        ("Her male counterparts earn more.", {"male"}),
        ("Trans fats are bad for you.", set()),
        ("Black and white thinking helps nobody.", set()),
        ("Your plea will fall upon deaf ears.", set()),
        # #49 item 12 (guard/3), from the labelled Civil Comments of benchmarks/guard_accuracy.py
        ("You're a straight white male, aren't you?", {"straight", "white", "male"}),
        ("Are there no older homosexuals?", {"older", "homosexual"}),
        ("He is deaf to our pleas.", set()),
        ("Othering your political opponents is as old as Ancient Greece.", set()),
        ("40 male", {"male"}),  # a comment that is the word (and an age) answers who someone is
        ("Whoever wrote this is old.", {"old"}),
    ],
)
def test_guard_on_comment_like_uses(text: str, kept: set[str]) -> None:
    """Cases taken from the kinds of blocked occurrences the Civil Comments benchmark showed."""
    editor = IdentitySwapEditor(load_identity_set(), guard="spacy")
    [matches] = editor.identity_matches([text])
    assert {m.term.lower() for m in matches} == kept


GUARD_TEXTS = [
    "A black man walked by.",
    "He drove a black car.",
    "Her male counterparts earn more.",
    "male anatomy",
    "It was white on white crime.",
    "I detest trans people.",
    "She got a black eye.",
    "The house is old.",
]
GUARD_KEPT = [1, 0, 1, 1, 1, 1, 0, 0]


@pytest.mark.slow
def test_guard_gives_one_answer_whatever_is_installed() -> None:
    """Issue #34: the guard once fell back to a stricter rule without Debian's WordNet ("I detest trans people." was
    left unswapped). It now reads the table counterfair ships: the same answers with NLTK and WordNet made unimportable.
    """
    editor = IdentitySwapEditor(load_identity_set(), guard="spacy")
    assert editor.params()["guard_rule"] == "guard/3 wordnet-3.0-nouns/1"
    here = [len(k) for k in editor.identity_matches(GUARD_TEXTS)]
    assert here == GUARD_KEPT
    script = (
        "import sys, json; sys.modules['nltk'] = None\n"
        "from counterfair.editors.swap import IdentitySwapEditor\n"
        "from counterfair.lexicons.attributes import load_identity_set\n"
        "e = IdentitySwapEditor(load_identity_set(), guard='spacy')\n"
        f"print(json.dumps([len(k) for k in e.identity_matches({GUARD_TEXTS!r})]))\n"
    )
    env = {**os.environ, "COUNTERFAIR_WORDNET": "/nonexistent"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout) == here


def test_wordnet_files_are_copied_whole_into_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each WordNet file reaches the cache under a name of its own and is renamed into place whole, so a second process
    (an audit beside another, a test worker) never reads a half-copied file; nothing temporary is left."""
    from counterfair.lexicons.wordnet import DEBIAN_DIR, load_wordnet

    if not (Path(DEBIAN_DIR) / "data.noun").exists():
        pytest.skip("Debian's WordNet is not installed (make system-deps)")
    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path))
    load_wordnet.cache_clear()
    try:
        reader = load_wordnet()
    finally:
        load_wordnet.cache_clear()  # the next test reads the usual cache again
    copied = tmp_path / "wordnet" / "corpora" / "wordnet"
    assert not [p.name for p in copied.iterdir() if p.name.startswith(".")]
    for name in ("data.noun", "index.noun"):
        assert (copied / name).read_bytes() == (Path(DEBIAN_DIR) / name).read_bytes()
    assert reader.synsets("dog", "n")[0].lexname() == "noun.animal"


def test_guard_table_answers_as_nltk_over_wordnet() -> None:
    """The shipped noun table against NLTK's synsets over Debian's WordNet, on every form a sample of lemmas yields."""
    from counterfair.lexicons.nouns import CONCRETE_LEXNAMES, noun_facts
    from counterfair.lexicons.wordnet import load_wordnet

    try:
        reader = load_wordnet()
    except ModelNotAvailable:
        pytest.skip("Debian's WordNet is not installed (make system-deps)")
    facts = noun_facts()
    lemmas = sorted(lemma for lemma, by_pos in reader._lemma_pos_offset_map.items() if "n" in by_pos)[::97]
    forms = {f for lemma in lemmas for f in (lemma, lemma + "s", lemma + "es", lemma[:-1] + "ies", lemma + "x")}
    forms |= {"cars", "ears", "fats", "black_eye", "black_eyes", "white_lie", "men", "mice", "blind_spot", "person"}
    checked = 0
    for form in sorted(forms):
        synsets = reader.synsets(form, "n")
        names = [s.lexname() for s in synsets[:2]]
        concrete = bool(names) and names[0] in CONCRETE_LEXNAMES and "noun.person" not in names
        compound = bool(names) and "_" in form and names[0] != "noun.person"
        assert (facts.concrete(form), facts.compound(form)) == (concrete, compound), form
        checked += 1
    assert checked > 5000
    assert facts.concrete("cars") and facts.compound("black_eye") and not facts.concrete("men")


def test_guard_counts_what_it_blocked() -> None:
    editor = IdentitySwapEditor(load_identity_set(), guard="spacy")
    editor.edit(["A black man drove a black car past an old house."])
    assert editor.found == 3
    assert editor.blocked == 2


def test_blindness_is_one_to_one_and_idempotent() -> None:
    blind = Blindness()
    texts = ["Some people are gay.", "A middle aged Muslim woman.", "Nothing here."]
    once = blind.fit_transform(texts)
    assert once == ["Some people are identity.", "A identity identity woman.", "Nothing here."]
    assert blind.transform(once) == once
    assert Blindness(split="train").transform(["gay and asian"]) == ["gay and identity"]  # gay is held out
    with pytest.raises(ValueError, match="is itself an identity term"):
        Blindness(token="gay").fit(["x"])


# ------------------------------------------------ swaps that reach real text (#16 items 2-3, #20 items 14-16)

GRAMMAR_SET = "muslim,christian,jewish,gay,straight,black,white,chinese,transgender,trans,american,asian"


@pytest.mark.parametrize(
    ("text", "source", "target", "expected"),
    [
        # plurals and nouns are matched and become the target's form of the same number
        ("Muslims are a plague.", "muslim", "christian", "Christians are a plague."),
        ("Muslims are a plague.", "muslim", "gay", "Gay people are a plague."),
        ("I can't stand Jews.", "jewish", "muslim", "I can't stand Muslims."),
        ("Every Jew I know agrees.", "jewish", "asian", "Every Asian I know agrees."),
        ("MUSLIMS OUT", "muslim", "christian", "CHRISTIANS OUT"),
        # an adjective used as a noun gets the target's noun
        ("His therapist is a Chinese.", "chinese", "transgender", "His therapist is a transgender person."),
        ("His therapist is a Chinese.", "chinese", "american", "His therapist is an American."),
        ("The Chinese are rude.", "chinese", "jewish", "The Jews are rude."),
        ("a Chinese restaurant", "chinese", "jewish", "a Jewish restaurant"),  # an adjective stays one
        # proper adjectives keep their capital; others do not borrow one; a sentence's first word gets one
        ("Some people are straight.", "straight", "christian", "Some people are Christian."),
        ("My Muslim neighbour is kind.", "muslim", "gay", "My gay neighbour is kind."),
        ("Muslim families live here.", "muslim", "gay", "Gay families live here."),
        ('He said: "muslim kids are loud".', "muslim", "gay", 'He said: "Gay kids are loud".'),
        ("Muslim Leaders Meet Today", "muslim", "gay", "Gay Leaders Meet Today"),
        ("New Muslim Leaders Meet", "muslim", "gay", "New Gay Leaders Meet"),  # a title that starts the text
        ("Every Muslim I know fasts.", "muslim", "gay", "Every gay person I know fasts."),  # "I" is no title
        ("I met a Muslim yesterday.", "muslim", "gay", "I met a gay person yesterday."),  # a noun, by the parse
        ("He became a Muslim in 2001.", "muslim", "gay", "He became a gay person in 2001."),
        ("She is a Muslim community leader.", "muslim", "gay", "She is a gay community leader."),
        # "a"/"an" agree with the new word
        ("She is a Muslim teacher.", "muslim", "american", "She is an American teacher."),
        ("She is an American teacher.", "american", "gay", "She is a gay teacher."),
        # the guard: a capitalised term tagged as an organisation, quoted speech, dehumanising nouns
        ("I met a Black man yesterday.", "black", "white", "I met a white man yesterday."),
        (
            'He said "trans people are scum" and left.',
            "trans",
            "christian",
            'He said "Christian people are scum" and left.',
        ),
        ("They are common black trash.", "black", "white", "They are common white trash."),
        ("Get rid of the trans vermin.", "trans", "gay", "Get rid of the gay vermin."),
    ],
)
def test_grammatical_swaps(text: str, source: str, target: str, expected: str) -> None:
    editor = IdentitySwapEditor(load_identity_set(GRAMMAR_SET), guard="spacy")
    [variants] = editor.edit([text])
    by_pair = {(v.meta["source_term"], v.meta["target_term"]): v.text for v in variants}
    assert by_pair[(source, target)] == expected


@pytest.mark.parametrize("text", ["The White House said no.", "I love Black Sabbath.", "She works at White Castle."])
def test_the_guard_still_blocks_names_that_hold_a_term(text: str) -> None:
    editor = IdentitySwapEditor(load_identity_set(GRAMMAR_SET), guard="spacy")
    assert editor.edit([text]) == [[]]
    assert editor.last_counts == [(1, 1)]


def test_tokens_only_is_paper_001s_phi_a() -> None:
    editor = IdentitySwapEditor(load_identity_set("muslim,american,gay"), guard=None, grammar=False)
    [variants] = editor.edit(["A Muslim is here. Muslims too."])
    texts = {v.meta["target_term"]: v.text for v in variants}
    assert texts == {"american": "A American is here. Muslims too.", "gay": "A Gay is here. Muslims too."}


def test_a_users_forms_file_is_checked_and_used(tmp_path: Path) -> None:
    from counterfair.errors import ConfigError

    good = tmp_path / "set.yaml"
    good.write_text("terms: [sikh, hindu]\nforms:\n  hindu: [Hindu, Hindu, Hindus]\n  sikh: [Sikh, Sikh, Sikhs]\n")
    editor = IdentitySwapEditor(load_identity_set(str(good)), guard=None)
    assert [v.text for v in editor.edit(["Sikhs pray."])[0]] == ["Hindus pray."]
    bad = tmp_path / "bad.yaml"
    bad.write_text("terms: [sikh, hindu]\nforms:\n  hindu: [Hindu, Hindus]\n")
    with pytest.raises(ConfigError, match=r"forms.hindu must be \[adjective, noun, plural"):
        load_identity_set(str(bad))


def test_ablation_removes_hyphenated_words_whole() -> None:
    """#16 item 11: "anti-Semitism" became "anti-"."""
    judaism, islam = AblationEditor("judaism"), AblationEditor("islam")
    assert judaism.ablate("He fights anti-semitism daily.")[0] == "He fights daily."
    assert judaism.ablate("Anti-Semitism is rising.")[0] == "is rising."
    assert islam.ablate("A Muslim-majority country.")[0] == "A majority country."
    assert islam.ablate("a pro-Islam rally")[0] == "a rally"
    _, edits = judaism.ablate("He fights anti-semitism daily.")
    assert [(e.start, e.end, e.old) for e in edits] == [(10, 24, "anti-semitism ")]


def test_the_gender_swap_parses_its_texts_in_batches_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """#86 item 1: the gender swap parsed each text on its own (``nlp(text)``: half of a large audit's time). It
    parses the texts it needs ahead, in ``nlp.pipe`` batches, each once; the candidates are those of one at a time."""
    import spacy.language

    from counterfair.editors import guard
    from counterfair.editors.gender import GenderSwapEditor

    texts = [f"My wife said she would call her sister on day {i}." for i in range(40)]
    texts += [f"He told his boss about it on day {i}." for i in range(40)] + ["Nothing gendered here."]
    editor = GenderSwapEditor()
    guard.forget_parses()
    alone = [editor.rewrite(t, "swap")[0] for t in texts]  # the rewrite parses what it needs, one text at a time
    one_at_a_time = [None if new == text else new for new, text in zip(alone, texts, strict=True)]
    guard.forget_parses()
    counts = {"one": 0, "piped": 0}
    call, pipe = spacy.language.Language.__call__, spacy.language.Language.pipe

    def counted_call(self: Any, text: str, *args: Any, **kwargs: Any) -> Any:
        counts["one"] += 1
        return call(self, text, *args, **kwargs)

    def counted_pipe(self: Any, docs: Any, *args: Any, **kwargs: Any) -> Any:
        for doc in pipe(self, docs, *args, **kwargs):
            counts["piped"] += 1
            yield doc

    monkeypatch.setattr(spacy.language.Language, "__call__", counted_call)
    monkeypatch.setattr(spacy.language.Language, "pipe", counted_pipe)
    out = editor.edit(texts)
    assert counts == {"one": 0, "piped": 80}  # the 80 gendered texts, each once, all in batches
    swapped = [next((c.text for c in cands if c.meta.get("direction") == "swap"), None) for cands in out]
    assert swapped == one_at_a_time
