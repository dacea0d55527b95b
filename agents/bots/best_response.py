"""Search best response (``best_response``): a lower bound on how far a known policy can be exploited.

``best_response`` knows its ``target``'s policy and searches against it, with no training: pimc's
determinised search (``search.PimcBot``) with the target as both the opponent model of its
inference and the playout policy. At each decision it deals the hidden tiles ``samples x
candidates`` times consistently with the public facts, replays the round's public moves from
each deal and weighs the deal by the probability of the target's moves there
(``inference.move_log_likelihood``, at the target's seats only), keeps ``samples`` deals by that
weight (pimc's Gumbel top-k), and plays every legal move on each, then the target's policy at
every seat to the end of the round. Its own later moves in the playouts are the target's too, so
the move is a one-step policy improvement over the target: against the target it should score at
least what the target scores against itself (level), up to the sampling noise. Its points per
round against the target in the arena, with their CI, are a lower bound on the target's
exploitability.

The budget is pimc's (``samples``: 24 deals, 12 with fives scoring; ``prior``: 0.5 x ``strong``'s
score of the move added to its mean points, which ranks the moves the playouts cannot tell apart)
with 6 ``candidates`` per kept deal: against a deterministic target, 6 x 24 deals leave 24
consistent ones at most positions of 2-player block. The prior scored more than none against
``heaviest``, ``strong`` and ``block-2p`` (docs/arena.md); ``prior=0`` picks by the playouts alone.

Querying the target (``TargetPolicy``): a deterministic target (every heuristic bot, a greedy
network as ``load_policy`` opens a checkpoint, a torch module or an SB3 model played by its
argmax) puts probability 1 on the move it would make, so a deal in which it would have played
otherwise is weighed down by ``inference.MIN_PROBABILITY`` per contradicted move: rejection, as
far as the candidates allow. The kept deals are the consistent ones, drawn uniformly; where
fewer than ``samples`` candidates are consistent the rest are those that contradict the fewest
moves (a contradiction costs 9.2 in log-weight, far past the Gumbel noise), and where none is,
the search runs on those least-contradicting deals alone: it still plays, on a worse picture of
the hidden hands. ``random`` is uniform over the legal moves (every deal equally likely; its
playouts draw from this bot's generator). A target whose move cannot be queried exactly is a
ValueError that names it: ``pimc`` and the other search bots (their moves come from their own
random deals), a sampling network, any other policy object (whether it is deterministic cannot
be told).

In draw presets the round cannot be replayed from a deal (when tiles were drawn is not public:
``inference.check_inferable``), so the deals are uniform among those consistent with the public
facts: the search then ignores what the target's moves reveal, and the bound is weaker.

The target's seats are the other seat (2 players), the two opponents (teams: the partner is this
bot in the arena), or every other seat (3-4 players each for themselves). In the arena's other
seating of those last presets this bot holds all seats but one, and its own other seats' moves
are weighed as if the target's: an approximation that weakens the bound there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.bots import heuristic
from agents.bots.adapters import SB3Policy, TorchModulePolicy, object_name
from agents.bots.inference import check_inferable, move_log_likelihood
from agents.bots.search import PimcBot
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy, sample_legal

DEFAULT_CANDIDATES = 6
"""Deals dealt per kept deal, for inference to choose from (block presets)."""
TARGETS = (
    "a heuristic bot, 'random', a greedy network (a checkpoint or shipped agent), a torch module or SB3 model"
)
"""What ``best_response`` can query, for its error messages."""


class TargetPolicy:
    """The target as the search queries it: its moves (playouts) and their probabilities (inference)."""

    def __init__(self, policy: Policy, uniform: bool, rng: np.random.Generator) -> None:
        self.policy, self.uniform, self.rng, self.name = policy, uniform, rng, object_name(policy)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return sample_legal(mask, self.rng) if self.uniform else np.asarray(self.policy(obs, mask))

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, A): uniform over the legal moves for ``random``, else one-hot on the target's move."""
        if self.uniform:
            return mask / mask.sum(axis=1, keepdims=True)
        out = np.zeros(mask.shape)
        out[np.arange(len(mask)), self.policy(obs, mask)] = 1.0
        return out


def query(target: Any) -> bool:
    """Whether ``target`` plays uniformly at random (True) or deterministically (False); a ValueError
    naming it for a policy whose move the search cannot compute exactly."""
    name = f"{object_name(target)!r}"
    refused = f"best_response cannot query the target {name}"
    if isinstance(target, str):
        raise ValueError(
            f"{refused}: BestResponseBot takes a policy object; by name, "
            f"make_bot('best_response', rules, target={target!r})"
        )
    if isinstance(target, heuristic.RandomBot):
        return True
    if isinstance(target, PimcBot):
        raise ValueError(
            f"{refused}: a search bot's move depends on the deals of the hidden tiles it searches "
            f"(its own random samples, or the truth for omniscient), not on what it sees alone; "
            f"targets: {TARGETS}"
        )
    greedy = getattr(target, "greedy", None)
    if greedy is False:
        raise ValueError(
            f"{refused}: it samples its moves (greedy=False), and the search queries deterministic "
            f"targets and 'random' only; load it greedy (load_policy, as the arena does)"
        )
    if greedy is True or isinstance(target, (heuristic.ScoringBot, TorchModulePolicy, SB3Policy)):
        return False
    raise ValueError(
        f"{refused} ({type(target).__name__}): the search needs the target's move as a function of "
        f"the observation, and cannot tell that this policy is one; targets: {TARGETS}"
    )


def inferable(rules: Rules) -> bool:
    """Whether the round can be replayed from a sampled deal (``inference.check_inferable``)."""
    try:
        check_inferable(rules)
    except ValueError:
        return False
    return True


def target_seats(rules: Rules) -> tuple[int, ...]:
    """Relative seats the target plays: the opponents with teams, every other seat without."""
    return (1, 3) if rules.teams else tuple(range(1, rules.players))


class BestResponseBot(PimcBot):
    """pimc against a known ``target``: deals weighed by the target's moves, playouts by the target."""

    name = "best_response"

    def __init__(
        self,
        rules: Rules,
        seed: int | None = None,
        *,
        target: Policy,
        samples: int | None = None,
        candidates: int = DEFAULT_CANDIDATES,
        prior: float = 0.5,
        max_games: int = 32768,
    ) -> None:
        if candidates < 1:
            raise ValueError(f"candidates must be >= 1, got {candidates}")
        uniform = query(target)
        super().__init__(rules, seed=seed, samples=samples, prior=prior, max_games=max_games)
        self.target = self.rollout_bot = TargetPolicy(target, uniform, self.rng)
        if inferable(rules):
            self.opponent_model, self.candidates = self.target, candidates
        self.target_seats = target_seats(rules)

    def log_likelihood(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        return move_log_likelihood(self.rules, obs, hands, self.target, self.target_seats)
