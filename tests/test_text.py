from __future__ import annotations

from pathlib import Path

import pytest

from counterfair.records import Edit
from counterfair.text import TermMatcher, match_case, tokenize, tokenize_batch, word_distance


def test_tokenize_splits_clitics_and_punctuation_and_drops_spaces() -> None:
    assert tokenize("I don't like it,  really!") == ["I", "do", "n't", "like", "it", ",", "really", "!"]


def test_tokenize_batch_equals_tokenize() -> None:
    texts = ["A spoiler.  What three words?", "", "e-mail me"]
    assert tokenize_batch(texts) == [tokenize(t) for t in texts]
    assert tokenize("") == []


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("the cat sat", "the cat sat", 0),
        ("the cat sat", "the dog sat", 1),  # one substitution
        ("the cat sat", "the dog sat down", 2),  # substitution + insertion
        ("the cat sat on the mat", "cat sat on mat", 2),  # two deletions
        ("a b c", "", 3),
        ("It is great!", "It is not great!", 1),  # punctuation is its own token
    ],
)
def test_word_distance_hand_values(a: str, b: str, expected: int) -> None:
    assert word_distance(a, b) == expected
    assert word_distance(b, a) == expected


def test_word_distance_accepts_token_lists() -> None:
    assert word_distance(["x", "y"], ["y", "x"]) == 2


def test_match_case() -> None:
    assert match_case("Muslim", "christian") == "Christian"
    assert match_case("MUSLIMS", "christians") == "CHRISTIANS"
    assert match_case("muslim", "Christian") == "Christian"  # the list's own capital is kept
    assert match_case("muslim", "christian") == "christian"
    assert match_case("Anti-Muslim Bias", "anti-christian bias") == "Anti-christian Bias"
    assert match_case("I", "we") == "We"


def test_matcher_whole_words_only() -> None:
    m = TermMatcher(["gay", "old"])
    assert [x.text for x in m.find("A gay man; gayety; an old, bold house")] == ["gay", "old"]
    assert [x.text for x in m.find("gay-friendly and the gay's cafe")] == ["gay", "gay"]


def test_matcher_case_insensitive_reports_listed_term() -> None:
    m = TermMatcher(["Muslim"])
    found = m.find("MUSLIM and muslim and Muslim")
    assert [(f.text, f.term) for f in found] == [("MUSLIM", "Muslim"), ("muslim", "Muslim"), ("Muslim", "Muslim")]
    assert [(f.start, f.end) for f in found] == [(0, 6), (11, 17), (22, 28)]


def test_matcher_case_sensitive() -> None:
    m = TermMatcher(["Black"], case_sensitive=True)
    assert [f.text for f in m.find("Black and black")] == ["Black"]


def test_matcher_multiword_and_longest_first() -> None:
    m = TermMatcher(["christian", "anti-christian bias", "black", "black women"])
    found = m.find("There is anti-christian  bias against black women and black men.")
    assert [f.term for f in found] == ["anti-christian bias", "black women", "black"]
    assert found[0].text == "anti-christian  bias"


def test_matcher_replace_keeps_case_and_reports_edits() -> None:
    m = TermMatcher(["muslim", "muslims"])
    text = "Muslims and MUSLIMS; a muslim"
    new, edits = m.replace(text, {"muslim": "christian", "muslims": "christians"})
    assert new == "Christians and CHRISTIANS; a christian"
    assert edits == (
        Edit(0, 7, "Muslims", "Christians"),
        Edit(12, 19, "MUSLIMS", "CHRISTIANS"),
        Edit(23, 29, "muslim", "christian"),
    )
    # every edit's span is the original text it replaced
    assert all(text[e.start : e.end] == e.old for e in edits)


def test_matcher_replace_with_function_and_unmapped_terms() -> None:
    m = TermMatcher(["gay", "straight"])
    new, edits = m.replace("gay and straight", lambda match: None if match.term == "gay" else "gay")
    assert new == "gay and gay"
    assert len(edits) == 1


def test_matcher_rejects_empty() -> None:
    with pytest.raises(ValueError, match="empty"):
        TermMatcher(["ok", "  "])
    with pytest.raises(ValueError, match="at least one"):
        TermMatcher([])


def test_matcher_deduplicates_case_insensitively() -> None:
    assert TermMatcher(["Jew", "jew", "JEW"]).terms == ["Jew"]


def test_indefinite_article_by_sound_and_initialisms() -> None:
    from counterfair.text import indefinite_article

    cases = {"atheist": "an", "European": "a", "hour": "an", "LGBT": "an", "LGBTQ person": "an", "BBC": "a",
             "MP": "an", "Muslim": "a", "one-off": "a", "Asian": "an"}  # fmt: skip
    assert {w: indefinite_article(w) for w in cases} == cases


def test_swaps_write_an_before_an_initialism_and_keep_an_initialisms_capitals_to_itself() -> None:
    from counterfair.editors.swap import IdentitySwapEditor

    editor = IdentitySwapEditor("gay,lgbt,muslim", guard=None)
    assert [c.text for c in editor.edit(["I am a gay man."])[0]] == ["I am an LGBT man.", "I am a Muslim man."]
    assert [c.text for c in editor.edit(["She is an LGBT activist."])[0]] == [
        "She is a gay activist.", "She is a Muslim activist.",
    ]  # fmt: skip  # was "a GAY activist", "an MUSLIM activist"
    assert [c.text for c in editor.edit(["I HATE LGBT PEOPLE"])[0]] == ["I HATE GAY PEOPLE", "I HATE MUSLIM PEOPLE"]


def test_case_folding_and_lookalikes_neither_crash_nor_hide_terms() -> None:
    """#35: "İ".lower() is two code points and "ſ".lower() is "ſ", while the regex folds both: a match was looked up
    under a key no term had (KeyError for a whole run). Long s, Turkish i, full-width letters and Cyrillic lookalikes
    are folded one for one before matching; the edit keeps the text around the match."""
    from counterfair.text import TermMatcher, fold_for_matching

    matcher = TermMatcher(["islam", "muslims", "gay", "indian"])
    texts = ["İslam is old.", "Muſlims pray.", "A ｇａｙ man.", "My İndian friend.", "Musl\u0456ms pray."]
    found = [[(m.text, m.term) for m in matcher.find(t)] for t in texts]
    assert found == [
        [("Islam", "islam")],
        [("Muslims", "muslims")],
        [("gay", "gay")],
        [("Indian", "indian")],
        [("Muslims", "muslims")],
    ]
    assert all(len(fold_for_matching(t)) == len(t) for t in texts)
    new, edits = matcher.replace("Muſlims and İslam.", {"muslims": "Christians", "islam": "Christianity"})
    assert new == "Christians and Christianity." and [e.old for e in edits] == ["Muſlims", "İslam"]  # as written


def test_invisible_characters_do_not_hide_terms() -> None:
    """#35: a soft hyphen or a zero-width character inside a term ("Mus\u00adlim") hid it from every matcher. They are
    left out for matching; the match's span covers them, so the edit replaces them with the term."""
    from counterfair.text import TermMatcher

    matcher = TermMatcher(["muslim", "gay", "black women"])
    swaps = {"muslim": "christian", "gay": "straight", "black women": "white women"}
    cases = {
        "My Mus\u00adlim friend.": ("My Christian friend.", "Mus\u00adlim"),
        "A g\u200bay bar.": ("A straight bar.", "g\u200bay"),
        "Black\u200d women vote.": ("White women vote.", "Black\u200d women"),
        "\ufeffThe Muslim\u2060 man.": ("\ufeffThe Christian\u2060 man.", "Muslim"),  # outside the term: kept
    }
    for text, (expected, old) in cases.items():
        new, edits = matcher.replace(text, swaps)
        assert (new, [e.old for e in edits]) == (expected, [old]), text
        assert matcher.contains(text)
    assert matcher.find("gay\u200bpeople") == []  # still whole words: the joined word is not "gay"
    assert [(m.start, m.end) for m in matcher.find("a gay, a Mu\u200cslim")] == [(2, 5), (9, 16)]


def test_unicode_texts_run_through_generate_and_gender_swaps(tmp_path: Path) -> None:
    import counterfair as cf

    texts = [
        "İslam is a religion.",
        "Muſlims pray.",
        "The actreſs is gay.",
        "My gay neigh\u00adbour is a Mus\u200blim.",
    ]
    records = cf.generate(texts, ["ablation", "swap"], attribute="islam", identities="muslim,christian", progress=False)
    by = {(r.source_id, r.editor): r for r in records}
    assert by[("0", "ablation")].text == "is a religion." and by[("1", "swap")].text == "Christians pray."
    assert by[("3", "ablation")].text == "My gay neigh\u00adbour is a."
    swapped = {r.text for r in cf.generate(texts[3:], ["swap"], attribute="islam", progress=False)}
    assert "My gay neigh\u00adbour is a Christian." in swapped
    gender = cf.generate(texts, ["swap"], attribute="gender", progress=False)
    assert "The actor is gay." in {r.text for r in gender}


def test_ascii_texts_skip_the_folding_that_cannot_change_them() -> None:
    """TermMatcher.find and contains read an ASCII text as it is: every character the folding maps, and every invisible
    one, is outside ASCII (the Kelvin sign too: it was written as a plain K, a no-op)."""
    from counterfair.text import _FOLD, INVISIBLE, TermMatcher

    assert all(code > 127 for code in _FOLD) and all(ord(char) > 127 for char in INVISIBLE)
    matcher = TermMatcher(["kurd", "muslim"])
    assert [m.text for m in matcher.find("\u212aurds and Muslims, KURD")] == ["KURD"]  # plurals are not terms
    assert [(m.start, m.end, m.text) for m in matcher.find("A \u212aurd and a Mu\u017flim")] == [
        (2, 6, "Kurd"),
        (13, 19, "Muslim"),
    ]
    assert matcher.contains("a kurd") and not matcher.contains("kurdish") and matcher.contains("\u212aurd")
