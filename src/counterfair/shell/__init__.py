"""The shells: each command's run directory — the input read and the directory claimed (one run identity, a lock)
before any work, checkpoints so that a rerun resumes, the outputs written — around the in-memory core of
:mod:`counterfair.core` (TextAttack's Attacker around its Attack). The core imports nothing of run directories."""
