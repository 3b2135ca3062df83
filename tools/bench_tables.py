"""Write the tables of ``benchmarks/README.md`` from the benchmarks' JSON results, so that no figure is typed by hand.

A table the README takes from a result sits between two markers::

    <!-- table: results/swap_floor.json -->
    | editor | ... |
    <!-- /table -->

and is replaced by that JSON's ``table`` (Markdown the benchmark script wrote); ``results/calibration.json#texts_table``
takes another key of it. ``--check`` changes nothing and exits 1
when a table differs from its JSON (the test suite runs it).

Usage: python tools/bench_tables.py [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
README = BENCHMARKS / "README.md"
BLOCK = re.compile(
    r"(<!-- table: (?P<source>[\w./-]+\.json)(?:#(?P<key>\w+))? -->\n)(?P<body>.*?)(<!-- /table -->)", re.DOTALL
)


def rendered(readme: str, root: Path = BENCHMARKS) -> str:
    """``readme`` with every marked table replaced by its JSON's ``table``."""

    def table(match: re.Match[str]) -> str:
        source = root / match["source"]
        if not source.exists():
            raise SystemExit(f"{README.name}: {match['source']} does not exist")
        key = match["key"] or "table"
        made = json.loads(source.read_text(encoding="utf-8")).get(key)
        if not isinstance(made, str):
            raise SystemExit(f"{match['source']} has no Markdown '{key}' to show")
        return f"{match[1]}{made.rstrip()}\n{match[5]}"

    return BLOCK.sub(table, readme)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="exit 1 if a table differs from its JSON")
    args = parser.parse_args()
    readme = README.read_text(encoding="utf-8")
    fresh = rendered(readme)
    blocks = len(BLOCK.findall(readme))
    if args.check:
        if fresh != readme:
            print(f"{README}: tables differ from their JSON; run python tools/bench_tables.py", file=sys.stderr)
            return 1
        print(f"{blocks} tables match their JSON")
        return 0
    README.write_text(fresh, encoding="utf-8")
    print(f"wrote {blocks} tables into {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
