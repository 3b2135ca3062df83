"""``counterfair feedback``: counterfactuals of counterfactuals — an editor fed its own output n times (inc@n, flip-
rate@n, perplexity@n).

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
