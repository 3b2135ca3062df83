"""Where batches run: in this process (``local``) or on a Ray cluster (``ray``).

:func:`map_batches` takes a *worker factory* — a picklable callable that builds the worker, which loads its models —
and a list of batches. Locally the worker is built once and called on each batch. With Ray, each actor builds its own
worker once (so every model loads once per actor, never per batch) and batches go to whichever actor is free; the
results come back in input order. The actors of the last worker factory are kept (a run calls its classifier ~90
times: one pool serves them all) until another factory's work needs the cluster's CPUs, or :func:`shutdown`.
``address`` names a running cluster (``ray://head:10001`` or ``auto``); without it a local Ray instance is started
with this machine's CPUs.

A cluster whose LLM runs behind OpenAI-compatible servers (vLLM) needs no model on the Ray workers: name the servers
with ``--llm openai:http://vllm-host:8000/v1`` and the workers only send requests (see docs/how-to/scale-out.md).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .errors import ConfigError
from .progress import NullProgress, ProgressHook

ENGINES = ("local", "ray")
#: what an engine adds to a run before its first batch (the up-front estimate counts it): a local Ray instance
#: started and its actors built, measured on 2 CPU cores (benchmarks/engine_classifier.py, ``startup_s``)
STARTUP_SECONDS = {"local": 0.0, "ray": 18.0}


def _limit_threads(threads: int) -> None:
    os.environ["COUNTERFAIR_LLM_THREADS"] = str(max(1, threads))  # a llama.cpp model loaded in this worker
    try:
        import torch

        torch.set_num_threads(max(1, threads))
    except ImportError:  # pragma: no cover - torch is a dependency
        pass


def map_batches(
    make_worker: Callable[[], Callable[[Any], Any]],
    batches: Sequence[Any],
    *,
    engine: str = "local",
    address: str | None = None,
    workers: int | None = None,
    progress: ProgressHook | None = None,
    description: str = "batches",
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """Apply a worker (built by ``make_worker``) to every batch; results in the order of ``batches``.

    ``on_result(i, result)`` is called as each result arrives, in order (to checkpoint finished work at once).
    """
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; use local or ray")
    hook = progress or NullProgress()
    hook.start(f"{description} ({engine})", len(batches))
    if not batches:
        return []
    if engine == "local":
        worker = make_worker()
        results = []
        for i, batch in enumerate(batches):
            results.append(worker(batch))
            if on_result is not None:
                on_result(i, results[-1])
            hook.advance(1)
        return results
    return _map_ray(make_worker, batches, address=address, workers=workers, hook=hook, on_result=on_result)


def _map_ray(
    make_worker: Callable[[], Callable[[Any], Any]],
    batches: Sequence[Any],
    *,
    address: str | None,
    workers: int | None,
    hook: ProgressHook,
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    try:
        import ray
        from ray.util import ActorPool
    except ImportError as err:
        from .errors import ModelNotAvailable

        raise ModelNotAvailable("the ray engine needs Ray", pip="pip install 'ray[client]>=2.9'") from err
    if not ray.is_initialized():
        check_address(address)
        try:
            with _own_sigterm():
                ray.init(
                    address=address,
                    num_cpus=None if address else os.cpu_count(),
                    include_dashboard=False,
                    log_to_driver=False,
                    ignore_reinit_error=True,
                )
        except ConnectionError as err:  # a head that answers but refuses this driver
            raise ConfigError(f"--address {address}: Ray could not join the cluster ({err}).{_auth_hint()}") from None
        except BaseException as err:  # SIGTERM or Ctrl+C while Ray starts: what it started is stopped
            with contextlib.suppress(Exception):
                ray.shutdown()
            stop = _interruption(err)
            if stop is not None and stop is not err:
                raise stop from None
            raise
    actors = _pool(ray, make_worker, workers)
    pool = ActorPool(actors)
    results = []
    try:
        for i, result in enumerate(pool.map(lambda actor, batch: actor.run.remote(batch), list(batches))):
            results.append(result)
            if on_result is not None:
                on_result(i, result)
            hook.advance(1)
    except BaseException as err:
        _drop_pool(ray)  # a failed or interrupted map leaves no actor busy or broken for the next call
        stop = _interruption(err)
        if stop is not None and stop is not err:  # Ctrl+C or SIGTERM inside Ray's native code comes back wrapped
            raise stop from None
        raise
    return results


def _interruption(err: BaseException) -> BaseException | None:
    """The interruption (KeyboardInterrupt, the command line's SIGTERM) behind ``err``: a signal handled while Ray's
    native code waits is raised there and reaches Python as a SystemError caused by it."""
    seen: BaseException | None = err
    while seen is not None:
        if not isinstance(seen, Exception):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


@contextlib.contextmanager
def _own_sigterm() -> Iterator[None]:
    """Keep this process's SIGTERM handler through ``ray.init``, which installs its own (a native stack dump and exit
    status 1): the command line's turns SIGTERM into an interrupt, so the actors are stopped, finished units kept and
    the run ends with status 143 saying it resumes, as on the local engine. A SIGTERM while Ray starts waits until it
    has started (interrupted halfway, Ray left its agents running, and its own handler ended the process with status
    15): then the kept handler has it, and :func:`_map_ray` stops what Ray started."""
    import signal

    try:
        kept = signal.getsignal(signal.SIGTERM)
    except ValueError:  # pragma: no cover - no signals here
        kept = None
    if kept is None:
        yield
        return
    install = signal.signal
    pending: list[int] = []

    def ours_stays(signum: int, handler: Any) -> Any:
        return kept if signum == signal.SIGTERM else install(signum, handler)

    try:
        install(signal.SIGTERM, lambda signum, frame: pending.append(signum))
    except ValueError:  # not the main thread: Ray's stays
        yield
        return
    signal.signal = ours_stays  # type: ignore[assignment]
    try:
        yield
    finally:
        signal.signal = install
        install(signal.SIGTERM, kept)
    if pending:  # what the SIGTERM would have done, now that Ray is whole
        if callable(kept):
            kept(signal.SIGTERM, None)
        else:
            os.kill(os.getpid(), signal.SIGTERM)


def _auth_hint() -> str:
    """What to try when a cluster refuses this driver: a head started by ``ray start`` (Ray 2.60) asks every driver for
    its token unless ``RAY_AUTH_MODE=disabled`` was set there; a driver sends it only with ``RAY_AUTH_MODE=token``."""
    if os.environ.get("RAY_AUTH_MODE"):
        return ""
    return (
        " If the cluster uses Ray's token authentication, set RAY_AUTH_MODE=token for counterfair too (the token: "
        "RAY_AUTH_TOKEN, or the file ~/.ray/auth_token that `ray get-auth-token` shows)."
    )


#: the actor pool of this process: one, of the last worker factory used (another factory's pool could not get CPUs
#: while it held them), with the key it was built for (the Ray session, the factory pickled, the actor count)
_POOL: tuple[tuple[str, bytes, int], list[Any]] | None = None


def _pool(ray: Any, make_worker: Callable[[], Callable[[Any], Any]], workers: int | None) -> list[Any]:
    import hashlib

    global _POOL
    cpus = int(ray.available_resources().get("CPU", 1) or 1)
    count = max(1, workers or cpus)
    session = str(ray.get_runtime_context().get_job_id())  # a Ray started again has none of the old actors
    key = (session, hashlib.sha256(ray.cloudpickle.dumps(make_worker)).digest(), count)
    if _POOL is None or _POOL[0] != key:
        _drop_pool(ray)
        per_actor = max(1, cpus // count)
        per_gpu = actor_gpus(float(ray.cluster_resources().get("GPU", 0) or 0), count)

        @ray.remote(num_cpus=per_actor, num_gpus=per_gpu)
        class _Actor:
            def __init__(self, factory: Callable[[], Callable[[Any], Any]], threads: int) -> None:
                _limit_threads(threads)
                self.worker = factory()

            def run(self, batch: Any) -> Any:
                return self.worker(batch)

        _POOL = (key, [_Actor.remote(make_worker, per_actor) for _ in range(count)])  # type: ignore[attr-defined]
    return _POOL[1]


def actor_gpus(gpus: float, actors: int) -> float:
    """The GPUs each actor asks Ray for: the cluster's shared among the actors (a fraction when several share a card),
    none where ``--device cpu`` (``COUNTERFAIR_DEVICE``) keeps the models on the CPU or the cluster has no GPU."""
    if gpus <= 0 or os.environ.get("COUNTERFAIR_DEVICE", "auto").strip().lower() in ("cpu", "mps"):
        return 0.0
    return gpus / max(1, actors)


def _drop_pool(ray: Any) -> None:
    global _POOL
    for actor in _POOL[1] if _POOL is not None else []:
        with contextlib.suppress(Exception):  # an actor already gone
            ray.kill(actor)
    _POOL = None


def check_address(address: str | None, timeout: float = 5.0) -> None:
    """A cluster address (``ray://host:port``, ``host:port``) that nothing answers at is a ConfigError within
    ``timeout`` seconds, not minutes of Ray's retries; ``auto`` and None are Ray's to resolve."""
    import re
    import socket

    if not address or address == "auto":
        return
    found = re.fullmatch(r"(?:ray://)?\[?([^\]/]+?)\]?:(\d+)/?", address.strip())
    if found is None:
        raise ConfigError(f"--address {address!r}: expected ray://HOST:PORT, HOST:PORT or auto")
    host, port = found.group(1), int(found.group(2))
    try:
        connection = socket.create_connection((host, port), timeout=timeout)
    except OSError as err:
        raise ConfigError(
            f"--address {address}: nothing answers at {host}:{port} ({err.strerror or err}) within {timeout:g} s; "
            "is the Ray head running there (ray start --head)?"
        ) from None
    with connection:
        speaks = _speaks_grpc(connection, timeout)
    if not speaks:
        raise ConfigError(
            f"--address {address}: something answers at {host}:{port}, but not a Ray head (it does not speak gRPC, "
            "as Ray's GCS and client server do); give the head's port (ray start --head prints it: 6379 by default, "
            "10001 for ray://)"
        )
    if address.startswith("ray://"):
        try:
            import grpc  # noqa: F401
            import ray.util.client  # noqa: F401 - ray[client]'s grpc, which a ray:// address needs
        except ImportError:
            raise ConfigError(
                f"--address {address}: a ray:// address needs Ray's client (pip install 'ray[client]'), which is not "
                "installed; or give the head's GCS address HOST:6379"
            ) from None


#: HTTP/2's client preface and an empty SETTINGS frame: a gRPC server answers with a SETTINGS frame of its own
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def _speaks_grpc(connection: Any, timeout: float) -> bool:
    """Whether the server on ``connection`` answers HTTP/2's preface with a SETTINGS frame (a frame header whose type
    byte is 4), as every gRPC server does; an HTTP/1 server answers otherwise or closes, a silent one times out."""

    try:
        connection.settimeout(timeout)
        connection.sendall(_H2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = connection.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except (TimeoutError, OSError):
        return False
    return head[3] == 0x04


def shutdown() -> None:
    """Stop the local Ray instance this process started (no-op otherwise)."""
    try:
        import ray
    except ImportError:  # pragma: no cover
        return
    if ray.is_initialized():
        _drop_pool(ray)
        ray.shutdown()
