# domino-rl: every target creates or refreshes .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test lint format bench soak clean

# PyTorch: the CPU build (a local 2.13.0 wheel where this machine keeps one) goes in
# first, so that sb3-contrib does not pull a multi-GB CUDA build; without it the
# sb3 extra is skipped and its test is skipped too.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python -m pip install --quiet torch==2.13.0 && $(BIN)/python -m pip install --quiet -e '.[dev,sb3]' \
		|| echo "note: no CPU torch wheel here; skipping the sb3 extra"
	touch $(STAMP)

## The main job (for now): play and print a rendered game, then a short speed benchmark.
demo: $(STAMP)
	$(BIN)/python -m domino_env demo --preset block --players 2 --seed 7

## Lint, format check and the test suite (what CI runs).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -q -n 2

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

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build *.egg-info
