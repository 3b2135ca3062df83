"""Which llama.cpp code path is safe on this machine: weight repacking (the fast path) or plain CPU buffers.

llama.cpp repacks quantised weights into "extra buffer types" that match the CPU's instruction sets (AMX tiles,
AVX-512 / AVX2 interleaved layouts). Some machines advertise an instruction set they cannot use: Intel Xeons whose
``/proc/cpuinfo`` lists ``amx_tile`` inside containers that do not grant the tile state crash in
``ggml_backend_amx_mul_mat`` (SIGSEGV) or ``tinygemm_kernel_amx`` (SIGILL). A crash in native code cannot be caught
in Python, so the decision is made in a child process, before the model is loaded here:

1. ``COUNTERFAIR_LLAMA_REPACK=on|off`` forces a path (``auto``, the default, decides).
2. Otherwise a cached verdict for this machine (CPU model and flags, llama-cpp-python version, model file) is used.
3. Otherwise a probe loads the model in a child process with repacking and generates a few tokens. If the child dies
   (a signal, a non-zero exit or a time-out), the probe tries the safe path, and the model is loaded without
   repacking. If that dies too, :class:`NativeLibraryError` names the cause and the settings to change.

The verdict is stored in ``<cache>/llama_native.json`` and recorded by the backend's ``info()`` (and so in every
run's signatures).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, NativeLibraryError
from ..jsontypes import JSONObject

ENV = "COUNTERFAIR_LLAMA_REPACK"
PROBE_TIMEOUT_S = 300.0
_PATCH_LOCK = threading.Lock()


@dataclass(frozen=True)
class NativePath:
    """The decision: ``repack`` on or off, how it was reached, and what the probe saw."""

    repack: bool
    decided_by: str  # "env", "probe" or "cache"
    detail: str

    def to_dict(self) -> JSONObject:
        return asdict(self)


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    cause: str  # "ok", "SIGSEGV", "SIGILL", "exit 1", "timeout after 300 s"
    output: str  # the child's last lines of output


def setting() -> str:
    """``COUNTERFAIR_LLAMA_REPACK``: ``auto`` (default), ``on`` or ``off``."""
    value = os.environ.get(ENV, "auto").strip().lower() or "auto"
    aliases = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}
    value = aliases.get(value, value)
    if value not in ("auto", "on", "off"):
        raise ConfigError(f"{ENV}={os.environ.get(ENV)!r}: expected auto, on or off")
    return value


def cpu_fingerprint() -> JSONObject:
    """CPU model name, a digest of its flags, and whether it lists AMX (Linux; elsewhere the platform's name)."""
    import platform

    model, flags = platform.processor() or platform.machine(), ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model in ("", platform.machine(), platform.processor()):
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value.strip()
    listed = sorted(f for f in flags.split() if f.startswith("amx"))
    return {
        "cpu": model,
        "flags_sha256": hashlib.sha256(flags.encode()).hexdigest()[:16],
        "amx_listed": listed,
    }


def _library_version() -> str:
    from ..models import package_version

    return package_version("llama-cpp-python") or "unknown"


def _cache_file() -> Path:
    from ..models import cache_root

    return cache_root() / "llama_native.json"


def _cache_key(model_path: Path) -> str:
    stat = model_path.stat()
    blob = json.dumps([cpu_fingerprint(), _library_version(), model_path.name, stat.st_size], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def _read_cache() -> JSONObject:
    try:
        data = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # absent or damaged: probe again
    return data if isinstance(data, dict) else {}


def _write_cache(key: str, record: dict[str, Any]) -> None:
    from ..errors import OutputError
    from ..writing import write_json

    data = _read_cache()
    data[key] = record
    with contextlib.suppress(OutputError):  # a cache that cannot be written only costs a probe next time
        write_json(data, _cache_file())


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def probe(
    model_path: Path, *, repack: bool, timeout: float = PROBE_TIMEOUT_S, command: Sequence[str] | None = None
) -> ProbeResult:
    """Load ``model_path`` in a child process (repacking on or off) and generate a few tokens.

    The child is ``command + [model_path, "on" | "off"]``; ``command`` defaults to this module's probe (tests stand
    in a child that crashes)."""
    prefix = list(command) if command else [sys.executable, "-m", "counterfair.llm.native"]
    argv = [*prefix, str(model_path), "on" if repack else "off"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ProbeResult(False, f"timeout after {timeout:.0f} s", "")
    tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
    return ProbeResult(done.returncode == 0, "ok" if done.returncode == 0 else _describe_exit(done.returncode), tail)


def decide(model_path: Path, *, command: Sequence[str] | None = None) -> NativePath:
    """The path to load ``model_path`` with on this machine (see the module's docstring)."""
    mode = setting()
    if mode != "auto":
        return NativePath(mode == "on", "env", f"{ENV}={mode}")
    key = _cache_key(model_path)
    cached = _read_cache().get(key)
    if isinstance(cached, dict) and isinstance(cached.get("repack"), bool):
        return NativePath(cached["repack"], "cache", str(cached.get("detail", "")))
    fast = probe(model_path, repack=True, command=command)
    if fast.ok:
        verdict = NativePath(True, "probe", "a child process ran the model with weight repacking")
    else:
        safe = probe(model_path, repack=False, command=command)
        if not safe.ok:
            raise NativeLibraryError(
                f"llama.cpp failed running {model_path.name} in a test process, with weight repacking ({fast.cause}) "
                f"and without it ({safe.cause}); its last output:\n{safe.output or fast.output}\n"
                f"Nothing was loaded in this process. Check the model file and the llama-cpp-python build, set "
                f"{ENV}=off to skip the test, or use another backend (--llm openai:URL or hf:DIR)."
            )
        verdict = NativePath(
            False, "probe", f"with weight repacking the child process ended with {fast.cause}; loaded without it"
        )
    _write_cache(key, {**verdict.to_dict(), **cpu_fingerprint(), "llama_cpp_python": _library_version()})
    return verdict


def _with_setting(original: Any, repack: bool) -> Any:
    def default_params() -> Any:
        params = original()
        params.use_extra_bufts = repack
        return params

    return default_params


@contextlib.contextmanager
def model_params(*, repack: bool) -> Iterator[None]:
    """While this is open, llama-cpp-python builds its model parameters with ``use_extra_bufts = repack``.

    ``Llama`` does not take the setting as an argument; it reads ``llama_model_default_params()`` while it loads, so
    the function is wrapped for the duration of the load (under a lock: the wrapper is process-wide)."""
    import llama_cpp.llama_cpp as native

    with _PATCH_LOCK:
        original = native.llama_model_default_params
        native.llama_model_default_params = _with_setting(original, repack)
        try:
            yield
        finally:
            native.llama_model_default_params = original


def use_path_globally(path: NativePath) -> None:
    """Apply ``path`` to every later load in this process (for servers that build their models themselves)."""
    import llama_cpp.llama_cpp as native

    native.llama_model_default_params = _with_setting(native.llama_model_default_params, path.repack)


def _probe_main(model: str, mode: str) -> int:
    """The child process of :func:`probe`: load, generate 4 tokens, exit 0."""
    from llama_cpp import Llama

    from .base import default_threads

    with model_params(repack=mode == "on"):
        llama = Llama(model_path=model, n_ctx=256, n_threads=default_threads(), verbose=False)
    out: Any = llama.create_completion("The capital of France is", max_tokens=4, temperature=0.0)
    print("probe ok:", repr(out["choices"][0]["text"]))
    return 0


if __name__ == "__main__":
    sys.exit(_probe_main(sys.argv[1], sys.argv[2]))
