# domino-rl: every target creates or refreshes .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: train demo test lint format bench soak docs docs-serve clean

# PyTorch: the CPU build (a local 2.13.0 wheel where this machine keeps one) goes in
# first, so that the train and sb3 extras do not pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0 || echo "note: no local CPU torch wheel; pip picks a build"
	$(BIN)/python -m pip install --quiet -e '.[dev,train,sb3,docs,web]'
	touch $(STAMP)

# A second venv with the ray extra: RLlib pins gymnasium 1.2.2, so the suite runs on both
# gymnasium releases (the Ray tests skip in .venv).
RAY_VENV  := .venv-ray
RAY_STAMP := $(RAY_VENV)/.installed-stamp
$(RAY_STAMP): pyproject.toml
	test -x $(RAY_VENV)/bin/python || $(PYTHON) -m venv $(RAY_VENV)
	$(RAY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(RAY_VENV)/bin/python -m pip install --quiet torch==2.13.0 || echo "note: no local CPU torch wheel; pip picks a build"
	$(RAY_VENV)/bin/python -m pip install --quiet -e '.[dev,train,sb3,docs,ray]'
	touch $(RAY_STAMP)

## The main job: train a small agent with the default config (ARGS="key=value ...");
## a second `make train` continues the run from its last checkpoint.
train: $(STAMP)
	$(BIN)/python scripts/train.py configs/train/quickstart.yaml \
		$$(ls runs/quickstart/checkpoints/*.pt >/dev/null 2>&1 && echo --resume) $(ARGS)

## Play and print a rendered game, then a short speed benchmark.
demo: $(STAMP)
	$(BIN)/python -m domino_env demo --preset block --players 2 --seed 7

## Lint, format check and the test suite (what CI runs): in .venv (the newest gymnasium), then in
## .venv-ray (Ray, gymnasium 1.2.2).
test: $(STAMP) $(RAY_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -n 2
	$(RAY_VENV)/bin/python -m pytest -q -n 2

lint: $(STAMP)
	$(BIN)/ruff check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

## Environment speed (add ARGS="--all" for every preset).
bench: $(STAMP)
	$(BIN)/python -m pip install --quiet open_spiel || true
	$(BIN)/python scripts/bench_env.py $(ARGS)

## Differential soak: core vs reference for as long as asked (ARGS="--minutes 10").
soak: $(STAMP)
	$(BIN)/python scripts/soak.py $(ARGS)

## The documentation site (mkdocs.yml, docs/): build it into site/ (strict: a broken link fails),
## or serve it at http://127.0.0.1:8000 with live reload.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs serve

clean:
	rm -rf $(VENV) $(RAY_VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
