"""``counterfair suite``: a functional test suite (HateCheck's layout) scored per functionality and target; reuses the
bias slice's metrics.

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
