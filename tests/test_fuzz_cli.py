"""#35: a property-based run of the command line over texts, ids, options, gate rules and config files: every run
ends in exit 0 (done), 1 (a rule failed) or 2 (one sentence naming the problem) — never 3 (an internal error), never a
traceback. A bounded budget (a few dozen runs of a two-text audit) keeps it inside make test."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.cli_runner import run_in_process

WORDS = [
    "gay",
    "Muslim",
    "straight",
    "İslam",
    "Muſlims",
    "ｇａｙ",
    "Mus\u00adlim",
    "g\u200bay",
    "old",
    "black",
    "trans",
    "the",
    "a",
]
WORDS += ["\u200b", "\x00", "\ud800"]
texts = st.lists(
    st.one_of(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
        st.text(max_size=40),
        st.none(),
    ),
    min_size=1,
    max_size=4,
)
ids = st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=3), st.integers(0, 3)), min_size=4, max_size=4))
# ids per row (a list as long as the texts' longest): duplicates, empties and numbers among them
rules = st.one_of(
    st.none(),
    st.none(),
    st.text(max_size=30),
    st.builds(
        "{}{}[{}] {} {}".format,
        st.sampled_from(["", "upper(", "lower("]),
        st.sampled_from(["identity_effect", "ctf_gap", "flip_rate", "nonsense"]),
        st.sampled_from(["*", "sexuality", "", "x"]),
        st.sampled_from([">", "<", ">=", "=="]),
        st.sampled_from(["0.05", "-1", "abc", "1e309"]),
    ),
)
configs = st.one_of(
    st.none(),
    st.none(),
    st.none(),
    st.text(max_size=60),
    st.dictionaries(
        st.sampled_from(["threshold", "guard", "seed", "methods", "fail_if", "bootstrap", "nonsense"]),
        st.one_of(st.text(max_size=6), st.integers(-2, 3), st.floats(allow_nan=True), st.booleans(), st.none()),
        max_size=3,
    ).map(lambda d: "\n".join(f"{k}: {v!r}" for k, v in d.items())),
)


def _run(args: list[str]) -> tuple[int, str]:
    result = run_in_process(args)
    code = result["code"]
    return (int(code) if isinstance(code, int) else 3), str(result["output"])  # "crash": as an internal error


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=texts,
    row_ids=ids,
    rule=rules,
    config=configs,
    threshold=st.sampled_from(["0.5"] * 6 + ["2", "x", "0"]),
    odds=st.integers(0, 3),  # a config file in one run of four: most runs reach the audit itself
)
@example(texts=["gay"], row_ids=["0\r"], rule=None, config=None, threshold="0.5", odds=0)  # CI: a bare "\r" in a CSV
@pytest.mark.slow
def test_the_audit_ends_in_a_documented_exit_code(
    tmp_path_factory: pytest.TempPathFactory,
    texts: list[str | None],
    row_ids: list[object] | None,
    rule: str | None,
    config: str | None,
    threshold: str,
    odds: int,
) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    rows = [{"text": t} | ({"id": row_ids[i]} if row_ids is not None else {}) for i, t in enumerate(texts)]
    data = folder / "texts.jsonl"
    # ASCII JSON: a lone surrogate travels as its \\ud800 escape, as a hostile file would carry it
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    args = ["audit", str(data), "--methods", "swap", "--out", str(folder / "run"), "--threshold", threshold, "-q"]
    args += ["--id-column", "id"] if row_ids is not None else []
    args += ["--fail-if", rule] if rule is not None else []
    if config is not None and odds == 0:
        (folder / "c.yaml").write_text(config, encoding="utf-8", errors="replace")
        args += ["--config", str(folder / "c.yaml")]
    code, output = _run(args)
    assert code in (0, 1, 2), output
    assert "Traceback" not in output and "internal error" not in output, output
    if code == 2:
        assert "error" in output.lower() or "invalid value" in output.lower() or "fairness gate" in output.lower()
