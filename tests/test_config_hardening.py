"""Config loading refuses bad input with one-line ConfigErrors naming key, value and range (issue 12)."""

from __future__ import annotations

import shutil
import typing
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.arena.config import ArenaConfig, load_config, parse_config
from agents.bots.registry import BOT_NAMES
from agents.configuration import CONFIG_KINDS, ConfigError, ConfigModel, load_yaml, shipped_configs
from agents.training.config import (
    PAST,
    RESUMABLE_CHANGES,
    SELF,
    TrainConfig,
    load_train_config,
    parse_train_config,
)
from agents.training.rllib import load_rllib_config
from agents.training.tune import split_overrides

ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "configs" / "train" / "quickstart.yaml"
ARENA = ROOT / "configs" / "arena" / "bots.yaml"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("ppo.lr=-1", r"ppo\.lr must be greater than 0 and at most 1, got -1$"),
        (
            "ppo.lr=.nan",
            r"ppo\.lr must be a finite number, got nan \(allowed: greater than 0 and at most 1\)",
        ),
        ("ppo.lr=.inf", r"ppo\.lr must be a finite number, got inf"),
        ("ppo.lr=1e400", r"ppo\.lr must be a finite number, got inf"),
        ("ppo.reward_scale=.nan", r"ppo\.reward_scale must be a finite number, got nan"),
        ("ppo.reward_scale=0", r"ppo\.reward_scale must be greater than 0"),
        ("ppo.gamma=-5", r"ppo\.gamma must be at least 0 and at most 1, got -5"),
        ("ppo.gae_lambda=7", r"ppo\.gae_lambda must be at least 0 and at most 1, got 7"),
        ("ppo.clip_coef=-1", r"ppo\.clip_coef must be greater than 0 and at most 10, got -1"),
        ("ppo.max_grad_norm=-1", r"ppo\.max_grad_norm must be greater than 0"),
        ("ppo.ent_coef=-0.1", r"ppo\.ent_coef must be at least 0 and at most 100, got -0\.1"),
        ("ppo.vf_coef=-.inf", r"ppo\.vf_coef must be a finite number, got -inf"),
        ("ppo.epochs=0", r"ppo\.epochs must be at least 1 and at most 1000, got 0"),
        ("ppo.minibatches=10000000", r"ppo\.minibatches must be at least 1 and at most 65_536"),
        ("opponents.self=.nan", r"opponents\.self must be a finite number, got nan"),
        ("opponents.self=-1", r"opponents\.self must be at least 0"),
        ("opponents={self: 0, strong: 0}", r"opponents needs non-negative weights with a positive sum"),
        ("threads=100000", r"threads must be at least 1 and at most 256, got 100000"),
        ("num_games=100000000", r"num_games must be at least 1 and at most 65_536, got 100000000"),
        ("rollout_steps=100000000", r"rollout_steps must be at least 1 and at most 4096"),
        ("total_updates=10**9", r"total_updates must be an integer, got '10\*\*9' \(allowed: at least 0"),
        ("total_updates=1000000000", r"total_updates must be at least 0 and at most 10_000_000"),
        ("total_updates=0", r"total_updates must be >= 1 \(0 only with distill.rounds"),
        ("model.hidden=[100000]", r"model\.hidden\[0\] must be at least 1 and at most 8192, got 100000"),
        ("model.hidden=[64,-5]", r"model\.hidden\[1\] must be at least 1"),
        ("model.hidden=[]", r"model\.hidden must have at least 1 entry, got \[\]"),
        ("model.hidden=[8192,8192,8192]", r"model\.hidden .* weights between its layers; at most 67_108_864"),
        ("seed=-1", r"^seed must be at least 0 and at most 4_294_967_295, got -1$"),
        ("seed=true", r"seed must be an integer, got True"),
        ("eval.seed=-5", r"eval\.seed must be at least 0 and at most 9_223_372_036_854_775_807, got -5"),
        ("eval.deals=100000000", r"eval\.deals must be at least 1 and at most 1_000_000"),
        ("eval.every=-1", r"eval\.every must be at least 0"),
        ("eval.opponents=[]", r"eval\.opponents needs at least one bot when eval\.every > 0"),
        ("eval.opponents=[random,random]", r"eval\.opponents lists a bot twice"),
        ("checkpoint.keep=0", r"checkpoint\.keep must be at least 1"),
        ("snapshots.keep=100000", r"snapshots\.keep must be at least 1 and at most 1000"),
        ("players=7", r"players must be at least 2 and at most 4, got 7"),
        ("device=cuda:x", r"device must be auto, cpu, cuda or cuda:N"),
    ],
)
def test_every_training_number_is_range_checked(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        load_train_config(QUICKSTART, [override])
    assert "\n" not in str(caught.value)


def test_rollout_size_is_capped() -> None:
    with pytest.raises(
        ConfigError, match=r"num_games \* rollout_steps .* at most 2_097_152, got 1024 \* 4096"
    ):
        load_train_config(QUICKSTART, ["num_games=1024", "rollout_steps=4096"])
    assert load_train_config(QUICKSTART, ["num_games=512", "rollout_steps=4096"]).rollout_steps == 4096


def test_eval_opponents_may_be_empty_when_evaluations_are_off() -> None:
    config = load_train_config(QUICKSTART, ["eval.every=0", "eval.opponents=[]"])
    assert config.eval.opponents == []


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("seed=-1", r"^seed must be at least 0 and at most 9_223_372_036_854_775_807, got -1$"),
        ("deals=100000000", r"deals must be at least 1 and at most 1_000_000, got 100000000"),
        ("matches=-1", r"matches must be at least 0 and at most 100_000"),
        ("batch=100000000", r"batch must be at least 1 and at most 1_048_576"),
        ("players=0", r"players must be at least 2 and at most 4"),
        (
            "bots.pimc.samples=1000000000",
            r"bots\.pimc\.samples must be an integer at least 1 and at most 1000",
        ),
        ("bots.pimc.rollouts=0", r"bots\.pimc\.rollouts must be an integer at least 1"),
        (
            "bots.pimc.candidates=100000",
            r"bots\.pimc\.candidates must be an integer at least 1 and at most 1000",
        ),
        ("bots.pimc.exact=3", r"bots\.pimc: exact must be true or false, got 3"),
        ("bots.pimc.inference=5", r"bots\.pimc: inference must be a checkpoint .*, got 5"),
        ("bots.pimc.epsilon=.nan", r"bots\.pimc\.epsilon must be a finite number, got nan"),
        ("bots.strong.weights=[1,.inf]", r"bots\.strong\.weights\[1\] must be a finite number, got inf"),
    ],
)
def test_every_arena_number_is_range_checked(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(ARENA, ["policies=[strong,pimc]", override])


def test_an_arena_config_built_in_code_is_checked_too() -> None:
    # scripts/train.py builds one from eval.opponents: one policy used to divide by zero in the arena.
    with pytest.raises(ConfigError, match="policies needs at least two entries"):
        ArenaConfig(policies=["strong"], progress=False)
    with pytest.raises(ConfigError, match=r"^deals must be at least 1"):
        ArenaConfig(deals=0)
    with pytest.raises(ConfigError, match=r"unknown key 'dels' in the arena config; did you mean 'deals'"):
        ArenaConfig(dels=5)
    assert ArenaConfig(policies=["strong", "random"], deals=5).deals == 5


@pytest.mark.parametrize("loader", [load_train_config, load_config])
@pytest.mark.parametrize("override", ["ppo.lr=[1", "seed={a", "deals=!!timestamp 2001-99-99", "x='"])
def test_a_broken_yaml_override_is_a_config_error_naming_it(loader, override: str) -> None:
    with pytest.raises(ConfigError, match=r"override .* not valid YAML") as caught:
        loader(None, [override])
    assert repr(override) in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("loader", [load_train_config, load_config])
@pytest.mark.parametrize("override", ["bots.pimc.samples=&a [*a]", "distill.teacher=&a {x: *a}"])
def test_a_recursive_yaml_alias_is_refused_naming_it(loader, override: str, tmp_path: Path) -> None:
    """A value that contains itself made every check walking the bot options recurse to a
    RecursionError traceback (found by test_fuzz_overrides)."""
    with pytest.raises(
        ConfigError, match=r"not valid YAML \(a value contains itself through a recursive alias\)"
    ):
        loader(None, [override])
    looped = tmp_path / "looped.yaml"
    looped.write_text("bots:\n  pimc: &a {bot: pimc, samples: [*a]}\n")
    with pytest.raises(ConfigError, match=r"cannot read config .*looped\.yaml: a value contains itself"):
        loader(looped)
    assert load_yaml("{a: &x [1, [2]], b: *x}") == {"a": [1, [2]], "b": [1, [2]]}  # shared, not looped


@pytest.mark.parametrize(
    "override", ["ppo.lr=grid([!!timestamp 2001-99-99])", "bots.pimc.samples=grid([&a [*a]])"]
)
def test_a_bad_search_space_is_a_config_error_naming_it(override: str) -> None:
    with pytest.raises(ConfigError, match=r"the arguments of grid\(\) are not valid YAML") as caught:
        split_overrides([override])
    assert repr(override) in str(caught.value)


@pytest.mark.parametrize(
    "name", ["..", "../x", ".", "", " ", "a/b", "/tmp/x", "a\\b", "..\\x", "x\x00", "x" * 300]
)
def test_a_run_name_must_stay_inside_output_dir(name: str) -> None:
    with pytest.raises(ConfigError, match="name must be a plain folder name"):
        parse_train_config({"name": name})
    with pytest.raises(ConfigError, match=r"output\.name must be a plain folder name"):
        parse_config({"output": {"name": name}} if name else {"output": {"name": "a/b"}})


def test_plain_names_are_fine(tmp_path: Path) -> None:
    for name in ("run-1", "a.b", "..x", "x..", "über"):
        config = parse_train_config({"name": name, "output_dir": str(tmp_path)})
        assert config.run_dir.parent == tmp_path


def test_a_run_folder_moved_to_another_output_dir_resumes(tmp_path: Path) -> None:
    assert {"output_dir", "progress"} <= set(RESUMABLE_CHANGES)
    from agents.training import train

    tiny = {
        "preset": "block", "players": 2, "num_games": 8, "rollout_steps": 4, "model": {"hidden": [16]},
        "eval": {"every": 0}, "checkpoint": {"every": 1, "keep": 2}, "progress": False, "name": "moved",
    }  # fmt: skip
    first = parse_train_config({**tiny, "total_updates": 1, "output_dir": str(tmp_path / "a")})
    train.train(first)
    shutil.move(tmp_path / "a" / "moved", tmp_path / "b" / "moved")
    moved = parse_train_config(
        {**tiny, "total_updates": 2, "output_dir": str(tmp_path / "b"), "progress": True}
    )
    assert train.train(moved, resume=True)["update"] == 2


def test_evaluate_script_names_the_seed_and_reports_memory_errors(monkeypatch, capsys) -> None:
    from agents.arena import evaluate

    assert evaluate.main(["seed=-1", "progress=false"]) == 2
    out = capsys.readouterr().out
    assert "seed must be at least 0" in out and "policies" not in out

    def out_of_memory(*args: Any, **kwargs: Any) -> None:
        raise MemoryError

    monkeypatch.setattr(evaluate, "run_arena", out_of_memory)
    assert evaluate.main(["deals=5", "progress=false"]) == 2
    out = capsys.readouterr().out
    assert "out of memory" in out and "Traceback" not in out and out.count("\n") == 1


def test_fields_are_documented_and_to_dict_is_plain() -> None:
    def walk(cls: type[ConfigModel]) -> None:
        for name, field in cls.model_fields.items():
            assert field.description, f"{cls.__name__}.{name} has no description"
            if isinstance(field.annotation, type) and issubclass(field.annotation, ConfigModel):
                walk(field.annotation)

    walk(TrainConfig)
    walk(ArenaConfig)
    assert (
        "Discount per decision"
        in TrainConfig.model_fields["ppo"].annotation.model_fields["gamma"].description
    )

    def plain(value: Any) -> bool:
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(map(plain, value))
        return value is None or type(value) in (bool, int, float, str)

    stored = load_train_config(QUICKSTART).to_dict()
    assert plain(stored) and parse_train_config(stored).to_dict() == stored


SHIPPED = [(kind, name) for kind in CONFIG_KINDS for name in shipped_configs(kind)]


@pytest.mark.parametrize(("kind", "name"), SHIPPED, ids=[f"{kind}/{name}" for kind, name in SHIPPED])
def test_every_shipped_config_loads_with_its_kinds_model(kind: str, name: str, tmp_path, monkeypatch) -> None:
    """Each folder's configs parse with their own command's checks, by name from any folder."""
    monkeypatch.chdir(tmp_path)
    load = {"train": load_train_config, "arena": load_config, "rllib": load_rllib_config}[kind]
    load(name, [])


@pytest.mark.parametrize("path", sorted((ROOT / "checkpoints").glob("*.pt")), ids=lambda p: p.name)
def test_the_config_stored_in_shipped_checkpoints_parses(path: Path) -> None:
    stored = torch.load(path, weights_only=True)["config"]

    def holds(full: object, part: object) -> bool:
        """``full`` has every value of ``part`` (keys added since the checkpoint take their defaults)."""
        if isinstance(part, dict):
            return isinstance(full, dict) and all(k in full and holds(full[k], v) for k, v in part.items())
        return full == part

    assert holds(parse_train_config(stored).to_dict(), stored)


# Fuzzing: whatever the input, a config or a ConfigError (a ValueError) that names the problem.

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([-1, 0, 1, 2, 4, 2**31, 2**63, 2**64]),
    st.just(5000).map(lambda digits: 10**digits),  # repr() refuses it (int_max_str_digits)
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["1e-4", "nan", "-inf", "..", "../x", "a/b", *BOT_NAMES, SELF, PAST, "round", "cuda:0"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8) | st.integers(), inner, max_size=4)
    ),
    max_leaves=12,
)


_NAMES = st.sampled_from(["run", "block", "draw", "partnership", "all_fives", "auto", "cpu", "cuda:1", "x"])
_RULES = st.dictionaries(
    st.sampled_from(["target", "hand_size", "spinner", "drawing", "fives", "players", "nope"]),
    st.integers(-2, 300) | st.booleans() | _values,
    max_size=2,
)
_BOT_OPTIONS = st.dictionaries(
    st.sampled_from(BOT_NAMES),
    st.dictionaries(
        st.sampled_from(
            ["samples", "rollouts", "epsilon", "prior", "max_games", "weights", "candidates", "exact", "nope"]
        ),
        st.integers(-1, 40) | st.floats(-1, 2) | _values,
        max_size=2,
    ),
    max_size=2,
)


def _typed(name: str, field: Any) -> st.SearchStrategy[Any]:
    """Mostly values of the field's type near its range, so that checks past the first one run too."""
    kind, bounds = field.annotation, {type(m).__name__: m for m in field.metadata}
    low = getattr(bounds.get("Ge"), "ge", getattr(bounds.get("Gt"), "gt", 0))
    high = min(getattr(bounds.get("Le"), "le", 10**6), low + 10**6)
    special = {
        "rules": _RULES,
        "bots": _BOT_OPTIONS,
        "hidden": st.lists(st.integers(-1, 300), max_size=3),
        "opponents": st.lists(st.sampled_from(BOT_NAMES), max_size=3)
        if kind == list[str]
        else st.dictionaries(
            st.sampled_from([SELF, PAST, *BOT_NAMES, "nope"]), st.floats(-0.5, 2), max_size=3
        ),
        "players": st.none() | st.integers(1, 5),
        "policies": _policies(),
    }
    if name in special:
        return special[name]
    if isinstance(kind, type) and issubclass(kind, ConfigModel):
        return _raw(kind)
    if kind is bool:
        return st.booleans()
    if kind is int:
        return st.integers(low - 1, high + 1) | st.sampled_from([low, high])
    if kind is float:
        return st.floats(low - 1, high + 1) | st.sampled_from([low, high])
    if typing.get_origin(kind) is typing.Literal:
        return st.sampled_from(typing.get_args(kind))
    return _NAMES


def _raw(cls: type[ConfigModel]) -> st.SearchStrategy[dict]:
    """Dicts of the model's keys (and a typo) to values: mostly of the right type, sometimes anything."""
    options = {
        name: st.one_of(*[_typed(name, field)] * 7, _values) for name, field in cls.model_fields.items()
    }
    typos = st.dictionaries(st.sampled_from(["typo", "lrr", "dels"]), _values, max_size=1)
    known = st.fixed_dictionaries({}, optional=options)
    return st.tuples(known, typos, st.integers(0, 19)).map(lambda t: {**t[0], **(t[1] if t[2] == 0 else {})})


def _policies() -> st.SearchStrategy[list[str]]:
    fake = st.text(max_size=10).filter(lambda s: not s or not Path(s).exists())
    return st.lists(st.sampled_from(BOT_NAMES) | fake, max_size=4)


ALIAS_BOMB = "[" + ", ".join(
    f"&a{i} [" + ", ".join([f"*a{i - 1}" if i else "0"] * 10) + "]" for i in range(9)
)
ALIAS_BOMB += "]"
"""Nine levels of aliases, each repeating the last ten times: 10^9 values from a few hundred bytes."""

_keys = ["seed", "ppo.lr", "ppo.gamma", "model.hidden", "opponents.self", "eval.opponents", "name", "deals",
         "batch", "policies", "bots.pimc.samples", "output.name", "rules.target", "players"]  # fmt: skip
_yaml = st.sampled_from(
    ["[1", "{a", ".nan", "-.inf", "1e400", "1e-4", "-1", "0", "true", "~", "!!binary x", "2001-99-99",
     "!!timestamp 2001-99-99", "&a [*a]", "*b", "'", "[random]", "[]", "{}", "..", "1" * 5000,
     "!!python/name:os", "{a: 1, a: 2}", "[&x [1, 2], *x, *x]", ALIAS_BOMB, "[[[[[[1]]]]]]",
     "{<<: {a: 1}, a: 2}"]
)  # fmt: skip
_overrides = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(_keys) | st.text(max_size=8), _yaml | st.text(max_size=12)).map("=".join),
        st.text(max_size=16),
    ),
    max_size=4,
)
FUZZ = settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _must_name_a_problem(call, *args: Any) -> None:
    try:
        call(*args)
    except ConfigError as error:
        text = str(error)
        assert text and "\n" not in text, text


@FUZZ
@given(_raw(TrainConfig))
def test_fuzz_training_config_dicts(raw: dict) -> None:
    _must_name_a_problem(parse_train_config, raw)


@FUZZ
@given(_raw(ArenaConfig))
def test_fuzz_arena_config_dicts(raw: dict) -> None:
    policies = raw.get("policies")
    if isinstance(policies, list):  # no existing path: it might be a checkpoint, and loading it is slow
        raw["policies"] = [p for p in policies if not (isinstance(p, str) and p and Path(p).exists())]
    _must_name_a_problem(parse_config, raw)


@FUZZ
@given(_overrides)
def test_fuzz_overrides(overrides: list[str]) -> None:
    _must_name_a_problem(load_train_config, None, overrides)
    arena = [o for o in overrides if not o.startswith("policies")]
    _must_name_a_problem(load_config, None, arena)
