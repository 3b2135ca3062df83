"""``python -m counterfair.cli``."""

from . import main

main()
