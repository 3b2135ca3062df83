"""``counterfair evaluate A.csv B.csv ...`` (more than one pairs file): several editors' pairs evaluated and compared
side by side, the rows every method edited aligned (summary command ``evaluate-methods``). Its command line is the
evaluate slice's; it builds on that slice's core and shell.

Layout: :mod:`.core` the in-memory comparison, :mod:`.shell` the run directory around it.
"""
