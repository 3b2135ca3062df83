"""French and German (#19 item 5): 30 hand-written sentences per language with their exact counterfactuals.

Each row: (editor, sentence, source term or attribute, target term, expected). ``swap`` rows swap the identity-fr /
identity-de term into the target with agreement; ``sub``/``abl`` rows run the attribute's substitution / ablation
list. An expected value starting with "!" is the status the swap gives instead of a sentence. Every expected
sentence was read by hand: grammatical, with articles, elision, adjective endings and case as a speaker writes them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from counterfair.editors.inflected import InflectedSwapEditor
from counterfair.editors.swap import SwapRefused
from counterfair.editors.wordlist import AblationEditor, SubstitutionEditor
from counterfair.errors import ConfigError, ModelNotAvailable
from counterfair.lexicons.attributes import load_attribute, load_swap_set, pack_catalogue, validate_pack

FRENCH = [
    ("swap", "Un musulman pratiquant prie.", "musulman", "chrétien", "Un chrétien pratiquant prie."),
    ("swap", "Une musulmane pratiquante prie.", "musulman", "chrétien", "Une chrétienne pratiquante prie."),
    ("swap", "Un musulman pratiquant prie.", "musulman", "lesbienne", "Une lesbienne pratiquante prie."),
    ("swap", "Ce musulman est pratiquant.", "musulman", "lesbienne", "Cette lesbienne est pratiquante."),
    ("swap", "Le musulman est arrivé.", "musulman", "athée", "L'athée est arrivé."),
    ("swap", "L'athée est arrivé.", "athée", "musulman", "Le musulman est arrivé."),
    ("swap", "L'athée est arrivée.", "athée", "juif", "La juive est arrivée."),
    ("swap", "J'ai parlé à une musulmane très croyante.", "musulman", "juif", "J'ai parlé à une juive très croyante."),
    ("swap", "Les musulmans sont nombreux ici.", "musulman", "mexicain", "Les Mexicains sont nombreux ici."),
    ("swap", "C'est un restaurant mexicain.", "mexicain", "chinois", "C'est un restaurant chinois."),
    ("swap", "Les Noirs sont victimes de racisme.", "noir", "asiatique", "Les Asiatiques sont victimes de racisme."),
    ("swap", "Une femme noire a été élue.", "noir", "blanc", "Une femme blanche a été élue."),
    ("swap", "Il porte un pull noir.", "noir", "blanc", "Il porte un pull noir."),
    ("swap", "Un homme musulman.", "musulman", "lesbienne", "!swap:gender_fixed"),
    ("swap", "Il est musulman.", "musulman", "lesbienne", "!swap:gender_fixed"),
    ("swap", "Les lesbiennes sont discriminées.", "lesbienne", "juif", "Les juives sont discriminées."),
    ("swap", "Une lesbienne engagée parle.", "lesbienne", "homosexuel", "Une homosexuelle engagée parle."),
    ("swap", "Je connais une lesbienne.", "lesbienne", "hindou", "Je connais une hindoue."),
    ("swap", "Mon voisin est juif.", "juif", "musulman", "Mon voisin est musulman."),
    ("swap", "Ma voisine est juive.", "juif", "athée", "Ma voisine est athée."),
    ("swap", "Le fils du juif est venu.", "juif", "athée", "Le fils de l'athée est venu."),
    ("swap", "Le fils de l'athée est venu.", "athée", "juif", "!swap:ambiguous_gender"),
    ("swap", "Les juives de Paris.", "juif", "catholique", "Les catholiques de Paris."),
    ("swap", "Cet athée est gentil.", "athée", "protestant", "Ce protestant est gentil."),
    ("swap", "Un chrétien et une chrétienne.", "chrétien", "hindou", "Un hindou et une hindoue."),
    ("swap", "Les trans sont souvent harcelés.", "trans", "gay", "Les gays sont souvent harcelés."),
    ("sub", "La mosquée du quartier est ouverte.", "islam", None, "L'église du quartier est ouverte."),
    ("sub", "La montée de l'islam inquiète.", "islam", None, "La montée du christianisme inquiète."),
    ("sub", "L'imam de la mosquée prie.", "islam", None, "Le prêtre de l'église prie."),
    ("abl", "La montée de l'islam inquiète.", "islam", None, "La montée de inquiète."),
]
GERMAN = [
    ("swap", "Ein muslimischer Mann betet.", "muslimisch", "jüdisch", "Ein jüdischer Mann betet."),
    ("swap", "Eine muslimische Frau betet.", "muslimisch", "christlich", "Eine christliche Frau betet."),
    ("swap", "Die muslimischen Frauen beten.", "muslimisch", "katholisch", "Die katholischen Frauen beten."),
    ("swap", "Ein gläubiger Muslim betet.", "muslimisch", "lesbisch", "Eine gläubige Lesbe betet."),
    ("swap", "Ich habe einen Muslim getroffen.", "muslimisch", "christlich", "Ich habe einen Christen getroffen."),
    ("swap", "Ich habe einen Muslim getroffen.", "muslimisch", "schwul", "Ich habe einen schwulen Menschen getroffen."),
    ("swap", "Die Muslime feiern.", "muslimisch", "schwul", "Die schwulen Menschen feiern."),
    ("swap", "Muslime feiern heute.", "muslimisch", "jüdisch", "Juden feiern heute."),
    ("swap", "Wir sprechen mit den Juden.", "jüdisch", "muslimisch", "Wir sprechen mit den Muslimen."),
    ("swap", "Wir sprechen mit dem Juden.", "jüdisch", "muslimisch", "Wir sprechen mit dem Muslim."),
    ("swap", "Das Haus des Juden brennt.", "jüdisch", "christlich", "Das Haus des Christen brennt."),
    ("swap", "Eine trans Frau singt.", "trans", "muslimisch", "Eine muslimische Frau singt."),
    ("swap", "Ein schwuler Lehrer unterrichtet.", "schwul", "trans", "Ein trans Lehrer unterrichtet."),
    ("swap", "Er ist schwul.", "schwul", "heterosexuell", "Er ist heterosexuell."),
    ("swap", "Schwarze Frauen verdienen weniger.", "schwarz", "weiß", "Weiße Frauen verdienen weniger."),
    ("swap", "Das Auto ist schwarz.", "schwarz", "weiß", "Das Auto ist schwarz."),
    ("swap", "Eine Muslimin wurde gewählt.", "muslimisch", "jüdisch", "Eine Jüdin wurde gewählt."),
    ("swap", "Eine Muslimin wurde gewählt.", "muslimisch", "schwul", "Eine schwule Person wurde gewählt."),
    ("swap", "Der Muslim ist nett.", "muslimisch", "lesbisch", "Die Lesbe ist nett."),
    ("swap", "Er kennt einen Muslim und mag ihn.", "muslimisch", "lesbisch", "!swap:pronoun_agreement"),
    ("swap", "Die Lesbe lacht.", "lesbisch", "muslimisch", "Die Muslimin lacht."),
    ("swap", "Viele Lesben demonstrieren.", "lesbisch", "jüdisch", "Viele Juden demonstrieren."),
    ("swap", "Die Amerikaner wählen.", "amerikanisch", "mexikanisch", "Die Mexikaner wählen."),
    ("swap", "Ein Amerikaner wohnt hier.", "amerikanisch", "chinesisch", "Ein Chinese wohnt hier."),
    ("swap", "Wir helfen einer Jüdin.", "jüdisch", "muslimisch", "Wir helfen einer Muslimin."),
    ("swap", "Die Rechte homosexueller Menschen.", "homosexuell", "bisexuell", "Die Rechte bisexueller Menschen."),
    ("sub", "Die Moschee ist offen.", "islam", None, "Die Kirche ist offen."),
    ("sub", "Viele Muslime beten in der Moschee.", "islam", None, "Viele Christen beten in der Kirche."),
    ("sub", "Ein Muslim betet.", "islam", None, "!none"),
    ("abl", "Viele Muslime beten in der Moschee.", "islam", None, "Viele beten in der."),
]


def _run(language: str, kind: str, text: str, a: str, b: str | None) -> str:
    if kind == "swap":
        editor = InflectedSwapEditor(load_swap_set(f"identity-{language}"))
        try:
            return editor.swap(text, editor.identity_matches([text])[0], a, b or "")[0]
        except SwapRefused as refusal:
            return "!" + refusal.status
    attribute = load_attribute(a, language)
    if kind == "sub":
        found = SubstitutionEditor(attribute).edit([text])[0]
        return found[0].text if found else "!none"
    return AblationEditor(attribute).ablate(text)[0]


def test_thirty_sentences_per_language() -> None:
    assert len(FRENCH) == 30 and len(GERMAN) == 30


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "text", "a", "b", "expected"), FRENCH)
def test_french(kind: str, text: str, a: str, b: str | None, expected: str) -> None:
    assert _run("fr", kind, text, a, b) == expected


@pytest.mark.parametrize(("kind", "text", "a", "b", "expected"), GERMAN)
def test_german(kind: str, text: str, a: str, b: str | None, expected: str) -> None:
    assert _run("de", kind, text, a, b) == expected


def test_edit_gives_variants_and_a_status_for_a_text_with_none() -> None:
    editor = InflectedSwapEditor(load_swap_set("identity-fr"))
    variants = editor.edit(["Un homme musulman prie.", "Il porte un pull noir."])
    # "un homme musulman": every target with a masculine form; lesbienne has none -> left out, no broken sentence
    texts = [c.text for c in variants[0]]
    assert "Un homme chrétien prie." in texts and not any("lesbienne" in t for t in texts)
    assert len(texts) == len(load_swap_set("identity-fr").terms) - 2  # itself and lesbienne
    assert variants[1] == [] and editor.last_counts[1] == (1, 1)  # the colour of a pullover is not an identity
    only = InflectedSwapEditor(load_swap_set("identity-fr"), targets=["musulman", "lesbienne"])
    assert only.edit(["Il est musulman."]) == [[]] and only.last_reasons == ["swap:gender_fixed"]


def test_without_the_french_parser_a_gender_change_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import counterfair.models as models

    def missing(language: str) -> None:
        raise ModelNotAvailable("no parser", pip="pip install 'counterfair[fr]'")

    monkeypatch.setattr(models, "spacy_language_pipeline", missing)
    editor = InflectedSwapEditor(load_swap_set("identity-fr"))
    text = "Un musulman pratiquant prie."
    matches = editor.identity_matches([text])[0]
    assert editor.swap(text, matches, "musulman", "chrétien")[0] == "Un chrétien pratiquant prie."  # no parse needed
    with pytest.raises(SwapRefused, match="needs_parser"):
        editor.swap(text, matches, "musulman", "lesbienne")


def test_packs_are_listed_per_language_and_validate() -> None:
    rows = {(r["name"], r["language"]) for r in pack_catalogue()}
    for language in ("fr", "de", "es"):
        assert {(n, language) for n in ("islam", "judaism", "lgbq", "transgender")} <= rows
        assert (f"identity-{language}", language) in rows
    assert load_attribute("islam", "fr").substitution["mosquée"] == "église"
    assert load_attribute("islam", "es").substitution["mezquita"] == "iglesia"
    with pytest.raises(ConfigError, match="unknown language 'pt'"):
        load_attribute("islam", "pt")


def test_a_users_french_pack_checks_its_inflections(tmp_path: Path) -> None:
    pack = tmp_path / "fr.yaml"
    pack.write_text(
        "kind: identity\nlanguage: fr\nterms: [musulman, juif]\ninflections:\n  musulman: [musulman, musulmane]\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"inflections.musulman must be \[m.sg, f.sg, m.pl, f.pl\]"):
        validate_pack(pack)
    pack.write_text(
        "kind: identity\nlanguage: fr\nterms: [musulman, juif]\ninflections:\n"
        "  musulman: [musulman, musulmane, musulmans, musulmanes]\n  juif: [juif, juive, juifs, juives]\n",
        encoding="utf-8",
    )
    found, _ = validate_pack(pack)
    editor = InflectedSwapEditor(found)
    assert [c.text for c in editor.edit(["Une musulmane prie."])[0]] == ["Une juive prie."]


def test_tokenizer_per_language() -> None:
    from counterfair.text import tokenize, tokenizer_signature, word_distance

    assert tokenize("L'athée qu'il connaît.", "fr") == ["L'", "athée", "qu'", "il", "connaît", "."]
    assert tokenize("L'athée qu'il connaît.") == ["L'athée", "qu'il", "connaît", "."]  # English rules do not split
    assert word_distance("Le musulman est arrivé.", "L'athée est arrivé.", "fr") == 2
    assert tokenizer_signature("fr").startswith("spacy-blank-fr:")


def test_bertscore_encoder_falls_back_and_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from counterfair.language_registry import bertscore_encoder

    monkeypatch.delenv("COUNTERFAIR_ENCODER_FR", raising=False)
    monkeypatch.setattr("counterfair.language_registry._hub_cache_dir", lambda repo: None)
    choice = bertscore_encoder("fr")
    assert (choice.model, choice.covers_language) == ("all-minilm-l6-v2", False)
    assert "bert-base-multilingual-cased" in (choice.note or "")
    monkeypatch.setenv("COUNTERFAIR_ENCODER_FR", str(tmp_path))
    assert bertscore_encoder("fr").model == str(tmp_path) and bertscore_encoder("fr").covers_language
    assert bertscore_encoder("en").covers_language


@pytest.mark.slow
def test_generate_in_french_from_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text(
        'text\n"Un musulman pratiquant prie à la mosquée."\n"La montée de l\'islam inquiète."\n', encoding="utf-8"
    )
    out = tmp_path / "run"
    command = [sys.executable, "-m", "counterfair.cli", "generate", str(data), "--language", "fr"]
    command += ["--methods", "substitution,swap", "--score-methods", "substitution", "--out", str(out), "-q"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    import pandas as pd

    rows = pd.read_csv(out / "counterfactuals.csv")
    sub = rows[rows.method == "substitution"].set_index("row")["text"].to_dict()
    assert sub == {0: "Un chrétien pratiquant prie à l'église.", 1: "La montée du christianisme inquiète."}
    swaps = pd.read_csv(out / "candidates.csv").query("method == 'swap'")
    assert "Une lesbienne pratiquante prie à la mosquée." in set(swaps.text)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["signatures"]["language"]["code"] == "fr"
    assert summary["signatures"]["swap"]["params"]["identities"] == "identity-fr"
    french_pack = tmp_path / "culte.yaml"
    french_pack.write_text("language: fr\nname: culte\nablation: [mosquée]\n", encoding="utf-8")
    wrong = [*command[:5], "--attribute", str(french_pack), "--methods", "ablation", "--out", str(tmp_path / "x")]
    refused = subprocess.run(wrong, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "pass --language fr" in refused.stderr + refused.stdout


@pytest.mark.slow
def test_audit_in_german_from_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "in.csv"
    data.write_text('text\n"Ich habe einen Muslim getroffen."\n"Der Islam ist eine Religion."\n', encoding="utf-8")
    out = tmp_path / "run"
    command = [sys.executable, "-m", "counterfair.cli", "audit", str(data), "--language", "de", "--out", str(out)]
    done = subprocess.run([*command, "-q"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    import pandas as pd

    pairs = pd.read_csv(out / "pairs.csv")
    swaps = pairs[pairs["method"] == "swap"]
    assert "Ich habe einen Juden getroffen." in set(swaps["cf_text"])
    slots = pd.read_csv(out / "slots.csv")
    placebo = slots.loc[(slots["kind"] == "placebo") & (slots["family"] == "identity"), "text"]
    assert len(placebo) > 5 and placebo.str.fullmatch(r"Ich habe einen \w+en Menschen getroffen\.").all()
    assert set(pairs.loc[pairs["method"] == "substitution", "cf_text"]) == {"Der Katholizismus ist eine Religion."}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["options"]["language"] == "de" and summary["placebo"]["set"]["language"] == "de"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "2 texts in German, methods" in report  # the report says which language ran, and how to run it again
    assert summary["reproduce"].endswith("--seed 0 --language de --out DIR")
    # an English identity set in a German audit is refused before any work, naming the fix
    wrong = [*command[:-2], "--identities", "dixon50", "--out", str(tmp_path / "x")]
    refused = subprocess.run(wrong, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "pass --language en" in refused.stderr
    assert not (tmp_path / "x").exists()


def _hashed(texts: list[str]) -> list[float]:
    import hashlib

    return [int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) / 16**8 for t in texts]


def test_ctf_and_bias_in_french() -> None:
    import pandas as pd

    import counterfair as cf

    texts = ["Un musulman pratiquant prie.", "Les juifs sont arrivés.", "Une femme noire a gagné.", "Il pleut."]
    result = cf.ctf(texts, _hashed, language="fr", n_resamples=200)
    swapped = set(result.pairs["cf_text"])
    assert {"Un juif pratiquant prie.", "Une lesbienne pratiquante prie.", "Les musulmans sont arrivés."} <= swapped
    assert result.summary["identities"]["name"] == "identity-fr"
    assert result.summary["swap"]["described"].startswith("French swaps with agreement")
    with pytest.raises(ConfigError, match="is in French but the run is in English: pass --language fr"):
        cf.ctf(texts, _hashed, identities="identity-fr")
    with pytest.raises(ConfigError, match="token-for-token swap is for English sets"):
        cf.ctf(texts, _hashed, language="fr", grammar=False)
    # bias: every inflected form is a mention of its group ("juifs", "noire")
    from counterfair.commands.bias.core import BiasOptions, memberships

    frame = pd.DataFrame({"text": texts})
    groups = memberships(frame, texts, BiasOptions(language="fr"), "test")
    assert groups["religion"].tolist() == [True, True, False, False]
    assert groups["race_ethnicity"].tolist() == [False, False, True, False]


@pytest.mark.parametrize("language", ["fr", "de"])
@pytest.mark.parametrize("name", ["ablation", "substitution", "swap"])
def test_language_editors_keep_the_editor_contract(language: str, name: str) -> None:
    from counterfair.editors.registry import EditorContext, build_editor
    from counterfair.language_registry import get_language

    context = EditorContext(attribute=load_attribute("islam", language), identities=get_language(language).identity_set)
    editor = build_editor(name, context)
    texts = {
        "fr": ["Une musulmane prie à la mosquée.", "Rien ici."],
        "de": ["Die Muslime beten in der Moschee.", "Nichts."],
    }
    out = editor.edit(texts[language])
    assert len(out) == 2 and out[1] == [] and out[0]
    assert all(c.editor == name for c in out[0])
    json.dumps(editor.params())
    assert editor.params_hash() == editor.params_hash() and editor.edit([]) == []


def test_the_audit_reads_the_language_from_the_texts() -> None:
    """#79: without --language, the language whose own stop words lead (English unless another clearly does); the
    Spanish demo texts are audited with the Spanish identity set and gender words, and the run records "es"."""
    import numpy as np
    import pandas as pd

    import counterfair as cf
    from counterfair.commands.audit.options import AuditOptions, demo_path, in_language
    from counterfair.language_registry import detect_language, get_language

    assert detect_language(["Mon voisin musulman est très gentil avec nous.", "Elle a ouvert une boulangerie."]) == "fr"
    assert detect_language(["Meine muslimische Nachbarin ist sehr nett zu uns.", "Die Bäckerei hat heute auf."]) == "de"
    assert detect_language(["Nice day.", "ok", "I am gay."]) == "en"  # too few words of any other: English
    assert detect_language([]) == "en" and get_language("auto").code == "en"
    spanish = pd.read_csv(demo_path("es"))
    assert detect_language(spanish["text"]) == "es"
    opts = in_language(AuditOptions(), spanish)
    assert (opts.language, opts.identities, opts.placebo) == ("es", "identity-es", "es")
    given = AuditOptions(language="en")
    assert in_language(given, spanish) is given  # a language given is kept
    result = cf.audit(spanish["text"].tolist(), lambda t: np.full(len(t), 0.3), methods=["swap"], bootstrap=50)
    assert result.typed_summary.options["language"] == "es"
    assert "gender_words" in (result.typed_summary.effects.families or {})
