"""Training checkpoints: atomic writes, strict loading, and trained policies for the arena.

A checkpoint is one ``torch.save`` file holding only tensors and plain
containers of primitives, so it loads with ``torch.load(weights_only=True)``
(no pickled code runs when a file is opened):

* ``format``: ``FORMAT`` (bumped when the layout changes);
* ``model``, ``optimizer``: state dicts;
* ``config``: the ``TrainConfig`` as a dict (rules, network widths...);
* ``update``, ``global_step``, ``best_score``;
* ``snapshots``: the pool of earlier weights the ``past`` opponent draws from (list of state dicts);
* ``rng``: ``numpy`` (the Generator's state dict), ``torch`` (uint8 tensor),
  ``python`` (``random.getstate()`` as nested lists), ``cuda`` (list of tensors).

A *policy file* (``export_policy``) keeps only ``format``, ``model``, ``config``,
``update`` and ``global_step``: what playing needs, a few hundred KB instead of
the optimizer state and the snapshot pool. The shipped ``checkpoints/*.pt`` are
policy files; the arena loads both kinds, ``--resume`` only full checkpoints.

Writes go to a temporary file in the same folder, fsynced, then ``os.replace``:
a crash leaves the previous checkpoint, never half a file under its name.

Importing this module registers the ``".pt"`` loader with
``agents.policy.register_checkpoint_loader``: ``load_policy("runs/x/checkpoints/best.pt", rules)``
then returns a ``CheckpointPolicy``, which the arena and ``scripts/evaluate.py`` run
like any bot. It is greedy (the most probable legal action: deterministic, what
an evaluation wants); ``CheckpointPolicy(..., greedy=False)`` samples from the
policy with its own seeded generator instead.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from domino_env.observation import observation_size
from domino_env.rules import Rules

from .network import ActorCritic, resolve_device
from .policy import register_checkpoint_loader

FORMAT = 1
REQUIRED = (
    "format",
    "model",
    "optimizer",
    "config",
    "update",
    "global_step",
    "best_score",
    "rng",
    "snapshots",
)
POLICY_KEYS = ("format", "model", "config", "update", "global_step")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the problem."""


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` atomically (temporary file in the same folder, fsync, rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            torch.save(payload, file)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a checkpoint is an ordinary output file
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_checkpoint(path: str | Path, required: tuple[str, ...] = REQUIRED) -> dict[str, Any]:
    """The payload in ``path``, checked for the ``required`` keys and the format; else ``CheckpointError``.

    The default asks for a whole training checkpoint; ``POLICY_KEYS`` accepts a policy file too.
    """
    path = Path(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path}: no such file") from None
    except Exception as error:  # torch raises RuntimeError, EOFError, UnpicklingError... for bad files
        raise CheckpointError(
            f"checkpoint {path}: unreadable (truncated, corrupt or not a torch checkpoint): {error}"
        ) from None
    if not isinstance(payload, dict):
        raise CheckpointError(f"checkpoint {path}: expected a dict, found {type(payload).__name__}")
    missing = [key for key in required if key not in payload]
    if missing:
        raise CheckpointError(
            f"checkpoint {path}: missing {', '.join(missing)} (not a domino-rl checkpoint?)"
        )
    if payload["format"] != FORMAT:
        raise CheckpointError(f"checkpoint {path}: format {payload['format']}, this code reads {FORMAT}")
    return payload


def export_policy(source: str | Path, target: str | Path) -> None:
    """Write the policy file of checkpoint ``source`` to ``target`` (atomically): weights and config only."""
    payload = load_checkpoint(source, POLICY_KEYS)
    save_checkpoint(target, {key: payload[key] for key in POLICY_KEYS})


def rules_of(payload: dict[str, Any]) -> Rules:
    """The rules a checkpoint was trained on."""
    config = payload["config"]
    return Rules.preset(config["preset"], config["players"], **config["rules"])


def build_model(payload: dict[str, Any], path: str | Path, rules: Rules | None = None) -> ActorCritic:
    """The checkpoint's network (on CPU), after checking it fits ``rules`` (default: its own)."""
    trained = rules_of(payload)
    rules = rules or trained
    if observation_size(rules) != observation_size(trained) or rules.num_actions != trained.num_actions:
        raise CheckpointError(
            f"checkpoint {path}: trained for {trained.name} with {trained.players} players "
            f"(observation {observation_size(trained)}, {trained.num_actions} actions), "
            f"not {rules.name} with {rules.players} players "
            f"(observation {observation_size(rules)}, {rules.num_actions} actions)"
        )
    if trained.name != rules.name:
        raise CheckpointError(f"checkpoint {path}: trained for preset {trained.name!r}, not {rules.name!r}")
    network = payload["config"]["model"]
    model = ActorCritic(rules, tuple(network["hidden"]), network.get("move_features", False))
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as error:
        raise CheckpointError(f"checkpoint {path}: weights do not fit the network: {error}") from None
    return model


def capture_rng(numpy_rng: np.random.Generator) -> dict[str, Any]:
    """Every random state training draws from, as tensors and plain containers."""
    version, state, gauss = random.getstate()
    return {
        "numpy": numpy_rng.bit_generator.state,
        "torch": torch.get_rng_state(),
        "python": [version, list(state), gauss],
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def restore_rng(saved: dict[str, Any], numpy_rng: np.random.Generator) -> None:
    """Put back what ``capture_rng`` took (CUDA states only where this machine has the same GPUs)."""
    numpy_rng.bit_generator.state = saved["numpy"]
    torch.set_rng_state(saved["torch"])
    version, state, gauss = saved["python"]
    random.setstate((version, tuple(state), gauss))
    if saved["cuda"] and torch.cuda.is_available() and len(saved["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(saved["cuda"])


class NetworkPolicy:
    """A network as a batched bot, ``policy(obs, mask) -> actions``: greedy, or sampled from ``generator``."""

    def __init__(
        self, name: str, model: ActorCritic, greedy: bool, generator: torch.Generator | None = None
    ) -> None:
        self.name = name
        self.model = model.eval()
        self.greedy = greedy
        self.device = next(model.parameters()).device
        self.generator = generator

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits, _ = self.model(
                torch.from_numpy(np.asarray(obs)).to(self.device),
                torch.from_numpy(np.asarray(mask)).to(self.device),
            )
            if self.greedy:
                actions = logits.argmax(dim=1)
            else:
                actions = torch.multinomial(logits.softmax(dim=1), 1, generator=self.generator).squeeze(1)
        return actions.cpu().numpy()


class CheckpointPolicy(NetworkPolicy):
    """A checkpoint's network as a bot (greedy by default; see the module docstring)."""

    def __init__(
        self, path: str | Path, rules: Rules, seed: int = 0, greedy: bool = True, device: str = "cpu"
    ) -> None:
        where = resolve_device(device)
        model = build_model(load_checkpoint(path, POLICY_KEYS), path, rules).to(where)
        super().__init__(Path(path).stem, model, greedy, torch.Generator(device=where).manual_seed(seed))


def _load_for_arena(path: Path, rules: Rules, seed: int) -> CheckpointPolicy:
    return CheckpointPolicy(path, rules, seed=seed)


register_checkpoint_loader(".pt", _load_for_arena)
