"""French: the entry is ``language.yaml``; its packs, placebo words and rules sit beside it."""
