"""The language entries, one folder each (``<code>/language.yaml``, its packs, placebo words, word lists, demo texts
and grammar); :mod:`counterfair.language_registry` reads them."""
