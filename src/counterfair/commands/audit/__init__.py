"""``counterfair audit``: the fairness audit of a classifier — counterfactuals generated, scored, tallied block by
block, the placebo-controlled verdict. Built on the generate, ctf and bias slices (it imports their cores; they import
nothing of it).

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line. :mod:`.tallies` the running tallies each block of pairs adds to.
"""
