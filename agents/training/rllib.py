"""RLlib's PPO on dominoes: every seat played by one shared, action-masked policy.

    python scripts/train_rllib.py block iterations=5   # the shipped RLlib config, by name
    python scripts/train_rllib.py configs/rllib/block.yaml ray.workers=4 ray.address=auto

The config is a YAML file or the name of a shipped RLlib config (``configs/rllib/``; the
training and arena configs' names are refused, naming their commands). It is a training
config (``agents.training.config``), read by the same checks; the keys RLlib has a meaning
for (``RLLIB_KEYS``) become its ``PPOConfig``: ``num_games * rollout_steps`` env steps per
iteration, ``ppo.epochs`` over
``ppo.minibatches`` minibatches, the learning rate, discount, GAE lambda, clip,
entropy and value coefficients, gradient clip, the trunk widths, ``seed``, and
``ray.workers`` env runners (0: sampling in the driver). Any other key set in the
file or on the command line is refused rather than ignored. ``iterations=N``
stands for ``total_updates=N`` (RLlib's training iterations).

The policy is RLlib's example ``ActionMaskingTorchRLModule`` over
``domino_env.envs.rllib.DominoMultiAgentEnv``. A seat's return is the metric
``env_runners/agent_episode_returns_mean/player_<seat>`` (the summed
``episode_return_mean`` is about 0: the game is zero-sum); ``illegal_moves`` counts
episodes ended by an illegal action (0 with the mask). Each iteration's numbers
are printed; the algorithm is saved to ``<run_dir>/rllib`` after the last one.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from agents.arena.distributed import connect, require_ray
from agents.cli import error_exit
from agents.configuration import ConfigError, parse_file
from agents.training.config import SELF, TrainConfig, parse_train_config

RLLIB_KEYS = {
    "name": None,
    "output_dir": None,
    "preset": None,
    "players": None,
    "rules": None,
    "episode": None,
    "reward": None,
    "seed": None,
    "total_updates": None,
    "num_games": None,
    "rollout_steps": None,
    "opponents": {SELF},
    "model": {"hidden"},
    "ppo": {
        "lr",
        "gamma",
        "gae_lambda",
        "epochs",
        "minibatches",
        "clip_coef",
        "ent_coef",
        "vf_coef",
        "max_grad_norm",
    },
    "ray": {"workers", "address"},
}
"""The training config keys this trainer uses (None: the whole key; a set: those sub-keys)."""
SHARED = "shared"
"""The one RL module every seat maps to."""
SEAT_RETURN = "agent_episode_returns_mean"
"""RLlib's per-agent return metric, under ``env_runners`` (one entry per seat)."""


def load_rllib_config(path: str, overrides: list[str]) -> TrainConfig:
    """The training config at ``path`` (a YAML file or a shipped RLlib config's name, ``"block"``) with
    overrides, refusing keys RLlib's PPO here would ignore."""
    overrides = [
        f"total_updates={item.partition('=')[2]}" if item.startswith("iterations=") else item
        for item in overrides
    ]
    return parse_file(path, overrides, "rllib", parse_rllib_config)


def parse_rllib_config(raw: dict[str, Any]) -> TrainConfig:
    """A checked training config from a nested dict, refusing keys RLlib's PPO here would ignore."""
    for key, value in raw.items():
        allowed = RLLIB_KEYS.get(key, set())
        if allowed is None:
            continue
        inner = value if isinstance(value, dict) else {"": value}
        unused = sorted(str(sub) for sub in inner if sub not in allowed)
        if unused:
            where = key if unused == [""] else ", ".join(f"{key}.{sub}" for sub in unused)
            raise ConfigError(
                f"{where}: not used by RLlib's PPO here (scripts/train_rllib.py uses {', '.join(RLLIB_KEYS)})"
            )
    return parse_train_config(raw)


def build_algorithm(config: TrainConfig) -> Any:
    """RLlib's PPO for ``config``: one shared action-masking module, ``ray.workers`` env runners."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    from domino_env.envs.rllib import DominoMultiAgentEnv

    rules = config.build_rules()
    env_config = {
        "preset": config.preset,
        "players": rules.players,
        "episode": config.episode,
        "reward": config.reward,
        **config.rules,
    }
    batch = config.num_games * config.rollout_steps
    hyper = config.ppo
    ppo = (
        PPOConfig()
        .environment(DominoMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=config.ray.workers, num_envs_per_env_runner=1)
        .multi_agent(policies={SHARED}, policy_mapping_fn=_shared)
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    SHARED: RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={
                            "fcnet_hiddens": list(config.model.hidden),
                            "fcnet_activation": "relu",
                            "head_fcnet_hiddens": [],
                            "vf_share_layers": False,
                        },
                    )
                }
            )
        )
        .training(
            train_batch_size_per_learner=batch,
            minibatch_size=max(1, batch // hyper.minibatches),
            num_epochs=hyper.epochs,
            lr=hyper.lr,
            gamma=hyper.gamma,
            lambda_=hyper.gae_lambda,
            clip_param=hyper.clip_coef,
            entropy_coeff=hyper.ent_coef,
            vf_loss_coeff=hyper.vf_coef,
            grad_clip=hyper.max_grad_norm,
        )
        .callbacks(on_episode_end=_count_illegal)
        .debugging(seed=config.seed)
    )
    return ppo.build_algo()


def _shared(agent_id: str, episode: Any, **kwargs: Any) -> str:
    return SHARED


def _count_illegal(*, episode: Any, metrics_logger: Any, **kwargs: Any) -> None:
    """The ``illegal_moves`` metric: episodes that an illegal action ended (the env's info says so)."""
    last = episode.get_infos(-1)
    illegal = any("illegal_move" in (info or {}) for info in last.values())
    metrics_logger.log_value("illegal_moves", int(illegal), reduce="sum")


def seat_returns(result: dict[str, Any]) -> dict[str, float]:
    """Per seat, the mean return of the iteration's episodes (RLlib's per-agent metric)."""
    return {str(k): float(v) for k, v in sorted(result.get("env_runners", {}).get(SEAT_RETURN, {}).items())}


def train(config: TrainConfig, console: Console | None = None) -> dict[str, Any]:
    """``config.total_updates`` PPO iterations; returns the last iteration's result."""
    console = console or Console()
    ray = require_ray()
    started = connect(config.ray)
    try:
        algorithm = build_algorithm(config)
        result: dict[str, Any] = {}
        for iteration in range(1, config.total_updates + 1):
            result = algorithm.train()
            runners = result.get("env_runners", {})
            seats = "  ".join(f"{k} {v:+.2f}" for k, v in seat_returns(result).items())
            console.print(
                f"iteration {iteration}: {runners.get('num_env_steps_sampled_lifetime', 0):,.0f} env steps, "
                f"seat returns {seats or '-'}, illegal moves {runners.get('illegal_moves', 0):.0f}"
            )
        folder = (config.run_dir / "rllib").resolve()
        algorithm.save_to_path(str(folder))
        console.print(f"saved {folder}")
        algorithm.stop()
        return result
    finally:
        if started:
            ray.shutdown()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="YAML training config or shipped RLlib config name (block)")
    parser.add_argument("overrides", nargs="*", help="key.sub=value overrides; iterations=N")
    args = parser.parse_args(argv)
    console = Console()
    try:
        train(load_rllib_config(args.config, args.overrides), console)
    except ConfigError as error:
        return error_exit(console, error)
    return 0
