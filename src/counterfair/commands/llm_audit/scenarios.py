"""Built-in scenarios (``resources/llm_scenarios/*.yaml``, written for counterfair): about 20 cases each of a
decision an LLM application makes about a person, with ``{group}`` where the identity goes, the instruction that
asks for a JSON decision and rating, and the decision's schema."""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError

if TYPE_CHECKING:
    from .core import LLMAuditOptions


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    instruction: str
    decision: str
    decision_values: tuple[str, ...]
    rating: str
    cases: tuple[str, ...]

    def prompts(self, limit: int | None = None) -> list[str]:
        """Each case followed by the instruction (the first ``limit`` cases)."""
        return [f"{case}\n{self.instruction}" for case in self.cases[:limit]]

    def apply(self, options: LLMAuditOptions) -> LLMAuditOptions:
        """``options`` with the scenario's decision, its values, the rating, the scenario's name and its identity terms
        (:data:`~counterfair.commands.llm_audit.prompts.SCENARIO_TERMS`), each where the user left it unset."""
        from .prompts import SCENARIO_TERMS

        return replace(
            options,
            identities=options.identities if options.identities is not None else list(SCENARIO_TERMS),
            decision=options.decision or self.decision,
            decision_values=options.decision_values or list(self.decision_values),
            rating=options.rating or self.rating,
            scenario=options.scenario or self.name,
        )


def _folder() -> Path:
    return Path(str(resources.files("counterfair") / "resources" / "llm_scenarios"))


def known_scenarios() -> list[str]:
    return sorted(p.stem for p in _folder().glob("*.yaml"))


def load_scenario(name: str) -> Scenario:
    from ...yamlfiles import read_mapping

    path = _folder() / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"no built-in scenario {name!r}; choose one of {', '.join(known_scenarios())}")
    data = read_mapping(path, "scenario")
    return Scenario(
        name=str(data["name"]),
        description=str(data["description"]),
        instruction=str(data["instruction"]),
        decision=str(data["decision"]),
        decision_values=tuple(str(v) for v in data["decision_values"]),
        rating=str(data["rating"]),
        cases=tuple(str(c) for c in data["cases"]),
    )


def with_scenario(
    prompts: object, options: LLMAuditOptions, cases: int | None = None
) -> tuple[object, LLMAuditOptions]:
    """The prompts and options of a run: ``options.scenario``'s first ``cases`` prompts and its outcomes when a
    scenario is named (then no ``prompts`` of one's own), else ``prompts`` and ``options`` as given."""
    if options.scenario is None:
        if prompts is None:
            raise ConfigError("give prompts, or a built-in scenario (scenario=..., --scenario NAME)")
        return prompts, options
    if prompts is not None:
        raise ConfigError(f"give prompts or the scenario {options.scenario!r}, not both")
    found = load_scenario(options.scenario)
    return found.prompts(cases), found.apply(options)
