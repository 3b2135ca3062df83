"""How the verdict names what it measured: a group, a term's form, a combination, a family, in words a reader needs
no glossary for (``names:black_female`` is "first names perceived as Black (female)"; a probe's term is said to be
written in)."""

from __future__ import annotations


def form_words(name: str) -> str:
    """``jewish@plural`` as words: '"jewish" as a plural noun'."""
    owner, _, form = name.rpartition("@")
    as_what = {"adjective": "an adjective", "noun": "a noun", "plural": "a plural noun", "place": "a country",
               "pronoun": "pronouns", "title": "titles"}.get(form, form)  # fmt: skip
    if owner.startswith("gender_words:"):
        return f"{group_words(owner)} as {as_what}"
    return f'"{owner.removeprefix(PROBE)}" as {as_what}' + BY_PROBE * owner.startswith(PROBE)


#: a probe's terms are named as the identity terms, and said to be written in
PROBE, BY_PROBE = "identity_probe:", " (written in by probe)"


def cell_words(name: str) -> str:
    """``race_ethnicity&female`` as words."""
    group, _, context = name.partition("&")
    return (
        f"{group_words(group)} in texts that name {'women' if context == 'female' else 'men'} ({context} gender words)"
    )


def group_words(group: str) -> str:
    """A group's name in words: ``gender_words:female`` is female gender words (she, her, woman, ...), ``names:
    black_female`` first names perceived as Black (female); an identity group as it is named."""
    family, _, name = group.rpartition(":")
    if family.startswith("gender_words"):
        return f"{name} gender words ({'she, her, woman, wife' if name == 'female' else 'he, his, man, husband'}, …)"
    if family.startswith("names"):
        race, _, gender = name.rpartition("_")
        shown = {"black": "Black", "white": "white", "hispanic": "Hispanic", "asian": "Asian"}.get(race, race)
        probe = ", written in by probe" if family.startswith("names_probe") else ""
        return f"first names perceived as {shown} ({gender}{probe})" if race else f"first names ({name}{probe})"
    if family == "identity_probe":
        return name + BY_PROBE
    return group


FAMILY_WORDS = {
    "identity": "identity terms",
    "gender_words": "gender words",
    "names": "first names",
    "names_probe": "first names written in by probe",
    "identity_probe": "identity terms written in by probe",
}
