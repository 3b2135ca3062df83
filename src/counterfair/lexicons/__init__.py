"""Word lists, identity sets, gender and swap packs (:mod:`.attributes`), WordNet (:mod:`.wordnet`), and
deriving a word list from data (:mod:`.derive`).
"""
