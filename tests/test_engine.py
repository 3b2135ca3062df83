"""The Ray engine on a local Ray instance (2 CPUs): same results as the local engine."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from counterfair.commands.evaluate.options import EvaluateOptions
from counterfair.commands.evaluate.shell import evaluate_pairs
from counterfair.commands.generate.options import GenerateOptions
from counterfair.commands.generate.shell import run_generate
from counterfair.engine import map_batches, shutdown
from counterfair.errors import ConfigError


class Square:
    loads = 0

    def __init__(self, offset: int) -> None:
        Square.loads += 1
        self.offset = offset

    def __call__(self, batch: list[int]) -> list[int]:
        return [x * x + self.offset for x in batch]


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    shutdown()


def test_local_engine_builds_the_worker_once() -> None:
    Square.loads = 0
    seen: list[int] = []
    out = map_batches(functools.partial(Square, 1), [[1, 2], [3]], on_result=lambda i, r: seen.append(i))
    assert out == [[2, 5], [10]] and Square.loads == 1 and seen == [0, 1]
    with pytest.raises(ConfigError, match="unknown engine"):
        map_batches(functools.partial(Square, 0), [[1]], engine="spark")


def test_ray_keeps_the_order(ray_local: None) -> None:
    batches = [[i, i + 1] for i in range(0, 40, 2)]
    assert map_batches(functools.partial(Square, 0), batches, engine="ray") == [[x * x for x in b] for b in batches]


@pytest.mark.slow
def test_evaluate_on_ray_equals_local(ray_local: None, tiny_lm_dir: Path) -> None:
    frame = pd.DataFrame(
        {
            "orig_text": [f"the film number {i} was long" for i in range(9)],
            "gen_text": [f"the movie number {i} was short" for i in range(9)],
        }
    )
    common = {"metrics": ["perplexity", "bertscore", "distance"], "ppl_model": str(tiny_lm_dir)}
    local = evaluate_pairs(frame, EvaluateOptions(**common)).rows  # type: ignore[arg-type]
    remote = evaluate_pairs(frame, EvaluateOptions(**common, engine="ray", engine_batch=4)).rows  # type: ignore[arg-type]
    for column in ("perplexity", "bertscore_f1", "distance"):
        np.testing.assert_allclose(remote[column].astype(float), local[column].astype(float), rtol=1e-4)


@pytest.mark.slow
def test_generate_llm_on_ray_equals_local(ray_local: None, tiny_lm_long_dir: Path, tmp_path: Path) -> None:
    data = pd.DataFrame({"text": ["My Muslim neighbour is kind.", "The mosque is open.", "A Muslim prayer."]})
    common = {
        "methods": ["llm"],
        "llm": f"hf:{tiny_lm_long_dir}",
        "prompt_style": "plain",
        "samples": 2,
        "max_attempts": 1,
        "detector": "keyword",  # a random tiny LM fails keyword+llm's control questions
    }
    local = run_generate(data, tmp_path / "local", GenerateOptions(**common))  # type: ignore[arg-type]
    remote = run_generate(data, tmp_path / "ray", GenerateOptions(**common, engine="ray"))  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(
        local.candidates[["input_id", "text", "status"]], remote.candidates[["input_id", "text", "status"]]
    )
    assert len(remote.candidates) == 6  # 3 texts x 2 samples, sampled with the same seeds in the Ray workers
    assert set(remote.counterfactuals["status"]) <= {"ok", "failed:no_candidate_passed_filters"}


def _same_files(a: Path, b: Path, names: tuple[str, ...]) -> None:
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.mark.slow
def test_the_classifier_stage_on_ray_gives_the_local_outputs(ray_local: None, tmp_path: Path) -> None:
    from counterfair.commands.audit.options import AuditOptions
    from counterfair.commands.audit.shell import run_audit
    from counterfair.commands.bias.core import BiasOptions
    from counterfair.commands.bias.shell import run_bias

    texts = [f"Some {w} people live on street {i}." for i in range(30) for w in ("gay", "Muslim", "tall")]
    data = pd.DataFrame({"text": texts, "label": [i % 2 for i in range(len(texts))]})
    from counterfair.commands.ctf.shell import run_ctf

    for engine in ("local", "ray"):
        run_bias(data, tmp_path / f"bias-{engine}", BiasOptions(engine=engine, bootstrap=50))
        run_ctf(data[["text"]], tmp_path / f"ctf-{engine}", engine=engine, n_resamples=50)
        opts = AuditOptions(methods=["swap"], engine=engine, bootstrap=50)
        run_audit(data[["text"]], tmp_path / f"audit-{engine}", opts)
    _same_files(tmp_path / "bias-local", tmp_path / "bias-ray", ("rows.csv",))
    _same_files(tmp_path / "ctf-local", tmp_path / "ctf-ray", ("pairs.csv", "summary.json"))
    _same_files(tmp_path / "audit-local", tmp_path / "audit-ray", ("pairs.csv", "slots.csv"))
    local = json.loads((tmp_path / "audit-local" / "summary.json").read_text())
    remote = json.loads((tmp_path / "audit-ray" / "summary.json").read_text())
    assert [k for k in local if local[k] != remote.get(k)] == ["input", "options", "reproduce", "timing_s"]
    assert remote["options"]["engine"] == "ray" and "--engine ray" in remote["reproduce"]  # the engine named
    from counterfair.engine import STARTUP_SECONDS  # and the up-front estimate counts its start (#68)

    started = local["input"]["estimated_seconds"] + STARTUP_SECONDS["ray"]
    assert remote["input"] == {**local["input"], "estimated_seconds": started}
    bias_local = json.loads((tmp_path / "bias-local" / "summary.json").read_text())
    bias_remote = json.loads((tmp_path / "bias-ray" / "summary.json").read_text())
    assert bias_remote["groups"] == bias_local["groups"]


def test_a_python_classifier_object_stays_local() -> None:
    import counterfair as cf

    with pytest.raises(ConfigError, match="rebuilds the classifier from its spec on every worker"):
        cf.audit(["Some gay people."], lambda texts: [0.1] * len(texts), engine="ray")


class Builds:
    """A worker that answers with the id of the actor-side build that made it."""

    def __init__(self) -> None:
        import uuid

        self.build = uuid.uuid4().hex

    def __call__(self, batch: list[int]) -> list[str]:
        return [self.build for _ in batch]


def test_ray_keeps_one_pool_of_actors_for_every_call_of_a_run(ray_local: None) -> None:
    """#68: a run calls its classifier ~90 times; the actors (and the models they load) are built once per process,
    not once per call: the second call's batches are answered by the first call's builds."""
    first = map_batches(Builds, [[1], [2], [3], [4]], engine="ray")
    second = map_batches(Builds, [[5], [6], [7], [8], [9]], engine="ray")
    builds = {b for batch in first for b in batch}
    assert {b for batch in second for b in batch} <= builds and len(builds) <= 2  # 2 CPUs: 2 actors at most


def test_an_address_nothing_answers_at_is_a_clear_error_not_minutes_of_retries() -> None:
    import socket

    from counterfair.engine import check_address

    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConfigError, match=rf"--address ray://127.0.0.1:{port}: nothing answers at 127.0.0.1:{port}"):
        check_address(f"ray://127.0.0.1:{port}", timeout=5)  # refused at once; Ray itself retried for minutes
    with pytest.raises(ConfigError, match="expected ray://HOST:PORT"):
        check_address("head-node")
    check_address("auto")  # Ray's to resolve


def test_an_address_where_another_service_listens_is_refused_in_seconds() -> None:
    """#87 B9: an address where an HTTP server (or a silent one) listens passed the connection check, and Ray retried
    against it for minutes. Ray's GCS and client server speak gRPC: a server that does not answer HTTP/2's preface
    with its SETTINGS is not a Ray head (a real head's answer: test_an_audit_on_a_cluster_started_with_ray_start)."""
    import socket
    from http.server import BaseHTTPRequestHandler

    from counterfair.engine import check_address

    from .fakes import loopback

    with loopback(BaseHTTPRequestHandler) as url, pytest.raises(ConfigError, match=r"answers at .* but not a Ray head"):
        check_address(url.replace("http://", ""), timeout=5)
    with socket.socket() as silent:  # accepts, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        with pytest.raises(ConfigError, match="not a Ray head"):
            check_address(f"ray://127.0.0.1:{port}", timeout=1)


def test_sigterm_during_a_ray_run_stops_it_as_the_local_engine_does(tmp_path: Path) -> None:
    """#68: ``ray.init`` installs its own SIGTERM handler (a native stack dump, exit 1, or a SystemError wrapping the
    interruption); the command line's is kept, so SIGTERM during a Ray run ends it as locally: the actors stopped,
    status 143 and the line saying the same command resumes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pytest.importorskip("ray")
    mark = tmp_path / "scored"
    (tmp_path / "slow.py").write_text(
        "import os, pathlib, time\n"
        "def score(texts):\n"
        f"    pathlib.Path({str(mark)!r}).touch()\n"
        "    time.sleep(0.5)\n"
        "    return [0.1] * len(texts)\n",
        encoding="utf-8",
    )
    texts = [f"Some {w} people live on street {i}." for i in range(40) for w in ("gay", "Muslim", "tall")]
    pd.DataFrame({"text": texts}).to_csv(tmp_path / "texts.csv", index=False)
    command = [sys.executable, "-m", "counterfair.cli", "audit", str(tmp_path / "texts.csv"), "--methods", "swap"]
    command += ["--classifier", f"callable:{tmp_path / 'slow.py'}:score", "--engine", "ray", "-q"]
    env = {**os.environ, "COUNTERFAIR_CACHE": str(tmp_path / "cache")}
    run = subprocess.Popen(
        [*command, "--out", str(tmp_path / "run")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 240
    while not mark.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)  # until a Ray actor scores its first batch
    assert mark.exists(), run.communicate(timeout=60)
    run.send_signal(signal.SIGTERM)
    _, err = run.communicate(timeout=120)
    assert run.returncode == 143, err[-2000:]
    assert "terminated (SIGTERM): finished units are kept; the same command resumes" in err
    assert "SIGTERM received" not in err and "SystemError" not in err  # Ray's handler did not take over


def test_an_audit_on_a_cluster_started_with_ray_start(tmp_path: Path) -> None:
    """#68: the scale-out page's cluster run, end to end: a head started with ``ray start`` (token authentication, as
    Ray 2.60's ``ray start`` asks by default), an audit sent to it with ``--address``, the same pairs as the local
    engine's; a driver without the token is refused in seconds with exit 2 and told what to set."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import tempfile
    import time

    pytest.importorskip("ray")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="cfray", dir="/tmp")  # Ray's sockets need a short path
    ray_bin = str(Path(sys.executable).with_name("ray"))
    start = [ray_bin, "start", "--head", f"--port={port}", "--num-cpus=2", "--include-dashboard=false"]
    head = subprocess.Popen(
        [*start, f"--temp-dir={temp}", "--block"],
        env={**os.environ, "RAY_AUTH_MODE": "token"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    texts = [f"Some {w} people live on street {i}." for i in range(20) for w in ("gay", "Muslim", "tall")]
    pd.DataFrame({"text": texts}).to_csv(tmp_path / "texts.csv", index=False)
    base = [sys.executable, "-m", "counterfair.cli", "audit", str(tmp_path / "texts.csv"), "--methods", "swap", "-q"]

    def audit(out: str, *more: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, "--out", str(tmp_path / out), *more],
            env={**os.environ, "COUNTERFAIR_CACHE": str(tmp_path / f"cache-{out}"), **env},
            capture_output=True,
            text=True,
            timeout=400,
        )

    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the head answers
            with socket.socket() as s, contextlib.suppress(OSError):
                s.settimeout(1)
                s.connect(("127.0.0.1", port))
                break
            time.sleep(1)
        time.sleep(3)
        address = f"127.0.0.1:{port}"
        local = audit("local")
        assert local.returncode == 0, local.stderr[-2000:]
        remote = audit("cluster", "--engine", "ray", "--address", address, RAY_AUTH_MODE="token")
        assert remote.returncode == 0, remote.stderr[-2000:]
        refused = audit("no-token", "--engine", "ray", "--address", address, RAY_AUTH_MODE="")
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # --block: the head's processes stop with it
        head.wait(timeout=60)
    _same_files(tmp_path / "local", tmp_path / "cluster", ("pairs.csv", "slots.csv"))
    summary = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    assert summary["options"]["engine"] == "ray" and f"--address {address}" in summary["reproduce"]
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert f"--address {address}: Ray could not join the cluster" in refused.stderr
    assert "set RAY_AUTH_MODE=token" in refused.stderr


class Assigned:
    """A worker that answers with the resources Ray gave its actor."""

    def __call__(self, batch: list[int]) -> list[dict[str, float]]:
        import ray

        return [dict(ray.get_runtime_context().get_assigned_resources()) for _ in batch]


def test_ray_actors_share_the_clusters_gpus_unless_the_device_is_the_cpu() -> None:
    """#68: on a cluster with GPUs each actor asks for its share (a fraction when actors outnumber cards), so the
    models it builds land on its GPU; ``--device cpu`` asks for none. Ray is started here with one GPU declared (Ray
    schedules declared GPUs without a card), in a process of its own."""
    import os
    import subprocess
    import sys

    from counterfair.engine import actor_gpus

    assert actor_gpus(1, 2) == 0.5 and actor_gpus(4, 2) == 2 and actor_gpus(0, 2) == 0
    script = (
        "import json, os, ray, sys\n"
        "sys.path.insert(0, os.getcwd())\n"
        "from counterfair.engine import map_batches, shutdown\n"
        "from tests.test_engine import Assigned\n"
        "ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)\n"
        "got = map_batches(Assigned, [[1], [2], [3], [4]], engine='ray', workers=2)\n"
        "print(json.dumps(sorted({r.get('GPU', 0) for batch in got for r in batch})))\n"
        "shutdown()\n"
    )
    root = Path(__file__).resolve().parents[1]
    for device, expected in (("auto", [0.5]), ("cpu", [0])):
        env = {**os.environ, "COUNTERFAIR_DEVICE": device}
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout.strip().splitlines()[-1]) == expected, (device, done.stdout)


def test_sigterm_while_ray_starts_ends_the_run_as_143_and_leaves_no_ray_process(tmp_path: Path) -> None:
    """#87 B10: a SIGTERM while ``ray.init`` ran reached Ray's own handler: exit 15, and Ray's agents left running.
    The signal waits until Ray has started; then the run stops as any interrupted run does (status 143, the line
    saying it resumes) and Ray's processes go with it. The signal is sent from inside ``ray.init`` itself, once its
    processes are up, so the test does not depend on the machine's speed."""
    import os
    import subprocess
    import sys
    import tempfile
    import time

    pytest.importorskip("ray")
    (tmp_path / "clf.py").write_text("def score(texts):\n    return [0.1] * len(texts)\n")
    texts = [f"Some {w} people live on street {i}." for i in range(5) for w in ("gay", "Muslim")]
    pd.DataFrame({"text": texts}).to_csv(tmp_path / "texts.csv", index=False)
    ray_temp = tempfile.mkdtemp(prefix="cfsig", dir="/tmp")  # Ray's sockets need a short path
    script = (
        "import os, signal, sys\n"
        "import ray._private.node as node\n"
        "real = node.Node.__init__\n"
        "def started(self, *args, **kwargs):\n"
        "    real(self, *args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # Ray's processes are up, ray.init has not returned\n"
        "node.Node.__init__ = started\n"
        "from counterfair.cli import main\n"
        f"sys.argv = ['counterfair', 'audit', {str(tmp_path / 'texts.csv')!r}, '--methods', 'swap', '-q',\n"
        f"            '--classifier', 'callable:{tmp_path / 'clf.py'}:score', '--engine', 'ray',\n"
        f"            '--out', {str(tmp_path / 'run')!r}]\n"
        "main()\n"
    )
    env = {**os.environ, "COUNTERFAIR_CACHE": str(tmp_path / "cache"), "RAY_TMPDIR": ray_temp}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 143, done.stderr[-2000:]
    assert "terminated (SIGTERM): finished units are kept; the same command resumes" in done.stderr

    def left() -> list[str]:
        found = subprocess.run(["pgrep", "-af", ray_temp], capture_output=True, text=True).stdout.splitlines()
        return [line for line in found if "pgrep" not in line]

    deadline = time.monotonic() + 30  # Ray's processes end as the driver's shutdown asked them to
    while left() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left()
