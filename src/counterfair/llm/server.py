"""llama-cpp-python's OpenAI-compatible server, started on the llama.cpp path that is safe on this machine.

``python -m counterfair.llm.server --model NAME_OR_FILE.gguf [llama_cpp.server options]`` (or ``counterfair
serve-llm``) decides weight repacking first (:mod:`counterfair.llm.native`: a probe in a child process, or
``COUNTERFAIR_LLAMA_REPACK=on|off``) and then runs ``llama_cpp.server`` with every other option unchanged. A known
model name (``qwen2.5-coder-0.5b-instruct``) is resolved to its packaged GGUF file.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import ConfigError


def resolve_model_argument(argv: Sequence[str]) -> tuple[list[str], Path]:
    """``argv`` with the ``--model`` value resolved to a GGUF path, and that path."""
    args = list(argv)
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name != "--model":
            continue
        if not eq:
            if i + 1 >= len(args):
                raise ConfigError("--model needs a value: a GGUF file or a known model name")
            value = args[i + 1]
        path = Path(value).expanduser()
        if not path.exists():
            from ..models import get_model_info

            path = get_model_info(value).path()
        if eq:
            args[i] = f"--model={path}"
        else:
            args[i + 1] = str(path)
        return args, path
    raise ConfigError("give the model to serve with --model FILE.gguf or a known model name")


def main(argv: Sequence[str] | None = None) -> None:
    from .native import decide, use_path_globally

    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or {"--help", "-h"} & set(argv):  # llama_cpp.server's own help lists its options
        print(
            "counterfair serve-llm --model NAME|FILE.gguf [llama_cpp.server options: --host, --port, --n_ctx, ...]\n"
            "Serves the model over an OpenAI-compatible API on the llama.cpp path that is safe on this machine; "
            "then --llm openai:http://HOST:PORT/v1. The server's options follow."
        )
        from llama_cpp.server.__main__ import main as serve

        sys.argv = ["llama_cpp.server", "--help"]
        serve()
        return
    args, path = resolve_model_argument(argv)
    native = decide(path)
    use_path_globally(native)
    state = "on" if native.repack else "off"
    print(f"counterfair: llama.cpp weight repacking {state} ({native.decided_by}: {native.detail})", file=sys.stderr)
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *args]
    serve()


if __name__ == "__main__":
    main()
