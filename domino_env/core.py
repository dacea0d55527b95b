"""The batched game core: N games of one rule system stepped together with NumPy.

Every game always has a seat to move (finished rounds and games are reset in
place), so ``step`` takes one action per game. Hands and the table are ``uint64``
bitboards; per-end legal tile sets are cached after every step, and the legal
mask and random legal actions are built from them; every seat's observation is
kept up to date incrementally. There is no Python loop over games: the only loops
are over seats (at most 4). Conventions (action encoding, spinner, scoring,
observation layout) are in ``docs/engine.md``.

Example::

    core = DominoCore(Rules.preset("block", 2), num_games=4096, seed=0)
    for _ in range(100):
        mask = core.legal_mask()            # (N, num_actions) bool
        obs = core.observe()                # (N, obs_size) int16, seat to move
        result = core.step(core.random_actions())
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .actions import action_to_move
from .deals import BIT, DealSource
from .errors import IllegalMoveError
from .observation import ObservationViews, observation_size
from .rules import Rules, winner_points
from .tiles import HIGH, IS_DOUBLE, LOW, NUM_TILES, NUMBER_MASK, OTHER_HALF, PIPS

ONE = np.uint64(1)
FIT_MASK = np.concatenate([NUMBER_MASK, [0]]).astype(np.uint64)
"""``FIT_MASK.take(n)``: tiles carrying n; n = -1 (an end not open) takes the empty last entry."""
NUMBER_BIT = np.array([1 << n for n in range(7)] + [0], dtype=np.uint8)
"""``NUMBER_BIT.take(n)``: the bit of number n in a 7-bit number set (0 for n = -1)."""
END_VALUE = np.zeros((NUM_TILES + 1) * 8, dtype=np.int16)
"""``END_VALUE[(outer_tile + 1) * 8 + n + 1]``: what an end showing n adds to the fives count."""
END_VALUE.reshape(NUM_TILES + 1, 8)[1:, 1:] = np.arange(7)[None, :] * (1 + IS_DOUBLE[:, None])
OTHER_HALF_FLAT = np.concatenate([OTHER_HALF, np.full((NUM_TILES, 1), -1, np.int8)], axis=1).reshape(-1)
"""``OTHER_HALF_FLAT[tile * 8 + n]``: number shown after placing ``tile`` against ``n``."""

_CHUNK = np.arange(1 << 14)
_BITS14 = (_CHUNK[:, None] >> np.arange(14)) & 1
PIPS_LOW = (_BITS14 * PIPS[:14]).sum(axis=1).astype(np.int16)
PIPS_HIGH = (_BITS14 * PIPS[14:]).sum(axis=1).astype(np.int16)
POPCOUNT14 = _BITS14.sum(axis=1).astype(np.int64)
NTH_BIT14 = np.zeros((1 << 14) * 14, dtype=np.int64)
"""``NTH_BIT14[chunk * 14 + j]``: position of the j-th set bit of a 14-bit chunk."""
for _j in range(14):
    _cum = np.cumsum(_BITS14, axis=1)
    NTH_BIT14[_j::14] = np.where(_cum[:, -1] > _j, (_cum <= _j).sum(axis=1), 0)
del _CHUNK, _BITS14, _cum, _j
LOW14 = np.uint64(0x3FFF)
SHIFT14 = np.uint64(14)

END_CODES = ("", "domino", "blocked", "closed", "target")
"""``StepResult.end`` codes: 0 round goes on, 1 domino, 2 blocked, 3 closed, 4 target."""
DOMINO, BLOCKED, CLOSED, TARGET = 1, 2, 3, 4

LINKED = ("ends", "end_tile", "_kernels", "_kernel_rules", "_kernel_state")
"""``DominoCore`` attributes derived from the others by ``_link`` (not pickled)."""
Engine = Literal["numba", "numpy"]
ENGINES = ("numba", "numpy")


def compiled_kernels(engine: Engine):
    """The numba kernels module for ``engine="numba"``, None for the NumPy engine."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {engine!r}")
    if engine == "numpy":
        return None
    from . import kernels  # compiles (or loads from numba's cache) on first use

    return kernels


def action_index(action: Any, num_actions: int) -> int:
    """A single action as an ``int``: a Python or NumPy integer (bools are not actions); else ValueError.

    The range is checked by the engines, whose ``IllegalMoveError`` names the legal moves.
    """
    if not isinstance(action, (bool, np.bool_)) and getattr(action, "dtype", None) != np.bool_:
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise ValueError(
        f"action {action!r} ({type(action).__name__}) is not an action: "
        f"actions are integers 0..{num_actions - 1} (Python or NumPy ints; bools are not actions)"
    )


def hand_pips(hands: np.ndarray) -> np.ndarray:
    """Pip total of each bitboard (any shape)."""
    low = (hands & LOW14).astype(np.intp)
    return PIPS_LOW[low] + PIPS_HIGH[(hands >> SHIFT14).astype(np.intp)]


@dataclass
class StepResult:
    """What happened in a step, per game. Finished games are already reset.

    ``points``/``scores`` are per side (team or seat) and describe the round that
    just ended (zeros where ``round_over`` is False).
    """

    round_over: np.ndarray
    """(N,) bool: a round ended on this step."""
    game_over: np.ndarray
    """(N,) bool: the episode ended (every round in round mode; the game in match mode)."""
    end: np.ndarray
    """(N,) int8: END_CODES index of how the round ended."""
    winner: np.ndarray
    """(N,) int8: winning side of the round, -1 for none."""
    points: np.ndarray
    """(N, sides) int32: points of the round that ended (fives + end points)."""
    scores: np.ndarray
    """(N, sides) int32: game scores after this step, before any reset."""
    game_winner: np.ndarray
    """(N,) int8: winning side of the game where game_over, else -1."""
    fives: np.ndarray
    """(N,) int32: fives scored by this placement (0 without fives scoring)."""


class DominoCore:
    """N games of one rule system. See the module docstring and docs/engine.md.

    mode ``"round"``: each round is an episode (scores start at 0, the first-round
    opener rule each time). ``"match"``: rounds continue to the target with the
    later-round opener rule; a finished game starts a new one.
    Explicit ``deals`` (shape (D, 28), or (28,)) are walked in order by every game
    (deal k of each game is ``deals[k % D]``); ``openers`` fixes the chance opener
    of each deal (lots/random presets).
    """

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        seed: int | np.random.Generator | None = None,
        mode: Literal["round", "match"] = "round",
        deals: np.ndarray | None = None,
        openers: np.ndarray | None = None,
        engine: Engine = "numba",
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        if mode not in ("round", "match"):
            raise ValueError(f"mode must be 'round' or 'match', got {mode!r}")
        self.rules = rules
        self.num_games = n = int(num_games)
        self.mode = mode
        self.players = p = rules.players
        self.num_sides = rules.num_sides
        self.num_ends = rules.num_ends
        self.num_actions = rules.num_actions
        self.obs_size = observation_size(rules)
        self.side_of_seat = np.array([rules.side_of(s) for s in range(p)], dtype=np.intp)
        self._arange = np.arange(n)
        self._seat_base = self._arange * p
        self._end_base = self._arange * 8
        self._next_seat = (np.arange(p) + 1) % p

        self.hands = np.zeros((n, p), dtype=np.uint64)
        self.table = np.zeros(n, dtype=np.uint64)
        self.deal = np.zeros((n, NUM_TILES), dtype=np.int8)
        """(N, 28) this round's deal: hands in seat order, then the boneyard in draw order."""
        self.draw_prefix = np.zeros((n, NUM_TILES + 1), dtype=np.uint64)
        self.bone_pos = np.zeros(n, dtype=np.intp)
        self._end_state = np.full((n, 8), -1, dtype=np.intp)
        """(N, 8) ``ends`` then ``end_tile``: the two are views of it (see ``_link``)."""
        self.end_count = np.zeros((n, 4), dtype=np.int16)
        """(N, 4) what each end adds to the fives count (kept only with fives scoring)."""
        self.spinner = np.full(n, -1, dtype=np.intp)
        self.spin_need = np.zeros(n, dtype=np.intp)
        self.to_play = np.zeros(n, dtype=np.intp)
        self.opener = np.zeros(n, dtype=np.intp)
        self.forced = np.full(n, -1, dtype=np.intp)
        self.num_placed = np.zeros(n, dtype=np.int16)
        self.last_move = np.zeros((n, p), dtype=np.int16)
        """(N, P) placement number of each seat's latest tile this round (0: none)."""
        self.missing = np.zeros((n, p), dtype=np.uint8)
        """(N, P) 7-bit sets of the numbers each seat is known not to hold."""
        self.draws = np.zeros((n, p), dtype=np.int16)
        """(N, P) tiles drawn this round."""
        self.passes = np.zeros((n, p), dtype=np.int16)
        """(N, P) passes this round."""
        self.scores = np.zeros((n, self.num_sides), dtype=np.int32)
        self.round_points = np.zeros((n, self.num_sides), dtype=np.int32)
        self.rounds_played = np.zeros(n, dtype=np.int32)
        """(N,) rounds finished so far in each game's current match (match mode)."""
        self.legal_bits = np.zeros((n, self.num_ends), dtype=np.uint64)
        self.views = ObservationViews(rules, n)
        self.engine = engine
        """What steps the games: ``"numba"`` (compiled kernels) or ``"numpy"`` (array operations)."""
        self._link()
        self.reset(seed=seed, deals=deals, openers=openers)

    def _link(self) -> None:
        """Views of the state arrays and the kernels' handles on them (rebuilt when unpickled)."""
        self.ends = self._end_state[:, :4]
        """(N, 4) number showing at left, right, up, down; -1 when not open."""
        self.end_tile = self._end_state[:, 4:]
        """(N, 4) outer tile of each end; -1 when not open or an unplayed short side."""
        self._kernels = compiled_kernels(self.engine)
        if self._kernels is None:
            return
        self._kernel_rules = self._kernels.kernel_rules(self.rules, self.views, match=self.mode == "match")
        renamed = {
            "hands": self.hands.view(np.int64),  # int64 views: same memory, tiles use 28 bits
            "table": self.table.view(np.int64),
            "draw_prefix": self.draw_prefix.view(np.int64),
            "legal_bits": self.legal_bits.view(np.int64),
            "end_state": self._end_state,
            "seat_rows": self.views.seat_rows,
            "shared": self.views.shared,
        }
        self._kernel_state = self._kernels.KernelState(
            *(
                renamed[name] if name in renamed else getattr(self, name)
                for name in self._kernels.KernelState._fields
            )
        )

    def __getstate__(self) -> dict:
        """Pickle and deepcopy the state arrays only: views would come back as separate copies."""
        return {k: v for k, v in self.__dict__.items() if k not in LINKED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link()

    # -- resetting -----------------------------------------------------------
    def reset(
        self,
        seed: int | np.random.Generator | None = None,
        deals: np.ndarray | None = None,
        openers: np.ndarray | None = None,
    ) -> None:
        """Start every game afresh (new game, scores 0). A seed reseeds everything.

        Without new ``deals`` a fixed deal list restarts from its first deal;
        ``openers`` come with the deals they belong to.
        """
        if openers is not None and deals is None:
            raise ValueError("reset(openers=...) needs the deals they belong to: pass deals= as well")
        if seed is not None or not hasattr(self, "rng"):
            self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        if deals is not None or not hasattr(self, "deal_source"):
            self.deal_source = DealSource(self.rules, self.rng, self.num_games, deals, openers)
        else:
            self.deal_source.restart(self.rng)
        self.scores[:] = 0
        self.rounds_played[:] = 0
        self._start_rounds(self._arange, first=np.ones(self.num_games, dtype=bool))
        self._update_legal()

    def _start_rounds(self, games: np.ndarray, first: np.ndarray, winners: np.ndarray | None = None) -> None:
        """Deal and set up a new round in ``games`` (first[i]: first round of its game)."""
        if self._kernels is not None:
            prepared, deal_rows, opener = self.deal_source.select(games)
            deals = (
                prepared.hands.view(np.int64),
                prepared.deals,
                prepared.draw_prefix.view(np.int64),
                prepared.own_tiles,
                prepared.forced,
            )
            next_winner = np.full(len(games), -1, dtype=np.intp) if winners is None else winners
            self._kernels.start_rounds(
                self._kernel_rules, self._kernel_state, games, first, next_winner, deals, deal_rows,
                opener.astype(np.intp, copy=False),
            )  # fmt: skip
            return
        rules = self.rules
        new = self.deal_source.take(games)
        self.hands[games] = new.hands
        self.deal[games] = new.deals
        if rules.drawing:
            self.draw_prefix[games] = new.draw_prefix
            self.bone_pos[games] = rules.players * rules.hand_size
        else:
            self.bone_pos[games] = NUM_TILES
        self.table[games] = 0
        self._end_state[games] = -1
        if rules.spinner:
            self.spinner[games] = -1
            self.spin_need[games] = 0
        if rules.fives:
            self.end_count[games] = 0
        self.num_placed[games] = 0
        self.last_move[games] = 0
        self.missing[games] = 0
        self.draws[games] = 0
        self.passes[games] = 0
        self.round_points[games] = 0
        opener, forced = new.opener, new.forced
        if rules.later_opener != "same":
            later = self._next_seat.take(self.opener[games])
            if rules.later_opener == "winner" and winners is not None:
                later = np.where(winners >= 0, winners, later)
            opener, forced = np.where(first, opener, later), np.where(first, forced, -1)
        self.opener[games] = opener
        self.to_play[games] = opener
        self.forced[games] = forced
        draw_pile = rules.boneyard_size if rules.drawing else 0
        self.views.start_round(games, new.own_tiles, self.scores[games], opener, draw_pile)

    # -- queries ---------------------------------------------------------------
    def _update_legal(self, at=slice(None)) -> None:
        """Cache, per game and end, the tiles the seat to move may place there (games ``at``)."""
        rows = self._arange[at]
        hand = self.hands.reshape(-1).take(rows * self.players + self.to_play[at])
        ends = self.ends[at]
        legal = np.empty((len(rows), self.num_ends), dtype=np.uint64)
        for e in range(self.num_ends):
            np.bitwise_and(hand, FIT_MASK.take(ends[:, e]), out=legal[:, e])
        opening = np.flatnonzero(self.table[at] == 0)
        if len(opening):
            forced = self.forced[rows[opening]]
            legal[opening] = 0
            legal[opening, 0] = np.where(forced >= 0, BIT.take(np.maximum(forced, 0)), hand[opening])
        self.legal_bits[at] = legal

    def legal_mask(self, games: np.ndarray | None = None) -> np.ndarray:
        """(N, num_actions) bool mask of the legal actions of the seat to move (or rows ``games`` only)."""
        bits = self.legal_bits if games is None else self.legal_bits.take(games, axis=0)
        n, e = len(bits), self.num_ends
        unpacked = np.unpackbits(
            bits.view(np.uint8).reshape(n, e, 8), axis=2, count=NUM_TILES, bitorder="little"
        )
        return unpacked.reshape(n, NUM_TILES * e).view(bool)

    def random_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """A uniformly random legal action per game (int64), from the cached bitboards."""
        rng = self.rng if rng is None else rng
        if self._kernels is not None:
            actions = np.empty(self.num_games, dtype=np.int64)
            self._kernels.pick_legal(self._kernel_state.legal_bits, rng.random(self.num_games), actions)
            return actions
        counts = [np.bitwise_count(self.legal_bits[:, e]).astype(np.int64) for e in range(self.num_ends)]
        total = counts[0] + counts[1]
        for count in counts[2:]:
            total += count
        rank = (rng.random(self.num_games) * total).astype(np.int64)
        # Walk the ends: a game moves on past end e while its rank is beyond e's legal tiles.
        end = np.zeros(self.num_games, dtype=np.int64)
        bits = self.legal_bits[:, 0]
        moving = np.ones(self.num_games, dtype=bool)
        for e in range(1, self.num_ends):
            moving &= rank >= counts[e - 1]
            np.subtract(rank, counts[e - 1], out=rank, where=moving)
            end += moving
            bits = np.where(moving, self.legal_bits[:, e], bits)
        low = (bits & LOW14).astype(np.int64)
        in_low = POPCOUNT14.take(low)
        high = rank >= in_low
        chunk = np.where(high, (bits >> SHIFT14).astype(np.int64), low)
        tile = NTH_BIT14.take(chunk * 14 + rank - np.where(high, in_low, 0)) + 14 * high
        return end * NUM_TILES + tile

    def observe(self, seats: np.ndarray | int | None = None, games: np.ndarray | None = None) -> np.ndarray:
        """(N, obs_size) int16 observations of ``seats`` (default: the seat to move).

        With ``games`` (indices), only those rows: ``seats`` then has one entry per game listed.
        """
        rows = self._arange if games is None else np.asarray(games, dtype=np.intp)
        if seats is None:
            seats = self.to_play.take(rows)
        seats = np.broadcast_to(np.asarray(seats, dtype=np.intp), rows.shape)
        if self._kernels is None:
            return self.views.observe(self, rows, seats)
        obs = np.empty((len(rows), self.obs_size), dtype=np.int16)
        self._kernels.observe(self._kernel_rules, self._kernel_state, rows, seats, obs)
        return obs

    def hand_pips(self) -> np.ndarray:
        """(N, players) pips left in each hand."""
        return hand_pips(self.hands)

    # -- stepping --------------------------------------------------------------
    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> StepResult:
        """Place one tile in every game (or only where ``active``), then run draws, passes and round ends.

        ``active`` (bool, (N,)) lets the other games stand still, e.g. while an
        environment waits for a learner; their ``actions`` entries are ignored.
        """
        n = self.num_games
        actions = np.asarray(actions)
        if actions.shape != (n,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(
                f"actions must be an integer array of shape ({n},), got {actions.dtype} {actions.shape}"
            )
        if active is None:
            at, rows = slice(None), self._arange  # every game: plain views, no gathers
        else:
            active = np.asarray(active)
            if active.shape != (n,) or active.dtype != bool:
                raise ValueError(
                    f"active must be a bool array of shape ({n},), got {active.dtype} {active.shape}"
                )
            at = rows = np.flatnonzero(active)
        actions = actions[at].astype(np.int64, copy=False)
        if self._kernels is not None:
            seat, end_code, fives = self._compiled_step(rows, actions)
        else:
            seat, end_code, fives = self._numpy_step(at, rows, actions)
        result = self._step_result(at, rows, seat, end_code, fives)
        if self._kernels is None:  # the kernels keep the legal sets up to date themselves
            self._update_legal(at)
        return result

    def _step_result(self, at, rows: np.ndarray, seat: np.ndarray, end_code: np.ndarray, fives) -> StepResult:
        """The step's ``StepResult``; the rounds that ended are scored and dealt anew."""
        result = self._blank_result()
        result.end[at] = end_code
        result.round_over[at] = end_code > 0
        if fives is not None:
            result.fives[at] = fives
        finished = np.flatnonzero(end_code)
        if len(finished):
            self._finish_rounds(rows[finished], seat[finished], end_code[finished], result)
        return result

    def _blank_result(self) -> StepResult:
        """A ``StepResult`` in which no round ended, scores as they are now."""
        n = self.num_games
        return StepResult(
            round_over=np.zeros(n, dtype=bool),
            game_over=np.zeros(n, dtype=bool),
            end=np.zeros(n, dtype=np.int8),
            winner=np.full(n, -1, dtype=np.int8),
            points=np.zeros((n, self.num_sides), dtype=np.int32),
            scores=self.scores.copy(),
            game_winner=np.full(n, -1, dtype=np.int8),
            fives=np.zeros(n, dtype=np.int32),
        )

    def play_random(self, stop_seat: np.ndarray, active: np.ndarray, rng: np.random.Generator) -> StepResult:
        """Random legal moves in every ``active`` game until ``stop_seat`` is to move or the round ends.

        One compiled pass for what would take one ``step`` per move (the NumPy
        engine takes those steps): environments use it for random opponents. The
        result is ``step``'s, with ``fives`` summed over the moves; a game whose
        round ended is already dealt anew and may again have another seat to move.
        """
        if self._kernels is None:
            return self._play_random_steps(np.asarray(stop_seat), np.asarray(active, dtype=bool), rng)
        rows = np.flatnonzero(active)
        m = len(rows)
        seat, end_code = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.int8)
        fives = np.empty(m, dtype=np.int32)
        key = rng.integers(2**63, dtype=np.uint64)
        stop = np.asarray(stop_seat, dtype=np.intp)
        self._kernels.play_random(
            self._kernel_rules, self._kernel_state, rows, stop, key, end_code, fives, seat
        )
        return self._step_result(rows, rows, seat, end_code, fives if self.rules.fives else None)

    def _play_random_steps(self, stop_seat: np.ndarray, active: np.ndarray, rng: np.random.Generator):
        """``play_random`` as one ``step`` per move round, for the NumPy engine."""
        total = self._blank_result()
        going = active & (self.to_play != stop_seat)
        while going.any():
            result = self.step(self.random_actions(rng), going)
            total.fives += result.fives
            total.scores[going] = result.scores[going]
            ended = result.round_over
            for name in ("round_over", "game_over", "end", "winner", "points", "game_winner"):
                getattr(total, name)[ended] = getattr(result, name)[ended]
            going &= ~ended & (self.to_play != stop_seat)
        return total

    def _compiled_step(self, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Check and play ``actions`` with the numba kernels; returns placer, end code and fives per game."""
        bad = self._kernels.first_illegal(rows, actions, self._kernel_state.legal_bits, self.num_actions)
        if bad >= 0:
            self._raise_illegal(rows, actions, bad)
        m = len(rows)
        seat, end_code = np.empty(m, dtype=np.intp), np.empty(m, dtype=np.int8)
        fives = np.empty(m, dtype=np.int32)
        self._kernels.place_and_advance(
            self._kernel_rules, self._kernel_state, rows, actions, end_code, fives, seat
        )
        return seat, end_code, fives if self.rules.fives else None

    def _numpy_step(self, at, rows: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        """Check and play ``actions`` with NumPy array operations; returns placer, end code, fives."""
        rules = self.rules
        end = actions // NUM_TILES
        tile = actions - end * NUM_TILES
        in_range = (actions >= 0) & (actions < self.num_actions)
        if not in_range.all():
            self._raise_illegal(rows, actions, int(np.flatnonzero(~in_range)[0]))
        legal = (self.legal_bits.reshape(-1).take(rows * self.num_ends + end) >> tile.astype(np.uint64)) & ONE
        if not legal.all():
            self._raise_illegal(rows, actions, int(np.flatnonzero(~legal.astype(bool))[0]))

        seat = self.to_play[at].copy()
        seat_index = rows * self.players + seat
        bit = BIT.take(tile)
        hands_flat = self.hands.reshape(-1)
        hands_flat[seat_index] ^= bit
        opening = self.table[at] == 0
        self.table[at] |= bit
        self.num_placed[at] += 1
        placed = self.num_placed[at]
        self.last_move.reshape(-1)[seat_index] = placed

        # ends and end_tile are the two halves of each _end_state row.
        end_index = rows * 8 + end
        end_state = self._end_state.reshape(-1)
        outer_before = end_state.take(end_index + 4)
        number = OTHER_HALF_FLAT.take(tile * 8 + end_state.take(end_index))
        end_state[end_index] = number
        end_state[end_index + 4] = tile
        self.views.placed(rows, tile, seat, end, opening, number, placed)
        if rules.fives:
            self.end_count.reshape(-1)[rows * 4 + end] = END_VALUE.take((tile + 1) * 8 + number + 1)
        if opening.any():
            op, games = np.flatnonzero(opening), rows[opening]
            self.ends[games, 0] = HIGH.take(tile[op])
            self.ends[games, 1] = LOW.take(tile[op])
            self.end_tile[games, 1] = tile[op]
            self.views.opened(games, tile[op], self.ends[games, 0], self.ends[games, 1])
            if rules.fives:
                self.end_count[games, 0] = END_VALUE.take((tile[op] + 1) * 8 + HIGH.take(tile[op]) + 1)
                self.end_count[games, 1] = END_VALUE.take((tile[op] + 1) * 8 + LOW.take(tile[op]) + 1)
        if rules.spinner:
            self._update_spinner(at, rows, tile, end, opening, outer_before)

        side = self.side_of_seat.take(seat)
        fives = self._score_fives(at, rows, tile, side) if rules.fives else None

        end_code = np.zeros(len(rows), dtype=np.int8)
        if rules.target_mid_round:
            reached = self.scores.reshape(-1).take(rows * self.num_sides + side) >= rules.target
            end_code[(fives > 0) & reached] = TARGET
        end_code[hands_flat.take(seat_index) == 0] = DOMINO
        if rules.closed_game:
            end_code[(end_code == 0) & self._closed(at)] = CLOSED
        end_code[self._advance(at, rows, seat, end_code == 0)] = BLOCKED
        return seat, end_code, fives

    def _raise_illegal(self, rows: np.ndarray, actions: np.ndarray, bad: int) -> None:
        game, action = int(rows[bad]), int(actions[bad])
        opening = bool(self.table[game] == 0)
        moves = ", ".join(action_to_move(a, opening) for a in np.flatnonzero(self.legal_mask()[game]))
        if 0 <= action < self.num_actions:
            what = f"action {action} ({action_to_move(action, opening)})"
        else:
            what = f"action {action} (out of range 0..{self.num_actions - 1})"
        raise IllegalMoveError(
            f"game {game}: {what} is illegal for seat {int(self.to_play[game])}; legal: {moves}"
        )

    def _update_spinner(self, at, rows, tile, end, opening, outer_before) -> None:
        """The first double becomes the spinner; its short sides open once both long sides hold a tile."""
        spinner, need = self.spinner[at], self.spin_need[at]
        attach = (need > 0) & (outer_before == spinner) & (end < 2) & ~opening
        need = need - attach
        opened = np.flatnonzero(attach & (need == 0))
        if len(opened):
            games, number = rows[opened], HIGH.take(spinner[opened])
            self.ends[games, 2] = number
            self.ends[games, 3] = number
            self.views.short_sides_opened(games, number)
        new = (spinner < 0) & IS_DOUBLE.take(tile)
        self.spinner[at] = np.where(new, tile, spinner)
        self.spin_need[at] = np.where(new, np.where(opening, 2, 1), need)

    def _score_fives(self, at, rows: np.ndarray, tile: np.ndarray, side: np.ndarray) -> np.ndarray:
        """Score the open-end count when it is a positive multiple of 5."""
        ends = self.end_count[at]
        count = ends[:, 0] + ends[:, 1] + ends[:, 2] + ends[:, 3]
        count = np.where(self.num_placed[at] == 1, PIPS.take(tile), count).astype(np.int32)
        fives = np.where((count % 5 == 0) & (count > 0), count, 0).astype(np.int32)
        scorers = np.flatnonzero(fives)
        if len(scorers):
            games, sides = rows[scorers], side[scorers]
            self.scores[games, sides] += fives[scorers]
            self.round_points[games, sides] += fives[scorers]
            self.views.scores(games, self.scores[games])
        return fives

    def _closed(self, at) -> np.ndarray:
        """Every open end shows one number whose 7 tiles are all on the table."""
        ends = self.ends[at]
        first = ends[:, 0]
        same = ((ends == first[:, None]) | (ends < 0)).all(axis=1)
        complete = (FIT_MASK.take(first) & ~self.table[at]) == 0
        return same & complete & (first >= 0)

    def _advance(self, at, rows: np.ndarray, placer: np.ndarray, going: np.ndarray) -> np.ndarray:
        """Pass the turn to the next seat that can play, running draws and passes.

        Works on the stepped games ``rows`` (``at`` indexes them); games not
        ``going`` (their round just ended) are left untouched. Returns, per stepped
        game, whether nobody can play (blocked).
        """
        p = self.players
        ends = self.ends[at]
        fit = FIT_MASK.take(ends[:, 0]) | FIT_MASK.take(ends[:, 1])
        numbers = NUMBER_BIT.take(ends[:, 0]) | NUMBER_BIT.take(ends[:, 1])
        if self.rules.spinner:
            fit |= FIT_MASK.take(ends[:, 2]) | FIT_MASK.take(ends[:, 3])
            numbers |= NUMBER_BIT.take(ends[:, 2]) | NUMBER_BIT.take(ends[:, 3])
        hands_flat = self.hands.reshape(-1)
        seat = self._next_seat.take(placer)
        can = (hands_flat.take(rows * p + seat) & fit) != 0
        self.to_play[at] = seat
        # The few games whose next seat cannot play: walk round the table with them.
        local = np.flatnonzero(going & ~can)
        seat = seat[local]
        touched = rows[local]  # later rounds of the walk only ever shrink this set
        for _ in range(p):
            games = rows[local]
            drawers = self.bone_pos.take(games) < NUM_TILES
            passers = ~drawers
            g, s = games[passers], seat[passers]
            self.passes[g, s] += 1
            self.missing[g, s] |= numbers[local[passers]]
            found = np.zeros(len(local), dtype=bool)
            if drawers.any():
                d = local[drawers]
                found[drawers] = self._draw(rows[d], seat[drawers], fit[d], numbers[d])
            local, seat = local[~found], seat[~found]
            seat = self._next_seat.take(seat)
            can = (hands_flat.take(rows[local] * p + seat) & fit[local]) != 0
            self.to_play[rows[local[can]]] = seat[can]
            local, seat = local[~can], seat[~can]
            if not len(local):
                break
        if len(touched):
            self.views.missing(touched, self.missing[touched])
        blocked = np.zeros(len(rows), dtype=bool)
        blocked[local] = True
        return blocked

    def _draw(self, games: np.ndarray, seats: np.ndarray, fit: np.ndarray, numbers: np.ndarray) -> np.ndarray:
        """``seats`` draw in boneyard order until a tile fits; returns which found one."""
        start = self.bone_pos[games]
        fits = ((fit[:, None] >> self.deal[games].astype(np.uint64)) & ONE).astype(bool)
        fits &= np.arange(NUM_TILES)[None, :] >= start[:, None]
        found = fits.any(axis=1)
        stop = np.where(found, fits.argmax(axis=1) + 1, NUM_TILES)
        drawn = self.draw_prefix[games, stop] & ~self.draw_prefix[games, start]
        self.hands[games, seats] |= drawn
        self.draws[games, seats] += (stop - start).astype(np.int16)
        self.bone_pos[games] = stop
        self.missing[games, seats] = numbers
        self.passes[games[~found], seats[~found]] += 1
        self.to_play[games[found]] = seats[found]
        self.views.drew(games, seats, drawn, NUM_TILES - stop)
        return found

    # -- round and game ends -----------------------------------------------------
    def _finish_rounds(
        self, games: np.ndarray, placer: np.ndarray, end: np.ndarray, result: StepResult
    ) -> None:
        """Score the rounds that ended, decide game ends, and start new rounds/games."""
        if self._kernels is not None:
            out = self._kernels.RoundResults(
                result.winner, result.points, result.scores, result.game_over, result.game_winner
            )
            first, winners = np.empty(len(games), dtype=bool), np.empty(len(games), dtype=np.intp)
            work = np.empty((4, self.num_sides), dtype=np.int64)
            self._kernels.finish_rounds(
                self._kernel_rules, self._kernel_state, games, placer, end, out, first, winners, work
            )
            self._start_rounds(games, first, winners)
            return
        rules = self.rules
        rows = np.arange(len(games))
        side_pips = self._per_side(hand_pips(self.hands[games]).astype(np.int32))
        winner = np.where((end == TARGET) | (end == DOMINO), self.side_of_seat[placer], -1)
        stuck = (end == BLOCKED) | (end == CLOSED)
        if stuck.any():
            winner = np.where(stuck, self._blocked_winner(games, placer, side_pips), winner)
        scored = (winner >= 0) & (end != TARGET)
        won = np.maximum(winner, 0)
        own = side_pips[rows, won]
        points = np.where(scored, winner_points(rules.round_points, side_pips.sum(axis=1) - own, own), 0)
        self.scores[games, won] += points.astype(np.int32)
        self.round_points[games, won] += points.astype(np.int32)

        scores = self.scores[games]
        best = scores.max(axis=1)
        decided = (best >= rules.target) & ((scores == best[:, None]).sum(axis=1) == 1)
        game_winner = np.where(end == TARGET, winner, np.where(decided, scores.argmax(axis=1), -1))
        game_over = decided | (end == TARGET) if self.mode == "match" else np.ones(len(games), dtype=bool)

        result.winner[games] = winner
        result.points[games] = self.round_points[games]
        result.scores[games] = scores
        result.game_over[games] = game_over
        result.game_winner[games] = np.where(game_over, game_winner, -1)

        self.rounds_played[games] += 1
        over = games[game_over]
        self.scores[over] = 0
        self.rounds_played[over] = 0
        # Sides are seats whenever later_opener is "winner" (rules validation).
        self._start_rounds(games, first=game_over, winners=np.where(scored, winner, -1))

    def _per_side(self, per_seat: np.ndarray, reduce=np.add) -> np.ndarray:
        """Fold a (m, players) array into (m, sides): team pairs 0+2 and 1+3, or unchanged."""
        return reduce(per_seat[:, :2], per_seat[:, 2:]) if self.rules.teams else per_seat

    def _blocked_winner(self, games: np.ndarray, placer: np.ndarray, side_pips: np.ndarray) -> np.ndarray:
        """Winning side of a blocked/closed round (-1: nobody), by the blocked rules."""
        rules, p = self.rules, self.players
        if rules.blocked_winner == "lightest_hand":
            key = -side_pips
        elif rules.blocked_winner == "heaviest_hand":
            key = side_pips
        else:
            key = self.scores[games]
        tied = key == key.max(axis=1, keepdims=True)
        single = tied.sum(axis=1) == 1
        winner = np.where(single, tied.argmax(axis=1), -1)
        if rules.blocked_tie == "opener":
            distance = (np.arange(p)[None, :] - self.opener[games][:, None]) % p
            side_distance = self._per_side(distance, reduce=np.minimum)
            return np.where(single, winner, np.where(tied, side_distance, p).argmin(axis=1))
        if rules.blocked_tie == "blocker_loses":
            return np.where(single, winner, 1 - self.side_of_seat[placer])
        if rules.blocked_tie == "fewest_tiles":
            tiles = np.where(
                tied, self._per_side(np.bitwise_count(self.hands[games]).astype(np.int32)), NUM_TILES + 1
            )
            fewest = tiles == tiles.min(axis=1, keepdims=True)
            last = self._per_side(self.last_move[games].astype(np.int32), reduce=np.maximum)
            by_tiles = np.where(
                fewest.sum(axis=1) == 1, fewest.argmax(axis=1), np.where(fewest, last, -1).argmax(axis=1)
            )
            return np.where(single, winner, by_tiles)
        return winner
