"""Commands built as vertical slices: one folder per command holding its options and verb (``core``), what it reads
and writes (``prompts``, ``outcomes`` ...), its result and report page (``result``), its run-directory shell
(``shell``) and its command line (``cli``, registered by :mod:`counterfair.cli`). ``llm_audit`` is the first; the
older commands still live across ``core/``, ``shell/``, ``cli/`` and ``views/``."""
