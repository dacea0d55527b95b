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
policy files; the arena loads both kinds, ``--resume`` only full checkpoints. A policy file
exported from several runs of one network (``export_policy`` with several sources) also holds
``members``, the other runs' state dicts: it plays as their average (``AveragedNetworks``).

``load_checkpoint`` checks every field it is asked for before anything uses it (types,
ranges, the stored config parsed by ``parse_train_config``, the random states tried on
scratch generators, the optimizer's tensors against the network's parameters): a
malformed file that ``weights_only`` lets through is a ``CheckpointError`` naming the
file and the field, never a ``KeyError`` or a torch traceback later on.

Writes go to a temporary file in the same folder, fsynced, then ``os.replace``:
a crash leaves the previous checkpoint, never half a file under its name.

``agents.load_policy("runs/x/checkpoints/best.pt")`` loads ``.pt`` files with ``load_for_arena``
(importing this module only then: it needs torch) and returns a ``CheckpointPolicy``, which the
arena and ``scripts/evaluate.py`` run
like any bot. It is greedy (the most probable legal action: deterministic, what
an evaluation wants); ``CheckpointPolicy(..., greedy=False)`` samples from the
policy with its own seeded generator instead.
"""

from __future__ import annotations

import copy
import errno
import hashlib
import math
import random
import threading
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch

from agents.configuration import ConfigError
from agents.training.config import parse_train_config
from agents.training.network import ActorCritic, AveragedNetworks, build_network, resolve_device
from domino_env.engine.observation import observation_size
from domino_env.engine.rules import Rules
from domino_env.files import write_atomic
from domino_env.text import brief

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
MEMBERS = "members"
"""Optional key of a policy file: the state dicts of the networks averaged with ``model``."""
MAX_MEMBERS = 16
"""Most networks one policy file averages (each adds a forward pass to every decision)."""
MAX_CHECKPOINT_BYTES = 2**28
"""A checkpoint larger than this when unpacked is refused before it is read (the largest shipped
policy file, an average of five networks, is 6.3 MB; a run's full checkpoint with its snapshot
pool, tens of MB)."""
MAX_CHECKPOINT_ENTRIES = 100_000
"""Nor one of more entries (tensors) than this."""
STORED_CONFIG_KEYS = ("preset", "players", "rules", "model")
"""Keys of the stored config that loading reads (``rules_of``, ``build_model``): never left to defaults."""


class CheckpointError(ValueError):
    """A checkpoint that cannot be used; the message names the file and the problem."""


def weights_digest(path: str | Path) -> str:
    """SHA-256 of a policy file's networks, its weights alone (writing a model card does not change
    it): what ties a measurement to the network it measured."""
    payload = load_checkpoint(path, POLICY_KEYS)
    digest = hashlib.sha256()
    for weights in (payload["model"], *payload.get(MEMBERS, [])):
        for key in sorted(weights):
            digest.update(key.encode())
            digest.update(weights[key].detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def update_checkpoints(folder: str | Path) -> list[Path]:
    """A run's ``update_NNNNNN.pt`` files, oldest first (the zero-padded numbers sort as names)."""
    return sorted(Path(folder).glob("update_*.pt"))


def save_checkpoint(path: str | Path, payload: dict[str, Any]) -> None:
    """Write ``payload`` to ``path`` atomically (``write_atomic``: temporary file, fsync, rename).

    A full disk makes ``torch.save`` fail deep in its zip writer (``unexpected pos``); that is
    raised as an OSError naming the file, and the previous checkpoint is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_atomic(path, lambda file: torch.save(payload, file))
    except RuntimeError as error:
        reason = " ".join(str(error).split())[:200]
        raise OSError(errno.EIO, f"torch.save failed ({reason}); is the disk full?", str(path)) from None


def load_checkpoint(path: str | Path, required: tuple[str, ...] = REQUIRED) -> dict[str, Any]:
    """The payload in ``path``, checked for the ``required`` keys and the format; else ``CheckpointError``.

    The default asks for a whole training checkpoint; ``POLICY_KEYS`` accepts a policy file too.
    Every required field is checked (``validate_payload``) before anything uses it, so a
    malformed file that ``weights_only`` lets through is refused, naming the file and the field.
    """
    path = Path(path)
    try:
        verify_archive(path)
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path}: no such file") from None
    except CheckpointError:
        raise
    except Exception as error:  # torch raises RuntimeError, EOFError, UnpicklingError... for bad files
        raise CheckpointError(
            f"checkpoint {path}: unreadable (truncated, corrupt or not a torch checkpoint): {error}"
        ) from None
    validate_payload(payload, path, required)
    return payload


def verify_archive(path: Path) -> None:
    """Refuse a checkpoint whose archive is damaged or would expand beyond ``MAX_CHECKPOINT_BYTES``.

    ``torch.save`` writes a zip archive with a CRC-32 of every entry, but ``torch.load`` never
    checks them: one flipped byte inside a tensor loads as a wrong weight. Every entry is read and
    checked here first. The sizes are checked before anything is read, so a small file holding a
    deflated gigabyte is refused without inflating it (``torch.save`` stores entries uncompressed).
    """
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
            total = sum(entry.file_size for entry in entries)
            if len(entries) > MAX_CHECKPOINT_ENTRIES or total > MAX_CHECKPOINT_BYTES:
                raise CheckpointError(
                    f"checkpoint {path}: holds {len(entries):,} entries of {total:,} bytes in all; a "
                    f"checkpoint is refused beyond {MAX_CHECKPOINT_ENTRIES:,} entries or "
                    f"{MAX_CHECKPOINT_BYTES:,} bytes"
                )
            damaged = archive.testzip()
    except (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, ValueError) as error:
        raise CheckpointError(
            f"checkpoint {path}: unreadable (truncated, corrupt or not a torch checkpoint): {error}"
        ) from None
    if damaged is not None:
        raise CheckpointError(
            f"checkpoint {path}: damaged: {damaged} does not match its CRC-32 (the file changed after "
            "it was written; restore it or train again)"
        )


def validate_payload(payload: Any, path: str | Path, required: tuple[str, ...] = REQUIRED) -> None:
    """Raise ``CheckpointError``, naming ``path`` and the field, unless the ``required`` keys are well formed.

    Keys that are not required are not looked at (later versions may add some).
    """
    if not isinstance(payload, dict):
        raise CheckpointError(f"checkpoint {path}: expected a dict, found {type(payload).__name__}")
    missing = [key for key in required if key not in payload]
    if missing:
        raise CheckpointError(
            f"checkpoint {path}: missing {', '.join(missing)} (not a domino-rl checkpoint?)"
        )
    fmt = payload.get("format")
    if "format" in required and not (_is_int(fmt) and fmt == FORMAT):
        raise CheckpointError(f"checkpoint {path}: format {fmt!r}, this code reads {FORMAT}")

    def fail(field: str, problem: str) -> NoReturn:
        raise CheckpointError(f"checkpoint {path}: {field}: {problem}")

    for key in ("update", "global_step"):
        if key in required and not (_is_int(payload[key]) and 0 <= payload[key] < 2**63):
            fail(key, f"expected a non-negative integer (below 2**63), got {_show(payload[key])}")
    if "best_score" in required:
        score = payload["best_score"]
        if not (isinstance(score, (int, float)) and not isinstance(score, bool)) or score != score:
            fail("best_score", f"expected a number (-inf before any evaluation), got {_show(score)}")
    if "config" in required:
        _check_config(payload["config"], fail)
    if "model" in required:
        _check_weights(payload["model"], "model", fail)
        members = payload.get(MEMBERS, [])
        if not isinstance(members, list) or len(members) >= MAX_MEMBERS:
            fail(MEMBERS, f"expected a list of at most {MAX_MEMBERS - 1} state dicts, got {_show(members)}")
        for index, member in enumerate(members):
            _check_weights(member, f"{MEMBERS}[{index}]", fail, like=payload["model"])
    params: list[torch.Tensor] | None = None
    if "config" in required and "model" in required and ("optimizer" in required or "snapshots" in required):
        with torch.random.fork_rng(devices=[]):  # the scratch network's init must not move the global RNG
            params = list(build_model(payload, path).parameters())  # the weights must fit the config
    if "snapshots" in required:
        snapshots = payload["snapshots"]
        if not isinstance(snapshots, list) or not snapshots:
            fail("snapshots", f"expected a non-empty list of state dicts, got {_show(snapshots)}")
        for index, snapshot in enumerate(snapshots):
            _check_weights(snapshot, f"snapshots[{index}]", fail, like=payload.get("model"))
    if "rng" in required:
        _check_rng(payload["rng"], fail)
    if "optimizer" in required:
        _check_optimizer(payload["optimizer"], params, fail)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _show(value: Any) -> str:
    """A short description of a stored value for an error message (never the whole of a large one)."""
    return f"{type(value).__name__} {brief(value)}"


def _check_config(config: Any, fail: Callable[[str, str], NoReturn]) -> None:
    """The stored config must parse as a training config (what ``rules_of`` and ``--resume`` read)."""
    if not isinstance(config, dict):
        fail("config", f"expected the training config as a dict, got {_show(config)}")
    try:
        parse_train_config(copy.deepcopy(config))
    except ConfigError as error:
        fail("config", str(error))
    except Exception as error:  # a config the parser does not expect at all: still this file's fault
        fail("config", f"does not parse ({type(error).__name__}: {error})")
    # What rules_of and build_model read: a saved config is complete (TrainConfig.to_dict), not defaults.
    missing = [key for key in STORED_CONFIG_KEYS if key not in config]
    if not isinstance(config.get("model"), dict) or "hidden" not in config["model"]:
        missing.append("model.hidden")
    if missing:
        fail("config", f"missing {', '.join(missing)} (a checkpoint stores its whole training config)")


def _check_weights(weights: Any, field: str, fail: Callable[[str, str], NoReturn], like: Any = None) -> None:
    """A state dict: names to tensors (``like``: another one it must match name by name and shape)."""
    if not isinstance(weights, dict) or not weights:
        fail(field, f"expected a non-empty dict of tensors (a state dict), got {_show(weights)}")
    for name, value in weights.items():
        if not isinstance(name, str) or not isinstance(value, torch.Tensor):
            fail(field, f"expected names mapped to tensors, found {_show(name)}: {_show(value)}")
        problem = tensor_problem(value)
        if problem:
            fail(field, f"{name!r} {problem}")
    if isinstance(like, dict) and like is not weights:
        shapes = {name: tuple(value.shape) for name, value in weights.items()}
        wanted = {name: tuple(value.shape) for name, value in like.items() if isinstance(value, torch.Tensor)}
        if shapes != wanted:
            fail(field, "its tensors differ from the model's (names or shapes)")


def _check_rng(rng: Any, fail: Callable[[str, str], NoReturn]) -> None:
    """The saved random states, each tried on a scratch generator of the kind ``restore_rng`` sets."""
    if not isinstance(rng, dict):
        fail("rng", f"expected a dict of random states, got {_show(rng)}")
    missing = [key for key in ("numpy", "torch", "python", "cuda") if key not in rng]
    if missing:
        fail("rng", f"missing {', '.join(missing)}")
    try:
        np.random.default_rng().bit_generator.state = rng["numpy"]
    except Exception as error:
        fail("rng.numpy", f"not a NumPy generator state ({type(error).__name__}: {error})")
    state = rng["torch"]
    if not (isinstance(state, torch.Tensor) and state.dtype == torch.uint8):
        fail("rng.torch", f"expected a uint8 tensor, got {_show(state)}")
    try:
        torch.Generator().set_state(state)
    except Exception as error:
        fail("rng.torch", f"not a torch generator state ({type(error).__name__}: {error})")
    python = rng["python"]
    try:
        version, numbers, gauss = python
        random.Random().setstate((version, tuple(numbers), gauss))
    except Exception as error:
        fail("rng.python", f"not a random.getstate() as a list ({type(error).__name__}: {error})")
    cuda = rng["cuda"]
    if not isinstance(cuda, list) or not all(
        isinstance(t, torch.Tensor) and t.dtype == torch.uint8 for t in cuda
    ):
        fail("rng.cuda", f"expected a list of uint8 tensors, got {_show(cuda)}")


def _check_optimizer(
    optimizer: Any, params: list[torch.Tensor] | None, fail: Callable[[str, str], NoReturn]
) -> None:
    """An optimizer state dict whose per-parameter tensors fit ``params`` (None: not checked).

    Parameters are matched as ``torch.optim.Optimizer.load_state_dict`` does: in the order of
    the groups' ``params``, against the parameters of the network the config builds.
    """
    if not isinstance(optimizer, dict) or not {"state", "param_groups"} <= set(optimizer):
        fail("optimizer", f"expected a dict with 'state' and 'param_groups', got {_show(optimizer)}")
    groups, state = optimizer["param_groups"], optimizer["state"]
    if not isinstance(groups, list) or not groups or not all(isinstance(g, dict) for g in groups):
        fail("optimizer.param_groups", f"expected a non-empty list of dicts, got {_show(groups)}")
    ids: list[int] = []
    for index, group in enumerate(groups):
        where = f"optimizer.param_groups[{index}]"
        numbers = group.get("params")
        if not isinstance(numbers, list) or not all(_is_int(i) for i in numbers):
            fail(where, f"'params' must be a list of parameter numbers, got {_show(numbers)}")
        ids += numbers
        for key, value in group.items():
            if key != "params" and not _is_setting(value):
                fail(where, f"{key!r} must be a number, a flag or None, got {_show(value)}")
        lr = group.get("lr")
        if isinstance(lr, torch.Tensor) and lr.dim() == 0:
            lr = lr.item()
        if lr is not None and not (isinstance(lr, (int, float)) and _is_finite(lr) and lr >= 0):
            fail(where, f"'lr' must be a finite number >= 0, got {_show(lr)}")
    if len(set(ids)) != len(ids):
        fail("optimizer.param_groups", "a parameter number is listed twice")
    if not isinstance(state, dict):
        fail("optimizer.state", f"expected a dict, got {_show(state)}")
    if params is None:  # the checked config and weights are needed to know the parameters
        return
    if len(ids) != len(params):
        fail("optimizer", f"holds {len(ids)} parameters, the network has {len(params)}")
    shape_of = {i: tuple(p.shape) for i, p in zip(ids, params, strict=True)}
    for key, values in state.items():
        where = f"optimizer.state[{key!r}]"
        if key not in shape_of:
            fail(where, "is not one of the parameters in param_groups")
        if not isinstance(values, dict):
            fail(where, f"expected a dict, got {_show(values)}")
        for name, value in values.items():
            if isinstance(value, torch.Tensor):
                if value.dim() and tuple(value.shape) != shape_of[key]:
                    fail(where, f"{name!r} has shape {tuple(value.shape)}, the parameter {shape_of[key]}")
                problem = tensor_problem(value)
                if problem:
                    fail(where, f"{name!r} {problem}")
            elif not _is_setting(value):
                fail(where, f"{name!r} must be a tensor or a number, got {_show(value)}")


def _is_finite(number: float) -> bool:
    """A finite float, or an int that converts to one (``math.isfinite(10**400)`` overflows)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def tensor_problem(tensor: torch.Tensor) -> str:
    """What makes a stored tensor unusable ('' if nothing): more elements than a checkpoint may hold
    (a crafted 1 MB file can declare 2**60 elements with zero strides: counted before any is read),
    or NaN or infinite values (a diverged run?)."""
    if tensor.numel() * tensor.element_size() > MAX_CHECKPOINT_BYTES:
        return (
            f"declares {tensor.numel():,} elements of shape {tuple(tensor.shape)}, more than a checkpoint "
            f"may hold ({MAX_CHECKPOINT_BYTES:,} bytes)"
        )
    if (tensor.is_floating_point() or tensor.is_complex()) and not bool(torch.isfinite(tensor).all()):
        return "holds NaN or infinite values (a diverged run?)"
    return ""


def _is_setting(value: Any) -> bool:
    """A hyperparameter or per-parameter scalar: finite number, flag, None, 0-d tensor, or tuples of them."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return _is_finite(value)
    if isinstance(value, torch.Tensor):
        return value.dim() == 0 and not tensor_problem(value)
    if isinstance(value, (tuple, list)):
        return all(_is_setting(v) for v in value)
    return False


def export_policy(sources: list[str | Path], target: str | Path) -> None:
    """Write the policy file of checkpoint ``sources[0]`` to ``target`` (atomically): weights and config
    only. Further sources (runs of the same network on the same rules) are kept as ``members``: the
    file plays their average, its logits the mean of theirs (``AveragedNetworks``)."""
    if not sources:
        raise CheckpointError("export: name at least one checkpoint to export")
    if len(sources) > MAX_MEMBERS:
        raise CheckpointError(
            f"export: {len(sources)} checkpoints; a policy file averages at most {MAX_MEMBERS}"
        )
    payloads = [load_checkpoint(source, POLICY_KEYS) for source in sources]
    first = payloads[0]
    first_shapes = _shapes(first["model"])
    for source, payload in zip(sources, payloads, strict=True):
        if MEMBERS in payload:
            raise CheckpointError(
                f"checkpoint {source}: already an average of networks; export the runs it was made from"
            )
        for key in ("preset", "players", "rules"):
            if payload["config"][key] != first["config"][key]:
                raise CheckpointError(
                    f"checkpoint {source}: {key} {payload['config'][key]!r}, where {sources[0]} has "
                    f"{first['config'][key]!r}; only networks of one game average"
                )
        if _shapes(payload["model"]) != first_shapes:
            raise CheckpointError(
                f"checkpoint {source}: its network ({payload['config']['model']}) is not {sources[0]}'s "
                f"({first['config']['model']}); only networks of one shape average"
            )
    exported = {key: first[key] for key in POLICY_KEYS}
    if len(payloads) > 1:
        exported[MEMBERS] = [payload["model"] for payload in payloads[1:]]
    save_checkpoint(target, exported)


def _shapes(weights: dict[str, torch.Tensor]) -> dict[str, tuple[int, ...]]:
    """Each parameter's shape: two networks average only when these agree."""
    return {name: tuple(value.shape) for name, value in weights.items()}


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
    model = build_network(rules, network)
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as error:
        raise CheckpointError(
            f"checkpoint {path}: model: weights do not fit the network its config describes: {error}"
        ) from None
    return model


def build_policy_network(
    payload: dict[str, Any], path: str | Path, rules: Rules | None = None
) -> ActorCritic | AveragedNetworks:
    """What a policy file plays: its network, or the average of its networks when it holds ``members``."""
    model = build_model(payload, path, rules)
    if not payload.get(MEMBERS):
        return model
    members = [model]
    for weights in payload[MEMBERS]:  # the same network (validate_payload checked every shape)
        member = copy.deepcopy(model)
        member.load_state_dict(weights)
        members.append(member)
    return AveragedNetworks(members)


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

    FEW_ROWS = 64
    """A call with fewer rows (one game's decision, a few games') runs on one torch thread, then puts the
    thread count back. Each layer then takes microseconds; a second thread adds a wait for the other
    core at every operation, a time slice when that core is busy: on a 2-core machine with one other
    job, two threads took milliseconds a decision (docs/speed.md, Opponents). Threads only change the
    order of float additions: the last bits of a logit may differ (as they do between machines of
    different core counts); the greedy move of every shipped agent did not, in 38,574 decisions in
    batches of 1 to 63 rows compared on one thread and on two."""
    _threads_lock = threading.Lock()
    """Held while a call has changed the thread count, so that calls from several threads (the web
    table's) put back the count they found."""

    def __init__(
        self,
        name: str,
        model: ActorCritic | AveragedNetworks,
        greedy: bool,
        generator: torch.Generator | None = None,
    ) -> None:
        self.name = name
        self.model = model.eval()
        self.greedy = greedy
        self.device = next(model.parameters()).device
        self.generator = generator

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        obs, mask = np.asarray(obs), np.asarray(mask)
        if self.greedy:
            # A forced move (one legal action) is its own argmax: the network reads only the rows with
            # a choice, a third of a playout's decisions or more, and the actions are the same.
            actions = mask.argmax(axis=1)
            choice = np.flatnonzero(mask.sum(axis=1) > 1)
            if len(choice):
                actions[choice] = self._logits(obs[choice], mask[choice]).argmax(dim=1).cpu().numpy()
            return actions
        logits = self._logits(obs, mask)
        return torch.multinomial(logits.softmax(dim=1), 1, generator=self.generator).squeeze(1).cpu().numpy()

    def _logits(self, obs: np.ndarray, mask: np.ndarray) -> torch.Tensor:
        obs_t, mask_t = torch.from_numpy(obs).to(self.device), torch.from_numpy(mask).to(self.device)
        if len(obs) >= self.FEW_ROWS:
            with torch.inference_mode():
                return self.model(obs_t, mask_t)[0]
        with self._threads_lock, torch.inference_mode():
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                return self.model(obs_t, mask_t)[0]
            finally:
                torch.set_num_threads(threads)

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, A) float probabilities the policy gives each action (0 off the mask): what a viewer
        of a game shows beside each legal move, and what the sampled policy draws from."""
        return self._logits(np.asarray(obs), np.asarray(mask)).softmax(dim=1).cpu().numpy()


class CheckpointPolicy(NetworkPolicy):
    """A checkpoint's network as a bot (greedy by default; see the module docstring).

    ``rules``: None plays the rules the checkpoint was trained on; given, they are checked against them.
    """

    def __init__(
        self,
        path: str | Path,
        rules: Rules | None = None,
        seed: int = 0,
        greedy: bool = True,
        device: str = "cpu",
    ) -> None:
        where = resolve_device(device)
        payload = load_checkpoint(path, POLICY_KEYS)
        model = build_policy_network(payload, path, rules).to(where)
        super().__init__(Path(path).stem, model, greedy, torch.Generator(device=where).manual_seed(seed))
        card = payload.get("card")
        # How it was trained, from its model card (agents.training.model_card); "" without one.
        self.method = card.get("method", "") if isinstance(card, dict) else ""

    def __repr__(self) -> str:
        rules = self.model.rules
        method = f", {self.method}" if self.method else ""
        play = "greedy" if self.greedy else "sampled"
        return f"<CheckpointPolicy {self.name!r}: {rules.name} {rules.players}p{method}, {play}>"


def load_for_arena(path: Path, rules: Rules | None, seed: int) -> CheckpointPolicy:
    """The ``.pt`` loader of ``agents.load_policy``: a greedy policy (``rules`` None: the checkpoint's)."""
    return CheckpointPolicy(path, rules, seed=seed)
