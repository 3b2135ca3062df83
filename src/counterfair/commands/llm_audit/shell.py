"""The run-directory shell of ``counterfair llm-audit``: ``responses.jsonl`` (every variant's sampled responses,
appended as each block of 16 variants returns: a killed run resumes without asking again; a rerun that changes only
how the responses are measured asks nothing), then ``responses.csv``, ``summary.json``, ``report.html`` and
``report.md``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...progress import ProgressHook
from ...runs import holds_run_dir
from .core import LLMAuditOptions
from .result import LLMAuditResult

#: the options that say how the responses are measured, not what is asked: a rerun into the same folder that changes
#: only these measures the stored responses again and asks the generator nothing (with a constrained in-process model
#: the decision and rating also shape the answers: its grammar is part of the generator's identity)
MEASURING = ("decision", "decision_values", "rating", "score", "positive_label", "similarity", "threshold", "bootstrap")
READ = ("decision", "decision_values", "rating")  # what a pass reads where decisions come from probabilities


@holds_run_dir
def run_llm_audit(
    source: Any,
    out_dir: str | Path,
    options: LLMAuditOptions,
    *,
    generator: Any,
    rules: list[str] | None = None,
    progress: ProgressHook | None = None,
) -> LLMAuditResult:
    """``counterfair llm-audit`` into ``out_dir``; a rerun with the same prompts, options and generator resumes."""
    from ...analysis.gate import parse_rule
    from ...checkpoint import JsonlCheckpoint
    from ...io import input_sha256
    from ...records import fingerprint, run_identity
    from ...runs import claim_run_dir, prepare_run_dir
    from .core import audit_prompts, read_prompts, require_extras
    from .generators import generator_for

    for rule in rules or []:
        if rule.strip().lower() != "default":
            parse_rule(rule)  # a bad rule is found before any work
    require_extras(options, generator)  # a missing extra is named before any work
    target = prepare_run_dir(out_dir)
    keys, texts, origin = read_prompts(source, options)
    gen = generator_for(generator, options)
    identifying = run_identity(options)
    # what the generator is asked, and how: read from probabilities, the decision's values and the rating's numbers
    # are what each pass reads, so a change to them asks again
    reads = options.decision_from != "samples" and callable(getattr(gen, "read", None))
    measuring = tuple(m for m in MEASURING if m not in READ) if reads else MEASURING
    asked = {k: v for k, v in identifying.items() if k not in measuring}
    run_id = {
        "options_fingerprint": fingerprint(asked),
        "input_sha256": input_sha256(source, texts),
        "generator": gen.info(),
    }
    claim_run_dir(
        target,
        run_id,
        {"options": identifying, "input": origin},
        what="audit of an LLM application",
        remeasured=("options",),
    )
    from .core import AnsweredVariant

    checkpoint: JsonlCheckpoint[AnsweredVariant, AnsweredVariant] = JsonlCheckpoint(
        target / "responses.jsonl", key=lambda record: record["variant"], shape={"variant": str, "responses": list}
    )
    from .readout import Reading

    done = {str(k): list(r["responses"]) for k, r in checkpoint.done.items() if not r.get("read")}
    done_reads = {str(k): Reading.from_dict(r["read"]) for k, r in checkpoint.done.items() if r.get("read")}
    result: LLMAuditResult = audit_prompts(
        keys,
        texts,
        gen,
        options,
        origin=origin,
        rules=rules,
        done=done,
        done_reads=done_reads,
        sink=checkpoint.add,
        progress=progress,
    )
    result.save(target)
    failed, variants = result.summary.failed_variants, result.summary.variants
    if failed > options.max_failed * variants:
        from ...errors import GeneratorError

        raise GeneratorError(
            f"{failed} of {variants} prompt variants ({failed / variants:.0%}) got no answer after their retries, "
            f"more than --max-failed {options.max_failed:.0%}: the run is saved in {target} (responses.csv: status "
            "failed) and its findings cover the rest only; rerun the same command to ask the failed ones again"
        )
    return result
