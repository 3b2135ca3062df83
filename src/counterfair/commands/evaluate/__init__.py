"""``counterfair evaluate``: a counterfactual editor's pairs measured (flip rate, probability change, distance,
perplexity, diversity, judged quality).

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
