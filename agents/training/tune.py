"""Sweeps with Ray Tune: search spaces over any training config key, ASHA early stopping.

    python scripts/tune.py configs/train/quickstart.yaml "ppo.lr=loguniform(1e-4, 1e-3)" tune.samples=8
    python scripts/tune.py quickstart "seed=grid([0, 1, 2])" "ppo.ent_coef=choice([0, 0.01])"  # by name
    python scripts/tune.py configs/train/quickstart.yaml "ppo.lr=grid([1e-4, 3e-4])" ray.address=auto

An override whose value is ``grid([...])``, ``choice([...])``, ``uniform(a, b)``,
``loguniform(a, b)`` or ``randint(a, b)`` (b excluded) is a search space over that key;
any other override is a plain one, applied to every trial. Every candidate is checked
as a config first (a grid's or choice's values, a range's ends), so a typo fails before
any trial starts. ``tune.*`` keys set the sweep (``TuneSettings``); ``ray.address`` joins a
cluster.

Each trial is a normal training run (``train.train``) in ``<tune.dir>/<tune.name>/runs/``,
one CPU each, with its checkpoints and TensorBoard logs; its result is each evaluation's
score against ``strong`` (``eval.opponents`` is put first if listed, added otherwise: the
score is the points difference per round, or the share of matches won for ``episode:
match``), reported to Tune, whose ASHA scheduler stops the weaker trials early. At the
end: a results table (printed, and ``results.csv``) and the best trial's config as
``best.yaml``, a training config to run as it is.
"""

from __future__ import annotations

import argparse
import copy
import math
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field
from rich.console import Console
from rich.table import Table

from agents.arena.distributed import connect, require_ray
from agents.cli import error_exit
from agents.configuration import (
    YAML_ERRORS,
    ConfigError,
    ConfigModel,
    RayConfig,
    apply_override,
    load_yaml,
    parse_file,
)
from agents.training.config import TrainConfig, parse_train_config

SPACES = ("grid", "choice", "uniform", "loguniform", "randint")
"""The search-space functions an override's value may call."""
OPPONENT = "strong"
"""The bot every trial is scored against."""
METRIC = "score"


class TuneSettings(ConfigModel):
    """The sweep itself (``tune.*`` overrides)."""

    samples: int = Field(1, ge=1, le=10_000)
    """Trials drawn from the search spaces (Tune's ``num_samples``; a grid repeats for each)."""
    asha: bool = True
    """Stop weak trials early (ASHA over the evaluations); false: every trial runs to the end."""
    grace: int = Field(1, ge=1, le=10_000)
    """Evaluations every trial gets before ASHA may stop it."""
    dir: str = "runs/tune"
    """Folder of the sweeps."""
    name: str = "sweep"
    """This sweep's folder in ``dir``: trials, ``results.csv``, ``best.yaml``."""


def split_overrides(overrides: list[str]) -> tuple[list[str], dict[str, tuple[str, list[Any]]], dict, dict]:
    """(plain overrides, {key: (space, arguments)}, tune.* settings, ray.* settings)."""
    plain, spaces, tune, ray = [], {}, {}, {}
    for item in overrides:
        key, sep, text = item.partition("=")
        key = key.strip()
        if sep and key.startswith(("tune.", "ray.")):
            apply_override(tune if key.startswith("tune.") else ray, item.partition(".")[2])
            continue
        match = re.fullmatch(r"\s*(\w+)\((.*)\)\s*", text) if sep else None
        if match is None or match[1] not in SPACES:
            plain.append(item)
            continue
        try:
            arguments = load_yaml(f"[{match[2]}]")
        except YAML_ERRORS as error:
            problem = " ".join(str(getattr(error, "problem", None) or error).split())
            raise ConfigError(
                f"override {item!r}: the arguments of {match[1]}() are not valid YAML ({problem})"
            ) from None
        listed = match[1] in ("grid", "choice")
        if listed and (len(arguments) != 1 or not isinstance(arguments[0], list) or not arguments[0]):
            raise ConfigError(f"override {item!r}: {match[1]}() takes one non-empty list")
        if not listed and (len(arguments) != 2 or not all(_number(a) for a in arguments)):
            raise ConfigError(f"override {item!r}: {match[1]}() takes two numbers")
        spaces[key] = (match[1], arguments[0] if listed else arguments)
    return plain, spaces, tune, ray


def check_spaces(raw: dict[str, Any], spaces: dict[str, tuple[str, list[Any]]]) -> None:
    """Every candidate value of every space makes a valid config (else the ConfigError names it)."""
    for key, (kind, values) in spaces.items():
        if kind == "loguniform" and min(values) <= 0:
            raise ConfigError(f"{key}: loguniform() needs positive bounds, got {values}")
        if kind == "randint":
            values = [values[0], values[1] - 1]
        for value in values:
            trial = copy.deepcopy(raw)
            _set(trial, key, value)
            parse_train_config(trial)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _set(raw: dict[str, Any], key: str, value: Any) -> None:
    *parents, leaf = key.split(".")
    for part in parents:
        raw = raw.setdefault(part, {})
    raw[leaf] = value


def scored_against_strong(raw: dict[str, Any]) -> None:
    """Make ``strong`` an eval opponent, listed first: a trial's score is its worst result, which is
    against the strongest of them."""
    evaluation = raw.setdefault("eval", {})
    opponents = list(evaluation.get("opponents", parse_train_config(raw).eval.opponents))
    evaluation["opponents"] = [OPPONENT, *(name for name in opponents if name != OPPONENT)]


def run_trial(params: dict[str, Any], raw: dict[str, Any], runs: str) -> None:
    """One trial (in a Ray worker): the training run of ``raw`` with ``params``, reporting each evaluation."""
    from ray import tune

    from agents.training.train import train

    trial = copy.deepcopy(raw)
    for key, value in params.items():
        _set(trial, key, value)
    trial["output_dir"] = runs
    trial["name"] = tune.get_context().get_trial_id()
    trial["progress"] = False
    config = parse_train_config(trial)
    train(
        config,
        console=Console(quiet=True),
        report=lambda update, score: tune.report({METRIC: score, "update": update}),
    )


def sweep(path: str, overrides: list[str], console: Console | None = None) -> tuple[Any, dict[str, Any]]:
    """Run the sweep; returns (Tune's ResultGrid, the best trial's config as a nested dict)."""
    console = console or Console()
    plain, spaces, tune_raw, ray_raw = split_overrides(overrides)
    settings = TuneSettings.parse(tune_raw)
    ray_settings = RayConfig.parse(ray_raw)
    if ray_settings.workers:
        raise ConfigError("ray.workers: tune runs each trial on one CPU; set ray.address to use a cluster")

    def checked(raw: dict[str, Any]) -> tuple[dict[str, Any], TrainConfig]:
        raw.pop("ray", None)
        scored_against_strong(raw)
        return raw, parse_train_config(raw)

    raw, config = parse_file(path, plain, "train", checked)  # another kind's file: the command to run
    if config.eval.every <= 0:
        raise ConfigError("eval.every must be positive: trials are compared by their evaluations")
    check_spaces(raw, spaces)
    ray = require_ray("tune")
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    space = {key: _space(tune, kind, values) for key, (kind, values) in spaces.items()}
    folder = (Path(settings.dir) / settings.name).resolve()
    evaluations = -(-config.total_updates // config.eval.every)
    scheduler = (
        ASHAScheduler(max_t=evaluations, grace_period=min(settings.grace, evaluations))
        if settings.asha
        else None
    )
    started = connect(ray_settings)
    try:
        trainable = tune.with_parameters(run_trial, raw=raw, runs=str(folder / "runs"))
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": 1}),
            param_space=space,
            tune_config=tune.TuneConfig(
                metric=METRIC, mode="max", num_samples=settings.samples, scheduler=scheduler
            ),
            run_config=tune.RunConfig(name=settings.name, storage_path=str(folder.parent), verbose=0),
        )
        results = tuner.fit()
    finally:
        if started:
            ray.shutdown()
    best = copy.deepcopy(raw)
    best_result = results.get_best_result()
    for key in spaces:
        _set(best, key, best_result.config[key])
    write_results(results, spaces, best, folder, console)
    return results, best


def _space(tune: Any, kind: str, values: list[Any]) -> Any:
    if kind == "grid":
        return tune.grid_search(values)
    if kind == "choice":
        return tune.choice(values)
    return {"uniform": tune.uniform, "loguniform": tune.loguniform, "randint": tune.randint}[kind](*values)


def write_results(
    results: Any, spaces: dict[str, Any], best: dict[str, Any], folder: Path, console: Console
) -> None:
    """The results table (terminal and ``results.csv``, best first) and ``best.yaml``."""
    frame = results.get_dataframe(filter_metric=METRIC, filter_mode="max")
    columns = ["trial_id", *(f"config/{key}" for key in spaces), METRIC, "update"]
    frame = frame[[c for c in columns if c in frame.columns]].sort_values(METRIC, ascending=False)
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "results.csv", index=False)
    table = Table(title=f"{len(frame)} trials, best score vs {OPPONENT} first")
    for column in frame.columns:
        table.add_column(column.removeprefix("config/"))
    for row in frame.itertuples(index=False):
        table.add_row(*(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row))
    console.print(table)
    best["name"] = "best"
    best.pop("output_dir", None)
    (folder / "best.yaml").write_text(yaml.safe_dump(best, sort_keys=False))
    console.print(f"wrote {folder / 'results.csv'} and {folder / 'best.yaml'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="YAML training config (configs/train/quickstart.yaml)")
    parser.add_argument(
        "overrides", nargs="*", help='key=value, key="loguniform(1e-4, 1e-3)", tune.samples=N'
    )
    args = parser.parse_args(argv)
    console = Console()
    try:
        sweep(args.config, args.overrides, console)
    except ConfigError as error:
        return error_exit(console, error)
    return 0
