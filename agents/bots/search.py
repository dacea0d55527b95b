"""Search bots: determinised Monte Carlo (``pimc``) and its cheating upper bound (``omniscient``).

``pimc`` answers a batch of observations at once. For every row with more than
one legal move it deals the hidden tiles ``samples`` times consistently with
the public information (``sampler.determinise``), shuffles the draw pile, and
plays every legal move on every sample followed by ``rollouts`` playouts of a
fast bot (``strong`` by default, or a trained network given by its checkpoint
path; with ``epsilon`` > 0 it plays a random legal move that often, which makes
repeated rollouts differ). All these games run in
one ``DominoCore`` batch, started at the observed position (``positions``).
A move's value is the mean over its playouts of the points our side scores from
the position on minus the mean over sides, plus ``prior`` x ``strong``'s score of
the move: with a few dozen samples, moves whose playouts differ by less than the
noise are ranked by the heuristic. Every move of a row is evaluated on the same
samples, so their difference has less noise.

The value is the rest of the round: match-level considerations (how close the
target is) are not searched, though the game scores are part of the position
(they decide muggins blocked rounds and a mid-round target).

With ``exact``, 2-player block or draw rules only (``solver.solvable``), a move is valued by
playing each sample's rest of the round perfectly for both sides (``solver.solve``)
instead of by playouts: the search's limit is then the sampling alone. In draw the
rollout bot plays on while there is a pile to draw from (a round with the pile's order
known is solvable too, but 200 times slower), and the solver takes over once it is empty.

``omniscient`` is the same search on the true hidden tiles and draw order, read
from the arena's core (``cheats = True``): an upper bound, never a fair opponent.
"""

from __future__ import annotations

import numpy as np

from agents.bots import heuristic
from agents.bots.features import Board, Moves
from agents.bots.inference import check_inferable, move_log_likelihood
from agents.bots.positions import load_positions
from agents.bots.sampler import determinise, pile_order
from agents.bots.solver import check_solvable, solvable_now, solve
from agents.bots.trained import checkpoint_file, load_checkpoint_policy
from domino_env.engine.core import DominoCore
from domino_env.engine.deals import random_deals
from domino_env.engine.outcome import relative_points
from domino_env.engine.rules import Rules
from domino_env.envs.policies import Policy, sample_legal

ROLLOUT_BOTS = {
    "strong": heuristic.StrongBot,
    "heaviest": heuristic.HeaviestBot,
    "random": heuristic.RandomBot,
}


def default_samples(rules: Rules) -> int:
    """24 sampled deals per move; 12 with fives scoring, whose longer playouts (drawing and
    scoring to the end of the round) would otherwise pass 20 ms per move one game at a time.
    Both budgets beat ``strong`` on 2,000 duplicate deals (docs/arena.md)."""
    return 12 if rules.fives else 24


def rollout_policy(spec: str | Policy, rules: Rules, seed: int | None) -> Policy:
    """The playout policy: a fast bot by name, a trained network (checkpoint path or shipped name),
    or a policy object as it is (a distillation's network in training, ``distill.refine``).

    A network that plays better than ``strong`` makes better playouts: the search's
    values are only as good as the play it assumes after the move (docs/arena.md).
    """
    if not isinstance(spec, str):
        return spec
    if spec in ROLLOUT_BOTS:
        return ROLLOUT_BOTS[spec](rules, seed=seed)
    bots = ", ".join(ROLLOUT_BOTS)
    return network_policy(spec, rules, seed, f"rollout_bot must be one of {bots} or a checkpoint")


def network_policy(spec: str, rules: Rules, seed: int | None, choices: str) -> Policy:
    """A trained network by checkpoint path or shipped name; ``choices`` starts the error message.

    Opened through ``agents.bots.trained``, not the registry: the registry lists these bots.
    """
    choices += " (a path or a shipped agent's name)"
    try:
        return load_checkpoint_policy(checkpoint_file(spec), rules, 0 if seed is None else seed)
    except ValueError as error:
        raise ValueError(f"{choices}, got {spec!r} ({error})") from None


class PimcBot:
    """Determinised Monte Carlo search: ``samples`` x ``rollouts`` playouts per legal move."""

    name = "pimc"

    def __init__(
        self,
        rules: Rules,
        seed: int | None = None,
        samples: int | None = None,
        rollouts: int = 1,
        rollout_bot: str | Policy = "strong",
        epsilon: float = 0.0,
        prior: float = 0.5,
        max_games: int = 32768,
        exact: bool = False,
        policy_prior: str = "",
        policy_weight: float = 1.0,
        inference: str = "",
        candidates: int = 4,
    ) -> None:
        if samples is None:
            samples = default_samples(rules)
        if not isinstance(exact, bool):
            raise ValueError(f"exact must be true or false, got {exact!r}")
        for option, spec in (("policy_prior", policy_prior), ("inference", inference)):
            if not isinstance(spec, str):
                raise ValueError(
                    f"{option} must be a checkpoint (a path or a shipped agent's name), got {spec!r}"
                )
        if samples < 1 or rollouts < 1:
            raise ValueError(f"samples and rollouts must be >= 1, got {samples} and {rollouts}")
        if exact:
            check_solvable(rules)
            if not rules.drawing and (rollouts != 1 or epsilon or rollout_bot != "strong"):
                raise ValueError(
                    "exact play in block has no playouts: leave rollouts, epsilon and rollout_bot unset"
                )
        self.exact = exact
        self.rules = rules
        self.rng = np.random.default_rng(seed)
        self.samples, self.rollouts, self.epsilon, self.max_games = samples, rollouts, epsilon, max_games
        self.prior = heuristic.StrongBot(rules) if prior else None
        self.prior_weight = prior
        self.rollout_bot = rollout_policy(rollout_bot, rules, seed)
        self.policy_prior = None
        if policy_prior:
            self.policy_prior = network_policy(policy_prior, rules, seed, "policy_prior must be a checkpoint")
        self.policy_weight = policy_weight
        self.opponent_model = None
        if inference:
            check_inferable(rules)
            if candidates < 1:
                raise ValueError(f"candidates must be >= 1, got {candidates}")
            self.opponent_model = network_policy(inference, rules, seed, "inference must be a checkpoint")
        self.candidates = candidates
        self._dummy_deal = random_deals(rules, 1, self.rng)

    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        actions = mask.argmax(axis=1)
        rows = np.flatnonzero(mask.sum(axis=1) > 1)
        if len(rows):
            hands, orders = self.positions(obs, rows)
            actions[rows] = self.search(obs[rows], mask[rows], hands, orders)
        return actions

    def positions(self, obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R, S, P) hands and (R, S, 28) tile orders (draw pile last) to search ``rows`` on."""
        if self.opponent_model is None:
            found = determinise(Board(self.rules, obs[rows]), self.samples, self.rng)
            hands, rest = found.hands, found.rest
        else:  # ``candidates`` x more deals, of which ``samples`` are drawn by their likelihood
            found = determinise(Board(self.rules, obs[rows]), self.samples * self.candidates, self.rng)
            loglik = self.log_likelihood(obs[rows], found.hands)
            # Gumbel top-k: a draw of ``samples`` without replacement, each in proportion to its likelihood.
            gumbel = -np.log(-np.log(self.rng.random(loglik.shape)))
            keep = np.argsort(-(loglik + gumbel), axis=1, kind="stable")[:, : self.samples]
            hands = np.take_along_axis(found.hands, keep[:, :, None], axis=1)
            rest = np.take_along_axis(found.rest, keep, axis=1)
        r, s = rest.shape
        return hands, pile_order(rest.reshape(-1), self.rng).reshape(r, s, -1)

    def log_likelihood(self, obs: np.ndarray, hands: np.ndarray) -> np.ndarray:
        """(B, S) log-likelihood of the other seats' moves under the opponent model for (B, S, P) ``hands``
        (a best response weighs only its target's seats: ``best_response.BestResponseBot``)."""
        return move_log_likelihood(self.rules, obs, hands, self.opponent_model)

    def move_values(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        hands: np.ndarray | None = None,
        orders: np.ndarray | None = None,
    ) -> np.ndarray:
        """(B, A) float64: every legal move's search value (what ``__call__`` maximises), NaN elsewhere.

        Every row is searched, forced moves included: the values are a teacher's
        soft targets (``agents.training.distill``), richer than its argmax. ``hands`` (B, S, P)
        and ``orders`` (B, S, 28), when given, are the positions to search instead of
        determinisations of ``obs``: the true deal makes a privileged teacher, for
        training targets only.
        """
        if hands is None or orders is None:
            hands, orders = self.positions(obs, np.arange(len(obs)))
        row, action = np.nonzero(mask)
        values = np.full(mask.shape, np.nan)
        values[row, action] = self.values(obs, mask, hands, orders)
        return values

    def search(self, obs: np.ndarray, mask: np.ndarray, hands: np.ndarray, orders: np.ndarray) -> np.ndarray:
        """Best legal move per row by mean playout value over the rows' determinisations."""
        row, action = np.nonzero(mask)
        value = self.values(obs, mask, hands, orders)
        starts = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=len(mask)))[:-1]])
        top = np.maximum.reduceat(value, starts)
        index = np.where(value >= top[row], np.arange(len(value)), len(value))
        return action[np.minimum.reduceat(index, starts)]

    def values(self, obs: np.ndarray, mask: np.ndarray, hands: np.ndarray, orders: np.ndarray) -> np.ndarray:
        """Value of each legal move, in ``np.nonzero(mask)`` order: mean playout points plus the prior."""
        row, action = np.nonzero(mask)
        samples, per_move = hands.shape[1], hands.shape[1] * self.rollouts
        value = np.zeros(len(action))
        step = max(1, self.max_games // per_move)
        for start in range(0, len(action), step):
            moves = np.arange(start, min(start + step, len(action)))
            move = np.repeat(moves, per_move)
            sample = np.tile(np.repeat(np.arange(samples), self.rollouts), len(moves))
            game_row = row[move]
            finish = self._solved if self.exact else self._playouts
            outcome = finish(obs[game_row], hands[game_row, sample], orders[game_row, sample], action[move])
            value[moves] = outcome.reshape(len(moves), per_move).mean(axis=1)
        if self.prior is not None:
            value = value + self.prior_weight * self.prior.score(Moves(Board(self.rules, obs), mask))
        if self.policy_prior is not None:
            probabilities = self.policy_prior.probabilities(obs, mask)[row, action]
            value = value + self.policy_weight * np.log(np.maximum(probabilities, 1e-6))
        return value

    def _solved(
        self, obs: np.ndarray, hands: np.ndarray, orders: np.ndarray, first: np.ndarray
    ) -> np.ndarray:
        """Play ``first``, the rollout bot until the solver can take over (at once in block; in draw
        once the pile is empty and the hands are small), then the rest of the round perfectly for
        both seats; our side's relative points."""
        core, value, live = self._play_out(obs, hands, orders, first, until_solvable=True)
        live = np.flatnonzero(live)
        mover = core.to_play[live]
        hands_now = core.hands[live]
        solved = solve(
            hands_now[np.arange(len(live)), mover],
            hands_now[np.arange(len(live)), 1 - mover],
            core.ends[live, :2],
        )
        value[live] = np.where(mover == 0, solved, -solved)  # the observer is seat 0
        return value

    def _playouts(
        self, obs: np.ndarray, hands: np.ndarray, orders: np.ndarray, first: np.ndarray
    ) -> np.ndarray:
        """Play ``first`` then the rollout bot to the end of the round; our side's relative points."""
        return self._play_out(obs, hands, orders, first, until_solvable=False)[1]

    def _play_out(
        self, obs: np.ndarray, hands: np.ndarray, orders: np.ndarray, first: np.ndarray, until_solvable: bool
    ) -> tuple[DominoCore, np.ndarray, np.ndarray]:
        """Play ``first`` then the rollout bot until each round ends (or, ``until_solvable``, until
        ``solvable_now``): the core, our side's relative points of the ended rounds, and which games
        are still live."""
        n = len(first)
        core = DominoCore(self.rules, n, seed=self.rng, deals=self._dummy_deal)
        load_positions(core, obs, hands, orders)
        value = np.zeros(n)
        live = np.ones(n, dtype=bool)
        stepping, actions = live.copy(), first
        while True:
            result = core.step(actions, active=None if stepping.all() else stepping)
            ended = np.flatnonzero(result.round_over & stepping)
            value[ended] = relative_points(result.points[ended])[:, 0]
            live[ended] = False
            stepping = live & ~solvable_now(core) if until_solvable else live.copy()
            playing = np.flatnonzero(stepping)
            if not len(playing):
                return core, value, live
            obs_now, mask = core.observe(), core.legal_mask()
            actions = mask.argmax(axis=1)
            actions[playing] = self.rollout_bot(obs_now[playing], mask[playing])
            if self.epsilon:
                explore = playing[self.rng.random(len(playing)) < self.epsilon]
                actions[explore] = sample_legal(mask[explore], self.rng)


class OmniscientBot(PimcBot):
    """CHEATS: the pimc search on the true hidden hands and draw order, read from the core.

    The arena reveals the core and the rows' games before each call
    (``policy.reveal_to_cheater``); a determinisation of the truth needs one
    sample, so the budget is ``rollouts`` playouts per move.
    """

    name = "omniscient"
    cheats = True

    def __init__(self, rules: Rules, seed: int | None = None, rollouts: int = 1, **options) -> None:
        super().__init__(rules, seed=seed, samples=1, rollouts=rollouts, **options)
        self._core: DominoCore | None = None
        self._games = np.zeros(0, dtype=np.intp)

    def reveal(self, core: DominoCore, games: np.ndarray) -> None:
        """The core whose games the rows of the next call are (``games[i]`` for row i)."""
        self._core, self._games = core, np.asarray(games)

    def positions(self, obs: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        core = self._core
        if core is None or len(self._games) != len(obs):
            raise RuntimeError("omniscient needs reveal(core, games) for the rows of each call")
        games = self._games[rows]
        seats = (core.to_play[games][:, None] + np.arange(self.rules.players)) % self.rules.players
        hands = np.take_along_axis(core.hands[games], seats, axis=1)
        return hands[:, None, :], core.deal[games][:, None, :]
