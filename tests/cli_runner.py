"""One command line run in this process, as a user's shell would: its exit code and everything it printed (stdlib
only, so ``tests/core_only.py`` can use it after blocking the extras' modules)."""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any


def run_in_process(args: list[str]) -> dict[str, Any]:
    """``counterfair ARGS`` through the CLI's ``main()``: ``{"args", "code", "output"}``; a crash that escapes
    ``main()`` is reported as the code ``"crash"`` with its message."""
    from counterfair.cli import main

    sys.argv = ["counterfair", *args]
    buffer = io.StringIO()
    code: object = 0
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            main()
        except SystemExit as done:
            code = done.code or 0
        except Exception as exc:  # noqa: BLE001 - a crash is a result the test reports
            code, _ = "crash", buffer.write(f"{type(exc).__name__}: {exc}")
    return {"args": args, "code": code, "output": buffer.getvalue()}
