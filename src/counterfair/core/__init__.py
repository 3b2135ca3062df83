"""The commands' cores: generate, audit, ctf, evaluate (and several methods compared), feedback. Each module holds
the in-memory core (lists and DataFrames in, typed results out) and, for now, its ``run_*`` shell beside it
(run directory, checkpoints, outputs); docs/architecture.md says what moves next.
"""
