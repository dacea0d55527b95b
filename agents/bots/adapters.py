"""Any policy a user holds, as a bot: what ``evaluate``, ``load_policy`` and the envs' opponents accept.

The arena and the environments call a policy on a batch (``domino_env.envs.policies``:
``policy(obs (B, n), mask (B, A)) -> (B,) actions``). A researcher's policy rarely has that
shape, so ``adapt`` turns each of these into a named bot:

* an object with the batched contract (a function, or anything callable), used as it is;
* a one-observation function ``f(obs (n,), mask (A,)) -> action``: told apart from a batched
  one on its first call (a batched policy returns one action per row, ``(B,)``; a
  one-observation function returns a single number), or marked with ``one_observation(f)``;
* a ``torch.nn.Module`` mapping float observations ``(B, n)`` to logits ``(B, A)`` (or a
  tuple whose first item is the logits): the most probable legal action;
* a Stable-Baselines3 / sb3-contrib model (``.predict``, with ``action_masks`` when the
  model takes them: ``MaskablePPO``): its deterministic action;
* a trained network of this package (``ActorCritic``, whose ``forward`` takes the mask): greedy,
  as its checkpoint plays.

Names come from the object: an explicit ``name``, else its ``name`` attribute, else the
function's or the class's name. ``import_object("pkg.module:attribute")`` imports an object
by path (entry-point style) for the command line, and ``load_sb3_zip`` is the ``.zip``
checkpoint loader that ``agents`` registers.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
import os
import re
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from domino_env.engine.observation import observation_size
from domino_env.engine.rules import Rules
from domino_env.install import install_hint
from domino_env.text import brief

IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
"""``package.module:attribute`` (the attribute may be dotted: ``module:Class.method``)."""


class PolicyError(ValueError):
    """A user's policy that cannot play here: its message names the policy and what to change."""


class NamedPolicy:
    """A batched callable under a name (the arena's tables and errors name every policy)."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], Any], name: str) -> None:
        self.function, self.name = function, name

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.asarray(self.function(obs, mask))

    def __repr__(self) -> str:
        return f"<policy {self.name!r}: {self.function!r}>"


class OneObservationPolicy:
    """``f(obs (n,), mask (A,)) -> action`` called once per row of a batch."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], Any], name: str) -> None:
        self.function, self.name = function, name

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.array(
            [single_action(self.name, self.function(o, m)) for o, m in zip(obs, mask, strict=True)]
        )

    def __repr__(self) -> str:
        return f"<one-observation policy {self.name!r}: {self.function!r}>"


class DetectedPolicy:
    """A callable whose contract is learnt from its first call: a batched policy answers a batch
    with one action per row; anything else (a single number, an error) makes it a
    one-observation function, called per row from then on."""

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], Any], name: str) -> None:
        self.function, self.name = function, name
        self.batched: bool | None = None

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.batched is None:
            try:
                answer = np.asarray(self.function(obs, mask))
            except Exception as error:  # a one-observation function handed a batch: try it per row
                batch_error: Exception | None = error
            else:
                batch_error = None
                if answer.shape == (len(obs),):
                    self.batched = True
                    return answer
            try:
                actions = OneObservationPolicy(self.function, self.name)(obs, mask)
            except PolicyError:
                raise
            except Exception as error:
                if batch_error is not None and _describe(batch_error) == _describe(error):
                    raise PolicyError(f"policy {self.name!r} raised {_describe(error)}") from error
                tried = _describe(batch_error) if batch_error else "no action per row"
                raise PolicyError(
                    f"policy {self.name!r} failed on a batch of observations ({tried}) and on one "
                    f"observation ({_describe(error)}); it must map (obs, mask) to actions, docs/benchmark.md"
                ) from error
            self.batched = False
            return actions
        if self.batched:
            return np.asarray(self.function(obs, mask))
        return OneObservationPolicy(self.function, self.name)(obs, mask)

    def __repr__(self) -> str:
        kind = {None: "not called yet", True: "batched", False: "one observation"}[self.batched]
        return f"<policy {self.name!r} ({kind}): {self.function!r}>"


class TorchModulePolicy:
    """A ``torch.nn.Module`` giving logits, playing its most probable legal action: ``module(obs)`` on
    float observations, or ``module(obs, mask)`` on the raw ones where ``forward`` takes a ``mask``
    (this package's networks, which mask and encode themselves)."""

    def __init__(self, module: Any, rules: Rules, name: str) -> None:
        import torch

        self.torch, self.module, self.name = torch, module.eval(), name
        parameter = next(module.parameters(), None)
        self.device = parameter.device if parameter is not None else torch.device("cpu")
        self.num_actions = rules.num_actions
        self.takes_mask = "mask" in inspect.signature(module.forward).parameters

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        torch = self.torch
        legal = torch.as_tensor(np.asarray(mask), dtype=torch.bool, device=self.device)
        with torch.inference_mode():
            if self.takes_mask:
                out = self.module(torch.as_tensor(np.asarray(obs), device=self.device), legal)
            else:
                out = self.module(torch.as_tensor(np.asarray(obs), dtype=torch.float32, device=self.device))
        logits = out[0] if isinstance(out, (tuple, list)) else out
        if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != (len(obs), self.num_actions):
            shape = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
            raise PolicyError(
                f"module {self.name!r} must return logits of shape ({len(obs)}, {self.num_actions}) "
                f"(a batch of observations -> one logit per action), got {shape}"
            )
        return logits.float().masked_fill(~legal, -torch.inf).argmax(dim=1).cpu().numpy()

    def __repr__(self) -> str:
        return f"<torch module {self.name!r}: {type(self.module).__name__}>"


class SB3Policy:
    """A Stable-Baselines3 model's deterministic action, masked where its ``predict`` takes masks."""

    def __init__(self, model: Any, rules: Rules, name: str) -> None:
        self.model, self.name = model, name
        self.masked = "action_masks" in inspect.signature(model.predict).parameters
        check_spaces(
            name, rules, getattr(model, "observation_space", None), getattr(model, "action_space", None)
        )

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.masked:
            actions, _ = self.model.predict(obs, deterministic=True, action_masks=mask)
        else:
            actions, _ = self.model.predict(obs, deterministic=True)
        return np.asarray(actions).reshape(len(obs))

    def __repr__(self) -> str:
        return f"<SB3 model {self.name!r}: {type(self.model).__name__}>"


def one_observation(function: Callable[[np.ndarray, np.ndarray], Any], name: str | None = None):
    """Mark ``f(obs, mask) -> action`` (one observation, one action) as such: it is called per row.

    Needed only when its first call on a batch could pass for a batched policy's; usable as a decorator.
    """
    return OneObservationPolicy(function, name or object_name(function))


def adapt(policy: Any, rules: Rules, name: str | None = None) -> Any:
    """``policy`` (see the module docstring) as a named batched bot for ``rules``; a PolicyError
    names what does not fit (a model for other observations, a callable of another signature)."""
    name = name or object_name(policy)
    if isinstance(policy, (OneObservationPolicy, DetectedPolicy, NamedPolicy)):
        return policy if policy.name == name else type(policy)(policy.function, name)
    if _is_bot(policy):  # this package's bots and networks: batched by construction, never probed
        if policy.name == name:
            return policy
        renamed = copy.copy(policy)
        renamed.name = name
        return renamed
    torch = sys.modules.get("torch")  # a module can only exist if torch is imported already
    if torch is not None and isinstance(policy, torch.nn.Module):
        return _torch_policy(policy, rules, name)
    if callable(getattr(policy, "predict", None)) and hasattr(policy, "policy"):
        return SB3Policy(policy, rules, name)
    if not callable(policy):
        raise PolicyError(
            f"{name!r} is a {type(policy).__name__}, not a policy: give a callable (obs, mask) -> actions, "
            "a torch module, an SB3 model, a bot or agent name, a file or a 'module:object' path"
        )
    check_signature(policy, name)
    return DetectedPolicy(policy, name)


def object_name(policy: Any) -> str:
    """The name tables show for ``policy``: its ``name`` attribute, else the function's or the class's."""
    own = getattr(policy, "name", None)
    if isinstance(own, str) and own:
        return own
    if inspect.isfunction(policy) or inspect.ismethod(policy) or inspect.isbuiltin(policy):
        return "policy" if policy.__name__ == "<lambda>" else policy.__name__
    return type(policy).__name__


def check_signature(policy: Callable[..., Any], name: str) -> None:
    """A PolicyError unless ``policy`` can be called with two positional arguments (obs, mask)."""
    try:
        signature = inspect.signature(policy)
    except (TypeError, ValueError):  # a builtin or extension callable: nothing to check
        return
    try:
        signature.bind(None, None)
    except TypeError:
        raise PolicyError(f"policy {name!r} must take (obs, mask); its signature is {signature}") from None


def check_spaces(name: str, rules: Rules, observation_space: Any, action_space: Any) -> None:
    """A PolicyError when a model was made for other observations or actions than ``rules`` give."""
    want = (observation_size(rules),)
    have = getattr(observation_space, "shape", None)
    actions = getattr(action_space, "n", None)
    other_observations = have is not None and tuple(have) != want
    if other_observations or (actions is not None and int(actions) != rules.num_actions):
        raise PolicyError(
            f"{name!r} was made for observations of shape {tuple(have) if have is not None else '?'} and "
            f"{actions if actions is not None else '?'} actions; {rules.name} with {rules.players} players "
            f"gives {want} and {rules.num_actions}"
        )


def single_action(name: str, answer: Any) -> int:
    """The one action a one-observation function returned, as an int (a PolicyError otherwise)."""
    value = np.asarray(answer)
    if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
        raise PolicyError(
            f"policy {name!r} must return one integer action per observation, got {brief(answer, 60)}"
        )
    return int(value.reshape(()))


def import_object(path: str) -> Any:
    """The object ``package.module:attribute`` names, imported from the current folder first (as
    ``uvicorn`` and entry points do); a PolicyError says what failed to import."""
    module_name, _, attribute = path.partition(":")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise PolicyError(f"cannot import {module_name!r} for {path!r}: {error}") from None
    except Exception as error:  # the module itself failed while running
        raise PolicyError(f"importing {module_name!r} for {path!r} failed: {_describe(error)}") from None
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise PolicyError(f"{path!r}: {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def load_object(path: str, rules: Rules | None) -> Any:
    """The policy ``package.module:attribute`` names: a class is built (with the rules if its
    constructor takes ``rules``), anything else is used as it is. Its name is its ``name``
    attribute, else the attribute's name in the path."""
    if rules is None:
        raise PolicyError(f"{path!r} needs the rules it plays: give the preset (load_policy(spec, rules))")
    target = import_object(path)
    if inspect.isclass(target):
        takes_rules = "rules" in inspect.signature(target).parameters
        try:
            target = target(rules) if takes_rules else target()
        except Exception as error:
            raise PolicyError(f"building {path!r} failed: {_describe(error)}") from None
    own = getattr(target, "name", None)
    return adapt(
        target, rules, own if isinstance(own, str) and own else path.rpartition(".")[2].rpartition(":")[2]
    )


def load_sb3_zip(path: Path, rules: Rules | None, seed: int) -> SB3Policy:
    """The ``.zip`` checkpoint loader: a Stable-Baselines3 / sb3-contrib model saved with ``.save``.

    The algorithm is read from the file (its policy's module). SB3's own ``load`` unpickles parts
    of the file, so load only models you trust.
    """
    if rules is None:
        raise PolicyError(
            f"{path.name!r}: an SB3 model does not record the rules it was trained on; give them "
            "(evaluate(..., preset=...), or the arena config's preset)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            data = json.loads(archive.read("data"))
        module = str(data["policy_class"]["__module__"])
    except (zipfile.BadZipFile, KeyError, ValueError, TypeError, OSError) as error:
        raise PolicyError(
            f"{path.name!r} is not a Stable-Baselines3 model file: {_describe(error)}"
        ) from None
    algorithm = _sb3_algorithm(module, path)
    try:
        model = algorithm.load(path, device="cpu")
    except Exception as error:
        raise PolicyError(f"SB3 could not load {path.name!r}: {_describe(error)}") from None
    return SB3Policy(model, rules, path.stem)


def _sb3_algorithm(module: str, path: Path) -> Any:
    """The SB3 algorithm class whose policies live in ``module``."""
    try:
        if module.startswith("sb3_contrib"):
            import sb3_contrib

            kinds = {"maskable": "MaskablePPO", "qrdqn": "QRDQN", "tqc": "TQC", "ars": "ARS", "trpo": "TRPO"}
            owner = sb3_contrib
        else:
            import stable_baselines3

            kinds = {"dqn": "DQN"}
            owner = stable_baselines3
    except ImportError:
        raise PolicyError(f"loading {path.name!r} needs Stable-Baselines3: {install_hint('sb3')}") from None
    for key, algorithm in kinds.items():
        if f".{key}" in module:
            return getattr(owner, algorithm)
    if module.startswith("sb3_contrib"):
        raise PolicyError(f"{path.name!r}: the policy {module!r} is not one the arena can play (recurrent?)")
    return owner.PPO  # ActorCriticPolicy: PPO and A2C save the same policy, and predict alike


def _torch_policy(module: Any, rules: Rules, name: str) -> TorchModulePolicy:
    """A module checked against the rules: its own (this package's networks know theirs), else its
    first layer's width."""
    own = getattr(module, "rules", None)
    if isinstance(own, Rules) and own != rules:
        raise PolicyError(f"network {name!r} plays {own}, not {rules}")
    first = next((m for m in module.modules() if hasattr(m, "in_features")), None)
    if not isinstance(own, Rules) and first is not None and int(first.in_features) != observation_size(rules):
        raise PolicyError(
            f"module {name!r} takes {first.in_features} inputs; {rules.name} with {rules.players} players "
            f"gives observations of {observation_size(rules)}"
        )
    return TorchModulePolicy(module, rules, name)


def _is_bot(policy: Any) -> bool:
    """One of this package's bots or networks (``agents.*`` classes with a ``name``)."""
    return type(policy).__module__.startswith("agents.") and isinstance(getattr(policy, "name", None), str)


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
