"""What an episode is and what it pays: one definition for every environment, the arena and search.

An episode is a ``"round"`` or a ``"match"`` (rounds to the target). Its winner is the
round's winning side, or the game's in a match. Rewards in points are zero-sum: each
side's points minus the mean over sides, so partners share one value and the sides'
rewards add up to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

import numpy as np

Episode = Literal["round", "match"]
EPISODES: tuple[Episode, ...] = ("round", "match")

Winner = TypeVar("Winner")


def check_episode(episode: object) -> Episode:
    """``episode`` when it is an episode kind; else a ValueError naming the choices."""
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}; got {episode!r}")
    return episode  # type: ignore[return-value]


def episode_winner(episode: Episode, winner: Winner, game_winner: Winner) -> Winner:
    """The side that won the episode: the round's ``winner``, or the ``game_winner`` of a match.

    Works alike on single results (ints or None) and on per-game arrays.
    """
    return game_winner if episode == "match" else winner


def relative_points(points: np.ndarray) -> np.ndarray:
    """Each side's points minus the mean over sides (the last axis): zero-sum rewards, float64."""
    points = np.asarray(points, dtype=np.float64)
    return points - points.mean(axis=-1, keepdims=True)


def relative_points_of(points: Sequence[int]) -> list[float]:
    """``relative_points`` of one result's per-side points, as a list: the same floats, exactly
    (integer points have an exact sum, and each step rounds as NumPy's does), at a tenth of the cost."""
    mean = sum(points) / len(points)
    return [side - mean for side in points]
