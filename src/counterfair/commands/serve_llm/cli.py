"""``counterfair serve-llm``: a GGUF model served over an OpenAI-compatible API."""

from __future__ import annotations

import typer

from ...command_line import app, require_extras


@app.command(
    "serve-llm",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    short_help="Serve a GGUF model over an OpenAI-compatible API.",
)
def serve_llm(ctx: typer.Context) -> None:
    """Serve a GGUF model over an OpenAI-compatible API (llama-cpp-python's server) on the llama.cpp path that is
    safe on this machine. Takes llama_cpp.server's options: --model NAME|FILE.gguf --host --port --n_ctx ..."""
    require_extras("counterfair serve-llm", "llm")
    from ...llm.server import main as serve

    serve(ctx.args)
