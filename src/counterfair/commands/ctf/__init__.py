"""``counterfair ctf``: counterfactual token fairness — identity-term swaps, the CTF gap per direction, blindness.

Layout (see :mod:`counterfair.commands`): :mod:`.core` the options and the in-memory verb, :mod:`.shell` the run
directory around it, :mod:`.cli` the command line.
"""
