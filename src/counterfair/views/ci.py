"""What a CI system reads of a run besides its exit code: the JUnit file's properties (which counterfair, input and
classifier the verdict is about), a JUnit file with an ``<error>`` case when the run stopped on bad input (exit 2:
without one, a CI page showed nothing), and on GitHub Actions an ``::error::`` line per failing check and a step
summary."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..redact import redact

#: the run identity's fields a JUnit file names, as run.json holds them
RUN_PROPERTIES = ("kind", "input", "input_sha256", "options_fingerprint", "classifier_signature", "generator")


def junit_properties(run_dir: str | Path | None) -> dict[str, str]:
    """The counterfair version and the run's identity (run.json's input, its sha256, the options' fingerprint, the
    classifier's or generator's signature), each a string, secrets redacted; the version alone where there is no
    run.json."""
    from .. import __version__

    out = {"counterfair_version": str(__version__)}
    try:
        found = json.loads((Path(run_dir) / "run.json").read_text(encoding="utf-8")) if run_dir else {}
    except (OSError, ValueError):
        found = {}
    for key in RUN_PROPERTIES:
        value = found.get(key) if isinstance(found, dict) else None
        if value is not None:
            out[key] = redact(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
    return out


def junit_path(argv: Sequence[str]) -> str | None:
    """The ``--junit`` file a command line names (None: none)."""
    for k, arg in enumerate(argv):
        if arg == "--junit" and k + 1 < len(argv):
            return argv[k + 1]
        if arg.startswith("--junit="):
            return arg.partition("=")[2]
    return None


def write_error_junit(argv: Sequence[str], message: str, *, since: float = 0.0) -> Path | None:
    """Where the command line asks for a JUnit file and the run stopped before its gate wrote one (exit 2): one test
    case with an ``<error>`` that says why, so the CI page shows the cause. None where no file is asked, the gate
    wrote it during this run (modified at or after ``since``: a rule not evaluated, a tracker that failed after the
    gate), or it cannot be written (the error itself is what the user must see)."""
    import xml.etree.ElementTree as ET

    path = junit_path(argv)
    if not path:
        return None
    try:
        if Path(path).stat().st_mtime >= since > 0:
            return None  # the gate's own file, with its checks: kept
    except OSError:
        pass
    said = redact(message)
    root = ET.Element("testsuites")
    node = ET.SubElement(root, "testsuite", name="counterfair fairness gate", tests="1", failures="0", errors="1")
    props = ET.SubElement(node, "properties")
    for name, value in junit_properties(None).items():
        ET.SubElement(props, "property", name=name, value=value)
    case = ET.SubElement(node, "testcase", classname="counterfair.run", name="the run")
    ET.SubElement(case, "error", message=said, type="error").text = said
    try:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
    except OSError:
        return None
    return target


def github_annotations(verdict: Any, env: Mapping[str, str] | None = None) -> list[str]:
    """On GitHub Actions (``GITHUB_ACTIONS=true``): an ``::error::`` line per failing check, a ``::warning::`` line per
    check not evaluated, and the verdict appended to the step summary (``GITHUB_STEP_SUMMARY``); the lines, for the
    caller to print. Nothing elsewhere."""
    environ = os.environ if env is None else env
    if environ.get("GITHUB_ACTIONS") != "true":
        return []

    def escaped(text: str) -> str:  # a workflow command's data: %, CR and LF are encoded
        return redact(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    from ..analysis.gate import check_kind

    lines = []
    for check in verdict.checks:  # a title is a property: no ':' or ',' in it
        if check.verdict == "fail":
            lines.append(f"::error title=counterfair {check_kind(check)}::{escaped(check.message)}")
        elif check.verdict == "error":
            lines.append(f"::warning title=counterfair not evaluated::{escaped(check.message)}")
    summary = environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        failing = [c for c in verdict.checks if c.verdict != "pass"]
        body = [f"### counterfair fairness gate: {verdict.verdict} (exit {verdict.exit_code})", ""]
        body += [f"- **{c.verdict}** {redact(c.message)}" for c in failing[:50]]
        body += [f"- {len(verdict.checks) - len(failing)} checks passed", ""]
        try:
            with open(summary, "a", encoding="utf-8") as out:
                out.write("\n".join(body) + "\n")
        except OSError:
            pass  # a summary is a courtesy: the exit code and the lines above stand
    return lines


__all__ = ["github_annotations", "junit_path", "junit_properties", "write_error_junit"]
