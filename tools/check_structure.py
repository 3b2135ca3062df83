"""Structure checks of the package, run by the test suite (tests/test_structure.py) and by hand:

    python tools/check_structure.py            # prints each finding; exit 1 when any check fails

* import cycles: every import of a package module by another (at module level or inside a function: a lazy
  import hides a cycle, it does not remove it), and of each package whose ``__init__`` that import runs first
  (importing ``a.b.c`` runs ``a`` and ``a.b``), as strongly connected components of that graph;
* ``_private`` names imported from another module (``from .swap import _parsed``): shared helpers are public;
* summaries read by string key (``summary["..."]``, ``summary.get("...")``) outside the modules that own the
  summary's JSON form (``READERS_ALLOWED``): views read the typed summaries;
* modules longer than ``MAX_MODULE_LINES`` (#70: one concern a module);
* functions longer than ``MAX_FUNCTION_LINES`` (their body, decorators and signature aside) in the core modules (each
  command slice's ``commands/<name>/core.py``);
* the core importing the run-directory layer (``RUN_LAYER``: run directories, any slice's ``shell``): the
  core works in memory, its shell owns the directory;
* an editor's name compared as a string outside ``counterfair.editors`` (``method == "swap"``,
  ``"llm" in opts.methods``, ``.isin(["swap"])``): what an editor is (an identity swap, sampled, needing the LLM, its
  colour) is asked of its registry entry (#48). A comparison counts when one side is a literal editor name (or a
  literal collection holding one) and the other side's code names a method;
* functions whose return type holds ``dict[str, Any]`` or ``Mapping[str, Any]``, nested ones counted (``tuple[Frame,
  dict[str, Any]]``, ``list[dict[str, Any]]``; a ceiling in tests/test_structure.py): what a layer hands
  another is a record, a TypedDict or a result object; ``JSONObject`` (counterfair.jsontypes) marks JSON data that is
  written or hashed (an editor's parameters, a model's identity), whose values mypy checks are JSON. Counted beside
  it, not as it. The readers of files and answers counterfair did not write (``USER_FILE_READERS``: a user's JSON,
  JSONL or YAML, an LLM's or a server's JSON answer) return what they parsed, whose shape their callers check: listed
  apart, not counted (#70: "outside the readers of user files").
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "counterfair"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 800  # a module longer than this holds more than one concern (#70)
#: the modules allowed to read a summary by key: the typed summaries' JSON readers
READERS_ALLOWED: frozenset[str] = frozenset({"counterfair.summaries"})
#: functions that parse JSON or YAML counterfair did not write (a user's file, an LLM's or a server's answer): their
#: return is the parsed object, checked by their callers; not counted among the untyped dict returns
USER_FILE_READERS: frozenset[str] = frozenset(
    {
        "counterfair.io.read_json",  # a user's JSON file (a summary another version wrote, a ratings export)
        "counterfair.io._jsonl_record",  # one line of a user's JSONL input
        "counterfair.io.whole_characters",  # that line's record, its strings made whole
        "counterfair.yamlfiles.read_mapping",  # a user's YAML (a config, a pack)
        "counterfair.lexicons.attributes._read_mapping",  # an attribute pack's YAML (built in or the user's)
        "counterfair.commands.llm_audit.outcomes.json_object",  # the JSON object in an LLM application's answer
        "counterfair.commands.llm_audit.outcomes.json_answer",  # the same, with what was left of the answer
        "counterfair.rating.judges.parse_answer",  # an LLM judge's JSON answer
        "counterfair.llm.openai_http._post",  # an OpenAI-compatible server's JSON answer
    }
)
#: the command slices: counterfair.commands.<name>.<layer>
SLICES = "counterfair.commands."
#: what the core must not import: run directories (and any slice's shell, see in_run_layer); the in-memory sink of
#: counterfair.checkpoint is allowed
RUN_LAYER: tuple[str, ...] = ("counterfair.runs",)


def _slice_layer(module: str) -> str | None:
    """``core`` for counterfair.commands.audit.core, ``shell`` for ...audit.shell (None outside a slice's layers)."""
    if not module.startswith(SLICES):
        return None
    parts = module[len(SLICES) :].split(".")
    return parts[1] if len(parts) == 2 else None


def is_core(module: str) -> bool:
    """A slice's in-memory core: no function over MAX_FUNCTION_LINES, no import of the run layer."""
    return _slice_layer(module) == "core"


def in_run_layer(module: str) -> bool:
    return module.startswith(RUN_LAYER) or _slice_layer(module) == "shell"


# a read: summary["key"] not assigned to, or summary.get("key"); the core still builds the summary dicts it writes
#: the built-in editors' names (tests/test_structure.py checks this against the live registry)
EDITOR_NAMES: frozenset[str] = frozenset(
    {"ablation", "substitution", "swap", "llm", "polyjuice", "synonym", "mask_fill", "llm_flip", "llm_flip_loop",
     "external"}
)  # fmt: skip
#: where editor names may be compared: the editors and their registry
EDITOR_NAMES_ALLOWED: tuple[str, ...] = ("counterfair.editors",)
_SUMMARY_READ = re.compile(r"\bsummary(?:\[\s*['\"][^'\"]*['\"]\s*\](?!\s*=[^=])|\.get\(\s*['\"])")


@dataclass
class Report:
    cycles: list[list[str]] = field(default_factory=list)
    private_imports: list[str] = field(default_factory=list)
    summary_reads: list[str] = field(default_factory=list)
    long_functions: list[str] = field(default_factory=list)
    long_modules: list[str] = field(default_factory=list)
    core_run_imports: list[str] = field(default_factory=list)
    editor_comparisons: list[str] = field(default_factory=list)
    untyped_dict_returns: list[str] = field(default_factory=list)  # counted: a ceiling, not a failure here
    json_object_returns: list[str] = field(default_factory=list)
    user_file_readers: list[str] = field(default_factory=list)  # USER_FILE_READERS: listed, not counted

    def failed(self) -> bool:
        found = self.cycles or self.private_imports or self.summary_reads or self.long_functions or self.long_modules
        return bool(found or self.core_run_imports or self.editor_comparisons)


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that can run: all of them but the bodies of ``if TYPE_CHECKING:`` (imports for annotations only,
    which never execute; lazy imports inside functions do run, and count)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str, path: Path, known: dict[str, Path]) -> Iterator[tuple[str, list[str], int]]:
    """(imported module, names taken from it, line) for every import of a package module in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known:
                    yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path.name == "__init__.py", node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in known:  # "from . import report": the submodule
                    yield sub, [], node.lineno
                elif target in known:
                    yield target, [alias.name], node.lineno


def _names_run_layer(target: str, names: list[str]) -> bool:
    """``from counterfair import runs``: a run-layer module named as an imported name."""
    return any(in_run_layer(f"{target}.{name}") for name in names)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def _is_ancestor(a: str, b: str) -> bool:
    """A submodule importing its own package's ``__init__`` (which Python has run before the submodule anyway) is no
    edge of the layering. A package's ``__init__`` importing one of its submodules is: that import runs whenever the
    package is imported, so it is counted (dropping it hid a cycle of 7 modules, #48)."""
    return a.startswith(b + ".")


def _packages_run(module: str, target: str, known: dict[str, Path]) -> Iterator[str]:
    """The packages whose ``__init__`` Python runs first when ``module`` imports ``target`` (``a`` and ``a.b`` for
    ``a.b.c``): edges too, as Python runs them (#70), but for ``module``'s own packages, which ran before it did."""
    parts = target.split(".")
    for end in range(1, len(parts)):
        package = ".".join(parts[:end])
        if package in known and package != module and not _is_ancestor(module, package):
            yield package


def check(root: Path = PACKAGE) -> Report:
    known = _modules(root)
    report = Report()
    graph: dict[str, set[str]] = {m: set() for m in known}
    for module, path in known.items():
        for target, names, line in _imports(module, path, known):
            if target != module and not _is_ancestor(module, target):
                graph[module].add(target)
            graph[module].update(_packages_run(module, target, known))
            if is_core(module) and (in_run_layer(target) or _names_run_layer(target, names)):
                report.core_run_imports.append(f"{module}:{line} imports {target}")
            for name in names:
                if name.startswith("_") and not name.startswith("__") and target != module:
                    report.private_imports.append(f"{module}:{line} imports {target}.{name}")
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_MODULE_LINES:
            report.long_modules.append(f"{module}: {text.count(chr(10))} lines")
        if module not in READERS_ALLOWED:
            for number, line_text in enumerate(text.splitlines(), 1):
                if _SUMMARY_READ.search(line_text):
                    report.summary_reads.append(f"{module}:{number}: {line_text.strip()[:100]}")
        if is_core(module):
            report.long_functions += _long_functions(module, text)
        if not module.startswith(EDITOR_NAMES_ALLOWED):
            report.editor_comparisons += _editor_comparisons(module, text)
        for name, returns in _returns(module, text):
            loose = any(x in returns for x in ("dict[str,Any]", "Dict[str,Any]", "Mapping[str,Any]"))  # nested too
            if loose and f"{module}.{name.split()[-1]}" in USER_FILE_READERS:
                report.user_file_readers.append(name)
            elif loose:
                report.untyped_dict_returns.append(name)
            elif returns == "JSONObject":
                report.json_object_returns.append(name)
    report.cycles = _cycles(graph)
    return report


def _names_an_editor(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value in EDITOR_NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_names_an_editor(e) for e in node.elts)
    return False


def _editor_comparisons(module: str, text: str) -> list[str]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "isin":
            sides = [node.func.value, *node.args]
        else:
            continue
        named = [s for s in sides if _names_an_editor(s)]
        if named and any("method" in ast.unparse(s) for s in sides if s not in named):
            out.append((node.lineno, f"{module}:{node.lineno}: {ast.unparse(node)[:100]}"))
    return [text for _, text in sorted(out)]


def _returns(module: str, text: str) -> Iterator[tuple[str, str]]:
    """Each function's ``module:line name`` and its return annotation, spaces removed."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            yield f"{module}:{node.lineno} {node.name}", ast.unparse(node.returns).replace(" ", "")


def _long_functions(module: str, text: str) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body[1:] if ast.get_docstring(node) else node.body
            if not body:
                continue
            lines = (node.end_lineno or node.lineno) - body[0].lineno + 1
            if lines > MAX_FUNCTION_LINES:
                out.append(f"{module}:{node.lineno} {node.name}: {lines} lines")
    return out


def main() -> int:
    report = check()
    sections = {
        "import cycles": [" <-> ".join(c) for c in report.cycles],
        "private names imported across modules": report.private_imports,
        "summaries read by string key outside counterfair.summaries": report.summary_reads,
        f"core functions over {MAX_FUNCTION_LINES} lines": report.long_functions,
        f"modules over {MAX_MODULE_LINES} lines": report.long_modules,
        "core imports of run directories or shells": report.core_run_imports,
        "editor names compared outside counterfair.editors": report.editor_comparisons,
        "functions returning dict[str, Any], nested counted (a ceiling in tests/test_structure.py)": (
            report.untyped_dict_returns
        ),
    }
    for title, items in sections.items():
        print(f"{title}: {len(items)}")
        for item in items:
            print(f"    {item}")
    print(f"functions returning JSONObject (JSON data, checked by mypy): {len(report.json_object_returns)}")
    print(f"readers of files and answers counterfair did not write (not counted): {len(report.user_file_readers)}")
    return 1 if report.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
