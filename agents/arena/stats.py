"""Turning duplicate results into honest numbers: paired confidence intervals, win rates, ratings.

Per (table, deal) row of a ``duplicate.Played`` each seat gets its side's
points and a win share (1 when its side won, 1/sides when nobody did, else 0).
A pair's difference is paired over deals: for every deal, the mean over
rotations of the first policy's points per round minus the second's; the CI is
mean ± 1.96·sd/√n over deals. That difference is what the luck of the deal
cancels out of.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from openskill.models import PlackettLuce

from agents.arena.duplicate import Played
from domino_env.engine.rules import Rules

Z95 = 1.96


@dataclass
class Seated:
    """Per (row, seat) of a run: which policy sat there, its side's points and its win share."""

    policy: np.ndarray
    """(n, P) global policy index."""
    points: np.ndarray
    """(n, P) points of the seat's side."""
    win: np.ndarray
    """(n, P) win share of the seat's side."""
    deal: np.ndarray
    """(n,) deal index of the row."""
    pair: np.ndarray
    """(n,) pair index of the row."""


def seated(rules: Rules, played: Played, table_policies: np.ndarray, table_pair: np.ndarray) -> Seated:
    """Spread a run's rows over seats (``table_policies[t, seat]``: global policy index)."""
    sides = np.array([rules.side_of(s) for s in range(rules.players)])
    winner = played.winner[:, None]
    win = np.where(winner == sides, 1.0, np.where(winner < 0, 1.0 / rules.num_sides, 0.0))
    return Seated(
        table_policies[played.table],
        played.points[:, sides].astype(float),
        win,
        played.deal,
        table_pair[played.table],
    )


def policy_means(run: Seated, policy: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: (has the policy a seat, its mean points over its seats, its mean win share)."""
    mine = run.policy == policy
    count = mine.sum(axis=1)
    safe = np.maximum(count, 1)
    return count > 0, (run.points * mine).sum(axis=1) / safe, (run.win * mine).sum(axis=1) / safe


@dataclass
class PairResult:
    """Head-to-head of two policies over the same deals."""

    first: str
    second: str
    deals: int
    diff: float
    """Mean over deals of (first - second) points per round."""
    ci: float
    """95% half-width of ``diff`` (paired over deals)."""
    points: tuple[float, float]
    round_win: tuple[float, float]
    match_win: tuple[float, float] | None = None
    matches: int = 0

    @property
    def significant(self) -> bool:
        """The CI excludes parity."""
        return abs(self.diff) > self.ci


def paired_difference(
    run: Seated, pair: int, first: int, second: int, deals: int
) -> tuple[float, float, int]:
    """(mean, 95% half-width, n) of the per-deal difference, rotations averaged within each deal."""
    rows = run.pair == pair
    sub = Seated(*(getattr(run, f)[rows] for f in ("policy", "points", "win", "deal", "pair")))
    _, a, _ = policy_means(sub, first)
    _, b, _ = policy_means(sub, second)
    total = np.bincount(sub.deal, weights=a - b, minlength=deals)
    count = np.bincount(sub.deal, minlength=deals)
    per_deal = total[count > 0] / count[count > 0]
    n = len(per_deal)
    sd = per_deal.std(ddof=1) if n > 1 else float("inf")
    return float(per_deal.mean()), float(Z95 * sd / np.sqrt(n)), n


def pair_result(
    names: Sequence[str],
    rounds: Seated,
    matches: Seated | None,
    pair: int,
    first: int,
    second: int,
    deals: int,
) -> PairResult:
    """Everything reported about one pair."""
    diff, ci, n = paired_difference(rounds, pair, first, second, deals)
    rows = rounds.pair == pair
    points, wins = [], []
    for policy in (first, second):
        has, pts, win = policy_means(rounds, policy)
        points.append(float(pts[rows & has].mean()))
        wins.append(float(win[rows & has].mean()))
    result = PairResult(names[first], names[second], n, diff, ci, tuple(points), tuple(wins))
    if matches is not None:
        rows = matches.pair == pair
        shares = [float(policy_means(matches, p)[2][rows].mean()) for p in (first, second)]
        result.match_win, result.matches = (shares[0], shares[1]), int(rows.sum())
    return result


@dataclass
class PolicyResult:
    """One policy over every game it played in the run."""

    name: str
    points: float
    """Mean points per round of its seats."""
    points_ci: float
    round_win: float
    match_win: float | None
    rating: float
    """openskill mu (PlackettLuce), from the per-deal duplicate outcomes."""
    rating_ci: float
    """1.96 sigma."""
    ms_per_move: float
    """Time inside the policy per decision in the round-mode run (batched calls, amortised)."""


def policy_results(
    names: Sequence[str],
    rounds: Seated,
    matches: Seated | None,
    ratings: dict[str, tuple[float, float]],
    ms_per_move: np.ndarray,
) -> list[PolicyResult]:
    out = []
    for index, name in enumerate(names):
        has, pts, win = policy_means(rounds, index)
        pts, win = pts[has], win[has]
        match_win = None
        if matches is not None:
            mhas, _, mwin = policy_means(matches, index)
            match_win = float(mwin[mhas].mean())
        mu, sigma = ratings[name]
        ci = Z95 * pts.std(ddof=1) / np.sqrt(len(pts)) if len(pts) > 1 else float("inf")
        out.append(
            PolicyResult(
                name, float(pts.mean()), float(ci), float(win.mean()), match_win, mu, Z95 * sigma,
                float(ms_per_move[index]),
            )
        )  # fmt: skip
    return out


def ratings(
    names: Sequence[str], rounds: Seated, pairs: Sequence[tuple[int, int]], deals: int, seed: int
) -> dict[str, tuple[float, float]]:
    """openskill (PlackettLuce) (mu, sigma) per policy: one rated game per pair and deal.

    The game's ranking is the sign of the deal's duplicate difference (a tie when
    it is 0); games are rated in a seeded random order so no pair comes last.
    """
    model = PlackettLuce()
    players = {name: model.rating(name=name) for name in names}
    games = []
    for index, (first, second) in enumerate(pairs):
        rows = rounds.pair == index
        sub = Seated(*(getattr(rounds, f)[rows] for f in ("policy", "points", "win", "deal", "pair")))
        _, a, _ = policy_means(sub, first)
        _, b, _ = policy_means(sub, second)
        per_deal = np.bincount(sub.deal, weights=a - b, minlength=deals)
        played = np.bincount(sub.deal, minlength=deals) > 0
        games += [(first, second, float(d)) for d in per_deal[played]]
    for g in np.random.default_rng(seed).permutation(len(games)):
        first, second, d = games[g]
        a, b = names[first], names[second]
        ranks = [0, 0] if d == 0 else ([0, 1] if d > 0 else [1, 0])
        [[players[a]], [players[b]]] = model.rate([[players[a]], [players[b]]], ranks=ranks)
    return {name: (float(r.mu), float(r.sigma)) for name, r in players.items()}
