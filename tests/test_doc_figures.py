"""#49 item 13: every figure the docs state comes from a results JSON, checked here.

A figure is a decimal number or a number with a unit of share, ratio, time, memory, rate or probability points, in
a page's prose (code blocks and inline code are commands and options, not figures). Each one in `docs/` is accounted
for by an entry below:

* ``KEYED``: read from one key of a results JSON and written the way the page writes it (the strongest check: a rerun
  that moves the figure fails here until the page says the new one);
* ``SOURCED``: a phrase whose every figure is a value of the named part of a results JSON at the written precision
  (as is, as a percentage, seconds as minutes, MiB as GiB; numbers in the JSON's table cells count): a rerun that
  changes a value fails unless the page follows;
* ``NOT_MEASURED``: a phrase whose figures are no measurement of ours, with the reason (``WHY``).

A figure in none of them fails the inventory test: a new measurement in the docs needs its source named here.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"

NUMBER = re.compile(r"(?<![\w.,/=#§\-])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w.]*\.\d)(?![A-Za-z])")
UNIT = re.compile(
    r"\s?(?:%|×)|\s(?:s|ms|min|h|hours?|minutes|seconds|MiB|GiB|KiB|kB|MB|GB|points?|worker-hours|[a-z]+/s)\b"
)


def figures(text: str) -> list[tuple[int, int, str]]:
    """The figures of a page's prose: (start, end, as written) outside inline code."""
    code = [m.span() for m in re.finditer(r"`[^`]*`", text)]
    found = []
    for m in NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in code):
            continue
        if "." in m.group(0) or UNIT.match(text, m.end()):
            found.append((m.start(), m.end(), m.group(0)))
    return found


@cache
def prose(page: str) -> str:
    """A page without its fenced code blocks, whitespace collapsed."""
    kept, fenced = [], False
    for line in (REPO / page).read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return " ".join(" ".join(kept).split())


WHY = {
    "example": "a worked example's made-up numbers",
    "setting": "a default, threshold or limit that counterfair's code sets (the reference pages are generated from it)",
    "paper": "a figure published by a paper or another project, cited as theirs",
    "version": "a version, model size or section number",
    "derived": "arithmetic on measured figures stated beside it",
    "spec": "a limit the code enforces, tested where the limit lives",
    "demo": "the demo audit's own output, checked against a demo run in tests/test_audit.py",
    "quoted": "a one-off timing of an install step, said as 'about' and not rerun by any benchmark",
}


# Conventions every page uses, not measurements.
EVERYWHERE = [
    (r"95 % (?:bootstrap |paired percentile |percentile )?(?:intervals?|CI|confidence)|its 95 %|whole 95 %", "setting"),
]

# (page, the words around the figure with {} where it stands, results file, the keys into it, how it is written)
KEYED: list[tuple[str, str, str, tuple[str, ...], str]] = [
    (
        "docs/how-to/llm-audit.md",
        "is found in {}–",
        "llm_calibration.json",
        ("results", "favour", "100", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/how-to/llm-audit.md",
        "–{} % of runs at 100 prompts × 5 samples",
        "llm_calibration.json",
        ("results", "group", "100", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/how-to/llm-audit.md",
        "needs about 200 prompts ({} %)",
        "llm_calibration.json",
        ("results", "term", "200", "flagged"),
        "{:.0%}",
    ),
    (
        "docs/concepts/labelled-data.md",
        "| profanity-check (default) | 0.892 | {} |",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "overall", "final_metric"),
        "{:.3f}",
    ),
    (
        "docs/concepts/labelled-data.md",
        "| sexuality {} |",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "groups", "sexuality", "bpsn_auc"),
        "{:.3f}",
    ),
    (
        "docs/how-to/bias.md",
        "lowest BPSN AUC ({})",
        "bias_dixon.json",
        ("classifiers", "profanity-check", "groups", "sexuality", "bpsn_auc"),
        "{:.3f}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "of the occurrences it keeps, **{} %** are identity uses",
        "guard_accuracy.json",
        ("tuning", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "and it keeps **{} %** of the identity",
        "guard_accuracy.json",
        ("tuning", "overall", "recall", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "drawn after the rule was changed,\n{} %",
        "guard_accuracy.json",
        ("heldout", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/concepts/counterfactuals.md",
        "% and {} %. Per term",
        "guard_accuracy.json",
        ("heldout", "overall", "recall", "value"),
        "{:.0%}",
    ),
    (
        "docs/how-to/generate.md",
        "its precision is {} % and its recall",
        "guard_accuracy.json",
        ("tuning", "overall", "precision", "value"),
        "{:.0%}",
    ),
    (
        "docs/reference/run-directories.md",
        "`bias` took {} s of CPU with the guard on a first run",
        "bias_floor.json",
        ("sides", "counterfair (guard)", "cpu_seconds"),
        "{:.1f}",
    ),
    (
        "docs/reference/run-directories.md",
        "and {} s on a rerun with another classifier",
        "bias_floor.json",
        ("sides", "counterfair (guard, verdicts stored)", "cpu_seconds"),
        "{:.1f}",
    ),
]
# page -> (phrase, results file, the keys of the part of it that holds the phrase's figures)
SOURCED: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "docs/benchmarks.md": [
        ("92.2 % / 92.4 % written", "languages.json", ("reach",)),
        ("1,034 / 117,834 swaps/s", "languages.json", ("reach",)),
    ],
    "docs/concepts/identity-effect.md": [
        ("false alarms 0–1 % over 100 seeds", "llm_calibration.json", ("results",)),
        ("(material in 0–1 % of runs at every size)", "calibration.json", ("table",)),
        ("naming it, in 100 % of runs from 128 texts", "calibration.json", ("table",)),
        ("rests on 20–39 texts (85–100 %\nof runs)", "calibration.json", ("texts_table",)),
        ("says inconclusive for it (100 %)", "calibration.json", ("table",)),
        (
            "held a planted effect 86–88 % of the time over 6 texts, 90 % over 10, 93 % over 20",
            "interval_coverage.json",
            ("rows",),
        ),
        ("which held it 94–96 % over 8 to 100 texts", "interval_coverage.json", ("rows",)),
        (
            "interval held its true effect 94 % of the time over 10 texts where the plain one held it 90 %",
            "interval_coverage_audit.json",
            ("rows",),
        ),
    ],
    "docs/concepts/labelled-data.md": [
        ("| profanity-check (default) | … 0.612] |", "bias_dixon.json", ("classifiers", "profanity-check")),
        ("| CNN from `counterfair train` … 0.580] |", "bias_dixon.json", ("classifiers", "cnn-baseline")),
        ("dehumanisation (0.12) and threat (0.16)", "bias_dixon.json", ("classifiers", "profanity-check")),
        ("derogation 0.01, counter speech 0.90", "bias_dixon.json", ("classifiers", "cnn-baseline")),
        ("Civil Comments (AUC 0.57)", "bias_dixon.json", ("classifiers", "cnn-baseline", "model")),
    ],
    "docs/concepts/papers.md": [
        ("(0.15 here against 0.20 in CEval's table", "ceval_imdb.json", ("methods", "mice")),
        ("(0.110 vs the baseline's 0.088 on Dixon's templates)", "ctf_replication.json", ("table",)),
        ("(Civil Comments 0.017 vs 0.126)", "ctf_replication.json", ("table",)),
        ("gap (0.062 vs 0.112)", "ctf_replication.json", ("table",)),
        ("templates (0.102 vs 0.088)", "ctf_replication.json", ("table",)),
        ("and 0.014 here (mean of three splits)", "ctf_replication.json", ("models", "baseline")),
        ("between 0.01 and 0.16)", "ctf_replication.json", ("summary", "baseline", "some_people_are")),
        ("inc@n 0.07–0.45 here", "feedback_imdb.json", ("runs",)),
        ("GBDA, CREST and MiCE: 0.26, 0.43, 0.25", "ceval_imdb.json", ("methods",)),
        ("GPT-2 ρ = 0.43", "ceval_imdb.json", ("rank_agreement",)),
        ("ρ = −0.83", "ceval_imdb.json", ("rank_agreement",)),
    ],
    "docs/how-to/bias.md": [
        ("identity effect (+24.4 points", "bias_dixon.json", ("classifiers", "profanity-check")),
        ("BPSN AUC is −0.96", "bias_dixon.json", ("classifiers", "profanity-check")),
        ("scores 0.592 there and 0.12 on dehumanisation", "bias_dixon.json", ("classifiers", "profanity-check")),
    ],
    "docs/how-to/evaluate.md": [("mean distance per token is 0.42", "snli_pairs.json", ())],
    "docs/concepts/counterfactuals.md": [
        (
            "in the 200-text benchmark they took 47 % of all samples",
            "llm_retries.json",
            ("never_passed_samples_share",),
        ),
        ("it drew 28 % fewer samples", "llm_retries.json", ("table",)),
    ],
    "docs/how-to/generate.md": [
        ("| detector | … What it still", "detector_implicit.json", ("detectors",)),
        ("takes 18 s and", "attribute_schedule.json", ("schedules",)),
        ("(about 19 min on 2 cores", "attribute_schedule.json", ("schedules", "steps:36000")),
        ("its precision is 92 % and its recall 99 %", "guard_accuracy.json", ("tuning", "overall")),
        ("a run took 1.32× the keyword run's time", "detector_cost.json", ("totals",)),
        ("Qwen2.5-Coder-0.5B gives 0.41 to every text", "detector_implicit.json", ()),
    ],
    "docs/how-to/languages.md": [("(Spearman 0.54 French, 0.39 German", "languages.json", ("bertscore_fallback",))],
    "docs/how-to/llm-audit.md": [
        ("has a material finding in 0–1 % of runs", "llm_calibration.json", ("results",)),
    ],
    "docs/reference/classifiers.md": [
        ("about 1 s for the 0.5B model", "llama_native_paths.json", ("models", "qwen2.5-coder-0.5b-instruct", "probe")),
        ("(44 s on\n2 cores, where it took 73 s before", "gguf_first_load.json", ("median_s",)),
    ],
    "docs/changelog.md": [
        ("(18.0 s measured on 2 cores", "engine_classifier.json", ("startup",)),
        ("(44 s instead of 73 s on 2 cores)", "gguf_first_load.json", ("median_s",)),
        (
            "held the true effect only 86–94 % of the time over 6 to 20 texts, these 94–96 % from 8 texts up",
            "interval_coverage.json",
            ("rows",),
        ),
        (
            "Intervals are 1.02 times as wide over 100 texts, 1.09 times over 20, 1.36 times over 6",
            "interval_coverage.json",
            ("table",),
        ),
    ],
    "docs/how-to/scale-out.md": [
        ("1.20× on short comments, 1.20× on film reviews, 1.33× on the", "gpu_classifier.json", ("results",)),
        ("short comments: 41.6 texts/s in float32, 6.5 in bfloat16", "gpu_classifier.json", ("results",)),
        ("`benchmarks/gpu_llm.py`: 1.27× transformers'", "gpu_llm_cpu.json", ("ratio",)),
        ("audit on a pool of 2 actors took 1.08× the local", "engine_classifier.json", ("results",)),
        ("adds about 18.0 s to a run", "engine_classifier.json", ("startup",)),
        ("agree within 2e-7", "gpu_classifier.json", ("results",)),
        ("it sustains 9.8 requests/s … (92 % of the ideal 640)", "llm_parallel.json", ("stub",)),
        ("5.24 s per input with one request … (2.7×)", "llm_parallel.json", ("http",)),
        ("0.665 s per input with one request … **0.20 s per input**", "llm_gpu_server.json", ("server_load",)),
        ("1,281 generated tokens/s", "llm_gpu_server.json", ("server_load",)),
        ("decodes 3,528 tokens/s at 16 sequences and 9,047 at 64", "llm_gpu_server.json", ("batched_bench",)),
        ("took 0.615 s per input on the GPU server", "llm_gpu_server.json", ("server_load",)),
        ("29 min in process on 2 CPU cores with parallel sampling (49 min before it)", "audit_speed.json", ()),
        ("took 15.8 min (", "audit_speed.json", ("texts_200_all_4_methods_end_to_end",)),
        ("(20.0 min retrying", "audit_speed.json", ("texts_200_all_4_methods_end_to_end_retry_all",)),
        ("(generate: 708 → 730 → 1,111 MiB peak)", "scale.json", ("generate",)),
        ("| 212 texts/s", "scale.json", ("generate",)),
        ("2,095 pairs/s", "scale.json", ("evaluate",)),
        ("| 182 pairs/s", "scale.json", ("evaluate",)),
        ("| 175 tokens/s", "evaluate_speed.json", ()),
        ("8.8 s per text with parallel sampling (14.7 s before it", "audit_speed.json", ()),
        ("took 109 s on a local Ray against 55 s without", "scale.json", ("ray_vs_local_bertscore_10k",)),
        ("rewrote at 0.20 s per text", "llm_gpu_server.json", ("server_load",)),
        ("7.5× faster (92 s → 12 s)", "scale.json", ("run_store_10k",)),
    ],
    "docs/how-to/ci-gate.md": [
        (
            '("gay" +6.7 points, simultaneous interval +5.0 to +8.4, "black" +6.6, "jewish" +6.2',
            "slurs_demo.json",
            ("terms",),
        )
    ],
    "docs/install.md": [
        ("3.5 minutes on 2 cores", "test_suite.json", ("fast_tier",)),
        ("under 800 MB in a fresh", "slim_install.json", ()),
    ],
    "docs/reference/reliability.md": [
        ("(762 MiB peak at 200k texts", "memory.json", ("commands", "ctf, breakdowns on disk")),
        ("(1,155 MiB peak at 200k short texts", "memory.json", ("commands", "audit, abs in place")),
        ("peaks at 492 MiB at 200,000 texts", "memory.json", ("commands", "bias")),
        ("swaps in 12 s, four times", "long_text.json", ()),
    ],
}
NOT_MEASURED: dict[str, list[tuple[str, str]]] = {
    "docs/benchmarks.md": [("vs CEval's 0.41", "paper"), ("LangFair 0.8's", "version")],
    "docs/concepts/counterfactuals.md": [
        ("F1 below 0.5 against", "setting"),
        ("(probability ≥ 0.5 by", "setting"),
        ("WordNet 3.0", "version"),
        ("reaching 0.8 (", "setting"),
    ],
    "docs/changelog.md": [
        ("(Retry-After honoured up to 60 s)", "setting"),
        ("once a stage has run 10 s", "setting"),
        ('VADER scores "friend" +2.2', "paper"),
        ("invited 30 points less often", "setting"),
        ("padded to much more than 1.5 times its length", "setting"),
        ("scored 2 points lower", "setting"),
        ("`--max-failed` (5 %)", "setting"),
        ("Effects under 0.05 points are no finding", "setting"),
        ("(`mde`, 80 % power)", "setting"),
        ("the plain 2.5/97.5 percentiles", "setting"),
        ("(300 MB for 200,000 short texts)", "derived"),
        ("(`--retry-nearness`, default 0.8)", "setting"),
        ("(at most 2^24 weights at once, 128 MiB)", "derived"),
        ("finds the old one under 60 %", "setting"),
        ("(152 MB at 9.5 million pairs)", "derived"),
        ("up to 128 MiB of weights; now 26 MB at 200,000 texts)", "derived"),
        ("stop at ±100 points", "setting"),
        ("a model with 2 points of noise on every text", "setting"),
    ],
    "docs/concepts/identity-effect.md": [
        ("A model that adds 10 points to a religion term", "example"),
        ("the estimate reads +1.0, inconclusive", "example"),
        ("where the model moved by 10 points", "example"),
        ('"religion (mean +1.0, ±3.1 from text to text; +11.4 in text 10, +10.6 in text 20)"', "example"),
        ("the plain 2.5 and 97.5 percentiles", "setting"),
        ("with a planted +5 or −5 points", "setting"),
        ("(2.03 and 97.97 over 40 texts, nearly 2.5 and 97.5 over thousands)", "setting"),
        ("in at least 95 % of audits", "setting"),
        ("a material finding in at most 5 % of audits", "setting"),
        ("— **2 probability points** for effects and disparity, **5** for flips", "setting"),
        ("the t-interval at 1 − 0.05/m", "setting"),
        ("An effect under 0.05 points is never a finding", "setting"),
        ("threshold 0.5. The classifier scores the slot: … although *gay* costs 50 points", "example"),
        ("by more than 2 points against a neutral word, shown at 95 %", "setting"),
        ("a real effect shown to stay within 2 points", "setting"),
        ("together at least 95 % of the time", "setting"),
        ("may or may not reach 2 points", "setting"),
        ("within ±2 points, and 2 points would have been seen", "setting"),
        ("flipped 14.9 % of MedQA answers where a plain paraphrase flipped 14.1 %", "paper"),
    ],
    "docs/concepts/labelled-data.md": [
        ("final metric** = 0.25 × overall AUC + 0.75 ×", "setting"),
        ("`--group-threshold`, 0.5,", "setting"),
        ("BPSN AUC is below 0.8", "setting"),
    ],
    "docs/concepts/papers.md": [
        ("attribute probability ≥ 0.8, toxicity ≤ 0.1", "setting"),
        ("(a test recomputes (0.96 + 0.44 + 0.01) / 3 = 0.47)", "paper"),
        ("at every λ, 0.05 included (TPR 0, AUC ≈ 0.5;", "setting"),
        ("kept TPR at λ = 0.05", "paper"),
        ("scores 0.987 in the replication", "paper"),
        ('are X" at 0.06 under λ = 5', "paper"),
        ("to 25 % of a batch did not stop the collapse at λ = 0.05", "setting"),
        ("the sample SD is 1.22 times larger", "derived"),
        ("in the paper's 0.01–0.55 band", "paper"),
        ("in the paper's 0.86–11.11 band", "paper"),
        ("within 0.03 for all six methods", "derived"),
    ],
    "docs/gallery.md": [("Screenshots at 1400 × 900", "setting")],
    "docs/how-to/audit.md": [("+20.3 points (simultaneous 95 % interval +13.1 to +27.6)", "demo")],
    "docs/how-to/bias.md": [("final metric = 0.25 × overall AUC + 0.75 ×", "setting")],
    "docs/how-to/ci-gate.md": [
        ("is at most 5 points", "example"),
        ("and p < 0.05)", "setting"),
        ("interval over every control estimate lies beyond 2 points)", "setting"),
    ],
    "docs/how-to/evaluate.md": [("(CEval's Table 2: 0.41", "paper")],
    "docs/how-to/feedback.md": [("cosine ≥ 0.5", "setting")],
    "docs/how-to/generate.md": [
        ("file of 64 MB or more", "setting"),
        ("WordNet 3.0", "version"),
        ("BLEU < 0.5 or BERTScore F1 < 0.5", "setting"),
        ("probability ≥ 0.5. Survivors", "setting"),
        ("a label > 0.5, at most", "setting"),
        ("held-out F1 within 0.004", "derived"),
        ('P(yes) < 0.2, "This text is about Muslims." ≥ 0.5)', "setting"),
    ],
    "docs/how-to/languages.md": [("16 MB;", "spec")],
    "docs/how-to/llm-audit.md": [
        ("at `--temperature` (0.7)", "setting"),
        ("(5 % by default)", "setting"),
        ("(200,000 by\ndefault)", "setting"),
        ("(a decision rate of 60 % vs 45 %: −15 points)", "example"),
        ("each finding is read off the estimate's simultaneous 95 %", "setting"),
        ("when it lies beyond 2 points (5 for flips)", "setting"),
        ("stays within 2 points and the prompts had the power to see 2 points", "setting"),
        ("(a decision rate of 60 % differs", "example"),
        ("shares above 0.5)", "setting"),
        ("invited **30 points less often**", "setting"),
        ("score is **2 points lower**", "setting"),
        ("ruling out 2 points for every group", "setting"),
    ],
    "docs/how-to/rate.md": [("within 3 s even under", "spec")],
    "docs/how-to/scale-out.md": [
        ("up to 64 texts cut", "setting"),
        ("7.2× the one-at-a-time path", "derived"),
        ("Ray 2.60's `ray start`", "version"),
        ("pass 64 × 64 tokens", "setting"),
        ("calls its classifier ~90 times", "example"),
        ("~3 GB for 96M pairs", "derived"),
        ("answers after 100 ms", "setting"),
        ("(3.3×;", "derived"),
        ("≥ 4,000 texts/s", "derived"),
        ("190 worker-hours", "derived"),
        ("244 worker-hours", "derived"),
        ("about 40 s of such a server", "derived"),
        ("GPU server (3× slower)", "derived"),
        ("| 2.6 worker-hours | 3 min |", "derived"),
        ("4.8M swap variants", "derived"),
        ("= 4,190 texts/s", "derived"),
        ("6.4 worker-hours; … | 8 min |", "derived"),
        ("| 0.3 worker-hours | < 1 min |", "derived"),
        ("| 3.1 worker-hours | 4 min |", "derived"),
        ("| 3.8 h |", "derived"),
        ("| 4.9 h per 100k |", "derived"),
        ("~18 GB for 96M variants", "derived"),
        ("100k texts in about 5.6 h", "derived"),
    ],
    "docs/how-to/select-texts.md": [
        ("probability ≥ 0.8", "setting"),
        ("toxicity ≤ 0.1", "setting"),
        ("(score > 0.5", "setting"),
    ],
    "docs/install.md": [
        ("Python 3.11", "version"),
        ("WordNet 3.0", "version"),
        ("take about 4 s or more", "setting"),
        ("(about 2 minutes the first", "quoted"),
        ("(about 5 minutes once)", "quoted"),
        ("about 1 s and 180 MiB per command", "quoted"),
    ],
    "docs/quickstart.md": [
        ("Python 3.11", "version"),
        ("raises P(toxic) by 35.5 points", "demo"),
        ("exceeds 2 points", "setting"),
        ("`--threshold` (0.5)", "setting"),
    ],
    "docs/reference/classifiers.md": [("copy under 700 MB", "spec")],
    "docs/reference/reliability.md": [
        ("one 1 MB row", "spec"),
        ("a 100 kB text", "setting"),
        ("more than 8 % of its start", "spec"),
        ("expanded to 5 GB), files over 5 MB", "spec"),
        ("at most 32 MB of an answer", "spec"),
        ("a 25 kB one", "setting"),
    ],
    "docs/reference/run-directories.md": [("file of 64 MB or more", "setting")],
    "docs/reference/environment.md": [("| 64 MiB |", "setting"), ("WordNet 3.0", "version")],
}


def spans(page: str) -> list[tuple[int, int]]:
    """Where the page's entries stand in its prose."""
    text = prose(page)
    phrases = [words.format(written(results, path, form)) for p, words, results, path, form in KEYED if p == page]
    phrases += [entry[0] for entry in SOURCED.get(page, [])] + [phrase for phrase, _ in NOT_MEASURED.get(page, [])]
    found = [(m.start(), m.end()) for rule, _ in EVERYWHERE for m in re.finditer(rule, text)]
    for phrase in phrases:
        found += where(text, phrase)
    return found


def where(text: str, phrase: str) -> list[tuple[int, int]]:
    """Where a phrase stands in a page's prose; "HEAD … TAIL" is everything from HEAD to the next TAIL."""
    head, _, tail = (" ".join(part.split()) for part in phrase.partition(" … "))
    found = []
    for m in re.finditer(re.escape(head), text):
        end = text.find(tail, m.end()) if tail else m.end()
        if end >= 0:
            found.append((m.start(), end + len(tail) if tail else end))
    return found


def written(results: str, path: tuple[str, ...], form: str) -> str:
    value: Any = load(results)
    for key in path:
        value = value[key]
    return form.format(value).rstrip("%")


@cache
def load(results: str) -> Any:
    return json.loads((RESULTS / results).read_text(encoding="utf-8"))


def pages() -> list[str]:
    return [str(p.relative_to(REPO)) for p in sorted((REPO / "docs").rglob("*.md"))]


def unaccounted(page: str) -> list[str]:
    """The page's figures that no entry accounts for, each with its words around."""
    text, covered = prose(page), spans(page)
    return [
        f"{value!r} in …{text[max(0, a - 50) : b + 20]}…"
        for a, b, value in figures(text)
        if not any(s <= a and b <= e for s, e in covered)
    ]


def leaves(value: Any, table: bool = False) -> list[float]:
    """Every number in a results JSON, those written in the cells of its ``table`` (the README's) included."""
    if isinstance(value, str):
        return [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", value)] if table else []
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in leaves(v, table or k == "table")]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v, table)]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    return []


def is_value_of(figure: str, values: list[float]) -> bool:
    """A figure as written ("1,111", "0.20", "93") is one of the values at its precision: as is, as a percentage,
    seconds written as minutes, MiB as GiB."""
    plain = figure.replace(",", "")
    decimals = len(plain.partition(".")[2])
    target, half = float(plain), 0.5 * 10.0**-decimals + 1e-9
    return any(abs(abs(x) * scale - target) <= half for x in values for scale in (1.0, 100.0, 1 / 60, 1 / 1024))


def sourced() -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [(page, *entry) for page, entries in SOURCED.items() for entry in entries]


@pytest.mark.parametrize(("page", "words", "results", "path", "form"), KEYED)
def test_a_keyed_figure_is_its_results_json(page: str, words: str, results: str, path: tuple[str, ...], form: str):
    """The docs said 0.891 and 0.777 after a rerun gave 0.889 and 0.775: these figures are read from their key."""
    assert where(prose(page), words.format(written(results, path, form))), (page, words, written(results, path, form))


@pytest.mark.parametrize(("page", "phrase", "results", "under"), sourced())
def test_a_sourced_figure_is_a_value_of_its_results_json(
    page: str, phrase: str, results: str, under: tuple[str, ...]
) -> None:
    found = where(prose(page), phrase)
    assert found, f"{page} no longer says {phrase!r}"
    part: Any = load(results)
    for key in under:
        part = part[key]
    values = leaves(part, table=bool(under) and under[-1].endswith("table"))
    a, b = found[0]
    stale = [value for _, _, value in figures(prose(page)[a:b]) if not is_value_of(value, values)]
    assert not stale, f"{page}: {stale} in {phrase!r} are not values of {results}"


def test_every_figure_in_the_docs_is_accounted_for() -> None:
    for page, entries in NOT_MEASURED.items():
        for phrase, why in entries:
            assert why in WHY, (page, phrase, why)
            assert where(prose(page), phrase), f"{page} no longer says {phrase!r}"
    left = {page: found for page in pages() if (found := unaccounted(page))}
    assert not left, "figures with no source named in tests/test_doc_figures.py:\n" + "\n".join(
        f"{page}: {figure}" for page, found in left.items() for figure in found
    )


def test_the_checks_fail_on_a_moved_figure() -> None:
    """The checks can fail: a figure off by one in its last digit is not a value, an unlisted one is unaccounted."""
    assert is_value_of("0.889", [0.8889]) and is_value_of("93", [0.93]) and is_value_of("1,111", [1111.2])
    assert not is_value_of("0.890", [0.8889]) and not is_value_of("94", [0.93])
    assert leaves({"sample": "7 apples", "table": "| 0.5 | 1,200 |", "n": 3}) == [
        0.5,
        1200.0,
        3.0,
    ]  # texts are no values
    assert figures("took 12.5 s, `--x 0.5`, 3 texts, 40 % of them") == [(5, 9, "12.5"), (33, 35, "40")]
