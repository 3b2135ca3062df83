"""``counterfair llm-audit``: placebo-controlled counterfactual fairness of an LLM application's responses.

A command is one folder (this one): :mod:`.prompts` (the prompts' identity slots and their variants), :mod:`.generators`
(what writes the responses), :mod:`.outcomes` (what is read from each response), :mod:`.core` (the options and the
in-memory verb), :mod:`.result` (the typed summary, the verdict, the report page), :mod:`.shell` (a run directory
that resumes), :mod:`.cli` (the command line), :mod:`.scenarios` (the built-in cases).

>>> result = cf.llm_audit("prompts.csv", generator=my_fn)  # 6 or more prompts with {group} (--few-prompts: fewer)
>>> print(result.verdict)
"""

from __future__ import annotations

from typing import Any

from ...progress import ProgressHook
from .core import LLMAuditOptions
from .result import LLMAuditResult, LLMAuditSummary

__all__ = ["LLMAuditOptions", "LLMAuditResult", "LLMAuditSummary", "llm_audit"]


def llm_audit(
    prompts: Any,
    generator: Any,
    options: LLMAuditOptions | None = None,
    *,
    rules: list[str] | None = None,
    progress: ProgressHook | None = None,
    **kwargs: Any,
) -> LLMAuditResult:
    """Audit an LLM application for identity effects in its responses, against placebo words in the same slot.

    ``prompts``: a list of prompts (templates with ``{group}``, or texts naming identity terms), a file or a
    DataFrame (column ``text`` or ``prompt``); ``generator``: a function ``list[str] -> list[str]``, or a spec
    (``callable:FILE.py:FN``, ``openai:URL#MODEL``, ``llamacpp:MODEL``); ``options`` or keyword arguments:
    :class:`LLMAuditOptions` (``samples``, ``decision="decision=hire"``, ``rating="score:1-10"``,
    ``score="profanity-check"``, ...); ``rules``: gate rules (``["default"]``: fail on any material finding).
    Nothing is written to disk: :meth:`LLMAuditResult.save` writes the files."""
    from dataclasses import replace

    from .core import audit_prompts, read_prompts, require_extras
    from .generators import generator_for
    from .scenarios import with_scenario

    opts = replace(options, **kwargs) if options is not None else LLMAuditOptions(**kwargs)
    prompts, opts = with_scenario(prompts, opts)  # scenario="hiring": its prompts and outcomes
    require_extras(opts, generator)
    keys, texts, origin = read_prompts(prompts, opts)
    gen = generator_for(generator, opts)
    result: LLMAuditResult = audit_prompts(keys, texts, gen, opts, origin=origin, rules=rules, progress=progress)
    return result
