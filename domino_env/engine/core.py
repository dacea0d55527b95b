"""The batched game core: N games of one rule system, stepped by compiled kernels.

Every game always has a seat to move (finished rounds and games are reset in
place), so ``step`` takes one action per game. Hands and the table are ``uint64``
bitboards; per-end legal tile sets are cached after every step, and the legal
mask and random legal actions are built from them; every seat's observation is
kept up to date incrementally. The rules themselves live in ``domino_env.engine.kernels``
(numba, one compiled pass over the stepped games); this class holds the state
arrays, checks arguments, supplies deals and builds ``StepResult``. Conventions
(action encoding, spinner, scoring, observation layout) are in ``docs/engine.md``.

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
from typing import Any

import numpy as np

from domino_env.engine import kernels
from domino_env.engine.actions import action_to_move
from domino_env.engine.deals import DealSource, PreparedDeals
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import ObservationViews, observation_size
from domino_env.engine.outcome import Episode, check_episode
from domino_env.engine.rules import Rules
from domino_env.engine.tiles import NUM_TILES, PIPS

LINKED = ("ends", "end_tile", "kernel_rules", "kernel_state")
"""``DominoCore`` attributes derived from the others by ``_link`` (not pickled)."""


def action_index(action: Any, num_actions: int) -> int:
    """A single action as an ``int``: a Python or NumPy integer (bools are not actions); else ValueError.

    The range is checked by the core, whose ``IllegalMoveError`` names the legal moves.
    """
    if type(action) is int or isinstance(action, np.integer):  # the usual cases, first (bools are neither)
        return operator.index(action)
    if not isinstance(action, (bool, np.bool_)) and getattr(action, "dtype", None) != np.bool_:
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise ValueError(
        f"action {action!r} ({type(action).__name__}) is not an action: "
        f"actions are integers 0..{num_actions - 1} (Python or NumPy ints; bools are not actions)"
    )


def step_outputs(m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty per-game outputs of the stepping kernels: placing seat, round-end code, fives."""
    return np.empty(m, dtype=np.intp), np.empty(m, dtype=np.int8), np.empty(m, dtype=np.int32)


def kernel_deals(prepared: PreparedDeals) -> tuple[np.ndarray, ...]:
    """The kernels' view of prepared deals (``kernels.start_rounds``'s ``deals``), bitboards as int64."""
    return (
        prepared.hands.view(np.int64),
        prepared.deals,
        prepared.draw_prefix.view(np.int64),
        prepared.own_tiles,
        prepared.forced,
    )


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
    """(N,) int8: ``rules.END_CODES`` index of how the round ended."""
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
    (deal k of game g is ``deals[(first_deal[g] + k) % D]``, from row 0 unless
    ``first_deal`` says otherwise); ``openers`` fixes the chance opener of each deal
    (lots/random presets).
    """

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        seed: int | np.random.Generator | None = None,
        episode: Episode = "round",
        deals: np.ndarray | None = None,
        openers: np.ndarray | None = None,
        first_deal: np.ndarray | None = None,
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        if isinstance(num_games, bool) or not isinstance(num_games, (int, np.integer)) or num_games < 1:
            raise ValueError(f"num_games must be a positive integer, got {num_games!r}")
        self.rules = rules
        self.num_games = n = int(num_games)
        self.episode = check_episode(episode)
        self.players = p = rules.players
        self.num_sides = rules.num_sides
        self.num_ends = rules.num_ends
        self.num_actions = rules.num_actions
        self.obs_size = observation_size(rules)
        self.side_of_seat = np.array([rules.side_of(s) for s in range(p)], dtype=np.intp)
        self._arange = np.arange(n)

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
        self._link()
        self.reset(seed=seed, deals=deals, openers=openers, first_deal=first_deal)

    def _link(self) -> None:
        """Views of the state arrays and the kernels' handles on them (rebuilt when unpickled)."""
        self.ends = self._end_state[:, :4]
        """(N, 4) number showing at left, right, up, down; -1 when not open."""
        self.end_tile = self._end_state[:, 4:]
        """(N, 4) outer tile of each end; -1 when not open or an unplayed short side."""
        self.kernel_rules = kernels.kernel_rules(self.rules, self.views, match=self.episode == "match")
        self.kernel_state = kernels.KernelState(
            hands=self.hands.view(np.int64),  # int64 views: the same memory, tiles use 28 bits
            table=self.table.view(np.int64),
            end_state=self._end_state,
            end_count=self.end_count,
            spinner=self.spinner,
            spin_need=self.spin_need,
            to_play=self.to_play,
            opener=self.opener,
            forced=self.forced,
            num_placed=self.num_placed,
            last_move=self.last_move,
            missing=self.missing,
            draws=self.draws,
            passes=self.passes,
            bone_pos=self.bone_pos,
            deal=self.deal,
            draw_prefix=self.draw_prefix.view(np.int64),
            scores=self.scores,
            round_points=self.round_points,
            rounds_played=self.rounds_played,
            seat_rows=self.views.seat_rows,
            shared=self.views.shared,
            legal_bits=self.legal_bits.view(np.int64),
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
        first_deal: np.ndarray | None = None,
    ) -> None:
        """Start every game afresh (new game, scores 0). A seed reseeds everything.

        Without new ``deals`` a fixed deal list restarts each game from its first deal;
        ``openers`` and ``first_deal`` come with the deals they belong to.
        """
        for name, value in (("openers", openers), ("first_deal", first_deal)):
            if value is not None and deals is None:
                raise ValueError(f"reset({name}=...) needs the deals it belongs to: pass deals= as well")
        if seed is not None or not hasattr(self, "rng"):
            self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        if deals is not None or not hasattr(self, "deal_source"):
            self.deal_source = DealSource(self.rules, self.rng, self.num_games, deals, openers, first_deal)
        else:
            self.deal_source.restart(self.rng)
        self.scores[:] = 0
        self.rounds_played[:] = 0
        self.start_rounds(self._arange, first=np.ones(self.num_games, dtype=bool))

    def start_rounds(self, games: np.ndarray, first: np.ndarray, winners: np.ndarray | None = None) -> None:
        """Deal and set up a new round in ``games`` (first[i]: first round of its game)."""
        self.deal_rounds(games, first, winners, *self.deal_source.select(games))

    def deal_rounds(
        self,
        games: np.ndarray,
        first: np.ndarray,
        winners: np.ndarray | None,
        prepared: PreparedDeals,
        deal_rows: np.ndarray,
        opener: np.ndarray,
    ) -> None:
        """Set up a new round in ``games`` from rows ``deal_rows`` of ``prepared`` deals.

        ``start_rounds`` takes them from the deal source; ``Game`` passes an explicit deal.
        """
        deals = kernel_deals(prepared)
        next_winner = np.full(len(games), -1, dtype=np.intp) if winners is None else winners
        kernels.start_rounds(
            self.kernel_rules, self.kernel_state, games, first, next_winner, deals, deal_rows,
            opener.astype(np.intp, copy=False),
        )  # fmt: skip

    def refresh_legal(self, games: np.ndarray | None = None) -> None:
        """Recompute the cached legal sets (of ``games``, default all) from hands, table and ends.

        The core keeps them up to date itself; call this after writing the state
        arrays directly (``agents.bots.positions.load_positions`` does).
        """
        rows = self._arange if games is None else np.asarray(games, dtype=np.intp)
        kernels.refresh_legal(self.kernel_rules, self.kernel_state, rows)

    # -- queries ---------------------------------------------------------------
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
        actions = np.empty(self.num_games, dtype=np.int64)
        kernels.pick_legal(self.kernel_state.legal_bits, rng.random(self.num_games), actions)
        return actions

    def observe(self, seats: np.ndarray | int | None = None, games: np.ndarray | None = None) -> np.ndarray:
        """(N, obs_size) int16 observations of ``seats`` (default: the seat to move).

        With ``games`` (indices), only those rows: ``seats`` then has one entry per game listed.
        """
        rows = self._arange if games is None else np.asarray(games, dtype=np.intp)
        if seats is None:
            seats = self.to_play.take(rows)
        seats = np.broadcast_to(np.asarray(seats, dtype=np.intp), rows.shape)
        obs = np.empty((len(rows), self.obs_size), dtype=np.int16)
        kernels.observe(self.kernel_rules, self.kernel_state, rows, seats, obs)
        return obs

    def hand_pips(self) -> np.ndarray:
        """(N, players) pips left in each hand."""
        tiles = np.unpackbits(
            self.hands.view(np.uint8).reshape(*self.hands.shape, 8),
            axis=-1,
            count=NUM_TILES,
            bitorder="little",
        )
        return tiles.astype(np.int16) @ PIPS

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
            rows = self._arange
        else:
            active = np.asarray(active)
            if active.shape != (n,) or active.dtype != bool:
                raise ValueError(
                    f"active must be a bool array of shape ({n},), got {active.dtype} {active.shape}"
                )
            rows = np.flatnonzero(active)
            actions = actions[rows]
        actions = actions.astype(np.int64, copy=False)
        bad = kernels.first_illegal(rows, actions, self.kernel_state.legal_bits, self.num_actions)
        if bad >= 0:
            self._raise_illegal(rows, actions, bad)
        seat, end_code, fives = step_outputs(len(rows))
        kernels.place_and_advance(self.kernel_rules, self.kernel_state, rows, actions, end_code, fives, seat)
        return self._step_result(rows, seat, end_code, fives)

    def play_random(self, stop_seat: np.ndarray, active: np.ndarray, rng: np.random.Generator) -> StepResult:
        """Random legal moves in every ``active`` game until ``stop_seat`` is to move or the round ends.

        One compiled pass for what would take one ``step`` per move: environments
        use it for random opponents. The result is ``step``'s, with ``fives``
        summed over the moves; a game whose round ended is already dealt anew and
        may again have another seat to move.
        """
        rows = np.flatnonzero(active)
        seat, end_code, fives = step_outputs(len(rows))
        key = rng.integers(2**63, dtype=np.uint64)
        stop = np.asarray(stop_seat, dtype=np.intp)
        kernels.play_random(self.kernel_rules, self.kernel_state, rows, stop, key, end_code, fives, seat)
        return self._step_result(rows, seat, end_code, fives)

    def _step_result(self, rows: np.ndarray, seat: np.ndarray, end_code: np.ndarray, fives) -> StepResult:
        """The step's ``StepResult``; the rounds that ended are scored and dealt anew."""
        n = self.num_games
        result = StepResult(
            round_over=np.zeros(n, dtype=bool),
            game_over=np.zeros(n, dtype=bool),
            end=np.zeros(n, dtype=np.int8),
            winner=np.full(n, -1, dtype=np.int8),
            points=np.zeros((n, self.num_sides), dtype=np.int32),
            scores=self.scores.copy(),
            game_winner=np.full(n, -1, dtype=np.int8),
            fives=np.zeros(n, dtype=np.int32),
        )
        result.end[rows] = end_code
        result.round_over[rows] = end_code > 0
        if self.rules.fives:
            result.fives[rows] = fives
        finished = np.flatnonzero(end_code)
        if len(finished):
            self._finish_rounds(rows[finished], seat[finished], end_code[finished], result)
        return result

    def _finish_rounds(
        self, games: np.ndarray, placer: np.ndarray, end: np.ndarray, result: StepResult
    ) -> None:
        """Score the rounds that ended, decide game ends, and start new rounds/games."""
        out = kernels.RoundResults(
            result.winner, result.points, result.scores, result.game_over, result.game_winner
        )
        first, winners = np.empty(len(games), dtype=bool), np.empty(len(games), dtype=np.intp)
        work = np.empty((4, self.num_sides), dtype=np.int64)
        kernels.finish_rounds(
            self.kernel_rules, self.kernel_state, games, placer, end, out, first, winners, work
        )
        self.start_rounds(games, first, winners)

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
