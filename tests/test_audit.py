"""The audit end to end (the main job), its report, resume and bad input."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from counterfair.commands.audit.options import AuditOptions, demo_path, plan
from counterfair.commands.audit.page import build_report
from counterfair.commands.audit.shell import run_audit
from counterfair.errors import ClassifierError, InputError, SchemaError
from counterfair.views.report import edit_html


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("audit")
    run_audit(demo_path(), out, AuditOptions(id_column="id"))
    return out


def test_demo_covers_the_four_attributes_and_all_dixon_terms() -> None:
    p = plan(demo_path(), AuditOptions(id_column="id"))
    # paper 000's four word lists, and the gender words and first names every English audit measures
    assert set(p.attributes) == {"islam", "judaism", "lgbq", "transgender", "gender", "names"}
    assert p.identity_texts >= 50 and p.estimated_seconds is not None
    assert p.estimated_seconds < 15 * 60
    from counterfair.engine import STARTUP_SECONDS

    on_ray = plan(demo_path(), AuditOptions(id_column="id", engine="ray"))  # #68: the estimate knows the engine
    started = p.estimated_seconds + round(STARTUP_SECONDS["ray"])
    assert on_ray.estimated_seconds == started > p.estimated_seconds
    measured = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "engine_classifier.json"
    assert STARTUP_SECONDS["ray"] == json.loads(measured.read_text())["startup"]["startup_s"]  # the figure measured


def test_demo_audit_outputs(demo_run: Path) -> None:
    summary = json.loads((demo_run / "summary.json").read_text())
    pairs = pd.read_csv(demo_run / "pairs.csv")
    groups = {(g["method"], g["attribute"]): g for g in summary["groups"]}
    assert {("ablation", "islam"), ("substitution", "lgbq"), ("swap", "identity")} <= set(groups)
    assert sum(g["pairs"] for g in summary["groups"]) == len(pairs)
    swap = groups[("swap", "identity")]
    # every demo sentence with a Dixon term, guard included: 50 adjectives, and "Jews", "lesbians" as plurals, and the
    # two nationality sentences whose demonym is also a Dixon term (Mexican, Chinese)
    assert swap["with_counterfactual"] == 54
    # the means in the summary are the means of the pairs table
    ablation = pairs[(pairs.method == "ablation") & (pairs.attribute == "lgbq")]
    assert groups[("ablation", "lgbq")]["score_change"]["mean"] == pytest.approx(ablation["diff"].mean())
    assert groups[("ablation", "lgbq")]["flips"] == int(ablation["flipped"].sum())
    assert 0 < summary["ctf"]["ctf_gap"] < 1
    assert set(summary["ctf"]["by_group"]) == {
        "sexuality",
        "gender_identity",
        "race_ethnicity",
        "nationality",
        "religion",
        "age",
        "disability",
    }
    for name in ("score_change_histogram", "score_scatter", "score_scatter_topic", "swap_heatmap", "ctf_groups"):
        assert (demo_run / "plots" / f"{name}.png").stat().st_size > 5000
        assert (demo_run / "plots" / f"{name}.svg").exists()
    html = (demo_run / "report.html").read_text()
    assert html.count('src="data:image/png;base64,') == 6  # self-contained (the forest plot first)
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "CTF gap" in (demo_run / "report.md").read_text()


@pytest.mark.slow
def test_rerun_resumes_and_report_rebuilds(demo_run: Path) -> None:
    before = json.loads((demo_run / "summary.json").read_text())
    lines = (demo_run / "scores.jsonl").read_text().count("\n")
    result = run_audit(demo_path(), demo_run, AuditOptions(id_column="id"))
    summary = result.summary
    assert (demo_run / "scores.jsonl").read_text().count("\n") == lines  # nothing scored twice
    # #48: the shell returns the typed result; its tables are the run directory's, read when first asked for
    assert result.typed_summary.ctf is not None and result.typed_summary.ctf.value == before["ctf"]["ctf_gap"]
    assert result._raw_pairs is None and result.run_dir == demo_run
    assert len(result.raw_pairs) == len(pd.read_csv(demo_run / "pairs.csv"))
    assert result.slots is not None and len(result.slots) == len(pd.read_csv(demo_run / "slots.csv"))
    assert result.by_method["pairs"].sum() == sum(g["pairs"] for g in before["groups"])
    # #83 item 10: by_group as fairlearn users read it: one row per identity group, the effect in points
    groups = result.by_group
    sexuality = before["effects"]["identity_effect"]["by_group"]["sexuality"]
    assert groups.loc["sexuality", "effect_points"] == pytest.approx(100 * sexuality["value"], abs=0.01)
    assert groups.loc["sexuality", "finding"] == sexuality["finding"] and groups.index.name == "group"
    assert groups["effect_points"].abs().is_monotonic_decreasing
    assert summary["ctf"]["ctf_gap"] == before["ctf"]["ctf_gap"]
    (demo_run / "report.html").unlink()
    build_report(demo_run)
    assert (demo_run / "report.html").exists()


def test_texts_are_escaped_in_the_report(tmp_path: Path) -> None:
    data = pd.DataFrame(
        {
            "text": [
                '<script>alert("x")</script> My Muslim neighbour is kind.',
                "<img src=x onerror=alert(1)> The gay couple next door",
            ]
        }
    )
    run_audit(data, tmp_path, AuditOptions(methods=["ablation"]))
    html = (tmp_path / "report.html").read_text()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert" in html


def test_edit_highlighting() -> None:
    assert (
        edit_html("My Muslim neighbour", "My Christian neighbour")
        == "My <del>Muslim</del> <ins>Christian</ins> neighbour"
    )
    assert edit_html("a <b>", "a") == "a <del>&lt;b&gt;</del>"
    assert edit_html("a b c d", "x b c y") == "<del>a</del> <ins>x</ins> b c <del>d</del> <ins>y</ins>"


def test_edit_html_of_huge_texts_shows_the_edit_and_elides_the_rest() -> None:
    """Was super-linear (28.8 KB: 216 s; 1 MB: killed). Now: prefix and suffix cut off, the middle diffed."""
    words = " ".join(f"w{i}" for i in range(100_000))  # 100k distinct words, ~690 KB
    html = edit_html(words + " the Muslim family " + words, words + " the Christian family " + words)
    assert "<del>Muslim</del> <ins>Christian</ins>" in html
    assert (
        html.count("words …") == 2 and "… 99,971 words …" in html
    )  # 100,000 words + "the", 30 kept and len(html) < 2_000
    many = edit_html("a " + "x " * 3000 + "b", "a " + "y " * 3000 + "b")  # a changed middle over the cap: one block
    assert many.startswith("a <del>x x") and "</del> <ins>y y" in many and many.endswith("</ins> b")


def test_no_reference_to_the_attribute_suggests_others(tmp_path: Path) -> None:
    data = pd.DataFrame({"text": ["The gay couple next door", "A bathroom bill was debated", "Nice weather today"]})
    with pytest.raises(
        InputError, match=r"no text references islam; attributes that do occur: lgbq \(1 texts\), transgender \(1"
    ):
        run_audit(data, tmp_path, AuditOptions(attributes=["islam"], methods=["ablation"]))


def test_classifier_failing_mid_run_keeps_finished_work(tmp_path: Path) -> None:
    flag = tmp_path / "fail"
    flag.write_text("yes")
    (tmp_path / "flaky.py").write_text(
        "import numpy as np, os\n"
        f"FLAG = {str(flag)!r}\n"
        "calls = []\n"
        "def score(texts):\n"
        "    calls.append(len(texts))\n"
        "    if os.path.exists(FLAG) and len(calls) > 3:\n"  # 1: the label check; 2: the 6 originals; 3: the ablations
        "        raise RuntimeError('backend went away')\n"
        "    return np.array([0.9 if 'gay' in t.lower() else 0.1 for t in texts])\n"
    )
    spec = f"callable:{tmp_path / 'flaky.py'}:score"
    options = AuditOptions(classifier=spec, methods=["ablation", "swap"])
    data = pd.DataFrame({"text": [f"My gay friend number {i} likes tea." for i in range(6)]})
    with pytest.raises(ClassifierError, match="backend went away"):
        run_audit(data, tmp_path / "run", options)
    scored = (tmp_path / "run" / "scores.jsonl").read_text().count("\n")
    assert scored == 6 + 6  # the originals and the ablations' batch finished and are kept (the swaps' batch failed)
    flag.unlink()
    summary = run_audit(data, tmp_path / "run", options).summary
    assert summary["ctf"]["pairs"] > 0
    assert (tmp_path / "run" / "report.html").exists()


def test_older_schema_is_a_clear_error(demo_run: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(demo_run, old)
    data = json.loads((old / "summary.json").read_text())
    data["schema_version"] = "0"
    (old / "summary.json").write_text(json.dumps(data))
    with pytest.raises(SchemaError, match="schema_version '0'"):
        build_report(old)
    with pytest.raises(InputError, match="not an audit run directory"):
        build_report(tmp_path / "nothing")


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_renders_in_headless_chromium(demo_run: Path, tmp_path: Path) -> None:
    browser = _chromium()
    if browser is None:
        if os.environ.get("COUNTERFAIR_REQUIRE_BROWSER"):
            pytest.fail("Chromium is required (COUNTERFAIR_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    url = (demo_run / "report.html").resolve().as_uri()
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', dom)) == 6  # the forest plot and five more
    for table in ("summary-table", "ctf-table", "direction-table", "examples-table"):
        assert f'id="{table}"' in dom
    assert dom.count("<del>") >= 1 and dom.count("<ins>") >= 1
    shot = tmp_path / "report.png"
    subprocess.run(
        [browser, *flags, "--window-size=1200,2400", f"--screenshot={shot}", url],
        capture_output=True,
        timeout=120,
        check=True,
    )
    from PIL import Image

    image = Image.open(shot).convert("L")
    assert image.size == (1200, 2400)
    assert len(set(image.resize((60, 120)).tobytes())) > 20  # not a blank page (grey levels)


def test_the_audit_says_which_texts_it_could_not_reach_and_why(tmp_path: Path) -> None:
    """#20 item 17, #67: the texts no slot reached, counted by cause: identity words no pack has (Hindus, disabled
    people), a first name the names pack lacks, an identity term the guard judged not about people."""
    data = pd.DataFrame(
        {
            "id": ["m", "w", "d", "h", "n", "g", "x"],
            "text": [
                "Muslims are welcome here.",
                "Women should not be allowed to vote.",
                "Disabled people are a burden.",
                "Hindus celebrated Diwali downtown.",
                "Hannah said the bus was late.",
                "The black car was parked outside.",
                "The weather is nice today.",
            ],
        }
    )
    opts = AuditOptions(methods=["swap"], id_column="id")
    summary = run_audit(data, tmp_path / "a", opts).summary
    coverage = summary["coverage"]
    # "Women" is a gender slot now: reached
    assert (coverage["texts"], coverage["reached"], coverage["unreached"]) == (7, 2, 5)
    assert coverage["unreached_ids"] == ["d", "h", "n", "g", "x"]
    assert coverage["unreached_by_cause"] == {"gender_words": 0, "first_names": 1, "identity_words": 2, "guard": 1}
    assert coverage["unreached_mentioning"] == {"religion": 1, "ethnicity": 0, "disability": 1, "immigration": 0}
    assert coverage["hint"] == (
        "of the 5 unreached texts, 1 name a first name the names pack lacks; 2 name identity words no pack has; 1 "
        "name identity terms the guard judged not about people (a black car, an old house) (religion, disability): "
        "an identity set of your own (--identities FILE) reaches them"
    )
    html = (tmp_path / "a" / "report.html").read_text()
    assert "Coverage: 2 of 7 texts got at least one counterfactual; 5 got none" in html
    assert "1 name a first name the names pack lacks" in html  # the hint, in a note of its own


def test_first_names_the_pack_lacks_are_counted_over_every_text_and_never_a_clean_bill(tmp_path: Path) -> None:
    """#79 item 4: a text that names Mohammed beside a person the pack names (Emily) is measured for Emily only; the
    coverage counts every text naming a first name the pack lacks (not only the unreached ones), names them, most
    frequent first, and the verdict says they were not tested (a run that measured everything else is never "no
    evidence of unfairness")."""
    from counterfair.views.verdict import verdict

    data = pd.DataFrame(
        {
            "id": ["1", "2", "3", "4", "5"],
            "text": [
                "Emily and Mohammed went to the market.",
                "Mohammed is my neighbour.",
                "Fatima said the bus was late.",
                "My Muslim neighbour brought us dinner.",
                "The weather is nice today.",
            ],
        }
    )
    summary = run_audit(data, tmp_path / "a", AuditOptions(methods=["swap"], id_column="id")).summary
    coverage = summary["coverage"]
    assert coverage["names_unplaced"] == 3  # texts 1, 2 and 3: text 1 was reached (Emily), its Mohammed was not
    assert coverage["names_unplaced_seen"] == ["Mohammed", "Fatima"]
    assert coverage["unreached_by_cause"]["first_names"] == 2  # the unreached ones only, as before
    said = verdict(summary)
    assert "first names the names pack lacks in 3 of 5 texts (Mohammed, Fatima: no group holds them;" in (said.basis)


def test_a_pack_given_by_path_keeps_every_write_under_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#35: an absolute pack path was taken for the output directory, a relative one wrote OUT/generate/../pack.yaml."""
    from typer.testing import CliRunner

    from counterfair.cli import app

    packs = tmp_path / "packs"
    (packs / "work").mkdir(parents=True)
    source = (
        Path(__file__).resolve().parents[1] / "src" / "counterfair" / "languages" / "en" / "attributes" / "islam.yaml"
    )
    (packs / "mine.yaml").write_text(source.read_text().replace("name: islam", "name: mine"))
    monkeypatch.chdir(packs / "work")
    runner = CliRunner()
    for given, out in ((str(packs / "mine.yaml"), tmp_path / "abs"), ("../mine.yaml", packs / "work" / "rel")):
        done = runner.invoke(
            app, ["audit", "--demo", "--attributes", given, "--methods", "ablation", "--out", str(out)]
        )
        assert done.exit_code == 0, done.output
        (folder,) = (out / "generate").iterdir()
        assert re.fullmatch(r"mine-[0-9a-f]{8}", folder.name) and (folder / "counterfactuals.csv").exists()
    assert sorted(p.name for p in packs.iterdir()) == ["mine.yaml", "work"]  # nothing written beside the pack
    assert sorted(p.name for p in (packs / "work").iterdir()) == ["rel"]
    # the same file by either path: one checkpoint name
    assert (tmp_path / "abs" / "generate").iterdir().__next__().name == next(
        (packs / "work" / "rel" / "generate").iterdir()
    ).name


def test_the_report_shows_the_texts_behind_a_heat_map_cell(demo_run: Path) -> None:
    """#31: the pairs behind each listed swap direction, largest change first, edits highlighted."""
    from types import SimpleNamespace

    from counterfair.commands.audit.page import direction_texts

    pairs = pd.DataFrame(
        {
            "method": ["swap", "swap", "swap", "swap", "ablation"],
            "attribute": ["identity"] * 4 + ["islam"],
            "input_id": ["a", "b", "c", "d", "e"],
            "source_term": ["gay", "gay", "gay", "muslim", ""],
            "target_term": ["straight", "straight", "straight", "jewish", ""],
            "source_text": ["I am gay.", "Gay pride.", "A gay bar.", "A Muslim.", "A Muslim."],
            "cf_text": ["I am straight.", "Straight pride.", "A straight bar.", "A Jewish.", "A."],
            "diff": [0.1, -0.5, 0.3, 0.2, 0.9],
        }
    )
    directions = [
        SimpleNamespace(source="gay", target="straight", pairs=3),
        SimpleNamespace(source="x", target="y", pairs=1),
    ]
    cells = direction_texts(pairs, directions, per_cell=2)
    assert [(c["source"], c["target"]) for c in cells] == [("gay", "straight")]  # a direction without pairs is skipped
    assert [e["input_id"] for e in cells[0]["examples"]] == ["b", "c"]  # the two largest |change|, largest first
    assert cells[0]["examples"][0]["diff"] == -0.5
    assert "<del>Gay</del>" in cells[0]["examples"][0]["diff_html"]
    page = (demo_run / "report.html").read_text(encoding="utf-8")
    block = page[page.index('id="direction-texts"') :]
    assert block.index("<del>") < block.index("</details>")  # the demo's largest directions with their texts
    assert page.index('id="direction-table"') < page.index('id="direction-texts"')


def test_the_reproduce_command_names_every_option_that_differs() -> None:
    import counterfair as cf

    texts = ["Some people are gay.", "My Muslim neighbour waved."]
    options = {"guard": False, "placebo": None, "positive_label": "toxic", "methods": ["swap"]}
    command = cf.audit(texts, "profanity-check", identities="gay,muslim,christian", **options).summary["reproduce"]
    assert command == (
        "counterfair audit in memory --classifier profanity-check --methods swap --threshold 0.5 --seed 0 "
        "--positive-label toxic --identities gay,muslim,christian --no-guard --placebo none --out DIR"
    )
    plain = cf.audit(texts, "profanity-check", methods=["swap"]).summary["reproduce"]
    assert plain.endswith("--methods swap --threshold 0.5 --seed 0 --out DIR")


def test_the_reproduce_command_names_the_detector_only_where_it_differs_from_auto() -> None:
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.summary import _other_options

    assert AuditOptions(methods=["swap", "llm"]).detector == "keyword+llm"
    assert "--detector" not in " ".join(_other_options(AuditOptions(methods=["swap", "llm"])))
    assert "--detector keyword" in " ".join(_other_options(AuditOptions(methods=["swap", "llm"], detector="keyword")))
    assert "--detector" not in " ".join(_other_options(AuditOptions(methods=["swap"], detector="keyword")))


def test_each_generation_of_an_llm_audit_records_the_detector_it_uses() -> None:
    from counterfair.commands.audit.core import _generate_all
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.summaries import AuditInput

    texts = ["My Muslim neighbour waved.", "Some people are gay."]
    frame = pd.DataFrame({"id": ["a", "b"], "text": texts})
    seen: dict[str, str] = {}

    def record(folder: str, subset: pd.DataFrame, options: Any) -> None:
        seen[folder] = options.detector

    planned = AuditInput(attributes={"islam": 1}, identity_texts=2)
    _generate_all(frame, AuditOptions(methods=["swap", "llm"]), planned, record)
    assert seen == {"islam": "keyword+llm", "identity": "keyword"}  # the swaps are not filtered: no LLM asked
    _generate_all(
        frame,
        AuditOptions(methods=["swap", "llm"], detector="keyword"),
        planned,
        record,
    )
    assert seen == {"islam": "keyword", "identity": "keyword"}


def test_the_docs_quote_the_demos_own_figures(demo_run: Path) -> None:
    """#49 item 13: the quickstart and the audit how-to quote the demo's verdict; a change that moves it fails here."""
    terms = json.loads((demo_run / "summary.json").read_text())["effects"]["identity_effect"]["by_term"]
    docs = Path(__file__).resolve().parents[1] / "docs"
    quickstart = (docs / "quickstart.md").read_text(encoding="utf-8")
    assert f"raises P(toxic) by {100 * terms['queer']['value']:.1f} points" in " ".join(quickstart.split())
    gay = terms["gay"]
    quoted = (
        f"+{100 * gay['value']:.1f} points (simultaneous 95 % interval +{100 * gay['sim_low']:.1f} to "
        f"+{100 * gay['sim_high']:.1f})"
    )
    assert quoted in " ".join((docs / "how-to" / "audit.md").read_text(encoding="utf-8").split())


def test_the_reproduce_command_names_the_retry_rule_only_for_a_sampled_method() -> None:
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.summary import _other_options

    assert _other_options(AuditOptions(methods=["swap", "llm"], retry_nearness=0.0)) == ["--retry-nearness 0.0"]
    assert _other_options(AuditOptions(methods=["swap", "llm"])) == []  # the default is not repeated
    assert _other_options(AuditOptions(methods=["swap"], retry_nearness=0.0)) == []  # nothing is sampled


@pytest.mark.slow
def test_pairs_made_in_blocks_of_inputs_are_the_whole_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: the identity swaps' pairs, placebo texts, slots and scores are made a block of inputs at a time (no
    input split between two blocks); blocks of 40 candidates give the pairs, slots and summary of one block."""
    import counterfair as cf
    import counterfair.commands.audit.core as core

    texts = pd.read_csv(demo_path())["text"].tolist()[:30]
    options = {"methods": ["ablation", "swap"], "attributes": ["islam", "lgbq"], "bootstrap": 200}
    whole = cf.audit(texts, **options)
    monkeypatch.setattr(core, "SWAP_BLOCK_ROWS", 40)
    calls: list[int] = []
    real = core.AuditTallies.add

    def counted(self: Any, rows: list[dict[str, Any]], *args: Any) -> None:
        calls.append(len(rows))
        real(self, rows, *args)

    monkeypatch.setattr(core.AuditTallies, "add", counted)
    blocks = cf.audit(texts, **options)
    assert len(calls) >= 5  # the ablations, then the swaps in blocks of about 40 candidates
    pd.testing.assert_frame_equal(blocks.raw_pairs, whole.raw_pairs)
    pd.testing.assert_frame_equal(blocks.slots, whole.slots)
    strip = lambda s: {k: v for k, v in s.items() if k != "timing_s"}  # noqa: E731
    assert strip(blocks.summary) == strip(whole.summary)


@pytest.mark.slow
def test_the_statistics_tallied_block_by_block_are_the_whole_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """#47: the audit keeps no table of its pairs (9.5 million at 200,000 texts): the per-method entries, the in-slot
    measures (a slot shared by inputs of several blocks measured once), the coverage and the gate's metrics are
    tallied block by block, and each equals what the whole tables give — with every tally's pieces written to the
    scratch file and read back."""
    import numpy as np

    import counterfair as cf
    import counterfair.commands.audit.core as core
    import counterfair.spill as spill
    from counterfair.analysis.gate import fairness_metrics
    from counterfair.analysis.slots import slot_effects
    from counterfair.metrics.functional import cluster_bootstrap_ci
    from counterfair.writing import nan_to_none

    monkeypatch.setattr(core, "SWAP_BLOCK_ROWS", 40)
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)  # every piece on disk, however small
    scratches: list[spill.Scratch] = []
    monkeypatch.setattr(core, "Scratch", lambda where: scratches.append(spill.Scratch(where)) or scratches[-1])
    made: list[Any] = []
    real = core.audit_core
    monkeypatch.setattr(core, "audit_core", lambda *a, **k: made.append(real(*a, **k)) or made[-1])
    texts = [*pd.read_csv(demo_path())["text"].tolist()[:30], "A text that names no group."]
    result = cf.audit(texts, methods=["ablation", "swap"], attributes=["islam", "lgbq"], bootstrap=200)
    s, pairs, (audited,) = result.summary, result.raw_pairs, made
    assert set(s["placebo"]) == {"set"} and s["effects"]["identity_effect"]["by_term"]  # one statistic: in the slot
    found = slot_effects(result.slots, n_resamples=200)
    assert found is not None and s["effects"] == nan_to_none(found.to_dict())
    for entry in s["groups"]:
        mine = pairs[(pairs["method"] == entry["method"]) & (pairs["attribute"] == entry["attribute"])]
        ok = mine[mine["status"] == "ok"]
        diff = ok["diff"].to_numpy(dtype=float)
        assert (entry["pairs"], entry["flips"]) == (len(ok), int(ok["flipped"].sum())) and len(ok) > 0
        assert entry["score_change"]["mean"] == float(diff.mean())
        per_text = ok.groupby("input_id", sort=False)["diff"].agg(["sum", "size"])  # the interval resamples texts
        interval = cluster_bootstrap_ci(per_text["sum"], per_text["size"], n_resamples=200, seed=0)
        assert (entry["score_change"]["ci_low"], entry["score_change"]["ci_high"]) == pytest.approx(interval, abs=1e-15)
        assert entry["mean_score_orig"] == float(ok["score_orig"].mean())
        assert entry["mean_abs_change"] == float(np.abs(diff).mean())
    assert s["coverage"]["unreached"] == 1 and s["coverage"]["reached"] == len(texts) - 1
    whole = fairness_metrics(pairs, n_resamples=200, effects=s["effects"])
    assert audited.gate_metrics == nan_to_none(whole) and audited.gate_metrics["flip_rate"]["by_group"]
    (scratch,) = scratches
    assert scratch.bytes_written > 8 * len(pairs) and scratch._file is None  # used, then closed


@pytest.mark.slow
def test_the_classifier_has_one_progress_bar_however_many_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#47: the audit scores a block of pairs at a time; the CLI shows one classifier bar whose total grows with each
    block (not a bar per block: hundreds at 200,000 texts), and it ends full."""
    import counterfair.commands.audit.core as core

    class Recorder:
        def __init__(self) -> None:
            self.bars: dict[str, list[int]] = {}  # label -> [total, done, times started]
            self.current = ""

        def start(self, description: str, total: int) -> None:
            self.current = description
            bar = self.bars.setdefault(description, [0, 0, 0])
            bar[0] += total
            bar[2] += 1

        def advance(self, amount: int) -> None:
            self.bars[self.current][1] += amount

        def grow(self, amount: int) -> None:
            self.bars[self.current][0] += amount

    monkeypatch.setattr(core, "SWAP_BLOCK_ROWS", 40)
    texts = pd.read_csv(demo_path())["text"].tolist()[:20]
    hook = Recorder()
    run_audit(
        pd.DataFrame({"text": texts}), tmp_path / "run", AuditOptions(methods=["swap"], bootstrap=100), progress=hook
    )
    classifier = [label for label in hook.bars if label.startswith("classifier")]
    assert len(classifier) == 1
    total, done, started = hook.bars[classifier[0]]
    assert started == 1  # one bar, grown block by block
    assert total == done > 100  # every text scored, the bar full


def test_dense_score_panels_bin_in_blocks_to_the_one_call_cells() -> None:
    """#47: the score scatter's dense panel (9.5 million swaps at 200,000 texts) is binned a block of pairs at a time
    as the report reads pairs.csv (matplotlib's hexbin holds ~100 bytes a point while binning): the cells and counts
    are those of one call over every point with both scores."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from counterfair.views.report.tally import Panel

    rng = np.random.default_rng(3)
    x, y = rng.beta(2, 5, 20_000), rng.beta(5, 2, 20_000)
    x[::97], y[::89] = np.nan, np.nan  # unscored pairs: left out
    panel = Panel()
    for start in range(0, x.size, 1_501):
        part = slice(start, start + 1_501)
        panel.add(x[part], y[part], y[part] - x[part])
    assert panel.cells is not None and panel.centres is not None and panel.n == 20_000 and not panel.xs
    fig, whole = plt.subplots()
    known = ~np.isnan(x) & ~np.isnan(y)
    one = whole.hexbin(x[known], y[known], gridsize=36, extent=(0, 1, 0, 1), mincnt=0)
    assert np.array_equal(panel.cells, one.get_array()) and panel.cells.sum() == known.sum()
    assert np.array_equal(panel.centres, one.get_offsets())
    assert np.array_equal(panel.changes, np.histogram(y - x, bins=np.linspace(-1, 1, 41))[0])
    plt.close(fig)


def test_the_report_tally_of_many_blocks_is_the_tally_of_one() -> None:
    """#47: the report reads pairs.csv once, block by block; what it draws and lists does not depend on the blocks:
    each method's counts and points, the heat map's cells, the swap packs' directions, the texts behind each listed
    cell (ties in the order of the pairs), the topic and rating panels' points; unscored pairs left out."""
    from types import SimpleNamespace

    import numpy as np

    from counterfair.views.report.tally import ReportTally

    rng = np.random.default_rng(11)
    n = 3_000
    terms = np.array(["gay", "straight", "muslim", "jewish"])
    method = rng.choice(["swap", "ablation", "substitution"], n, p=[0.8, 0.1, 0.1])
    swap = method == "swap"
    x = rng.random(n)
    diff = np.round(rng.normal(0, 0.2, n), 2)  # rounded: ties among the largest changes
    attribute = np.where(swap, rng.choice(["identity", "gender"], n, p=[0.9, 0.1]), rng.choice(["a", "b"], n))
    pairs = pd.DataFrame(
        {
            "method": method,
            "attribute": attribute,
            "input_id": [f"t{i}" for i in range(n)],
            "source_term": np.where(swap, rng.choice(terms, n), None),
            "target_term": np.where(swap, rng.choice(terms, n), None),
            "score_orig": x,
            "score_cf": x + diff,
            "diff": diff,
            "status": rng.choice(["ok", "partial:classifier_returned_nan"], n, p=[0.95, 0.05]),
            "group": np.where(swap, rng.choice(np.array(["lgbt", "religion", None], dtype=object), n), None),
            "target_group": np.where(swap, rng.choice(["lgbt", "religion"], n), None),
            "rating": rng.choice(np.array(["good", "poor", None], dtype=object), n, p=[0.01, 0.01, 0.98]),
        }
    )
    directions = [SimpleNamespace(source="gay", target="straight"), SimpleNamespace(source="muslim", target="gay")]
    one = ReportTally.of([pairs], directions, 3)
    many = ReportTally.of([pairs.iloc[i : i + 97] for i in range(0, n, 97)], directions, 3)
    ok = pairs[pairs["status"] == "ok"]
    assert list(one.panels) == list(many.panels) == list(dict.fromkeys(ok["method"]))
    for name, panel in one.panels.items():
        other = many.panels[name]
        assert panel.n == other.n == int((ok["method"] == name).sum())
        assert np.array_equal(panel.changes, other.changes) and panel.changes.sum() == panel.n
        if panel.cells is None:
            assert other.cells is None
            assert all(np.array_equal(a, b) for a, b in zip(panel.points(), other.points(), strict=True))
        else:
            assert other.cells is not None and np.array_equal(panel.cells, other.cells)
    cells, blocks = one.cells.table(), many.cells.table()
    identity = ok[(ok["method"] == "swap") & (ok["attribute"] == "identity")]
    expected = identity.groupby(["source_term", "target_term"])["diff"].agg(["mean", "size"]).reset_index()
    assert cells[["source_term", "target_term", "size"]].equals(expected[["source_term", "target_term", "size"]])
    assert np.array_equal(cells["mean"], expected["mean"]) and np.allclose(blocks["mean"], expected["mean"])
    packs = one.packs.table()
    assert packs["size"].sum() == int((ok["method"] == "swap").sum()) and packs["group"].isna().iloc[-1]
    keys = ["attribute", "group", "target_group", "size"]
    assert packs[keys].equals(many.packs.table()[keys])
    tops = one.tops.tops()
    assert len(tops) == 2
    for (d, top), (_, other) in zip(tops, many.tops.tops(), strict=True):
        cell = identity[(identity["source_term"] == d.source) & (identity["target_term"] == d.target)]
        largest = cell.reindex(cell["diff"].abs().sort_values(ascending=False, kind="stable").index).head(3)
        assert list(top.index) == list(other.index) == list(largest.index)
    edits = one.topic_points()
    assert edits.equals(many.topic_points()) and len(edits) == int((ok["method"] != "swap").sum())
    assert one.rated_points()["rating"].tolist() == many.rated_points()["rating"].tolist()
    assert set(one.rated_points()["rating"]) == {"good", "poor"}


def test_the_tallies_scratch_file_lies_nameless_in_the_run_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#47: the audit's tallies wait on the run directory's disk (beside pairs.csv, not in a /tmp that may be memory),
    in a file without a name: nothing of it is left in the run directory when the audit ends."""
    import counterfair.commands.audit.core as core
    import counterfair.spill as spill
    from counterfair.commands.audit.shell import run_audit

    scratches: list[spill.Scratch] = []
    monkeypatch.setattr(core, "Scratch", lambda where: scratches.append(spill.Scratch(where)) or scratches[-1])
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)
    texts = tmp_path / "texts.csv"
    pd.DataFrame({"text": pd.read_csv(demo_path())["text"].tolist()[:12]}).to_csv(texts, index=False)
    run_audit(texts, tmp_path / "run", core.AuditOptions(methods=["swap"], bootstrap=50))
    (scratch,) = scratches
    assert Path(str(scratch.directory)) == tmp_path / "run" and scratch.bytes_written > 0 and scratch._file is None
    left = {p.name for p in (tmp_path / "run").iterdir()}
    assert not [name for name in left if "tally" in name] and "pairs.csv" in left


def test_an_audit_that_fails_midway_closes_its_scratch_file_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#47: an error while the statistics are computed (here the in-slot measures) closes the tallies' scratch file
    as it propagates, so its disk space is back before the caller sees the error (a notebook keeping the traceback
    kept the file open before)."""
    import counterfair.commands.audit.core as core
    import counterfair.spill as spill
    from counterfair.commands.audit.shell import run_audit

    scratches: list[spill.Scratch] = []
    monkeypatch.setattr(core, "Scratch", lambda where: scratches.append(spill.Scratch(where)) or scratches[-1])
    monkeypatch.setattr(spill, "SPILL_BYTES", 1)

    def broken(*args: Any, **kwargs: Any) -> None:
        assert scratches[0]._file is not None  # the tallies are on disk when the statistics start
        raise RuntimeError("planted failure in the in-slot measures")

    monkeypatch.setattr(core, "slot_effects", broken)
    texts = tmp_path / "texts.csv"
    pd.DataFrame({"text": pd.read_csv(demo_path())["text"].tolist()[:12]}).to_csv(texts, index=False)
    with pytest.raises(RuntimeError, match="planted failure"):
        run_audit(texts, tmp_path / "run", core.AuditOptions(methods=["swap"], bootstrap=50))
    (scratch,) = scratches
    assert scratch.bytes_written > 0 and scratch._file is None


def test_batch_size_sets_the_classifier_calls_not_the_results(tmp_path: Path) -> None:
    """#68: ``--batch-size`` (``batch_size=``) is how many texts go to the classifier per call: a knob, so the pairs,
    slots and verdict are the default's and a rerun with another size resumes the run."""
    sizes = tmp_path / "sizes.txt"
    (tmp_path / "clf.py").write_text(
        "def score(texts):\n"
        f"    with open({str(sizes)!r}, 'a') as f:\n"
        "        f.write(f'{len(texts)}\\n')\n"
        "    return [0.8 if 'gay' in t.lower() else 0.2 for t in texts]\n",
        encoding="utf-8",
    )
    spec = f"callable:{tmp_path / 'clf.py'}:score"
    data = pd.DataFrame(
        {"text": [f"My {w} friend number {i} likes tea." for i in range(12) for w in ("gay", "Muslim")]}
    )
    runs = {}
    for size in (64, 5):
        sizes.write_text("")
        runs[size] = run_audit(
            data, tmp_path / f"run-{size}", AuditOptions(classifier=spec, methods=["swap"], batch_size=size)
        )
        calls = [int(n) for n in sizes.read_text().split()]
        assert max(calls) == size, calls  # 64: the swaps, 64 texts a call; 5: never more than 5
    for name in ("pairs.csv", "slots.csv"):
        assert (tmp_path / "run-64" / name).read_bytes() == (tmp_path / "run-5" / name).read_bytes()
    assert runs[5].summary["effects"] == runs[64].summary["effects"]
    sizes.write_text("")
    run_audit(data, tmp_path / "run-64", AuditOptions(classifier=spec, methods=["swap"], batch_size=7))  # resumes
    assert sizes.read_text().split() == ["1"]  # the label check only: every score came from the run's own store


def test_the_report_page_is_built_once_and_is_what_the_console_prints(tmp_path: Path) -> None:
    """#70: the run builds its page once, with what only the pairs hold, writes report.html from it and hands it to
    the command line, whose console rendering is the summary's page's (the extras are the report's)."""
    import io

    from rich.console import Console

    from counterfair.commands.audit.page import audit_page
    from counterfair.views.page import to_console

    data = pd.DataFrame(
        {"text": [f"My {w} friend number {i} likes tea." for i in range(10) for w in ("gay", "Muslim")]}
    )
    result = run_audit(data, tmp_path / "run", AuditOptions(methods=["swap"], bootstrap=100))

    def shown(page: Any) -> str:
        console = Console(file=io.StringIO(), width=160)
        console.print(to_console(page))
        return console.file.getvalue()  # type: ignore[attr-defined]

    assert result.report_page is not None and result.report_page.title in (tmp_path / "run" / "report.html").read_text()
    assert shown(result.report_page) == shown(audit_page(result.summary))


def test_a_classifier_that_gives_labels_is_said_to_before_any_effect() -> None:
    """#83 item 1: a model returning 0/1 labels (profanity_check.predict) was read as probabilities silently ("raises
    P(1) by 51.9 points"); the summary now records it and the verdict's first caution says what its effects mean."""
    import counterfair as cf
    from counterfair.views.verdict import verdict

    texts = ["Some people are gay.", "My Muslim neighbour waved.", "The Christian choir sang.", "Jews eat bagels."]

    def labels(batch: list[str]) -> list[float]:
        return [float("gay" in t.lower()) for t in batch]

    def scores(batch: list[str]) -> list[float]:
        return [0.2 + 0.5 * ("gay" in t.lower()) for t in batch]

    said = cf.audit(texts, labels, methods=["swap"], identities="gay,muslim,christian,jewish")
    assert said.summary["originals"]["labels_only"] is True
    assert "the classifier gives labels, not probabilities" in verdict(said.summary).cautions[0]
    quiet = cf.audit(texts, scores, methods=["swap"], identities="gay,muslim,christian,jewish")
    assert quiet.summary["originals"]["labels_only"] is False
    assert not any("labels, not probabilities" in c for c in verdict(quiet.summary).cautions)
    assert "the classifier gives labels, not probabilities" in str(said)  # the console's verdict says it


def test_labels_name_the_classes_of_a_model_that_has_none(tmp_path: Path) -> None:
    """#83 item 1: a callable or a 0/1 pipeline was read as "P(1)" everywhere; ``labels=`` (``--labels``) names its
    classes: the summary's positive label, the verdict's unit and the report read "P(toxic)"; a wrong count of names
    is an error naming the classifier's classes, before any work."""
    from typer.testing import CliRunner

    import counterfair as cf
    from counterfair.cli import app
    from counterfair.errors import ConfigError

    texts = ["Some people are gay.", "My Muslim neighbour waved.", "The Christian choir sang.", "Jews eat bagels."]

    def scores(batch: list[str]) -> list[float]:
        return [0.2 + 0.5 * ("gay" in t.lower()) for t in batch]

    plain = cf.audit(texts, scores, methods=["swap"], identities="gay,muslim,christian,jewish")
    named = cf.audit(texts, scores, methods=["swap"], identities="gay,muslim,christian,jewish", labels=["ok", "toxic"])
    assert plain.summary["positive_label"] == "1" and "P(1)" in str(plain)
    assert named.summary["positive_label"] == "toxic" and "P(toxic)" in str(named) and "P(1)" not in str(named)
    assert named.summary["options"]["labels"] == ["ok", "toxic"]
    with pytest.raises(ConfigError, match=r"has 2 classes \(0, 1\); give 2 distinct names"):
        cf.audit(texts, scores, methods=["swap"], labels=["a", "b", "c"])
    (tmp_path / "model.py").write_text("def fn(texts):\n    return [0.2 + 0.5 * ('gay' in t) for t in texts]\n")
    data = tmp_path / "texts.csv"
    pd.DataFrame({"text": texts}).to_csv(data, index=False)
    common = ["audit", str(data), "--classifier", f"callable:{tmp_path / 'model.py'}:fn", "--methods", "swap"]
    done = CliRunner().invoke(app, [*common, "--labels", "ok,toxic", "--out", str(tmp_path / "run")])
    assert done.exit_code == 0, done.output
    assert "P(toxic)" in (tmp_path / "run" / "report.md").read_text()
    bad = CliRunner().invoke(app, [*common, "--labels", "toxic", "--out", str(tmp_path / "bad")])
    # the command line's main turns a ConfigError into exit 2 with its message (the runner calls the app directly)
    assert isinstance(bad.exception, ConfigError) and "has 2 classes (0, 1)" in str(bad.exception)
    assert not (tmp_path / "bad" / "summary.json").exists()


def test_precomputed_scores_are_a_two_step_workflow(tmp_path: Path) -> None:
    """#83 item 3: ``--classifier scores:FILE`` with counterfactuals the file lacks wrote no list of them; the run now
    writes ``to_score.csv`` (each text once), the verdict's next step says so, and once the texts are scored and
    added, the audit run again has none left."""
    from typer.testing import CliRunner

    from counterfair.cli import app

    data = tmp_path / "texts.csv"
    data.write_text("text\nSome people are gay.\nMy Muslim neighbour waved.\n", encoding="utf-8")
    scores = tmp_path / "scores.csv"
    pd.DataFrame({"text": ["Some people are gay.", "My Muslim neighbour waved."], "score": [0.3, 0.2]}).to_csv(
        scores, index=False
    )
    args = ["audit", str(data), "--classifier", f"scores:{scores}", "--methods", "swap"]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "one")])
    assert done.exit_code == 0, done.output
    wanted = pd.read_csv(tmp_path / "one" / "to_score.csv")
    assert len(wanted) > 10 and wanted["text"].is_unique and "Some people are straight." in set(wanted["text"])
    assert "to_score.csv in the run directory lists them" in " ".join(done.output.split())
    both = pd.concat([pd.read_csv(scores), wanted.assign(score=0.25)])
    both.to_csv(scores, index=False)
    again = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "two")])
    assert again.exit_code == 0, again.output
    assert not (tmp_path / "two" / "to_score.csv").exists() and "to_score.csv" not in again.output
