"""``counterfair generate``: counterfactual candidates from each editor, filtered and ranked, streamed in blocks.

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
