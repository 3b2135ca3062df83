"""The placebo control of an identity-swap audit: is the classifier sensitive to *identity*, or to any edit?

For every identity swap ("Some people are gay." -> "Some people are straight.") the audit makes a matched placebo
swap: the same occurrences of the same source term become a word that names no group ("Some people are tall."),
written in the same grammatical form ("Muslims" -> "tall people", "a Muslim" -> "a tall person") by the same
swap machinery. The placebo word is one of the ``k`` placebo words nearest in Zipf frequency to the identity swap's
target term (chosen per pair by a seeded hash, so reruns agree), so the two edits are alike in size, position,
grammar and word frequency and differ in whether the new word names a social group.

The *identity effect* is then the CTF gap over the identity swaps minus the same gap over their placebos (per group:
over the swaps that put one of the group's terms in):
per text, the mean over its pairs of ``|f(x) - f(x_identity)| - |f(x) - f(x_placebo)|``; averaged over texts, with
a percentile bootstrap over texts (the paired bootstrap: each text keeps its identity and placebo pairs together).
An effect whose CI lies above 0 says the classifier reacts to the identity more than to an edit of that kind.

The placebo words ship per language as ``resources/placebo/{en,fr,de}.yaml`` (written by
``tools/placebo_frequencies.py``); a user's file (``--placebo FILE``) replaces them: ``words:`` a mapping word -> Zipf
frequency or a plain list, optionally ``term_frequencies:`` for the identity terms, and for French and German
(``language: fr|de``) ``inflections:`` in the identity packs' format, so that the swap of
:class:`~counterfair.editors.inflected.InflectedSwapEditor` writes each placebo with the agreement it gives an
identity term ("une musulmane pratiquante" -> "une curieuse pratiquante", "einen Muslim" -> "einen neugierigen
Menschen"); an occurrence it cannot write that way gets no placebo.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from ..editors.registry import swap_methods, swaps_identities
from ..errors import ConfigError
from ..jsontypes import JSONObject
from ..lexicons.attributes import IdentitySet, TermInflection
from ..metrics.functional import bootstrap_ci
from ..spill import ArrayLog, Scratch

NEAREST = 3  # placebo words to choose from per target term: the nearest in frequency


@dataclass(frozen=True)
class PlaceboSet:
    """Words that describe a person and name no group, with their Zipf frequencies (``None``: unknown)."""

    name: str
    words: Mapping[str, float | None]
    term_frequencies: Mapping[str, float]
    source: str = ""
    language: str = "en"
    inflections: Mapping[str, TermInflection] = field(default_factory=dict)  # French and German: each word's forms

    def candidates(self, target: str, k: int = NEAREST) -> list[str]:
        """The ``k`` words nearest in frequency to ``target`` (every word when either frequency is unknown)."""
        zipf = self.term_frequencies.get(target.lower())
        known = [(w, f) for w, f in self.words.items() if f is not None]
        if zipf is None or not known:
            return list(self.words)
        return [w for w, _ in sorted(known, key=lambda wf: (abs(wf[1] - zipf), wf[0]))[:k]]

    def pick(self, target: str, key: str, seed: int = 0) -> str:
        """The placebo for one identity pair (``key`` names it): a seeded choice among :meth:`candidates`."""
        options = self.candidates(target)
        digest = hashlib.sha256(f"{seed}\0{key}\0{target}".encode()).digest()
        return options[int.from_bytes(digest[:8], "big") % len(options)]

    def to_dict(self) -> JSONObject:
        out: JSONObject = {"name": self.name, "words": dict(self.words), "source": self.source}
        return out if self.language == "en" else {**out, "language": self.language}


BUILTIN_LANGUAGES = ("en", "fr", "de")


def builtin_placebo_path(language: str = "en") -> Path:
    return Path(str(resources.files("counterfair") / "resources" / "placebo" / f"{language}.yaml"))


def load_placebo(spec: str | None, identities: IdentitySet | None = None) -> PlaceboSet | None:
    """``None``/``"none"``: no placebo; ``"en"``, ``"fr"``, ``"de"``: the built-in words of that language
    (``"default"``: of ``identities``' language); else a YAML or JSON file. A placebo word that is one of
    ``identities``' terms is an error (it would not be a placebo), and so is a set in another language than theirs."""
    if spec is None or spec.lower() in ("none", "off", "no"):
        return None
    key = spec.lower()
    if key in ("default", "builtin"):
        key = identities.language if identities is not None else "en"
    path = builtin_placebo_path(key) if key in BUILTIN_LANGUAGES else Path(spec)
    if not path.exists():
        raise ConfigError(f"--placebo {spec}: no such file (use a YAML file with words:, en, fr, de, or none)")
    from ..yamlfiles import read_mapping

    data = read_mapping(path, "--placebo")
    if not data.get("words"):
        raise ConfigError(f"--placebo {path}: needs a non-empty 'words:' (a list, or a mapping word -> Zipf frequency)")
    raw = data["words"]
    words: dict[str, float | None] = {}
    for i, item in enumerate(raw.items() if isinstance(raw, Mapping) else ((w, None) for w in raw)):
        word, zipf = item
        if not isinstance(word, str) or not word.strip():
            raise ConfigError(f"--placebo {path}: word {i + 1} is not a word ({word!r})")
        if zipf is not None and not isinstance(zipf, int | float):
            raise ConfigError(f"--placebo {path}: the frequency of {word!r} is not a number ({zipf!r})")
        words[word.strip()] = None if zipf is None else float(zipf)
    if identities is not None:
        clash = sorted(w for w in words if w.lower() in {t.lower() for t in identities.terms})
        if clash:
            raise ConfigError(f"--placebo {path}: {', '.join(clash)} is an identity term, not a placebo")
    frequencies = {str(k).lower(): float(v) for k, v in (data.get("term_frequencies") or {}).items()}
    language, inflections = _language_forms(data, words, path, identities)
    name, source = str(data.get("name") or path.stem), str(data.get("source") or "")
    return PlaceboSet(name, words, frequencies, source, language, inflections)


def _language_forms(
    data: Mapping[str, Any], words: Mapping[str, Any], path: Path, identities: IdentitySet | None
) -> tuple[str, dict[str, TermInflection]]:
    """The placebo set's language (that of the identity set it serves) and, in French and German, its words' forms."""
    from ..languages import get_language
    from ..lexicons.attributes import parse_inflections

    try:
        language = get_language(str(data.get("language") or "en")).code
    except ConfigError as err:
        raise ConfigError(f"--placebo {path}: 'language': {err}") from None
    if identities is not None and identities.language != language:
        raise ConfigError(
            f"--placebo {path}: its words are in {language!r} but the identity set {identities.name} is in "
            f"{identities.language!r}; use --placebo {identities.language} or a file in that language"
        )
    if language == "en":
        return language, {}
    if "inflections" not in data:
        raise ConfigError(
            f"--placebo {path}: French and German placebo words need 'inflections' (the identity packs' format) so "
            "that the swap can write them with agreement"
        )
    known = {w.lower() for w in words}
    return language, parse_inflections(data["inflections"], known, language, where=f"--placebo {path}")


def placebo_texts(
    rows: Sequence[Mapping[str, Any]],
    identities: IdentitySet,
    placebo: PlaceboSet,
    *,
    seed: int = 0,
    editor: Any = None,
    matches: Mapping[Any, list[Any]] | None = None,
) -> list[tuple[str, str] | None]:
    """For each pair row (``method``, ``input_id``, ``source_text``, ``source_term``, ``target_term``, ``edits``
    as generate writes them), ``(placebo_term, placebo_text)`` for an identity swap, ``None`` for any other row.

    The occurrences replaced are those the identity swaps of that text replaced (so the identity guard's verdicts
    carry over without running it again); every such occurrence of the source term becomes the placebo word's form.
    ``editor`` and ``matches``: :func:`placebo_editor` and :func:`swapped_matches` of these rows, where the caller has
    them already (the slots are written from the same).
    """
    from ..editors.swap import SwapRefused

    editor = editor if editor is not None else placebo_editor(identities, placebo)
    matches_of = matches if matches is not None else swapped_matches(rows, editor, identities)
    out: list[tuple[str, str] | None] = []
    for row in rows:
        if (
            not swaps_identities(row["method"])
            or not row.get("source_term")
            or row.get("attribute", "identity") != "identity"
        ):
            out.append(None)
            continue
        text, key = row["source_text"], row["input_id"]
        word = placebo.pick(row["target_term"], f"{key}\0{row['source_term']}", seed)
        try:
            new, _ = editor.swap(text, matches_of.get(key, []), row["source_term"], word)
        except SwapRefused:  # French/German: an occurrence the placebo word cannot be written into (no placebo)
            new = text
        out.append((word, new) if new != text else None)
    return out


def swapped_matches(
    rows: Sequence[Mapping[str, Any]], editor: Any, identities: IdentitySet, attribute: str = "identity"
) -> dict[Any, list[Any]]:
    """Per input id of an identity swap (of ``attribute``: the audit's identity set, or a swap pack), the occurrences
    of identity terms (``editor.find``) that its identity swaps replaced (their ``edits``): where a placebo word goes,
    so the identity guard's verdicts carry over."""
    terms = {t.lower() for t in identities.terms}
    spans: dict[Any, list[tuple[int, int]]] = {}
    texts: dict[Any, str] = {}
    for row in rows:
        if swaps_identities(row["method"]) and row.get("edits") and row.get("attribute", "identity") == attribute:
            spans.setdefault(row["input_id"], []).extend((e["start"], e["end"]) for e in json.loads(row["edits"]))
            texts[row["input_id"]] = row["source_text"]
    return {
        key: [
            m
            for m in editor.find(texts[key])
            if m.term.lower() in terms and any(s <= m.start and m.end <= e for s, e in edited)
        ]
        for key, edited in spans.items()
    }


def placebo_editor(identities: IdentitySet, placebo: PlaceboSet) -> Any:
    """The swap of the identity set's language that writes placebo words (:func:`~counterfair.editors.registry.
    identity_editor`, without the guard: its verdicts come from the identity swaps' edits). French and German swap over
    the identity terms and the placebo words together, each with its forms; English needs no forms for them."""
    from dataclasses import replace

    from ..editors.registry import identity_editor

    if identities.language != "en":
        own = {t.lower() for t in identities.terms}
        extra = tuple(w for w in placebo.words if w.lower() not in own)
        inflections = {w.lower(): placebo.inflections[w.lower()] for w in extra}
        identities = replace(
            identities, train=identities.train + extra, inflections={**identities.inflections, **inflections}
        )
    return identity_editor(identities, guard=None)


_PER_TEXT = ["abs_identity", "abs_placebo", "effect"]


class PlaceboEffect(TypedDict):
    """The identity effect of some swaps (overall, a group's, a direction's): the identity swap's mean absolute change
    beyond its placebo's, per text, with its interval over texts."""

    identity_effect: float
    ci_low: float | None
    ci_high: float | None
    identity_gap: float
    placebo_gap: float
    texts: int
    pairs: int
    exceeds_placebo: bool


class DirectionEffect(PlaceboEffect):
    source: str
    target: str


class IdentityEffects(PlaceboEffect):
    """:meth:`PlaceboTally.report`: the effect overall (its keys first), per group and per direction."""

    swaps_without_placebo: int
    by_group: dict[str, PlaceboEffect]
    by_direction: list[DirectionEffect]
    groups_exceeding_placebo: list[str]


class PlaceboTally:
    """The identity effects gathered block by block (#47: an audit of 200,000 texts keeps no table of its pairs): per
    breakdown (overall, each group swapped in, each direction) each text's mean ``|identity change|``, ``|placebo
    change|`` and their difference, and the pair counts. A text's pairs are all in one block, so :meth:`report` gives
    what the whole table gives, value for value (texts in order of first appearance, groups sorted by name)."""

    def __init__(self, scratch: Scratch | None = None) -> None:
        self.scratch = scratch  # where the per-text means are kept while the blocks go by (on disk); None: in memory
        self.per_text: dict[tuple[str, ...], ArrayLog] = {}
        self.pairs: dict[tuple[str, ...], int] = {}
        self.swaps = 0  # scored identity swaps, with a placebo or not

    def add(self, pairs: pd.DataFrame) -> None:
        """One block of the audit's pairs (columns ``method``, ``status``, ``input_id``, ``group``, ``target_group``,
        ``diff``, ``diff_placebo``)."""
        if pairs.empty or "diff_placebo" not in pairs.columns:
            return
        mask = pairs["method"].isin(swap_methods()) & (pairs["status"] == "ok")
        swaps = pairs.loc[mask, ["input_id", "group", "target_group", "diff", "diff_placebo"]]
        self.swaps += len(swaps)
        frame = swaps[swaps["diff_placebo"].notna()]  # a copy: its columns are added in place, not copied again
        if frame.empty:
            return
        frame["abs_identity"] = frame["diff"].abs()
        frame["abs_placebo"] = frame["diff_placebo"].abs()
        frame["effect"] = frame["abs_identity"] - frame["abs_placebo"]
        self._keep(("overall",), frame)
        for g, part in frame.groupby("target_group"):
            self._keep(("group", str(g)), part)
        for (source, target), part in frame.groupby(["group", "target_group"]):
            self._keep(("direction", str(source), str(target)), part)

    def _keep(self, key: tuple[str, ...], part: pd.DataFrame) -> None:
        means = part.groupby("input_id", sort=False)[_PER_TEXT].mean().to_numpy(dtype=float)
        self.per_text.setdefault(key, ArrayLog(self.scratch)).append(means)
        self.pairs[key] = self.pairs.get(key, 0) + len(part)

    def _effect(self, key: tuple[str, ...], *, seed: int, n_resamples: int) -> PlaceboEffect:
        per_text = self.per_text[key].concatenate().reshape(-1, len(_PER_TEXT))  # the blocks' rows, stacked
        effect = per_text[:, 2].copy()  # each column contiguous, as the whole table's means were
        low, high = bootstrap_ci(effect, n_resamples=n_resamples, seed=seed)
        return {
            "identity_effect": float(effect.mean()),
            "ci_low": None if np.isnan(low) else low,
            "ci_high": None if np.isnan(high) else high,
            "identity_gap": float(pd.Series(per_text[:, 0].copy()).mean()),
            "placebo_gap": float(pd.Series(per_text[:, 1].copy()).mean()),
            "texts": int(effect.size),
            "pairs": self.pairs[key],
            "exceeds_placebo": bool(not np.isnan(low) and low > 0),
        }

    def report(self, *, seed: int = 0, n_resamples: int = 2000) -> IdentityEffects | None:
        """The identity effect overall, per group and per direction; ``None`` when no identity swap has a scored
        placebo."""
        if ("overall",) not in self.per_text:
            return None
        overall = self._effect(("overall",), seed=seed, n_resamples=n_resamples)
        keys = sorted(k for k in self.per_text if k[0] != "overall")
        by_group = {k[1]: self._effect(k, seed=seed, n_resamples=n_resamples) for k in keys if k[0] == "group"}
        by_direction: list[DirectionEffect] = [
            {"source": k[1], "target": k[2], **self._effect(k, seed=seed, n_resamples=n_resamples)}
            for k in keys
            if k[0] == "direction"
        ]
        return {
            **overall,
            "swaps_without_placebo": self.swaps - self.pairs[("overall",)],
            "by_group": by_group,
            "by_direction": by_direction,
            "groups_exceeding_placebo": sorted(g for g, e in by_group.items() if e["exceeds_placebo"]),
        }


def identity_effects(pairs: pd.DataFrame, *, seed: int = 0, n_resamples: int = 2000) -> IdentityEffects | None:
    """The identity effect overall, per group and per direction (source group -> target group), from the audit's
    pairs (columns ``method``, ``input_id``, ``group``, ``target_group``, ``diff``,
    ``diff_placebo``, ``status``). ``None`` when no identity swap has a scored placebo.

    A group's effect is over the pairs that swap one of its terms *in*: an identity swap and its placebo both
    remove the source term, so what differs between them is the word put in its place. A classifier that reacts
    to "gay" shows the effect under sexuality (the pairs that put "gay" in), not under every group whose texts
    lost their term to it. (:class:`PlaceboTally` gathers the same a block of pairs at a time.)"""
    tally = PlaceboTally()
    tally.add(pairs)
    return tally.report(seed=seed, n_resamples=n_resamples)
