"""``env()`` does natively what PettingZoo's three wrappers did: held equal to the wrapper stack.

``env()`` used to be ``OrderEnforcingWrapper(_CheckedActions(TerminateIllegalWrapper(raw_env(...),
illegal_reward=-1)))``, where ``_CheckedActions`` was PettingZoo's ``AssertOutOfBoundsWrapper``
after a clear ValueError for an action that is not an integer. Both that stack and PettingZoo's
plain one are built here and played call for call against ``env()`` on random episodes: legal,
illegal, out-of-range, None and non-integer actions, steps after the end, calls before
``reset``, ``last``, ``observe``, ``render``, ``state``, ``agent_iter``, failed resets. Every
call must return or raise the same, log the same warnings, and leave the same observations,
rewards, cumulative rewards, terminations, truncations, infos and agent selection.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import gymnasium
import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from pettingzoo.utils.env_logger import EnvLogger

from domino_env.engine.core import action_index
from domino_env.envs.pettingzoo_env import ILLEGAL_REWARD, checked_env, env, raw_env

CONFIGS = [
    {"preset": "block", "players": 2, "render_mode": "ansi"},
    {"preset": "draw", "players": 3},
    {"preset": "all_fives", "players": 3, "episode": "match", "target": 60, "render_mode": "ansi"},
    {"preset": "partnership", "players": 4, "episode": "match", "skip_forced": True, "target": 50},
    {"preset": "muggins", "players": 2, "reward": "win"},
    {"preset": "spanish_pairs", "players": 4, "skip_forced": True},
]
STATE = ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos")
STATE += ("agent_selection", "num_agents", "max_num_agents", "possible_agents", "decisions")
NOT_INTEGERS = (True, np.bool_(False), 1.0, np.float32(3), "3", [3], np.array([3]))


class OldCheckedActions(wrappers.AssertOutOfBoundsWrapper):
    """The wrapper ``env()`` used (``pettingzoo_env._CheckedActions`` until it went native)."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if action is None and (self.terminations[agent] or self.truncations[agent]):
            super().step(action)
            return
        num_actions = self.action_space(agent).n
        index = action_index(action, num_actions)
        if not 0 <= index < num_actions:  # an assert, which pytest would rewrite in a test module
            raise AssertionError(
                f"action {index} is not in action space Discrete({num_actions}): "
                f"actions are 0..{num_actions - 1}"
            )
        super().step(index)


def _discrete_takes_huge_ints() -> bool:
    """Gymnasium 1.2.2's ``Discrete.contains(10**30)`` raises OverflowError (newer releases say False)."""
    try:
        gymnasium.spaces.Discrete(2).contains(10**30)
    except OverflowError:
        return False
    return True


HUGE = [10**30] if _discrete_takes_huge_ints() else []
"""An action beyond int64, where PettingZoo's own wrappers can judge it (see above)."""


def old_env(**kwargs: Any) -> wrappers.OrderEnforcingWrapper:
    """``env()`` as it was: the wrapper stack, with the clear ValueError for non-integer actions."""
    inner = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=ILLEGAL_REWARD)
    return wrappers.OrderEnforcingWrapper(OldCheckedActions(inner))


def pettingzoo_env(**kwargs: Any) -> wrappers.OrderEnforcingWrapper:
    """PettingZoo's usual wrappers, exactly."""
    inner = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=ILLEGAL_REWARD)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(inner))


def outcome(call: Any) -> tuple:
    """What ``call()`` gives: its value or its error, the EnvLogger warnings and Python warnings."""
    EnvLogger.flush()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: tuple = ("returned", call())
        except Exception as error:  # every error is compared
            result = ("raised", type(error), str(error))
    return result, list(EnvLogger.mqueue), [str(w.message) for w in caught]


def same(a: Any, b: Any) -> bool:
    """Equal values of equal types, arrays by dtype and content, containers in order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def snapshot(aec: Any) -> dict:
    """The state every user can see, read without changing anything (observations through
    ``raw_env.observe``, which does not note the mover's observation as the env's does)."""
    state = {name: outcome(lambda name=name: getattr(aec, name)) for name in STATE}
    raw = aec.unwrapped
    for agent in raw.possible_agents:
        state[agent] = outcome(lambda agent=agent: raw_env.observe(raw, agent))
    state["str"] = str(aec)
    return state


def assert_same(got: Any, want: Any, what: str) -> None:
    assert same(got, want), f"{what}:\n  env():  {got}\n  wrappers: {want}"


class Trio:
    """``env()``, the old stack and PettingZoo's plain stack, played call for call."""

    def __init__(self, kwargs: dict) -> None:
        self.native, self.old, self.plain = env(**kwargs), old_env(**kwargs), pettingzoo_env(**kwargs)
        assert isinstance(self.native, checked_env)
        self.calls = self.illegal_moves = 0

    def call(self, what: str, method: str, *args: Any, **kwargs: Any) -> tuple:
        """Call ``method`` on all three; env() must match the old stack exactly and the plain stack
        whenever the call does not depend on ``_CheckedActions`` (see ``plain_applies``)."""
        got = outcome(lambda: getattr(self.native, method)(*args, **kwargs))
        want = outcome(lambda: getattr(self.old, method)(*args, **kwargs))
        plain = outcome(lambda: getattr(self.plain, method)(*args, **kwargs))
        assert_same(got, want, f"{what}: {method}{args}")
        self.illegal_moves += any("Illegal move made" in message for message in got[1])
        if method != "step" or plain_applies(self.old, args[0]):
            if got[0][0] == "raised" and got[0][1] is AssertionError and "not in action space" in got[0][2]:
                # PettingZoo's message is "action is not in action space"; ours names the range
                assert plain[0][:2] == got[0][:2] and "not in action space" in plain[0][2], what
                assert plain[1:] == got[1:], what
            else:
                assert_same(got, plain, f"{what}: {method}{args} (plain wrappers)")
        self.check_state(what)
        self.calls += 1
        return got[0]

    def check_state(self, what: str) -> None:
        native, old, plain = snapshot(self.native), snapshot(self.old), snapshot(self.plain)
        assert_same(native, old, f"{what}: state")
        assert_same(native, plain, f"{what}: state (plain wrappers)")


def plain_applies(aec: Any, action: Any) -> bool:
    """Whether PettingZoo's plain stack handles ``action`` as the old one: integer actions, and
    None for a dead agent (``_CheckedActions`` only turned the others into a clear ValueError)."""
    try:
        if not aec.agents:
            return True  # a step after the end only warns
        agent = aec.agent_selection
    except AttributeError:
        return True  # refused before the action is looked at
    if isinstance(action, (bool, np.bool_)):
        return False
    if isinstance(action, (int, np.integer)):
        return True
    return action is None and (aec.terminations[agent] or aec.truncations[agent])


def random_action(trio: Trio, rng: random.Random, noisy: bool) -> Any:
    """A legal action, or (often when ``noisy``, rarely else) an illegal, out-of-range, None or
    non-integer one."""
    aec = trio.old
    n = aec.unwrapped.rules.num_actions
    try:
        mask = aec.unwrapped.observe(aec.agent_selection)["action_mask"]
    except (AttributeError, RuntimeError, AssertionError, KeyError):
        mask = np.zeros(n, dtype=np.int8)
    legal, illegal = np.flatnonzero(mask).tolist(), np.flatnonzero(mask == 0).tolist()
    roll = rng.random() if noisy else rng.random() ** 20
    if roll < 0.75 and legal:
        action = rng.choice(legal)
        return np.int64(action) if rng.random() < 0.2 else action
    if roll < 0.82 and illegal:
        return rng.choice(illegal)
    if roll < 0.86:
        return rng.choice([n, -1, n + 100, *HUGE, np.int64(n), np.int8(-3)])
    if roll < 0.93:
        return None
    return rng.choice(NOT_INTEGERS)


def random_call(trio: Trio, rng: random.Random, episode_seed: int) -> None:
    roll = rng.random()
    if roll < 0.55:
        trio.call("step", "step", random_action(trio, rng, noisy=episode_seed % 2 == 0))
    elif roll < 0.7:
        trio.call("last", "last", rng.random() < 0.8)
    elif roll < 0.8:
        trio.call("observe", "observe", rng.choice(trio.old.unwrapped.possible_agents))
    elif roll < 0.85:
        trio.call("render", "render")
    elif roll < 0.88:
        trio.call("state", "state")
    elif roll < 0.9:
        trio.call("failed reset", "reset", seed=episode_seed, options={"deal": {}})
    elif roll < 0.91:
        trio.call("reset mid-episode", "reset", seed=episode_seed + 1)
    else:
        trio.call("action space", "action_space", rng.choice(trio.old.unwrapped.possible_agents))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kwargs", CONFIGS, ids=lambda k: f"{k['preset']}-{k['players']}p")
def test_env_matches_the_wrapper_stack_call_for_call(kwargs: dict) -> None:
    rng = random.Random(str(kwargs))
    trio = Trio(kwargs)
    for _ in range(6):  # before the first reset
        random_call(trio, rng, 0)
    natural_ends = 0
    for episode in range(12):
        trio.call("reset", "reset", seed=1000 * episode + 7)
        for _ in range(400):
            random_call(trio, rng, episode)
            if not trio.old.agents:
                break
        if trio.old.agents:  # step every agent out: legal moves, then None for the dead
            while trio.old.agents:
                agent = trio.old.agent_selection
                dead = trio.old.terminations[agent] or trio.old.truncations[agent]
                if not dead:
                    mask = trio.old.unwrapped.observe(agent)["action_mask"]
                    trio.call("play out", "step", int(np.flatnonzero(mask)[0]))
                else:
                    trio.call("step out", "step", None)
        for action in (None, 0, 10**6, "x"):  # after the end: warnings only
            trio.call("after the end", "step", action)
        trio.call("last after the end", "last")
        natural_ends += trio.old.unwrapped.game.over
    assert trio.calls > 500 and trio.illegal_moves >= 2 and natural_ends >= 2


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kwargs", CONFIGS[:3], ids=lambda k: f"{k['preset']}-{k['players']}p")
def test_calls_before_reset_fail_as_with_the_wrappers(kwargs: dict) -> None:
    trio = Trio(kwargs)
    agent = trio.old.unwrapped.possible_agents[0]
    trio.check_state("new")
    for method, args in [
        ("step", (0,)),
        ("step", (None,)),
        ("step", (True,)),
        ("observe", (agent,)),
        ("last", ()),
        ("render", ()),
        ("state", ()),
        ("agent_iter", ()),
        ("close", ()),
        ("observation_space", (agent,)),
    ]:
        result = trio.call("before reset", method, *args)
        assert method in ("close", "observation_space") or result[0] == "raised"
    for name in ("agents", "rewards", "terminations", "truncations", "infos", "agent_selection"):
        got, want = (
            outcome(lambda n=name: getattr(trio.native, n)),
            outcome(lambda n=name: getattr(trio.old, n)),
        )
        assert_same(got, want, name)
        assert got[0][1] is AttributeError and "cannot be accessed before reset" in got[0][2]
    for name in ("_cumulative_rewards", "_no_such_attribute", "no_such_attribute"):
        assert_same(
            outcome(lambda n=name: getattr(trio.native, n)),
            outcome(lambda n=name: getattr(trio.old, n)),
            name,
        )
    assert str(trio.native) == str(trio.old) == "dominoes_v0"
    assert isinstance(trio.native.unwrapped, raw_env) and isinstance(trio.old.unwrapped, raw_env)
    # a reset that fails still counts as a reset for the order checks, as in OrderEnforcingWrapper
    trio.call("failed first reset", "reset", seed=3, options={"deal": {}})
    for method, args in [("step", (0,)), ("observe", (agent,)), ("last", ())]:
        trio.call("after a failed first reset", method, *args)
    got = outcome(lambda: next(iter(trio.native.agent_iter())))
    assert_same(got, outcome(lambda: next(iter(trio.old.agent_iter()))), "agent_iter after a failed reset")
    trio.call("reset", "reset", seed=3)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kwargs", CONFIGS[1:4], ids=lambda k: f"{k['preset']}-{k['players']}p")
def test_agent_iter_enforces_a_step_per_iteration_like_the_wrapper(kwargs: dict) -> None:
    rng = random.Random(1)
    trio = Trio(kwargs)
    for seed in range(4):
        trio.call("reset", "reset", seed=seed)
        native, old = iter(trio.native.agent_iter()), iter(trio.old.agent_iter())
        while True:
            got, want = outcome(lambda it=native: next(it)), outcome(lambda it=old: next(it))
            assert_same(got, want, "next")
            if got[0][0] == "raised":
                assert got[0][1] is StopIteration
                break
            if rng.random() < 0.05:  # no step: the next iteration must assert, in both
                got, want = outcome(lambda it=native: next(it)), outcome(lambda it=old: next(it))
                assert_same(got, want, "next without a step")
                assert got[0][1] is AssertionError
            observation, _, terminated, truncated, _ = trio.native.last()
            trio.old.last()
            if terminated or truncated:
                action = None
            elif rng.random() < 0.03:
                action = int(np.flatnonzero(observation["action_mask"] == 0)[0])  # illegal
            else:
                action = rng.choice(np.flatnonzero(observation["action_mask"]).tolist())
            trio.call("agent_iter step", "step", action)


@pytest.mark.filterwarnings("ignore")
def test_an_illegal_move_ends_the_episode_as_terminate_illegal_wrapper_does() -> None:
    aec = env(preset="all_fives", players=3, episode="match")
    aec.reset(seed=4)
    for _ in range(5):  # some rewards may be waiting in _cumulative_rewards
        aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[0]))
    offender, infos = aec.agent_selection, {a: dict(i) for a, i in aec.infos.items()}
    before = dict(aec._cumulative_rewards)
    observation, *_ = aec.last()
    EnvLogger.flush()
    aec.step(int(np.flatnonzero(observation["action_mask"] == 0)[0]))
    assert any("Illegal move made" in message for message in EnvLogger.mqueue)
    assert aec.terminations == aec.truncations == dict.fromkeys(aec.possible_agents, True)
    assert aec.rewards == {a: (-1.0 if a == offender else 0) for a in aec.possible_agents}
    assert {a: type(r) for a, r in aec.rewards.items()} == {
        a: float if a == offender else int for a in aec.possible_agents
    }
    assert aec._cumulative_rewards == {a: (-1.0 if a == offender else before[a]) for a in aec.possible_agents}
    assert aec.infos == infos
    assert aec.agent_selection == aec.possible_agents[0]  # the first dead agent steps first
    with pytest.raises(ValueError, match="only valid action is None"):
        aec.step(0)


def test_env_is_its_own_unwrapped_env_and_no_wrapper() -> None:
    aec = env(preset="draw", players=3)
    assert aec.unwrapped is aec and isinstance(aec, raw_env)
    assert not isinstance(aec, wrappers.BaseWrapper)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kwargs", CONFIGS[2:4], ids=lambda k: f"{k['preset']}-{k['players']}p")
def test_the_parallel_form_matches_the_one_over_the_wrapper_stack(kwargs: dict) -> None:
    rng = random.Random(2)
    native, old = turn_based_aec_to_parallel(env(**kwargs)), turn_based_aec_to_parallel(old_env(**kwargs))
    for seed in range(4):
        got, want = native.reset(seed=seed), old.reset(seed=seed)
        assert_same(got, want, "parallel reset")
        observations = got[0]
        while native.agents:
            active = next((a for a, o in observations.items() if o["action_mask"].any()), native.agents[0])
            mask = observations[active]["action_mask"]
            pool = np.flatnonzero(mask == 0) if rng.random() < 0.01 else np.flatnonzero(mask)
            actions = dict.fromkeys(native.agents, 0) | {active: int(rng.choice(pool.tolist()))}
            got, want = outcome(lambda a=actions: native.step(a)), outcome(lambda a=actions: old.step(a))
            assert_same(got, want, "parallel step")
            observations = got[0][1][0]
        assert native.agents == old.agents == []
