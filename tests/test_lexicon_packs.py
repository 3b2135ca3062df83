"""Lexicon packs (#19): gender swaps with grammar, first names, nationalities, pack files and their validation, and
the audit's per-pack report.

The 56 gender sentences below were written for these tests; every expected output was checked by hand to be
grammatical English. Where the non-binary variant cannot be written, the expected value is the status instead."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from counterfair.cli import app
from counterfair.editors.gender import GenderSwapEditor
from counterfair.editors.swap import IdentitySwapEditor
from counterfair.errors import ConfigError, ModelNotAvailable
from counterfair.lexicons.attributes import load_pack, load_swap_set, validate_pack

runner = CliRunner()

# (text, the binary swap, the non-binary variant or the status that replaces it)
GENDER = [
    ("She gave her book to him.", "He gave his book to her.", "neutral:ambiguous_reference"),
    ("I saw her yesterday.", "I saw him yesterday.", "I saw them yesterday."),
    ("The book is his.", "The book is hers.", "The book is theirs."),
    ("His mother is a nurse.", "Her father is a nurse.", "Their parent is a nurse."),
    ("He is a good man.", "She is a good woman.", "They are a good person."),
    (
        "She runs every morning and swims at night.",
        "He runs every morning and swims at night.",
        "They run every morning and swim at night.",
    ),
    ("Is she ready?", "Is he ready?", "Are they ready?"),
    ("She's been working hard.", "He's been working hard.", "They've been working hard."),
    ("She's tired.", "He's tired.", "They're tired."),
    ("The woman, who is tall, smiled.", "The man, who is tall, smiled.", "The person, who is tall, smiled."),
    ("My uncle says he hates it.", "My aunt says she hates it.", "neutral:no_form:uncle"),
    ("Mr. Smith and his wife arrived.", "Ms. Smith and her husband arrived.", "Mx. Smith and their spouse arrived."),
    ("He doesn't like it.", "She doesn't like it.", "They don't like it."),
    ("She was an actress.", "He was an actor.", "They were an actor."),
    ("The waiter gave her a menu.", "The waitress gave him a menu.", "The server gave them a menu."),
    ("That's hers, not his.", "That's his, not hers.", "neutral:ambiguous_reference"),
    ("She herself said so.", "He himself said so.", "They themselves said so."),
    ("He has two sons.", "She has two daughters.", "They have two children."),
    ("He can swim.", "She can swim.", "They can swim."),
    ("Give it to her.", "Give it to him.", "Give it to them."),
    ("I told her mother.", "I told his father.", "I told their parent."),
    ("We invited her and her husband.", "We invited him and his wife.", "We invited them and their spouse."),
    ("Her brother lent her his car.", "His sister lent him her car.", "neutral:ambiguous_reference"),
    (
        "The girls said their father was late.",
        "The boys said their mother was late.",
        "The children said their parent was late.",
    ),
    (
        "My grandmother visits her sister every week.",
        "My grandfather visits his brother every week.",
        "My grandparent visits their sibling every week.",
    ),
    (
        "He watches the news and then goes to bed.",
        "She watches the news and then goes to bed.",
        "They watch the news and then go to bed.",
    ),
    ("Ask him what he wants.", "Ask her what she wants.", "Ask them what they want."),
    (
        "The king and his sons rode out.",
        "The queen and her daughters rode out.",
        "The monarch and their children rode out.",
    ),
    ("She loves her job.", "He loves his job.", "They love their job."),
    (
        "They hired her because she was the best.",
        "They hired him because he was the best.",
        "They hired them because they were the best.",
    ),
    (
        "The policeman thanked her for her help.",
        "The policewoman thanked him for his help.",
        "The police officer thanked them for their help.",
    ),
    ("He was proud of himself.", "She was proud of herself.", "They were proud of themselves."),
    ("Ms. Lopez is our new principal.", "Mr. Lopez is our new principal.", "Mx. Lopez is our new principal."),
    ("My dad cooks dinner on Sundays.", "My mom cooks dinner on Sundays.", "My parent cooks dinner on Sundays."),
    ("The boy lost his shoe.", "The girl lost her shoe.", "The child lost their shoe."),
    ("Her husband is a teacher.", "His wife is a teacher.", "Their spouse is a teacher."),
    (
        "She and her girlfriend moved to Leeds.",
        "He and his boyfriend moved to Leeds.",
        "They and their partner moved to Leeds.",
    ),
    ("I met his fiancee at the party.", "I met her fiance at the party.", "I met their partner at the party."),
    (
        "She doesn't know where her keys are.",
        "He doesn't know where his keys are.",
        "They don't know where their keys are.",
    ),
    ("He's been to Paris twice.", "She's been to Paris twice.", "They've been to Paris twice."),
    ("He's a doctor.", "She's a doctor.", "They're a doctor."),
    (
        "The businessman said he would call her.",
        "The businesswoman said she would call him.",
        "neutral:ambiguous_reference",
    ),
    (
        "Every mother worries about her children.",
        "Every father worries about his children.",
        "Every parent worries about their children.",
    ),
    ("Her parents gave her a bike.", "His parents gave him a bike.", "Their parents gave them a bike."),
    ("His daughter plays the violin.", "Her son plays the violin.", "Their child plays the violin."),
    ("The bride and her father danced.", "The groom and his mother danced.", "neutral:no_form:bride"),
    (
        "She has a brother and two sisters.",
        "He has a sister and two brothers.",
        "They have a sibling and two siblings.",
    ),
    ("He told her that she was right.", "She told him that he was right.", "neutral:ambiguous_reference"),
    ("That car is hers.", "That car is his.", "That car is theirs."),
    ("I like her.", "I like him.", "I like them."),
    ("The actor praised his co-star.", "The actress praised her co-star.", "The actor praised their co-star."),
    ("The nun prayed for him.", "The monk prayed for her.", "neutral:no_form:nun"),
    ("Is he your brother?", "Is she your sister?", "Are they your sibling?"),
    ("She was sad because her dog died.", "He was sad because his dog died.", "They were sad because their dog died."),
    ("My wife and I cook together.", "My husband and I cook together.", "My spouse and I cook together."),
    ("He tries hard.", "She tries hard.", "They try hard."),
]


@pytest.fixture(scope="module")
def gender() -> GenderSwapEditor:
    return GenderSwapEditor()


@pytest.mark.parametrize(("text", "swapped", "neutral"), GENDER)
def test_gender_swap_sentences(gender: GenderSwapEditor, text: str, swapped: str, neutral: str) -> None:
    out = {c.meta["direction"]: c for c in gender.edit([text])[0]}
    assert out["swap"].text == swapped
    if neutral.startswith("neutral:"):
        assert "neutral" not in out
        assert gender.last_notes[-1] == [neutral]
    else:
        assert out["neutral"].text == neutral
        assert out["neutral"].meta["target_term"] == "neutral"


def test_gender_test_set_covers_the_her_cases() -> None:
    assert len(GENDER) >= 50
    texts = [t for t, _, _ in GENDER]
    assert sum(" her " in f" {t.lower()} " or " her." in t.lower() for t in texts) >= 15
    possessive_and_object = [t for t, s, _ in GENDER if "his" in s.lower().split() and "him" in s.lower().split()]
    assert "Her brother lent her his car." in texts and possessive_and_object  # both readings in one sentence


def test_gender_source_and_target_groups(gender: GenderSwapEditor) -> None:
    ((swap, neutral),) = [gender.edit(["She loves her job."])[0]]
    assert (swap.meta["source_term"], swap.meta["target_term"]) == ("female", "male")
    assert (neutral.meta["source_term"], neutral.meta["target_term"]) == ("female", "neutral")
    mixed = gender.edit(["She is a nurse and her husband is a doctor."])[0][0]
    assert (mixed.text, mixed.meta["source_term"]) == ("He is a nurse and his wife is a doctor.", "mixed")
    assert gender.edit(["The weather is nice."]) == [[]]
    assert gender.last_reasons == ["no_gender_term"]


def test_gender_swap_moves_first_names_and_refuses_unknown_ones(gender: GenderSwapEditor) -> None:
    def swapped(text: str) -> str | None:
        return next((c.text for c in gender.edit([text])[0] if c.meta["direction"] == "swap"), None)

    # Jennifer is the 4th white_female name of the names pack, Kenneth the 4th white_male one
    assert swapped("Jennifer and her husband volunteer.") == "Kenneth and his wife volunteer."
    assert swapped("Mr. Hayes and his son taught Reginald.") == "Ms. Hayes and her daughter taught Mattie."
    assert swapped("Mr. William Smith lost his keys.") == "Ms. Patricia Smith lost her keys."
    assert swapped("Hannah said she was late.") is None  # not "Hannah said he was late"
    assert gender.last_notes[-1] == ["swap:unknown_name:Hannah"]
    assert [c.text for c in gender.edit(["Hannah said she was late."])[0]] == ["Hannah said they were late."]
    # the audit study's names are in the pack, at ranks that pair them as the study did (Emily with Greg)
    assert swapped("Emily said she was late.") == "Greg said he was late."
    assert swapped("My lesbian aunt fixed my bike.") is None
    assert gender.last_notes[-1] == ["swap:gender_specific:lesbian", "neutral:no_form:aunt"]


def test_gender_without_parser_gives_a_status_not_a_guess(monkeypatch: pytest.MonkeyPatch) -> None:
    import counterfair.editors.gender as module

    def no_model(text: str) -> None:
        raise ModelNotAvailable("no spaCy model")

    monkeypatch.setattr(module, "_parse", no_model)
    editor = GenderSwapEditor()
    assert editor.edit(["I saw her yesterday."]) == [[]]
    assert editor.last_reasons == ["needs_parser"]
    # nouns need no parse and are still swapped; "she -> they" needs the verb and gets the status
    assert [c.text for c in editor.edit(["The woman smiled."])[0]] == ["The man smiled.", "The person smiled."]
    assert [c.text for c in editor.edit(["She smiled."])[0]] == ["He smiled."]
    assert editor.last_notes == [["needs_parser"]]


def test_names_swap_keeps_possessives_and_never_touches_words() -> None:
    names = load_swap_set("names")
    editor = IdentitySwapEditor(names)
    out = editor.edit(["Patricia's car is red."])[0]
    assert [(c.text, c.meta["target_term"]) for c in out] == [
        ("Mattie's car is red.", "Mattie"),
        ("Luz's car is red.", "Luz"),
        ("Winnie's car is red.", "Winnie"),
    ]
    assert {names.group_of(c.meta["target_term"]) for c in out} == {"black_female", "hispanic_female", "asian_female"}
    # female names swap with female names only; names that are English words are not in the pack
    terms = set(names.terms)
    assert not terms & {"Will", "Grace", "Joy", "Mark", "Hope", "Rose", "Bill", "Hung", "Go", "Do", "You"}
    assert editor.edit(["I will go. We hope for joy.", "linda is lower-case here"]) == [[], []]
    assert [c.text for c in editor.edit(["LINDA SAID HI"])[0]][:1] == ["HATTIE SAID HI"]
    assert names.info["license"].startswith("public domain")


def test_nationality_swaps_demonyms_countries_and_articles() -> None:
    editor = IdentitySwapEditor(load_swap_set("nationality"))
    out = editor.edit(["A Mexican engineer moved here from Mexico."])[0]
    assert [c.text for c in out] == [
        "A Canadian engineer moved here from Canada.",
        "A Nigerian engineer moved here from Nigeria.",
        "An Egyptian engineer moved here from Egypt.",
        "A Chinese engineer moved here from China.",
        "An Indian engineer moved here from India.",
    ]
    assert [c.text for c in editor.edit(["Mexicans are hard workers."])[0]][3] == "Chinese people are hard workers."
    assert editor.edit(["An Indian doctor"])[0][0].text == "A Mexican doctor"
    # case-sensitive: porcelain and the verb are not countries or demonyms
    assert editor.edit(["Polish the fine china.", "I love french fries."]) == [[], []]


def test_pack_files_are_validated_with_the_key_named(tmp_path: Path) -> None:
    bad_gender = tmp_path / "g.yaml"
    bad_gender.write_text("name: g\nkind: gender\nwords:\n  - [he, she, they]\n  - [she, he, ~]\n")
    with pytest.raises(ConfigError, match="row 2: 'she' is listed as both masculine and feminine"):
        load_pack(str(bad_gender))
    no_group = tmp_path / "n.yaml"
    no_group.write_text("name: n\nkind: identity\ntargets: one_per_group\nterms: [a1, b1, b2]\ngroups: {a: [a1]}\n")
    with pytest.raises(ConfigError, match="one_per_group needs a group for every term"):
        load_pack(str(no_group))
    places = tmp_path / "p.yaml"
    places.write_text("name: p\nkind: identity\nterms: [Xan, Yan]\nplaces: {Xan: Xland}\n")
    with pytest.raises(ConfigError, match="'places' must name a country for every term"):
        load_pack(str(places))
    version = tmp_path / "v.yaml"
    version.write_text("name: v\nversion: zero\nablation: [foo]\n")
    with pytest.raises(ConfigError, match="'version' must be a positive integer"):
        load_pack(str(version))


def test_a_users_pack_swaps_without_code(tmp_path: Path) -> None:
    pack = tmp_path / "caste.yaml"
    pack.write_text(
        "name: caste\nkind: identity\nversion: 2\nsource: my team\nterms: [Dalit, Brahmin]\n"
        "groups: {dalit: [Dalit], brahmin: [Brahmin]}\n"
    )
    loaded, warnings = validate_pack(pack)
    assert loaded.info["version"] == 2 and loaded.info["source"] == "my team"
    assert any("no forms" in w for w in warnings) and any("single term" in w for w in warnings)
    out = IdentitySwapEditor(loaded).edit(["A Dalit family lives next door."])[0]
    assert [c.text for c in out] == ["A Brahmin family lives next door."]


def test_attributes_cli_list_show_validate(tmp_path: Path) -> None:
    listed = runner.invoke(app, ["attributes", "list"])
    assert listed.exit_code == 0
    for name in ("islam", "dixon50", "gender", "names", "nationality"):
        assert name in listed.output
    shown = runner.invoke(app, ["attributes", "show", "nationality"])
    assert shown.exit_code == 0 and json.loads(shown.output)["places"]["Mexican"] == "Mexico"
    good = runner.invoke(app, ["attributes", "validate", "src/counterfair/resources/identities/gender.yaml"])
    assert good.exit_code == 0 and "valid gender pack 'gender'" in good.output
    assert "no neutral form" in good.output  # a warning, not an error
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nkind: gender\nwords: [[he, she]]\n")
    failed = subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "attributes", "validate", str(bad)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert "words row 1 must be [masculine, feminine, neutral or ~]" in failed.stderr  # rich markup escaped


def test_audit_reports_each_pack(tmp_path: Path) -> None:
    import counterfair as cf

    texts = [
        "She is a nurse and her husband is a doctor.",
        "Patricia's car is red.",
        "A Mexican engineer moved here from Mexico.",
        "The weather is nice today.",
    ]
    # a classifier that dislikes Canada and "they": the audit must find both
    clf = cf.as_classifier(
        lambda ts: [0.9 if ("Canad" in t or "They" in t) else 0.1 for t in ts], labels=["ok", "toxic"]
    )
    result = cf.audit(texts, clf, attributes=["gender", "names", "nationality"], methods=["swap"], placebo=None)
    packs = result.summary["ctf_by_attribute"]
    assert {"gender", "names", "nationality"} <= set(packs)  # and "identity": Mexican is a Dixon term too
    assert packs["names"]["ctf_gap"] == 0.0 and packs["names"]["by_group"]["white_female"]["pairs"] == 3
    assert packs["nationality"]["ctf_gap"] == pytest.approx(0.8 / 5)
    assert packs["gender"]["by_group"]["mixed"]["ctf_gap"] == pytest.approx(0.4)
    pairs = result.pairs
    canada = pairs[pairs["cf_text"] == "A Canadian engineer moved here from Canada."].iloc[0]
    assert (canada["group"], canada["target_group"], canada["diff"]) == (
        "latin_america",
        "north_america_europe",
        pytest.approx(0.8),
    )
