from __future__ import annotations

import json
from pathlib import Path

import pytest

from counterfair.errors import ConfigError
from counterfair.lexicons.attributes import known_attributes, known_identity_sets, load_attribute, load_identity_set

from .conftest import SHARED_DATA


def test_builtin_lists_are_paper_000_tables_6_and_7() -> None:
    assert known_attributes() == ["islam", "judaism", "lgbq", "transgender"]
    islam = load_attribute("islam")
    assert islam.ablation == (
        "allah",
        "hijab",
        "islam",
        "islamic",
        "islamist",
        "islamists",
        "islamophobia",
        "koran",
        "mosque",
        "mosques",
        "muslim",
        "muslims",
        "quran",
        "sharia",
        "sunni",
    )
    assert islam.substitution["islamophobia"] == "anti-christian bias"
    assert islam.substitution["sharia"] == "canon law"
    assert len(load_attribute("judaism").ablation) == 11
    assert load_attribute("lgbq").substitution == {
        "gay": "straight",
        "gays": "straights",
        "homosexual": "heterosexual",
        "homosexuality": "heterosexuality",
        "homosexuals": "heterosexuals",
        "lesbian": "straight",
        "lesbians": "straights",
        "lgbt": "straight",
        "lgbtq": "straight",
    }
    trans = load_attribute("transgender")
    assert "transition" in trans.ablation and "transition" not in trans.substitution  # no substitute: unchanged
    assert load_attribute("Muslim") is islam  # aliases, any case
    assert load_attribute("LGBQ+").name == "lgbq"


def test_unknown_attribute_lists_the_known_ones() -> None:
    with pytest.raises(
        ConfigError, match="unknown attribute 'caste'; known attributes: islam, judaism, lgbq, transgender"
    ):
        load_attribute("caste")


def test_user_attribute_files(tmp_path: Path) -> None:
    path = tmp_path / "caste.yaml"
    path.write_text("name: caste\nsubject: Dalits\nablation: [dalit, dalits]\nsubstitution: {dalit: brahmin}\n")
    attribute = load_attribute(str(path))
    assert attribute.subject == "Dalits" and attribute.substitution == {"dalit": "brahmin"}
    js = tmp_path / "a.json"
    js.write_text(json.dumps({"name": "x", "ablation": ["alpha beta"]}))
    assert load_attribute(str(js)).ablation == ("alpha beta",)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: y\nablation: [a, A]\n")
    with pytest.raises(ConfigError, match="lists 'A' twice"):
        load_attribute(str(bad))
    bad.write_text("name: y\n")
    with pytest.raises(ConfigError, match="lists no terms"):
        load_attribute(str(bad))
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_attribute(str(bad))


def test_dixon_identities_and_split() -> None:
    ids = load_identity_set()
    assert known_identity_sets() == [
        "dixon50",
        "gender",
        "gender-es",
        "identity-de",
        "identity-es",
        "identity-fr",
        "names",
        "nationality",
    ]
    assert len(ids.train) == 35 and len(ids.heldout) == 15
    assert {"african american", "middle aged", "middle eastern"} <= set(ids.heldout)
    assert ids.split_of("Gay") == "heldout" and ids.split_of("muslim") == "train"
    assert "black" in ids.ambiguous and "muslim" not in ids.ambiguous
    if (SHARED_DATA / "dixon" / "adjectives_people.txt").exists():
        listed = {line.strip() for line in (SHARED_DATA / "dixon" / "adjectives_people.txt").read_text().splitlines()}
        assert set(ids.terms) == listed - {""}


def test_user_identity_sets(tmp_path: Path) -> None:
    s = load_identity_set("black,white,muslim")
    assert s.terms == ("black", "white", "muslim") and s.ambiguous == {"black", "white"}
    txt = tmp_path / "ids.txt"
    txt.write_text("# comment\nalpha\nbeta gamma\n")
    assert load_identity_set(str(txt)).terms == ("alpha", "beta gamma")
    with pytest.raises(ConfigError, match="lists 'Gay' twice"):
        load_identity_set(["gay", "Gay"])
    with pytest.raises(ConfigError, match="at least two terms"):
        load_identity_set(["gay"])
    assert load_identity_set(["gay"], min_terms=1).terms == ("gay",)  # bias finds terms, it swaps none
    assert load_identity_set("gay,muslim,black,klingon").groups == {  # #49 item 11: the built-in groups, not "other"
        "black": "race_ethnicity",
        "gay": "sexuality",
        "klingon": "klingon",
        "muslim": "religion",
    }
    with pytest.raises(ConfigError, match="unknown identity set"):
        load_identity_set("nonsense")


def test_identity_set_resplit_is_a_seeded_35_15_partition() -> None:
    from counterfair.lexicons.attributes import load_identity_set

    base = load_identity_set()
    first, again, other = base.resplit(1, 35), base.resplit(1, 35), base.resplit(2, 35)
    assert (len(first.train), len(first.heldout)) == (35, 15)
    assert sorted(first.terms) == sorted(base.terms) and not set(first.train) & set(first.heldout)
    assert first.train == again.train and first.train != other.train
    assert first.train != base.train  # not the built-in split
    assert first.forms_of("muslim") == base.forms_of("muslim") and first.group_of("gay") == base.group_of("gay")
    with pytest.raises(ConfigError, match="n_train must be between 1 and 49"):
        base.resplit(0, 50)
