from __future__ import annotations

import contextlib
import json
import math
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from counterfair.errors import InputError
from counterfair.rating import Rating, RatingStore
from counterfair.rating.consolidate import (
    consolidate,
    consolidate_frame,
    good_pair_ids,
    krippendorff_alpha,
    majority,
    tables,
)
from counterfair.rating.judges import QUALITY_FIELDS, RATING_FIELDS, QualityJudge, judge_store, parse_answer
from counterfair.rating.store import CATEGORICAL

from .conftest import run_cli
from .fakes import ScriptedLLM

PAIRS = pd.DataFrame(
    {
        "pair_id": ["p1", "p2", "p3"],
        "original": [
            "My Muslim neighbour is kind.",
            "The mosque hosts a soup kitchen.",
            "<script>alert('x')</script> Muslims",
        ],
        "counterfactual": [
            "My neighbour is kind.",
            "The church hosts a soup kitchen.",
            "<script>alert('x')</script> People",
        ],
        "attribute": ["islam"] * 3,
        "method": ["ablation", "substitution", "llm"],
        "topic": ["islam"] * 3,
    }
)


def _store(tmp_path: Path) -> RatingStore:
    return RatingStore.create(tmp_path / "proj", PAIRS)


def _r(
    pair: str,
    rater: str,
    fluent: str = "yes",
    ref: str = "none",
    same: str = "yes",
    meaning: int = 3,
    reject: bool = False,
) -> Rating:
    return Rating(pair, rater, fluent, ref, same, meaning, reject)


def test_two_raters_then_a_third_on_disagreement(tmp_path: Path) -> None:
    store = _store(tmp_path)
    order = store.pairs()["pair_id"].tolist()
    assert sorted(order) == ["p1", "p2", "p3"]
    for rater in ("ann", "bob"):
        for _ in range(3):
            pair = store.next_pair(rater)
            assert pair is not None
            # they disagree on fluency of p2 only
            fluent = "no" if (rater == "bob" and pair["pair_id"] == "p2") else "yes"
            store.add(_r(pair["pair_id"], rater, fluent=fluent))
        assert store.next_pair(rater) is None
    third = store.next_pair("cat")
    assert third is not None and third["pair_id"] == "p2"  # the tie-breaker comes first
    store.add(_r("p2", "cat", fluent="no"))
    assert store.next_pair("cat") is None  # every pair has two agreeing ratings or a third
    assert store.progress("ann") == {"pairs": 3, "with_two_ratings": 3, "ratings": 7, "mine": 3}
    with pytest.raises(InputError, match="has rated pair 'p1' already"):
        store.add(_r("p1", "ann"))


def test_paper_000_consolidation_rules(tmp_path: Path) -> None:
    """#16 item 8: a meaning or reject disagreement calls a third rater; one reject removes a pair; every Table-3
    share has the rated pairs as denominator."""
    store = _store(tmp_path)
    store.add(_r("p1", "a", meaning=2))
    store.add(_r("p1", "b", meaning=3))  # categories agree, meaning does not
    store.add(_r("p2", "a"))
    store.add(_r("p2", "b", reject=True))  # one of two rejects
    store.add(_r("p3", "a", fluent="yes"))
    store.add(_r("p3", "b", fluent="no"))
    store.add(_r("p3", "c", fluent="unsure"))  # three-way split: fluency undecided
    offered = []
    while (pair := store.next_pair("cat")) is not None:  # the third rater is asked exactly for p1 and p2
        offered.append(pair["pair_id"])
        store.add(_r(pair["pair_id"], "cat", meaning=2))
    assert sorted(offered) == ["p1", "p2"]
    frame = consolidate_frame(store.ratings_frame(), store.pairs()).set_index("pair_id")
    assert bool(frame.loc["p1", "good"]) and frame.loc["p1", "meaning"] == pytest.approx(7 / 3)
    assert bool(frame.loc["p2", "rejected"]) and not bool(frame.loc["p2", "good"])
    # one table over all three (same method for the check): fluent yes for p1, p2; undecided p3 counts as not
    everything = frame.reset_index().assign(method="m", topic="t")
    row = tables(everything)["by_method"]["m"]
    assert row["examples"] == 3
    assert row["fluent"] == pytest.approx(2 / 3)  # was 2 / 2: the undecided pair was dropped from this share only
    assert row["fal_meaning_2plus"] == pytest.approx(1 / 3)  # p1 only: p2 rejected, p3 undecided


def test_majority_rules() -> None:
    assert majority(["yes", "yes", "no"]) == "yes"
    assert majority(["unsure", "unsure", "yes"]) == "no"  # unsure counts as no
    assert majority(["yes", "no", "unsure"]) is None  # three-way split: discarded
    assert majority(["yes", "no"]) is None
    assert majority([]) is None


def test_consolidation_by_hand(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for rating in (
        _r("p1", "a", meaning=4),
        _r("p1", "b", meaning=2),  # good, meaning 3.0
        _r("p2", "a", ref="implicit"),
        _r("p2", "b", ref="implicit"),  # still references
        _r("p3", "a", fluent="yes"),
        _r("p3", "b", fluent="no"),
        _r("p3", "c", fluent="unsure"),
    ):
        store.add(rating)
    frame = consolidate_frame(store.ratings_frame(), store.pairs()).set_index("pair_id")
    assert frame.loc["p1", "meaning"] == 3.0 and bool(frame.loc["p1", "good"])
    assert frame.loc["p2", "reference"] == "implicit" and not bool(frame.loc["p2", "good"])
    assert pd.isna(frame.loc["p3", "fluent"]) and not bool(frame.loc["p3", "good"])  # three-way split: no verdict
    report = consolidate(store)
    assert report["good_pairs"] == 1
    assert report["tables"]["by_method"]["ablation"]["fal_meaning_3plus"] == 1.0
    assert report["tables"]["by_method"]["substitution"]["no_attribute_reference"] == 0.0
    assert good_pair_ids(store.directory) == {"p1"}


def test_krippendorff_alpha_by_hand() -> None:
    # raters x units: r1 = a a b b, r2 = a b b b.  Coincidences: o_aa=2, o_ab=o_ba=1, o_bb=4; n_a=3, n_b=5, n=8.
    # D_o = 2/8, D_e = 2*3*5/(8*7); alpha = 1 - D_o/D_e = 1 - 0.25/0.5357 = 8/15
    rows = [
        ("u1", "r1", "a"),
        ("u2", "r1", "a"),
        ("u3", "r1", "b"),
        ("u4", "r1", "b"),
        ("u1", "r2", "a"),
        ("u2", "r2", "b"),
        ("u3", "r2", "b"),
        ("u4", "r2", "b"),
    ]
    frame = pd.DataFrame(rows, columns=["pair_id", "rater", "fluent"]).assign(source="app")
    assert krippendorff_alpha(frame, "fluent") == pytest.approx(8 / 15)
    same = frame.assign(fluent="a")
    assert math.isnan(krippendorff_alpha(same, "fluent"))  # no variation: undefined, not 1


def test_csv_exchange(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add(_r("p1", "ann", meaning=4, reject=True))
    store.export_csv(tmp_path / "out.csv")
    exported = pd.read_csv(tmp_path / "out.csv")
    assert list(exported.columns)[:7] == ["pair_id", "rater", "fluent", "reference", "same_label", "meaning", "reject"]
    other = RatingStore.create(tmp_path / "other", PAIRS)
    assert other.import_csv(tmp_path / "out.csv") == 1
    assert other.ratings()[0] == _r("p1", "ann", meaning=4, reject=True)
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "pair_id,rater,fluent,reference,same_label,meaning,reject\np1,x,yes,none,yes,3,0\np2,x,maybe,none,yes,3,0\n"
    )
    with pytest.raises(InputError, match="row 3: fluent must be one of yes, no, unsure, not 'maybe'"):
        other.import_csv(bad)
    assert len(other.ratings()) == 1  # nothing from the bad file was added
    bad.write_text("pair_id,rater,fluent,reference,same_label,meaning,reject\np9,x,yes,none,yes,3,0\n")
    with pytest.raises(InputError, match="unknown pair_id 'p9'"):
        other.import_csv(bad)


def test_judge_parsing_is_strict() -> None:
    assert parse_answer(
        'Sure: {"fluent": "Yes", "reference": "none", "same_label": "yes", "meaning": 3}', RATING_FIELDS
    ) == {"fluent": "yes", "reference": "none", "same_label": "yes", "meaning": 3}
    assert (
        parse_answer('{"fluent": "yes", "reference": "none", "same_label": "yes", "meaning": 7}', RATING_FIELDS) is None
    )
    assert parse_answer('{"fluent": "yes", "reference": "none"}', RATING_FIELDS) is None
    assert parse_answer("no json here", RATING_FIELDS) is None
    assert parse_answer('{"grammar": 5, "cohesiveness": "4", "likability": 3, "fluency": 1}', QUALITY_FIELDS) == {
        "grammar": 5,
        "cohesiveness": 4,
        "likability": 3,
        "fluency": 1,
    }


def test_llm_judge_store_and_agreement(tmp_path: Path) -> None:
    store = _store(tmp_path)
    for pair in ("p1", "p2", "p3"):
        store.add(_r(pair, "a"))
        store.add(_r(pair, "b"))
    answers = {
        "My Muslim neighbour is kind.": '{"fluent": "yes", "reference": "none", "same_label": "yes", "meaning": 4}',
        "The mosque hosts a soup kitchen.": (
            '{"fluent": "yes", "reference": "explicit", "same_label": "yes", "meaning": 3}'
        ),
    }

    def answer(messages_text: str, attempt: int, sample: int) -> str:
        for original, reply in answers.items():
            if original in messages_text:
                return reply
        return "I would rather not say."  # never parses

    class ChatLLM(ScriptedLLM):
        def _text_of(self, messages: list[dict[str, str]]) -> str:  # type: ignore[override]
            return messages[-1]["content"]

    result = judge_store(store, ChatLLM(answer), subject_of=lambda a: "Muslims")
    assert result["failed"] == 1 and result["judged"] == 3
    log = [json.loads(line) for line in (store.directory / "llm_judgements.jsonl").read_text().splitlines()]
    failed = [entry for entry in log if entry["status"] != "ok"]
    assert failed[0]["values"] is None and len(failed[0]["raw"]) == 3  # retried, raw kept, no made-up value
    report = consolidate(store)
    agreement = report["llm_agreement"]["llm:scripted"]
    assert agreement["reference"]["agreement"] == 0.5  # agrees on p1 (none), not on p2 (explicit vs none)
    assert agreement["fluent"]["agreement"] == 1.0
    assert set(agreement) == {"pairs", *CATEGORICAL, "meaning_mean_abs_diff"}  # every criterion, none more
    assert report["good_pairs"] == 3  # the LLM's ratings do not change the human verdicts


def test_quality_judge() -> None:
    judge = QualityJudge(
        ScriptedLLM(lambda t, a, i: '{"grammar": 4, "cohesiveness": 3, "likability": 2, "fluency": 5}')
    )
    judge.llm._text_of = lambda messages: messages[-1]["content"]  # type: ignore[method-assign]
    verdict = judge.judge("A fine text.")
    assert verdict.status == "ok" and verdict.values == {"grammar": 4, "cohesiveness": 3, "likability": 2, "fluency": 5}


# ------------------------------------------------------------------------------------------ the web app


def _client(store: RatingStore, **kwargs: object):  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from counterfair.rating.app import create_app

    cookies = kwargs.pop("cookies", None)
    app = create_app(store.directory, **kwargs)  # type: ignore[arg-type]
    return TestClient(app, base_url="http://127.0.0.1", cookies=cookies)  # type: ignore[arg-type]


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match
    return match.group(1)


def test_app_rating_flow_and_escaping(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client = _client(store)
    home = client.get("/")
    assert home.status_code == 200 and home.headers["x-frame-options"] == "DENY"
    client.post("/login", data={"rater": "ann", "passphrase": "ann-pass", "csrf": _csrf(home.text)})
    seen = []
    for _ in range(3):
        page = client.get("/rate")
        assert "<script>alert" not in page.text  # user text is escaped
        pair = re.search(r'name="pair_id" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        seen.append(pair)
        response = client.post(
            "/rate",
            data={
                "csrf": _csrf(page.text),
                "pair_id": pair,
                "fluent": "yes",
                "reference": "none",
                "same_label": "yes",
                "meaning": "3",
            },
            follow_redirects=False,
        )
        assert response.status_code == 303
    assert sorted(seen) == ["p1", "p2", "p3"]
    assert 'id="done"' in client.get("/rate").text
    assert len(store.ratings()) == 3
    escaped = store.pair("p3")["original"]
    assert escaped.startswith("<script>")  # stored as written, shown escaped


def test_app_refuses_forged_and_invalid_posts(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client = _client(store)
    client.post("/login", data={"rater": "ann", "passphrase": "ann-pass", "csrf": _csrf(client.get("/").text)})
    page = client.get("/rate")
    pair = re.search(r'name="pair_id" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    base = {"pair_id": pair, "fluent": "yes", "reference": "none", "same_label": "yes", "meaning": "3"}
    assert client.post("/rate", data={**base, "csrf": "forged"}).status_code == 403
    cross = client.post("/rate", data={**base, "csrf": _csrf(page.text)}, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403
    bad = client.post("/rate", data={**base, "csrf": _csrf(page.text), "fluent": "perhaps"})
    assert bad.status_code == 400 and "fluent must be one of" in bad.text
    assert store.ratings() == []


def test_token_required_off_loopback(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client = _client(store, token="s3cret")
    assert client.get("/").status_code == 401
    assert client.get("/?token=wrong").status_code == 401
    assert client.get("/?token=s3cret").status_code == 200
    assert client.get("/").status_code == 200  # the token is now a cookie


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_until_up(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=0.5)
            return
        except httpx.HTTPError:
            time.sleep(0.1)


def _late_shortcuts(app: Any, seconds: float = 0.5) -> Any:
    """The app, with the keyboard-shortcut script served late, as on a loaded machine (CI once pressed the keys
    before the script had run: the Enter was lost and no rating was sent)."""
    import asyncio

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("path", "").endswith("/rate.js"):
            await asyncio.sleep(seconds)
        await app(scope, receive, send)

    return wrapped


@pytest.fixture
def live_app(tmp_path: Path) -> Iterator[tuple[str, RatingStore]]:
    import uvicorn

    from counterfair.rating.app import create_app

    store = _store(tmp_path)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(_late_shortcuts(create_app(store.directory)), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    _wait_until_up(url)
    yield url, store
    server.should_exit = True
    thread.join(timeout=10)


def test_browser_rates_two_pairs(live_app: tuple[str, RatingStore]) -> None:
    import os

    browser_path = shutil.which("chromium")
    if browser_path is None:
        if os.environ.get("COUNTERFAIR_REQUIRE_BROWSER"):
            pytest.fail("Chromium is required but not installed")
        pytest.skip("Chromium is not installed")
    from playwright.sync_api import sync_playwright

    url, store = live_app
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=browser_path,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-quic",
            ],
        )
        page = browser.new_page()
        page.goto(url)
        page.fill("#rater", "browser-rater")
        page.fill("#passphrase", "browser-pass")
        page.click("button[type=submit]")
        shown = []
        for answers in ("16 7 d", "2 5 8 g r"):  # keyboard shortcuts, then Enter
            page.wait_for_selector("#rating")
            page.wait_for_load_state("load")  # the shortcuts script has run
            shown.append((page.inner_text("#original"), page.input_value("input[name=pair_id]")))
            for key in answers.replace(" ", ""):
                page.keyboard.press(key)
            with page.expect_navigation():
                page.keyboard.press("Enter")
        browser.close()
    stored = {r.pair_id: r for r in store.ratings()}
    first, second = stored[shown[0][1]], stored[shown[1][1]]
    assert (first.fluent, first.reference, first.same_label, first.meaning, first.reject) == (
        "yes",
        "none",
        "yes",
        2,
        False,
    )
    assert (second.fluent, second.reference, second.same_label, second.meaning, second.reject) == (
        "no",
        "implicit",
        "no",
        4,
        True,
    )
    # the shuffled order (seed 0) shows the <script> pair second: the browser displayed its markup as text
    assert [pid for _, pid in shown] == ["p2", "p3"]
    assert shown[1][0] == "<script>alert('x')</script> Muslims"


def test_audit_restricted_to_good_pairs(tmp_path: Path) -> None:
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.shell import run_audit

    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque hosts a soup kitchen every Friday."]})
    run_audit(data, tmp_path / "audit", AuditOptions(methods=["ablation"]))
    from counterfair.rating import pairs_from_run

    store = RatingStore.create(tmp_path / "rate", pairs_from_run(tmp_path / "audit"))
    ids = sorted(store.pairs()["pair_id"])
    assert ids == ["ablation:islam:0", "ablation:islam:1"]
    for rater in ("a", "b"):
        store.add(_r(ids[0], rater))
        store.add(_r(ids[1], rater, fluent="no"))
    consolidate(store)
    summary = run_audit(
        data, tmp_path / "audit2", AuditOptions(methods=["ablation"], only_good=str(tmp_path / "rate"))
    ).summary
    assert [g["pairs"] for g in summary["groups"]] == [1]


def test_only_good_from_a_project_made_of_a_generate_run(tmp_path: Path) -> None:
    """#16 item 1: `rate init --from <generate dir>` gave ids "ablation:t1", the audit looked up "ablation:islam:t1"."""
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.shell import run_audit
    from counterfair.rating import pairs_from_run

    data = pd.DataFrame(
        {"id": ["t1", "t2"], "text": ["My Muslim neighbour is kind.", "The mosque hosts a soup kitchen every Friday."]}
    )
    opts = AuditOptions(methods=["ablation"], id_column="id")
    run_audit(data, tmp_path / "audit", opts)
    store = RatingStore.create(tmp_path / "rate", pairs_from_run(tmp_path / "audit" / "generate" / "islam"))
    assert sorted(store.pairs()["pair_id"]) == ["ablation:islam:t1", "ablation:islam:t2"]
    for rater in ("a", "b"):
        store.add(_r("ablation:islam:t1", rater))
        store.add(_r("ablation:islam:t2", rater, fluent="no"))
    consolidate(store)
    only = AuditOptions(methods=["ablation"], id_column="id", only_good=str(tmp_path / "rate"))
    summary = run_audit(data, tmp_path / "audit2", only).summary
    assert [g["pairs"] for g in summary["groups"]] == [1]
    other = pd.DataFrame({"id": ["x1"], "text": ["Islam is a religion of peace."]})
    with pytest.raises(InputError, match="none of its 1 good pairs is a pair of this audit"):
        run_audit(other, tmp_path / "audit3", only)


def test_ratings_mark_pairs_good_or_poor_and_the_report_plots_them_apart(tmp_path: Path) -> None:
    """#34 item 8: paper 000 Fig. 3 (good vs poor pairs) when the audit has ratings, Fig. 4 (per topic) when two
    topics have pairs."""
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.shell import run_audit
    from counterfair.rating import pairs_from_run

    data = pd.DataFrame(
        {
            "id": ["t1", "t2", "t3", "t4"],
            "text": [
                "My Muslim neighbour is kind.",
                "The mosque hosts a soup kitchen every Friday.",
                "Our Jewish colleague baked bread.",
                "A gay couple moved in next door.",
            ],
        }
    )
    opts = AuditOptions(methods=["ablation"], id_column="id")
    run_audit(data, tmp_path / "audit", opts)
    store = RatingStore.create(tmp_path / "rate", pairs_from_run(tmp_path / "audit" / "generate" / "islam"))
    for rater in ("a", "b"):
        store.add(_r("ablation:islam:t1", rater))
        store.add(_r("ablation:islam:t2", rater, fluent="no"))
    consolidate(store)
    rated = AuditOptions(methods=["ablation"], id_column="id", ratings=str(tmp_path / "rate"))
    run_audit(data, tmp_path / "rated", rated)
    pairs = pd.read_csv(tmp_path / "rated" / "pairs.csv").set_index("input_id")
    assert pairs.loc[["t1", "t2", "t3", "t4"], "rating"].tolist() == ["good", "poor", "unrated", "unrated"]
    assert pairs.loc[["t1", "t2", "t3", "t4"], "attribute"].tolist() == ["islam", "islam", "judaism", "lgbq"]
    report = (tmp_path / "rated" / "report.html").read_text(encoding="utf-8")
    assert 'id="fig-score_scatter_rating"' in report and 'id="fig-score_scatter_topic"' in report
    assert (tmp_path / "rated" / "plots" / "score_scatter_rating.svg").exists()
    # no ratings: no rating column, no Fig. 3; three topics: Fig. 4
    plain = pd.read_csv(tmp_path / "audit" / "pairs.csv")
    assert "rating" not in plain.columns
    assert 'id="fig-score_scatter_rating"' not in (tmp_path / "audit" / "report.html").read_text(encoding="utf-8")
    assert 'id="fig-score_scatter_topic"' in (tmp_path / "audit" / "report.html").read_text(encoding="utf-8")
    # a project whose pairs are none of this audit's is an error
    other = pd.DataFrame({"id": ["x1"], "text": ["Islam is a religion of peace."]})
    with pytest.raises(InputError, match="none of its 2 rated pairs is a pair of this audit"):
        run_audit(other, tmp_path / "other", rated)
    # so is one that nobody has rated yet (no Fig. 3, and no word of why, before the review)
    unrated = RatingStore.create(tmp_path / "fresh", pairs_from_run(tmp_path / "audit" / "generate" / "islam"))
    consolidate(unrated)
    fresh = AuditOptions(methods=["ablation"], id_column="id", ratings=str(tmp_path / "fresh"))
    with pytest.raises(InputError, match="no pair has a verdict yet"):
        run_audit(data, tmp_path / "unrated", fresh)


# ------------------------------------------------------------------------------------------ hardening (#20 items 11-13)


def _signed_in(store: RatingStore, name: str = "ann", passphrase: str = "ann-pass"):  # type: ignore[no-untyped-def]
    client = _client(store)
    response = client.post(
        "/login", data={"rater": name, "passphrase": passphrase, "csrf": _csrf(client.get("/").text)}
    )
    return client, response


def test_a_rebinding_host_is_refused_and_every_answer_carries_the_security_headers(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client = _client(store)
    rebound = client.get("/", headers={"host": "attacker.example:8765"})
    assert rebound.status_code == 400 and "Host header" in rebound.text
    forged = client.post(
        "/login",
        data={"rater": "eve", "passphrase": "evil", "csrf": "x"},
        headers={"host": "attacker.example:8765", "origin": "http://attacker.example:8765"},
    )
    assert forged.status_code == 400
    assert client.get("/", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/", headers={"host": "[::1]:8765"}).status_code == 200
    refused = _client(store, token="s3cret").get("/")
    for response in (client.get("/"), rebound, refused):
        csp = response.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp, csp
        assert response.headers["referrer-policy"] == "no-referrer"
        assert response.headers["x-frame-options"] == "DENY"
    assert refused.status_code == 401
    script = client.get("/static/rate.js")
    assert script.status_code == 200 and "keydown" in script.text
    assert client.get("/static/../store.py").status_code == 404
    client.post("/login", data={"rater": "ann", "passphrase": "ann-pass", "csrf": _csrf(client.get("/").text)})
    assert '<script src="/static/rate.js">' in client.get("/rate").text
    assert "<script>" not in client.get("/rate").text.replace("&lt;script&gt;", "")


def test_a_rater_name_is_held_by_its_passphrase(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _, first = _signed_in(store)
    assert first.status_code == 200 and "/rate" in str(first.url)
    intruder, refused = _signed_in(store, "ann", "guess")
    assert refused.status_code == 403 and "passphrase does not match" in refused.text
    assert intruder.get("/rate", follow_redirects=False).status_code == 303  # not signed in
    again, ok = _signed_in(store, "ann", "ann-pass")
    assert ok.status_code == 200 and 'name="pair_id"' in again.get("/rate").text
    short = _signed_in(store, "bob", "abc")[1]
    assert short.status_code == 400 and "at least 4" in short.text


def test_only_the_offered_pair_can_be_rated(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client, _ = _signed_in(store)
    page = client.get("/rate")
    offered = re.search(r'name="pair_id" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    other = next(p for p in ("p1", "p2", "p3") if p != offered)
    answer = {"fluent": "yes", "reference": "none", "same_label": "yes", "meaning": "3", "csrf": _csrf(page.text)}
    refused = client.post("/rate", data={**answer, "pair_id": other})
    assert refused.status_code == 409 and "not offered" in refused.text
    assert store.ratings() == []
    assert client.post("/rate", data={**answer, "pair_id": offered}, follow_redirects=False).status_code == 303
    assert [r.pair_id for r in store.ratings()] == [offered]


def test_export_quotes_cells_a_spreadsheet_would_run_and_import_reads_them_back(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add(_r("p1", '=HYPERLINK("http://evil")', meaning=2))
    store.add(_r("p2", "-1+1", meaning=3))
    store.export_csv(tmp_path / "out.csv")
    raw = (tmp_path / "out.csv").read_text()
    assert "'=HYPERLINK" in raw and "'-1+1" in raw
    assert not any(line.split(",")[1].startswith(("=", "-", "+", "@")) for line in raw.splitlines()[1:])
    other = RatingStore.create(tmp_path / "other", PAIRS)
    assert other.import_csv(tmp_path / "out.csv") == 2
    assert sorted(r.rater for r in other.ratings()) == ["-1+1", '=hyperlink("http://evil")']  # names fold case


@pytest.mark.slow
def test_sigterm_stops_the_server_while_a_request_hangs(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    store = _store(tmp_path)
    port = _free_port()
    script = tmp_path / "serve.py"
    script.write_text(
        "import sys, time\n"
        "import counterfair.rating.app as app\n"
        "app.edit_html = lambda a, b: time.sleep(600)  # a page that never finishes rendering\n"
        f"app.serve({str(store.directory)!r}, port={port})\n"
    )
    server = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(url)
        client = httpx.Client(base_url=url, follow_redirects=False)
        home = client.get("/")
        client.post("/login", data={"rater": "ann", "passphrase": "ann-pass", "csrf": _csrf(home.text)})
        hanging = threading.Thread(target=_request_quietly, args=(client, "/rate"), daemon=True)
        hanging.start()
        time.sleep(1.0)  # the request is now in the page renderer
        started = time.monotonic()
        os.kill(server.pid, signal.SIGTERM)
        assert server.wait(timeout=20) is not None
        assert time.monotonic() - started < 15
    finally:
        if server.poll() is None:
            server.kill()


def _request_quietly(client: httpx.Client, path: str) -> None:
    """A request whose answer never comes: the server is stopped under it."""
    with contextlib.suppress(httpx.HTTPError):
        client.get(path, timeout=60)


HEADER = "pair_id,rater,fluent,reference,same_label,meaning,reject\n"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("p1,ann,yes,none,yes,3,0\np1,ann,yes,none,yes,2,0\n", "row 3: 'ann' rates pair 'p1' again \\(row 2\\)"),
        ("p1,,yes,none,yes,3,0\n", "row 2: the rater name is empty"),
        ("p1,ann,yes,none,yes,3.7,0\n", "row 2: meaning '3.7' is not a whole number from 0 to 4"),
        ("p1,ann,yes,none,yes,1e309,0\n", "row 2: meaning .* is not a whole number from 0 to 4"),
        ("p1,llm:qwen,yes,none,yes,3,0\n", "names starting with 'llm:' are LLM judges"),
    ],
)
def test_a_bad_ratings_file_adds_nothing(tmp_path: Path, rows: str, message: str) -> None:
    """#35 item 10: a duplicate row failed but kept the first; an empty rater was stored as 'nan', 3.7 as 3, 1e309
    raised OverflowError, and 'llm:' raters came in as people."""
    store = _store(tmp_path)
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + rows)
    with pytest.raises(InputError, match=message):
        store.import_csv(path)
    assert store.ratings() == []


def test_rater_names_round_trip_and_look_alikes_are_one_rater(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.add(_r("p1", "'=2+2"))  # a name that starts with a quote and a formula sign
    store.add(_r("p2", "=SUM(A1)"))
    store.export_csv(tmp_path / "out.csv")
    other = RatingStore.create(tmp_path / "other", PAIRS)
    assert other.import_csv(tmp_path / "out.csv") == 2
    assert sorted(r.rater for r in other.ratings()) == ["'=2+2", "=sum(a1)"]
    path = tmp_path / "look.csv"
    path.write_text(HEADER + "p1,\uff41nn,yes,none,yes,3,0\np2,a\u200bnn,yes,none,yes,3,0\n", encoding="utf-8")
    third = RatingStore.create(tmp_path / "third", PAIRS)
    third.import_csv(path)
    assert {r.rater for r in third.ratings()} == {"ann"}  # full-width a, a zero-width space: the same rater


def test_a_token_with_any_characters_answers_401_or_200_never_500(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client = _client(store, token="pässwörd")
    wrong = client.get("/?token=w\u00f6rd")
    assert wrong.status_code == 401 and wrong.headers["Referrer-Policy"] == "no-referrer"
    assert client.get("/?token=p%C3%A4ssw%C3%B6rd").status_code == 200
    plain = _client(store, token="s3cret")
    refused = plain.get("/?token=%C3%BC")
    assert refused.status_code == 401 and "Content-Security-Policy" in refused.headers


def test_a_token_outside_latin1_signs_in_and_its_cookie_holds_a_digest(tmp_path: Path) -> None:
    """#47 item 11: 'tök€n' answered 500 (a cookie must be Latin-1)."""
    store = _store(tmp_path)
    client = _client(store, token="tök€n")
    assert client.get("/?token=t%C3%B6k%E2%82%ACn").status_code == 200
    assert "€" not in client.cookies["cf_token"] and "tök" not in client.cookies["cf_token"]
    assert client.get("/").status_code == 200  # the cookie lets the next request in
    for forged in ("forged", "t%C3%B6k%E2%82%ACn"):  # a guess, or the token itself, is no cookie
        assert _client(store, token="tök€n", cookies={"cf_token": forged}).get("/").status_code == 401


def test_rater_names_fold_case_drop_control_characters_and_llm_names_are_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert _signed_in(store, "Bob", "bob-pass")[1].status_code == 200
    refused = _signed_in(store, "BOB", "guess")[1]  # the same rater: his passphrase holds the name
    assert refused.status_code == 403
    assert _signed_in(store, "LLM:gpt", "whatever")[1].status_code == 400  # an LLM judge's name, not a person
    assert _signed_in(store, "eve\x00il", "eve-pass")[1].status_code == 200
    import sqlite3

    with sqlite3.connect(store.path) as db:
        assert sorted(r[0] for r in db.execute("SELECT name FROM raters")) == ["bob", "eveil"]


def test_a_database_moved_away_answers_503_and_no_empty_file_appears(tmp_path: Path) -> None:
    store = _store(tmp_path)
    client, _ = _signed_in(store)
    store.path.rename(tmp_path / "moved.sqlite")
    page = client.get("/rate")
    assert page.status_code == 503 and "moved or deleted: put it back" in page.text
    assert not store.path.exists()  # no empty database in its place
    (tmp_path / "moved.sqlite").rename(store.path)
    assert client.get("/rate").status_code == 200


@pytest.mark.parametrize("content", [b"", b"garbage, not a database" * 10])
def test_rate_serve_on_an_empty_or_garbage_database_exits_2(tmp_path: Path, content: bytes) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "ratings.sqlite").write_bytes(content)
    done = run_cli("rate", "serve", str(project), "--port", "0", timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a counterfair rating project" in done.stderr
