"""counterfair deletes only what it wrote (#47 items 1-3): a run goes into a new or empty folder or one of its own
runs, run.json lists the run's files, and --overwrite removes only those."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from .conftest import run_cli

TEXTS = ["My gay neighbour brought dinner.", "The Muslim family next door is kind.", "Some people are straight."]


def _audit(data: Path, out: Path, *extra: str) -> object:
    return run_cli("audit", str(data), "--methods", "swap", "--out", str(out), "-q", *extra, cwd=data.parent)


def _data(folder: Path) -> Path:
    data = folder / "data.csv"
    pd.DataFrame({"text": TEXTS}).to_csv(data, index=False)
    return data


def test_a_run_is_refused_among_a_users_files_and_writes_nothing(tmp_path: Path) -> None:
    data = _data(tmp_path)
    (tmp_path / "precious.txt").write_text("mine")
    done = _audit(data, tmp_path)  # --out the folder that holds the data (and precious.txt)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "holds files that counterfair did not write (data.csv, precious.txt; no run.json)" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "precious.txt"]  # nothing written, no lock
    foreign = tmp_path / "other"
    foreign.mkdir()
    (foreign / "run.json").write_text('{"name": "not counterfair"}')
    (foreign / "notes.md").write_text("mine")
    for flags in ((), ("--overwrite",)):
        done = _audit(data, foreign, *flags)
        assert done.returncode == 2 and "run.json" in done.stderr, (flags, done.stderr)
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.md", "run.json"]


@pytest.mark.slow
def test_overwrite_removes_only_what_the_run_wrote(tmp_path: Path) -> None:
    data = _data(tmp_path)
    run = tmp_path / "run"
    assert _audit(data, run).returncode == 0
    listed = json.loads((run / "run.json").read_text())["files"]
    assert {"pairs.csv", "slots.csv", "summary.json", "report.html", "scores.jsonl", "generate"} <= set(listed)
    assert ".lock" not in listed and "run.json" not in listed
    assert not list(run.rglob(".lock"))  # #49 item 9: a finished run (and its generate runs) leaves no lock file
    (run / "my-notes.md").write_text("kept")  # a user's file, put into the run directory afterwards
    (run / "pairs.csv").write_text("stale")
    done = _audit(data, run, "--overwrite", "--threshold", "0.4")  # other options: a new run replaces the old one
    assert done.returncode == 0, done.stdout + done.stderr
    assert (run / "my-notes.md").read_text() == "kept"
    assert (run / "pairs.csv").read_text() != "stale"
    assert json.loads((run / "run.json").read_text())["options"]["threshold"] == 0.4
    assert "my-notes.md" not in json.loads((run / "run.json").read_text())["files"]


@pytest.mark.slow
def test_overwrite_of_a_run_from_before_the_file_list_keeps_unknown_files(tmp_path: Path) -> None:
    data = _data(tmp_path)
    run = tmp_path / "run"
    assert _audit(data, run).returncode == 0
    record = json.loads((run / "run.json").read_text())
    del record["files"]  # as an older counterfair wrote it
    (run / "run.json").write_text(json.dumps(record))
    (run / "data-copy.csv").write_text("mine")
    assert _audit(data, run, "--overwrite").returncode == 0
    assert (run / "data-copy.csv").read_text() == "mine" and (run / "summary.json").exists()


@pytest.mark.slow
def test_compare_refuses_audits_of_different_texts_unless_shared_only(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    pd.DataFrame({"text": TEXTS}).to_csv(first / "data.csv", index=False)
    other = ["My gay neighbour brought dinner.", "The Muslim family next door is loud.", "Some people are straight."]
    pd.DataFrame({"text": other}).to_csv(second / "data.csv", index=False)  # the same ids, one original differs
    assert _audit(first / "data.csv", tmp_path / "a").returncode == 0
    assert _audit(second / "data.csv", tmp_path / "b").returncode == 0
    done = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "audits of different texts: input '1' is 'The Muslim family next door is kind.' in A" in done.stderr
    shared = run_cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--shared-only", cwd=tmp_path)
    assert shared.returncode == 0 and shared.stdout.startswith("Verdict: ")  # the comparison's page


def test_bad_option_values_are_named_with_exit_2(tmp_path: Path) -> None:
    data = _data(tmp_path)
    for flags, said in (
        (("--seed", "-1"), "Invalid value for '--seed'"),
        (("--encoding", "rot13"), "--encoding 'rot13': not a text encoding"),
    ):
        done = _audit(data, tmp_path / "x", *flags)
        assert done.returncode == 2 and said in done.stdout + done.stderr, (flags, done.stdout + done.stderr)
    labelled = tmp_path / "labelled.csv"
    pd.DataFrame({"text": TEXTS, "label": [1, 0, 0]}).to_csv(labelled, index=False)
    done = run_cli(
        "bias", str(labelled), "--label-column", "label", "--group-threshold", "nan", "--out", str(tmp_path / "b"),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2 and "--group-threshold must be a number in [0, 1], got nan" in done.stderr


@pytest.mark.slow
def test_a_damaged_pairs_table_is_named_not_crashed_on_or_used(tmp_path: Path) -> None:
    data = _data(tmp_path)
    run = tmp_path / "run"
    assert _audit(data, run).returncode == 0
    pairs = pd.read_csv(run / "pairs.csv")
    for column, value, said in (("diff", "oops", "'oops' is not a number"), ("score_cf", 50, "50 is outside [0, 1]")):
        damaged = pairs.astype({column: object})
        damaged.loc[3, column] = value
        damaged.to_csv(run / "pairs.csv", index=False)
        for args in (("check", str(run), "--fail-if", "ctf_gap > 0.5"), ("report", str(run)),
                     ("compare", str(run), str(run))):  # fmt: skip
            done = run_cli(*args, cwd=tmp_path)
            assert done.returncode == 2, (args, done.stdout, done.stderr)
            assert f"pairs.csv: row 4, column {column}: " in done.stderr and said in done.stderr


def test_a_gate_on_a_classifier_that_returned_only_nan_says_so() -> None:
    import numpy as np

    import counterfair as cf

    result = cf.audit(TEXTS, lambda t: np.full(len(t), np.nan), methods=["swap"], bootstrap=50)
    gate = result.check(["ctf_gap > 0.1", "material(identity_effect)"])
    assert gate["verdict"] == "error" and len(gate["errors"]) == 2
    assert all(
        "identity swaps are without a score (status partial:classifier_returned_nan)" in e for e in gate["errors"]
    )


def test_labels_that_are_not_binary_are_refused_naming_the_row() -> None:
    import pytest

    from counterfair.errors import InputError
    from counterfair.labels import binary_labels

    assert binary_labels(pd.DataFrame({"y": [0, 1, 0.7, "toxic"]}), "y", "t.csv").tolist() == [0.0, 1.0, 1.0, 1.0]
    for labels, bad in (([0, 1, 2], "2"), ([-1, 1], "-1"), ([0, 2], "2"), ([0, float("inf")], "inf")):
        with pytest.raises(InputError, match=rf"t.csv: row \d: label {bad}\S* in column 'y' is not 0/1"):
            binary_labels(pd.DataFrame({"y": labels}), "y", "t.csv")


def test_bias_refuses_a_row_without_text_instead_of_scoring_its_repr(tmp_path: Path) -> None:
    rows = [
        {"text": "I hate gay people", "label": 1},
        {"text": ["a", "list"], "label": 0},
        {"text": "nice", "label": 0},
    ]
    data = tmp_path / "labelled.jsonl"
    pd.DataFrame(rows).to_json(data, orient="records", lines=True)
    done = run_cli("bias", str(data), "--label-column", "label", "--out", str(tmp_path / "b"), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "row 1 ('1'): the text column holds a list, not text; bias scores every row's text" in done.stderr


def test_a_lone_surrogate_is_a_row_status_or_a_named_row_not_a_crash(tmp_path: Path) -> None:
    import pytest

    import counterfair as cf
    from counterfair.errors import InputError

    texts = ["My gay neighbour brought dinner.", "x \ud800 my gay friend", "hello"]
    made = cf.generate(texts, methods=["swap"])
    assert {c.status for c in made if c.source_id == "1"} == {"skipped:invalid_unicode"}
    assert (made.to_frame()["status"] == "skipped:invalid_unicode").sum() == 1  # its table holds it
    for given in (texts, {"text": texts}, [{"text": t} for t in texts]):
        result = cf.audit(given, methods=["swap"], bootstrap=50)
        assert set(result.pairs["input_id"]) == {"0"}  # the broken text is not edited; the others are
        assert result.summary["coverage"]["unreached_ids"] == ["1", "2"]
    result.save(tmp_path / "run")  # and the run writes as UTF-8
    assert "gay" in (tmp_path / "run" / "pairs.csv").read_text(encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1 \('1'\): the text holds half of a UTF-16 surrogate pair"):
        cf.bias(texts, labels=[0, 1, 0])


def test_bias_reports_progress_for_each_stage_and_caps_the_bootstrap(tmp_path: Path) -> None:
    """#47 item 16: a million rows printed nothing for 7 minutes; --bootstrap 1000000000 was accepted."""
    import pytest

    import counterfair as cf
    from counterfair.errors import ConfigError

    class Recorder:
        def __init__(self) -> None:
            self.stages: list[tuple[str, int, int]] = []

        def start(self, description: str, total: int) -> None:
            self.stages.append((description, total, 0))

        def advance(self, amount: int) -> None:
            name, total, done = self.stages[-1]
            self.stages[-1] = (name, total, done + amount)

    texts = [f"my gay friend {i}" for i in range(2500)] + [f"a black car {i}" for i in range(2500)]
    hook = Recorder()
    cf.bias(texts, labels=[i % 2 for i in range(5000)], bootstrap=20, progress=hook)
    names = [name for name, _, _ in hook.stages]
    assert names[0].startswith("finding identity terms") and names[1].startswith("classifier")
    assert names[2] == "metrics and intervals (20 resamples each)"
    assert all(done == total for _, total, done in hook.stages)  # every stage ran to its end
    assert hook.stages[0][1] == 5000 and hook.stages[2][1] == 7 + 3  # 7 groups, then overall, joint, equality
    with pytest.raises(ConfigError, match="bootstrap 1,000,000,000 is more resamples than any interval needs"):
        cf.bias(texts[:4], labels=[0, 1, 0, 1], bootstrap=1_000_000_000)
    with pytest.raises(ConfigError, match="at most 100,000"):
        cf.audit(texts[:4], bootstrap=100_001)


@pytest.mark.slow
def test_a_run_stopped_by_its_checks_gives_the_folder_back_and_a_one_term_set_serves_bias(tmp_path: Path) -> None:
    """#49 item 11: a run that failed an option check after its claim held --out until --overwrite; a one-term set was
    refused by bias, which swaps nothing; a list of terms made one group "other"."""
    data = tmp_path / "labelled.csv"
    pd.DataFrame({"text": ["I am gay", "hello", "my gay friend", "a Muslim prayer"], "label": [1, 0, 0, 1]}).to_csv(
        data, index=False
    )
    out = tmp_path / "run"
    base = ("bias", str(data), "--label-column", "label", "--out", str(out), "-q")
    done = run_cli(*base, "--group-columns", "nope", cwd=tmp_path)
    assert done.returncode == 2 and "no group column 'nope'" in done.stderr
    assert not (out / "run.json").exists()  # the claim is given back: nothing was written
    done = run_cli(*base, "--identities", "gay", cwd=tmp_path)  # other options, same folder: not refused
    assert done.returncode == 0, done.stderr
    assert set(json.loads((out / "summary.json").read_text())["groups"]) == {"sexuality"}
    done = run_cli(*base[:-3], "--out", str(tmp_path / "three"), "--identities", "gay,muslim,black", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    groups = json.loads((tmp_path / "three" / "summary.json").read_text())["groups"]
    assert set(groups) == {"sexuality", "religion", "race_ethnicity"}


@pytest.mark.slow
def test_save_refuses_a_folder_of_the_users_files_and_lists_what_it_wrote(tmp_path: Path) -> None:
    """#47: ``result.save(dir)`` wrote among a user's files (and over a summary.json of theirs); now it goes where a
    run may go, and run.json lists what it wrote, so a later --overwrite removes only that."""
    import counterfair as cf
    from counterfair.errors import OutputError

    result = cf.audit(TEXTS, lambda texts: [0.1] * len(texts), methods=["swap"], bootstrap=20, progress=False)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.json").write_text('{"mine": true}')
    with pytest.raises(OutputError, match=r"folder given to save\(\) .* holds files that counterfair did not write"):
        result.save(mine)
    assert sorted(p.name for p in mine.iterdir()) == ["summary.json"] and "mine" in (mine / "summary.json").read_text()
    saved = result.save(tmp_path / "saved")
    run = json.loads((saved / "run.json").read_text())
    assert run["kind"] == "saved audit result"
    assert {"pairs.csv", "slots.csv", "summary.json", "report.html"} <= set(run["files"])
    (saved / "my-notes.md").write_text("kept")  # a user's file put into the saved folder
    result.save(saved)  # a second save into counterfair's own folder is fine, and does not claim the user's file
    assert "my-notes.md" not in json.loads((saved / "run.json").read_text())["files"]
    done = _audit(_data(tmp_path), saved, "--overwrite")  # a command's run replaces the save, not the user's file
    assert done.returncode == 0, done.stdout + done.stderr
    assert (saved / "my-notes.md").read_text() == "kept"


@pytest.mark.slow
def test_an_overwrite_stopped_by_an_option_checked_after_the_claim_keeps_the_old_run(tmp_path: Path) -> None:
    """#87 B2: --overwrite emptied the folder at the claim, then the group column was found missing: exit 2 and the
    old run gone. The old run is set aside at the claim and put back when the new one stops before writing."""
    data = tmp_path / "labelled.csv"
    pd.DataFrame({"text": ["I am gay", "hello", "my gay friend", "a Muslim prayer"], "label": [1, 0, 0, 1]}).to_csv(
        data, index=False
    )
    out = tmp_path / "run"
    base = ("bias", str(data), "--label-column", "label", "--out", str(out), "-q")
    assert run_cli(*base, cwd=tmp_path).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert "summary.json" in before and "run.json" in before
    done = run_cli(*base, "--overwrite", "--group-columns", "nope", cwd=tmp_path)
    assert done.returncode == 2 and "no group column 'nope'" in done.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before  # the old run, byte for byte
    assert not (out / ".replaced").exists()
    done = run_cli(*base, "--overwrite", "--identities", "gay", cwd=tmp_path)  # a good replacement replaces it
    assert done.returncode == 0, done.stderr
    assert set(json.loads((out / "summary.json").read_text())["groups"]) == {"sexuality"}
    assert not (out / ".replaced").exists()


def test_a_run_lists_what_it_wrote_not_what_a_user_dropped_in_meanwhile(tmp_path: Path) -> None:
    """#87 B3: a file a user put into the folder during a run was listed in run.json's files, and a later
    --overwrite deleted it; another tool's run.json with a "kind" made a user's folder look like a run."""
    from counterfair.errors import OutputError
    from counterfair.runs import allow_overwrite, check_run_dir, claim_run_dir, holds_run_dir, is_counterfair_run
    from counterfair.writing import write_json

    @holds_run_dir
    def run(source: str, out_dir: Path, *, drop: bool) -> None:
        claim_run_dir(out_dir, {"options_fingerprint": source}, {}, what="audit")
        write_json({"a": 1}, out_dir / "summary.json")
        (out_dir / "plots").mkdir(exist_ok=True)
        if drop:
            (out_dir / "my-notes.md").write_text("mine")  # a user's, while the run goes on
        write_json({"b": 2}, out_dir / "x=a.json")  # a name no list of outputs holds

    out = tmp_path / "run"
    run("one", out, drop=True)
    record = json.loads((out / "run.json").read_text())
    assert record["files"] == ["plots", "summary.json", "x=a.json"] and record["written_by"] == "counterfair"
    allow_overwrite(out)
    run("two", out, drop=False)
    assert (out / "my-notes.md").read_text() == "mine" and json.loads((out / "run.json").read_text())[
        "options_fingerprint"
    ] == "two"
    other = tmp_path / "other"
    other.mkdir()
    (other / "run.json").write_text('{"kind": "training run", "epochs": 3}')  # another tool's
    assert not is_counterfair_run(other)
    with pytest.raises(OutputError, match="did not write"):
        check_run_dir(other)
    with pytest.raises(OutputError, match="refuses to touch"):
        allow_overwrite(other)


def test_a_run_json_whose_kind_is_null_is_taken_as_this_kind(tmp_path: Path) -> None:
    """#87 B11: run.json with "kind": null was exit 3 (a TypeError) on the resume."""
    from counterfair.runs import claim_run_dir, release_run_dir

    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text('{"schema_version": "1", "options_fingerprint": "f", "kind": null}')
    claim_run_dir(out, {"options_fingerprint": "f"}, {}, what="audit")  # the same run: resumed, not refused
    release_run_dir(out)


RUN_JSON_DAMAGE = {
    "kind null": {"kind": None},
    "kind a list": {"kind": [1]},
    "files a string": {"files": "pairs.csv"},
    "files of numbers": {"files": [1, 2]},
    "files outside the folder": {"files": ["../outside.txt", "/tmp"]},
    "options null": {"options": None},
    "options a list": {"options": [1]},
    "fingerprint a list": {"options_fingerprint": [1]},
    "input hash a number": {"input_sha256": 5},
}


@pytest.mark.parametrize("damage", list(RUN_JSON_DAMAGE))
@pytest.mark.parametrize("overwrite", [False, True])
def test_a_damaged_run_json_is_resumed_refused_or_replaced_never_a_crash(
    tmp_path: Path, damage: str, overwrite: bool
) -> None:
    """#87 B11: fields of run.json of the wrong type (kind null was exit 3): each run.json below is resumed, refused
    with a ConfigError naming what differs, or (--overwrite) replaced; nothing outside the folder is touched."""
    from counterfair.errors import ConfigError
    from counterfair.runs import allow_overwrite, claim_run_dir, holds_run_dir
    from counterfair.writing import write_json

    (tmp_path / "outside.txt").write_text("mine")

    @holds_run_dir
    def run(source: str, out_dir: Path) -> None:
        claim_run_dir(out_dir, {"options_fingerprint": "f", "input_sha256": "i"}, {"options": {"a": 1}}, what="audit")
        write_json({"done": True}, out_dir / "summary.json")

    out = tmp_path / "run"
    run("x", out)
    record = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**record, **RUN_JSON_DAMAGE[damage]}))
    if overwrite:
        allow_overwrite(out)
    if overwrite or damage not in ("fingerprint a list", "input hash a number"):
        run("x", out)  # resumed (the same identity), or replaced
    else:
        with pytest.raises(ConfigError, match="differs in"):
            run("x", out)
    assert (tmp_path / "outside.txt").read_text() == "mine" and Path("/tmp").is_dir()
