"""Spanish as a language entry (#70): identity terms and gender words swapped with agreement without a parser, placebo
words in the same forms, the audit measuring Spanish identity slots, and a planted bias found in Spanish texts."""

from __future__ import annotations

import pytest

from counterfair.editors.inflected import InflectedSwapEditor
from counterfair.editors.swap import SwapRefused
from counterfair.language_registry import get_language, languages
from counterfair.lexicons.attributes import load_swap_set


@pytest.fixture(scope="module")
def identities() -> InflectedSwapEditor:
    return InflectedSwapEditor(load_swap_set("identity-es"))


def _swap(editor: InflectedSwapEditor, text: str, target: str) -> str:
    matches = editor.identity_matches([text])[0]
    assert matches, f"no identity term found in {text!r}"
    return editor.swap(text, matches, matches[0].term, target)[0]


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        ("Un vecino musulmán vive aquí.", "judío", "Un vecino judío vive aquí."),  # the noun's gender kept
        ("Un vecino musulmán vive aquí.", "lesbiana", "Una vecina lesbiana vive aquí."),  # the phrase changes gender
        ("La musulmana trabaja aquí.", "judío", "La judía trabaja aquí."),
        ("Los musulmanes del barrio celebraron.", "budista", "Los budistas del barrio celebraron."),
        ("Las musulmanas del barrio celebraron.", "lesbiana", "Las lesbianas del barrio celebraron."),
        ("El musulmán es simpático.", "lesbiana", "La lesbiana es simpática."),  # predicate adjective after "es"
        ("Del musulmán nadie habla.", "lesbiana", "De la lesbiana nadie habla."),  # "del" -> "de la"
        ("De la lesbiana nadie habla.", "judío", "De la judía nadie habla."),
        ("Una estudiante budista habla.", "judío", "Una estudiante judía habla."),  # the determiner decides
        ("Un estudiante budista habla.", "lesbiana", "Una estudiante lesbiana habla."),  # a one-form noun
        ("Un buen musulmán ayuda.", "lesbiana", "Una buena lesbiana ayuda."),  # a preposed adjective
        ("Un hombre negro fue elegido.", "lesbiana", "Una mujer lesbiana fue elegida."),  # participle after "fue"
        ("Un médico budista opera.", "lesbiana", "Una médica lesbiana opera."),  # a listed person noun
        ("MUSULMANES unidos.", "judío", "JUDÍOS unidos."),
        ("La lesbiana trabaja aquí.", "musulmán", "La musulmana trabaja aquí."),  # a verb in -a is not rewritten
    ],
)
def test_identity_swaps_agree(identities: InflectedSwapEditor, text: str, target: str, expected: str) -> None:
    assert _swap(identities, text, target) == expected


@pytest.mark.parametrize(
    ("text", "target", "status"),
    [
        ("Él es un buen musulmán.", "lesbiana", "swap:pronoun_agreement"),  # "él" would disagree
        ("Musulmanes y cristianos rezan.", "lesbiana", "swap:gender_fixed"),  # no determiner shows the gender
        ("Mi colega budista opera.", "judío", "swap:ambiguous_gender"),  # "mi colega": either gender
        ("Un pintor budista pinta.", "lesbiana", "swap:gender_fixed"),  # a noun the rules cannot regender
    ],
)
def test_swaps_the_text_does_not_decide_are_refused(
    identities: InflectedSwapEditor, text: str, target: str, status: str
) -> None:
    with pytest.raises(SwapRefused, match=status):
        _swap(identities, text, target)


def test_a_colour_counts_only_after_a_person_noun(identities: InflectedSwapEditor) -> None:
    found = identities.identity_matches(["El negro es un color elegante.", "Un hombre negro fue elegido."])
    assert [len(m) for m in found] == [0, 1]


def test_gender_words_swap_with_their_counterpart_and_agreement() -> None:
    pack = load_swap_set("gender-es")
    editor = InflectedSwapEditor(pack)
    assert pack.targets_for("hombre") == ("mujer",) and pack.targets_for("madre") == ("padre",)
    assert _swap(editor, "Un chico alto ayudó.", "chica") == "Una chica alta ayudó."
    assert _swap(editor, "Los hombres son altos.", "mujer") == "Las mujeres son altas."
    assert _swap(editor, "La mujer arregló el tejado.", "hombre") == "El hombre arregló el tejado."


def test_spanish_is_an_entry_of_its_own_folder() -> None:
    entry = get_language("es")
    assert set(languages()) >= {"en", "fr", "de", "es"}
    assert entry.folder.name == "es" and entry.parser is None and entry.inflected
    assert {p.name for p in entry.folder.iterdir()} >= {"language.yaml", "identity-es.yaml", "placebo.yaml"}
    from counterfair.analysis.placebo import load_placebo

    placebo = load_placebo("es", load_swap_set("identity-es"))  # type: ignore[arg-type]
    assert placebo is not None and placebo.inflections["curioso"].forms["f.pl"] == "curiosas"


def test_the_audit_measures_spanish_identity_slots_and_finds_a_planted_bias() -> None:
    import numpy as np
    import pandas as pd

    import counterfair as cf
    from counterfair.commands.audit.options import demo_path

    texts = pd.read_csv(demo_path("es"))["text"].tolist()
    religion = load_swap_set("identity-es")
    forms = {f.lower() for t in religion.terms if religion.group_of(t) == "religion"
             for f in religion.inflections[t.lower()].forms.values()}  # fmt: skip

    def planted(batch: list[str]) -> np.ndarray:  # +30 points on any religion term, in any form
        return np.array([0.1 + 0.3 * bool(forms & set(t.lower().replace(".", " ").split())) for t in batch])

    result = cf.audit(texts, planted, language="es", methods=["swap"], bootstrap=200)
    slots = result.slots
    assert slots is not None and set(slots["family"]) == {"identity", "gender_words"}
    # a slot holds the original, the other terms and the placebo words in the same form
    first = slots[slots["input_id"] == "0"]  # the demo's first text
    assert {"Mi vecino judío me ayudó a arreglar la bicicleta.", "Mi vecina lesbiana me ayudó a arreglar la bicicleta.",
            "Mi vecino curioso me ayudó a arreglar la bicicleta."} <= set(first["text"])  # fmt: skip
    by_group = result.summary["effects"]["identity_effect"]["by_group"]
    assert by_group["religion"]["value"] == pytest.approx(0.3, abs=0.02)
    assert abs(by_group["sexuality"]["value"]) < 0.01  # nothing planted there
    assert str(result).startswith("Verdict: material identity effects for religion")


def test_an_english_classifier_on_spanish_texts_is_said_first() -> None:
    """An audit in Spanish with a built-in classifier made for English text opens with a caution (its scores on
    Spanish text mostly follow the words the languages share); a classifier of unknown language, or an English run,
    gets none."""
    import io

    import pandas as pd
    from rich.console import Console

    import counterfair as cf
    from counterfair.classifiers.kinds import language_caveat
    from counterfair.commands.audit.options import demo_path
    from counterfair.commands.audit.page import audit_page
    from counterfair.views.page import to_console

    texts = pd.read_csv(demo_path("es"))["text"].head(12).tolist()
    result = cf.audit(texts, "profanity-check", language="es", methods=["swap"], bootstrap=100)
    page = audit_page(result.summary)
    assert page.findings[0].startswith("Caution: profanity-check was made for English text; on Spanish texts")
    console = Console(file=io.StringIO(), width=200)
    console.print(to_console(page))  # what the command line prints: the caution among the first lines
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    assert "Caution: profanity-check was made for English text" in "\n".join(shown.splitlines()[:6])
    assert str(result).splitlines()[2].startswith("- Caution: profanity-check was made for English text")  # print()
    assert language_caveat("profanity-check", "en") is None and language_caveat("vader", "fr") is not None
    assert language_caveat("callable:m.py:f", "es") is None  # what language it reads is not known here


@pytest.mark.parametrize(
    ("pack", "text", "term", "target", "expected"),
    [
        ("identity-es", "Un vecino musulmán vive aquí.", "musulmán", "lesbiana", "Una vecina lesbiana vive aquí."),
        ("identity-es", "La judía trabaja aquí.", "judío", "budista", "La budista trabaja aquí."),
        ("identity-fr", "Une écrivaine lesbienne parle.", "lesbienne", "bouddhiste", "Une écrivaine bouddhiste parle."),
        ("identity-fr", "Un collègue juif très sympa.", "juif", "bouddhiste", "Un collègue bouddhiste très sympa."),
    ],
)
def test_terms_written_in_decomposed_unicode_are_found_and_only_their_span_changes(
    pack: str, text: str, term: str, target: str, expected: str
) -> None:
    """#87 B8: an identity term written in decomposed Unicode (NFD: "musulma" + U+0301 + "n", as macOS file names and
    some keyboards write it) was never found, silently. Terms are matched in canonical composition with the offsets
    mapped back: the swap changes the term's span only, and the rest of the text keeps its own form."""
    import unicodedata

    editor = InflectedSwapEditor(load_swap_set(pack))
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text
    matches = editor.identity_matches([decomposed])[0]
    assert [m.term for m in matches] == [term]
    swapped = editor.swap(decomposed, matches, term, target)[0]
    assert unicodedata.normalize("NFC", swapped) == expected
    untouched = decomposed[matches[0].end :].split(" ", 1)[-1]  # the words after the term's, as written
    assert swapped.endswith(untouched)
