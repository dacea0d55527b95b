"""The chance of winning a match from its score: labels for play to the target, not for one round.

A network distilled on a round's points plays every round for its expected margin, whatever the
score. In a match that is not the aim: one side needing 6 points wants the round, not a big one;
the side 90 behind wants a big one. ``MatchEquity`` turns a round's outcome into the chance of
winning the match after it, from a table of every score: ``distill.value: match`` labels each move
with it (in percent) instead of its points, on positions taken from whole matches.

The table assumes the rounds to come are alike and independent: each a draw from the round
results of self-play (``round_results``), scored to side A or side B as they fell, both ways round.
That ignores who opens the next round, which the table could not know without the rounds' order.
It needs rules where one side at most scores in a round (no fives) and a match ends between rounds.
"""

from __future__ import annotations

import numpy as np

from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy
from domino_env.envs.selfplay import SelfPlay


def check_match_rules(rules: Rules) -> None:
    """Raise ValueError unless ``MatchEquity`` models these rules' matches exactly enough."""
    if rules.num_sides != 2:
        raise ValueError(f"{rules.name} {rules.players}p has {rules.num_sides} sides: the table needs two")
    if rules.fives or rules.target_mid_round:
        raise ValueError(
            f"{rules.name}: points scored during a round (fives) or a match ending mid-round: "
            "the table needs rounds that score once, at their end"
        )


def round_results(rules: Rules, policy: Policy, rounds: int, seed: int) -> np.ndarray:
    """(rounds,) side 0's points minus side 1's in ``rounds`` rounds of ``policy`` at every seat."""
    games = min(rounds, 1024)
    play = SelfPlay(rules, games, "round", seed=np.random.default_rng([seed, 3]))
    side_seat = [rules.side_of(seat) for seat in range(rules.players)].index(1)
    found: list[np.ndarray] = []
    while sum(map(len, found)) < rounds:
        state = play.state()
        step = play.step(policy(state.obs, state.mask))
        # Relative points: a side's points minus the mean over the two sides, so twice side 0's is the margin.
        margin = step.rewards[step.round_over, 0] - step.rewards[step.round_over, side_seat]
        found.append(np.rint(margin).astype(np.int64))
    return np.concatenate(found)[:rounds]


class MatchEquity:
    """``chance[a, b]``: the chance that a side with ``a`` points beats one with ``b`` in a match to
    ``target``, each round to come drawn from ``margins`` (side A's points minus side B's)."""

    def __init__(self, margins: np.ndarray, target: int) -> None:
        margins = np.concatenate([margins, -margins])  # either side may be A: no side is favoured
        values, counts = np.unique(margins, return_counts=True)
        p = counts / counts.sum()
        tie = p[values == 0].sum()
        if tie >= 1:
            raise ValueError("no round of the sample scored a point: the match would never end")
        gains_a, p_a = values[values > 0], p[values > 0] / (1 - tie)
        gains_b, p_b = -values[values < 0], p[values < 0] / (1 - tie)
        top = int(max(gains_a.max(initial=0), gains_b.max(initial=0)))
        # chance[a, b] on a board padded past the target: a side at or past it has won.
        chance = np.zeros((target + top, target + top))
        chance[target:, :] = 1.0
        for a in range(target - 1, -1, -1):
            for b in range(target - 1, -1, -1):  # a tie repeats the round: it only rescales the rest
                chance[a, b] = p_a @ chance[a + gains_a, b] + p_b @ chance[a, b + gains_b]
        self.target = target
        self.chance = chance

    def __call__(self, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
        """The chance of winning from scores ``ours`` against ``theirs`` (any shape, clipped to the board)."""
        last = self.chance.shape[0] - 1
        return self.chance[np.clip(ours, 0, last), np.clip(theirs, 0, last)]

    def label(self, rules: Rules, obs: np.ndarray, relative: np.ndarray) -> np.ndarray:
        """(B, A) float32: each move's chance of winning the match, in percent, when the round ends
        with ``relative`` points for our side (B, A: the teacher's labels, our side's points minus
        the mean over sides; NaN for illegal moves) from the scores in the mover's observations."""
        scores = obs[:, observation_fields(rules)["scores"]].astype(np.int64)
        rows, moves = np.nonzero(np.isfinite(relative))  # a few legal moves a row: no (B, A) temporaries
        # Relative points are half the margin; only the round's winner scores (no fives).
        points = np.rint(2 * relative[rows, moves]).astype(np.int64)
        labels = np.full(relative.shape, np.nan, dtype=np.float32)
        labels[rows, moves] = 100.0 * self(
            scores[rows, 0] + np.maximum(points, 0), scores[rows, 1] + np.maximum(-points, 0)
        )
        return labels
