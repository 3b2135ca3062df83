"""The core install, as a new user gets it (#32): build the wheel, install it without extras into a fresh virtual
environment, run ``counterfair audit --demo`` there with an empty cache, and check the done-when of issue #32.

Checks (exit 1 when one fails): the wheel builds; the environment holds no torch, transformers, llama_cpp or fastapi;
it is under 800 MB; the demo audit exits 0 and writes the same ``pairs.csv`` as the full development install. Prints
and saves sizes (the environment, its largest packages), install and audit seconds:
benchmarks/results/slim_install.json. Needs the package index (PyPI) for the install; ``make test`` runs it.

    python benchmarks/slim_install.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "slim_install.json"
LIMIT_MB = 800
HEAVY = ("torch", "transformers", "llama_cpp", "fastapi", "uvicorn", "bert_score", "sentence_transformers")


def size_mb(path: Path) -> float:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def run(cmd: list[str], **kwargs: object) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, **kwargs)  # type: ignore[call-overload]
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Build the environment here and keep it (default: a temporary one).")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        return check(args.keep)
    with tempfile.TemporaryDirectory(prefix="counterfair-slim-") as work:  # ~800 MB: removed when done
        return check(Path(work))


def check(work: Path) -> int:
    """Build, install and audit the demo in ``work``; the result's JSON, 1 where a limit is broken."""
    dist, venv = work / "dist", work / "venv"
    build_s = run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)], stdout=subprocess.DEVNULL
    )
    [wheel] = sorted(dist.glob("counterfair-*.whl"))
    run([sys.executable, "-m", "venv", str(venv)])
    bin_dir = venv / "bin"
    install_s = run([str(bin_dir / "pip"), "install", "-q", str(wheel)])
    site = next((venv / "lib").glob("python3*/site-packages"))
    probe = f"import importlib.util as u, json; print(json.dumps({{m: u.find_spec(m) is not None for m in {HEAVY!r}}}))"
    present = json.loads(
        subprocess.run([str(bin_dir / "python"), "-c", probe], check=True, capture_output=True, text=True).stdout
    )
    env = {**os.environ, "COUNTERFAIR_CACHE": str(work / "cache"), "COUNTERFAIR_STORE": "off"}
    out = work / "audit"
    audit_s = run(
        [str(bin_dir / "counterfair"), "audit", "--demo", "--out", str(out), "-q"], env=env, stdout=subprocess.DEVNULL
    )
    full = work / "audit-full"
    subprocess.run(
        [sys.executable, "-m", "counterfair.cli", "audit", "--demo", "--out", str(full), "-q"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    packages = sorted(((p.name, size_mb(p)) for p in site.iterdir() if p.is_dir()), key=lambda x: -x[1])[:10]
    result = {
        "wheel": wheel.name,
        "wheel_mb": round(wheel.stat().st_size / 1e6, 2),
        "environment_mb": round(size_mb(venv), 1),
        "limit_mb": LIMIT_MB,
        "largest_packages_mb": {name: round(mb, 1) for name, mb in packages},
        "heavy_modules_present": [m for m, there in present.items() if there],
        "same_pairs_as_full_install": (out / "pairs.csv").read_bytes() == (full / "pairs.csv").read_bytes(),
        "seconds": {"build": round(build_s, 1), "install": round(install_s, 1), "audit_demo": round(audit_s, 1)},
    }
    print(json.dumps(result, indent=1))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    failed = [
        why
        for why, bad in (
            (f"heavy modules in the core install: {result['heavy_modules_present']}", result["heavy_modules_present"]),
            (
                f"the environment is {result['environment_mb']} MB (limit {LIMIT_MB})",
                result["environment_mb"] >= LIMIT_MB,
            ),
            ("the core audit's pairs differ from the full install's", not result["same_pairs_as_full_install"]),
        )
        if bad
    ]
    for why in failed:
        print(f"FAILED: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
