"""``counterfair bias``: group-membership bias metrics (subgroup, BPSN and BNSP AUCs, per-group rates) of a labelled,
scored table.

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
