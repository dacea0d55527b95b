"""One game of dominoes on the compiled kernels: the engine under the one-game environments.

``Game`` is a ``DominoCore`` of one game, stepped through the same kernels as the
batched core, so the rules live in two places only: ``domino_env.engine.reference``
(readable) and ``domino_env.engine.kernels`` (compiled). What it adds is what one
game needs and a batch does not:

* speed at batch size one: it calls each kernel through the compiled entry point
  for its own argument types (``Dispatcher.compile``), skipping numba's per-call
  typing of the state tuples, which costs about 60 µs a call against 3 µs;
* an episode that stops: the batched core deals a finished game anew in the same
  step, while a ``Game`` keeps the final position (hands, table, scores) until
  ``reset``, for the last observation and rendering;
* records: explicit deals, openers and scores, a start from a replay record (also
  one whose opening put the low number on the left), the round as a record, and
  ``reference_round()`` for rendering.

The differential tests (``tests/test_game.py``) hold it to the reference engine move
for move, so every environment built on it is held there too.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Sequence

import numpy as np
from numba import typeof

from domino_env.engine import kernels
from domino_env.engine.actions import action_to_move
from domino_env.engine.core import DominoCore, kernel_deals, step_outputs
from domino_env.engine.deals import PreparedDeals, prepare_deals
from domino_env.engine.errors import IllegalMoveError
from domino_env.engine.observation import observation_fields
from domino_env.engine.outcome import Episode, check_episode
from domino_env.engine.reference import Round, RoundResult, deal_to_hands, parse_move
from domino_env.engine.rules import CHANCE_OPENERS, END_CODES, END_NAMES, Rules
from domino_env.engine.tiles import HIGH, LOW, NUM_TILES, PIPS, tile_index, tile_name
from domino_env.tools.records import play_moves, round_from_record, rule_overrides


def compiled(kernel, *args):
    """``kernel``'s compiled entry point for exactly these arguments' types (compiled if needed).

    Calling it skips the dispatcher's typing of every argument; it is only valid for
    arguments of the same types, which a ``Game`` guarantees by reusing its buffers.
    """
    return kernel.compile(tuple(typeof(arg) for arg in args))


class Game:
    """One game of dominoes (a round or a match) on the compiled kernels.

    Example::

        game = Game(Rules.preset("block", 2), seed=0)
        while not game.over:
            obs = game.observation(game.to_play)       # int16, Round.observation layout
            end = game.step(game.legal_actions()[0])   # draws and passes happen inside
        end.points, end.scores                         # the RoundResult of the last round

    Read-only state: ``to_play`` (None once the episode is over), ``opener``, ``hands``
    (bitboards), ``scores`` per side, ``draws``/``passes``/``missing`` per seat this round,
    ``deal`` (this round's 28 tiles), ``results`` (RoundResult of each round so far).
    """

    def __init__(
        self, rules: Rules, episode: Episode = "round", seed: int | np.random.Generator | None = None
    ) -> None:
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a Rules, got {type(rules).__name__}")
        self.rules = rules
        self.episode = check_episode(episode)
        self.players = rules.players
        self.num_sides = rules.num_sides
        self.num_ends = rules.num_ends
        self.num_actions = rules.num_actions
        self.core = DominoCore(rules, 1, episode=episode)  # seeded by the reset below, as every reset is
        """The game's state: row 0 of a one-game core."""
        core, r, s = self.core, self.core.kernel_rules, self.core.kernel_state
        self._row = np.zeros(1, dtype=np.intp)
        self._seat = np.zeros(1, dtype=np.intp)
        self._obs = np.empty((1, core.obs_size), dtype=np.int16)
        self._placer, self._end, _ = step_outputs(1)
        self._first = np.zeros(1, dtype=bool)
        self._winner = np.full(1, -1, dtype=np.intp)
        self._work = np.empty((4, self.num_sides), dtype=np.int64)
        sides = self.num_sides
        self._out = kernels.RoundResults(
            np.full(1, -1, dtype=np.int8),
            np.zeros((1, sides), dtype=np.int32),
            np.zeros((1, sides), dtype=np.int32),
            np.zeros(1, dtype=bool),
            np.full(1, -1, dtype=np.int8),
        )
        self._shown_mask = np.zeros((1, self.num_actions), dtype=np.int8)
        self._obs_row, self._mask_row = self._obs[0], self._shown_mask[0]
        """Views of what ``play_one`` and ``observe`` write: the observation and mask shown."""
        self._play = compiled(kernels.play_one, r, s, 0, 0, self._obs, self._shown_mask)
        self._observe = compiled(kernels.observe, r, s, self._row, self._seat, self._obs)
        self._finish = compiled(
            kernels.finish_rounds, r, s, self._row, self._placer, self._end, self._out, self._first,
            self._winner, self._work,
        )  # fmt: skip
        self._start = None
        self._one, self._nobody = np.ones(1, dtype=bool), np.full(1, -1, dtype=np.intp)
        """A first round's ``first`` and ``winner`` arguments to ``start_rounds``."""
        self._keep_scores = compiled(kernels.keep_final_scores, r, s, self._row, self._out.scores)
        self._to_move_at = observation_fields(rules)["to_move"].start
        self._no_actions = np.zeros(self.num_actions, dtype=np.int8)
        self._legal_bits = core.legal_bits[0]
        self._legal_bytes = core.legal_bits[0].view(np.uint8).reshape(self.num_ends, 8)
        """Views of the kernels' legal sets of this game (updated in place by every step)."""
        self.reset(seed)

    # -- starting episodes ---------------------------------------------------------
    def reset(
        self,
        seed: int | np.random.Generator | None = None,
        deal: Sequence[int] | np.ndarray | None = None,
        opener: int | None = None,
        scores: list[int] | None = None,
    ) -> None:
        """Start a new episode: a random deal, or ``deal`` (28 tiles: hands in seat order, then
        the boneyard in draw order) with ``opener`` (None: the first-round rule; needed for
        chance openers) and ``scores`` per side before the round. A seed reseeds the deals."""
        if deal is None:
            if opener is not None or scores is not None:
                raise ValueError("opener and scores go with an explicit deal")
            if seed is not None:
                self._reseed(seed)
            # a new game from the next random deal, as the batched core starts one
            self.core.scores[0] = 0
            self.core.rounds_played[0] = 0
            self._deal_round(self._one, self._nobody)
            self._begin_episode(None, None)
            return
        # The reference Round validates the deal, the opener and the scores (clear ValueErrors).
        hands, boneyard = deal_to_hands(self.rules, deal)
        checked = Round(self.rules, hands, boneyard, opener, scores)
        if seed is not None:
            self._reseed(seed)
        tiles = [t for hand in hands for t in hand] + boneyard
        self._deal_explicit(tiles, None if opener is None else checked.opener, list(checked.scores))

    def reset_from_record(self, record: dict, seed: int | np.random.Generator | None = None) -> None:
        """Start from a replay record (``domino_env.tools.records``) and replay its moves.

        The record's rules must be this game's rules; its moves must leave the round unfinished.
        A seed reseeds the random deals of the later rounds of a match.
        """
        checked = round_from_record(record)
        if checked.rules != self.rules:
            theirs, ours = dataclasses.asdict(checked.rules), dataclasses.asdict(self.rules)
            diff = ", ".join(
                f"{k}: record {theirs[k]!r}, game {ours[k]!r}" for k in ours if theirs[k] != ours[k]
            )
            raise ValueError(f"the record's rules differ from this game's ({diff})")
        deal = [t for hand in checked.hands for t in hand] + checked.boneyard
        scores = list(checked.scores)
        moves = record.get("moves", [])
        play_moves(checked, moves)  # validates every move, naming the one that fails
        if checked.over:
            raise ValueError(f"the record's moves end the round ({checked.end}); nothing is left to play")
        if seed is not None:
            self._reseed(seed)
        self._deal_explicit(deal, checked.opener if "opener" in record else None, scores)
        for move in moves:
            self.play_move(move)

    def _reseed(self, seed: int | np.random.Generator) -> None:
        """Restart the random deals from ``seed``, preparing only the next deal.

        ``DominoCore.reset(seed=...)`` would prepare a full batch of 4096 deals (about 1.5 ms)
        for the one a game uses next; with a seed every episode, the loop the Gymnasium and
        PettingZoo docs teach, that cost far more than the rounds played (the loop ran at 0.06x
        the unseeded one). The next deal is the first the seed's stream accepts either way, so
        a seed deals what it dealt before; the deals after it come in refills of 1, 2, 4, ...
        """
        core = self.core
        core.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        core.deal_source.restart(core.rng, batch=1)

    def _deal_explicit(self, deal: list[int], opener: int | None, scores: list[int]) -> None:
        """Deal ``deal`` as a game's first round; ``opener`` None: the first-round rule."""
        prepared = prepare_deals(self.rules, np.array([deal], dtype=np.int8), np.zeros(1, dtype=np.intp))
        if opener is not None:  # a given opener plays freely: no forced first tile
            prepared = dataclasses.replace(
                prepared, opener=np.array([opener], dtype=np.intp), forced=np.full(1, -1, dtype=np.intp)
            )
        self.core.scores[0] = scores
        self.core.rounds_played[0] = 0
        self._deal_round(self._one, self._nobody, (prepared, self._row, prepared.opener))
        self._begin_episode(opener, scores)

    def _deal_round(
        self,
        first: np.ndarray,
        winner: np.ndarray,
        dealt: tuple[PreparedDeals, np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """``DominoCore.start_rounds`` (or ``deal_rounds`` of ``dealt``: prepared deals, a row of them and
        its opener) for this game, through the compiled entry point of ``kernels.start_rounds``."""
        core = self.core
        prepared, rows, opener = core.deal_source.select(self._row) if dealt is None else dealt
        args = (
            core.kernel_rules, core.kernel_state, self._row, first, winner, kernel_deals(prepared),
            rows.astype(np.intp, copy=False), opener.astype(np.intp, copy=False),
        )  # fmt: skip
        if self._start is None:  # compiled for the types of the first deal (prepare_deals fixes them)
            self._start = compiled(kernels.start_rounds, *args)
        self._start(*args)

    def _begin_episode(self, opener: int | None, scores: list[int] | None) -> None:
        self.results: list[RoundResult] = []
        self.over = False
        self._begin_round(opener, scores)

    def _begin_round(self, opener: int | None, scores: list[int] | None) -> None:
        """Bookkeeping of a freshly dealt round: what records and rendering need."""
        self.deal: list[int] = self.core.deal[0].tolist()
        if opener is None and self.rules.first_opener in CHANCE_OPENERS:
            opener = int(self.core.opener[0])  # chance picked it: a record must say so
        if opener is None and self.results and self.rules.later_opener != "same":
            opener = int(self.core.opener[0])  # later rounds of a match: the later-opener rule
        self._start_opener = opener
        self._start_scores = list(scores) if scores is not None else self.core.scores[0].tolist()
        self._actions: list[int] = []
        self.opening: tuple[int, int] | None = None
        self._legal: tuple[int, ...] | None = None
        self._mask: np.ndarray | None = None
        self._shown = -1
        """The seat whose observation ``self._obs`` holds for the current position (-1: none)."""
        self.to_play: int | None = int(self.core.to_play[0])
        """The seat to move; None once the episode is over."""

    # -- state -------------------------------------------------------------------------
    @property
    def opener(self) -> int:
        return int(self.core.opener[0])

    @property
    def scores(self) -> list[int]:
        return self.core.scores[0].tolist()

    @property
    def hands(self) -> list[int]:
        return self.core.hands[0].tolist()

    @property
    def table(self) -> int:
        return int(self.core.table[0])

    @property
    def ends(self) -> list[int]:
        return self.core.ends[0].tolist()

    @property
    def num_placed(self) -> int:
        return int(self.core.num_placed[0])

    @property
    def draws(self) -> list[int]:
        return self.core.draws[0].tolist()

    @property
    def passes(self) -> list[int]:
        return self.core.passes[0].tolist()

    @property
    def missing(self) -> list[int]:
        return self.core.missing[0].tolist()

    # -- queries ---------------------------------------------------------------------
    def legal_actions(self) -> tuple[int, ...]:
        """Legal actions (``end * 28 + tile``) of the seat to move, ascending; () once over."""
        if self._legal is None:
            legal: list[int] = []
            if not self.over:
                for end, bits in enumerate(self._legal_bits.tolist()):
                    while bits:
                        low = bits & -bits
                        legal.append(end * NUM_TILES + low.bit_length() - 1)
                        bits ^= low
            self._legal = tuple(legal)
        return self._legal

    def legal_mask(self) -> np.ndarray:
        """int8 mask over the ``num_actions`` actions (1 = legal), a new array."""
        if self._mask is None:
            if self.over:
                self._mask = self._no_actions
            else:
                bits = np.unpackbits(self._legal_bytes, axis=1, count=NUM_TILES, bitorder="little")
                self._mask = bits.reshape(-1).view(np.int8)
        return self._mask.copy()

    def legal_moves(self) -> list[str]:
        """Legal moves in record notation (``"6-3:left"``; bare ``"6-3"`` opens), in action order."""
        return [self.action_to_move(a) for a in self.legal_actions()]

    def observation(self, seat: int) -> np.ndarray:
        """What ``seat`` may know, int16 (layout of ``Round.observation``), a new array."""
        if seat != self._shown:
            self._seat[0] = seat
            self._observe(self.core.kernel_rules, self.core.kernel_state, self._row, self._seat, self._obs)
            self._shown = seat
        obs = self._obs_row.copy()
        if self.over:
            obs[self._to_move_at] = -1  # nobody is to move
        return obs

    def action_to_move(self, action: int) -> str:
        """``"6-3:right"``; a bare ``"6-3"`` for an opening move (empty table, end 0)."""
        action = operator.index(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action} is out of range 0..{self.num_actions - 1}")
        return action_to_move(action, opening=self.table == 0 and action < NUM_TILES)

    def move_to_action(self, move: str) -> int:
        """The action of a move in record notation.

        ``"6-3:right"`` encodes directly; a bare ``"6-3"`` is the opening action on an empty
        table (the action space always opens high number left) and otherwise the one end the
        tile fits (IllegalMoveError when it fits none or several).
        """
        halves, end = parse_move(move)
        tile = tile_index(*halves)
        if end is not None:
            index = END_NAMES.index(end)
            if index >= self.num_ends:
                raise ValueError(f"move {move!r}: {self.rules.name} has no spinner, so no {end!r} end")
            return index * NUM_TILES + tile
        if self.table == 0:
            return tile
        fitting = [a for a in self.legal_actions() if a % NUM_TILES == tile]
        if len(fitting) != 1:
            raise self._illegal(f"move {move!r}", "it fits several ends; name one" if fitting else None)
        return fitting[0]

    def hand_pips(self) -> list[int]:
        """Pips left in each seat's hand."""
        return [sum(PIPS[t] for t in range(NUM_TILES) if hand >> t & 1) for hand in self.hands]

    # -- moves -------------------------------------------------------------------------
    def step(self, action: int) -> RoundResult | None:
        """Place the tile of a legal action; draws, passes, scoring and the next round follow.

        Returns the ``RoundResult`` when a round ended on this move (in match mode the next
        round has already been dealt), else None.
        """
        if self.over:
            raise ValueError(f"action {action!r} cannot be played: the {self.episode} is over")
        if type(action) is not int:
            try:
                action = operator.index(action)
            except TypeError:
                raise self._illegal(f"action {action!r}") from None
        if not 0 <= action < self.num_actions:  # (keeps integers too wide for int64 out of the kernel)
            raise self._illegal(self._describe(action))
        core, placer = self.core, self.to_play
        seat = self._play(core.kernel_rules, core.kernel_state, 0, action, self._obs, self._shown_mask)
        if seat == kernels.ILLEGAL_MOVE:  # the kernel changed nothing
            raise self._illegal(self._describe(action))
        actions = self._actions
        if not actions:
            self.opening = (int(HIGH[action]), int(LOW[action]))
        actions.append(action)
        self._legal = None
        if seat >= 0:  # the round goes on: the kernel showed the next seat to move its position
            self.to_play = self._shown = seat
            self._mask = self._mask_row
            return None
        self._placer[0], self._end[0] = placer, -seat
        self._shown, self._mask = -1, None
        return self._round_over()

    def play_move(self, move: str) -> RoundResult | None:
        """Play a move in record notation (``"3-6"`` opens with the 3 on the left)."""
        if self.over:
            raise ValueError(f"move {move!r} cannot be played: the {self.episode} is over")
        halves, end = parse_move(move)
        tile = tile_index(*halves)
        if self.table != 0:
            action = self.move_to_action(move)
            if action not in self.legal_actions():
                raise self._illegal(f"move {move!r}")
            return self.step(action)
        if end is not None:
            raise ValueError(
                f"move {move!r}: the opening move is written without an end, e.g. {halves[0]}-{halves[1]}"
            )
        if tile not in self.legal_actions():
            raise self._illegal(f"move {move!r}")
        result = self.step(tile)
        if halves[0] < halves[1] and result is None:
            kernels.open_low_left(self.core.kernel_rules, self.core.kernel_state, self._row)
            self.opening = (halves[0], halves[1])
            self._legal = self._mask = None
            self._shown = -1
        return result

    def _round_over(self) -> RoundResult:
        """Score the round that just ended; stop the episode or deal the next round."""
        core, out = self.core, self._out
        self._finish(
            core.kernel_rules, core.kernel_state, self._row, self._placer, self._end, out, self._first,
            self._winner, self._work,
        )  # fmt: skip
        winner, game_winner = int(out.winner[0]), int(out.game_winner[0])
        # A round episode ends the core's game every round; the result says whether the game was decided.
        game_over = bool(out.game_over[0]) if self.episode == "match" else game_winner >= 0
        result = RoundResult(
            int(core.opener[0]),
            END_CODES[int(self._end[0])],
            None if winner < 0 else winner,
            tuple(out.points[0].tolist()),
            tuple(out.scores[0].tolist()),
            game_over,
            None if game_winner < 0 else game_winner,
        )
        self.results.append(result)
        if self.episode == "round" or game_over:
            self.over = True
            self.to_play = None
            self._legal, self._mask = (), None
            self._keep_scores(core.kernel_rules, core.kernel_state, self._row, out.scores)
        else:
            self._deal_round(self._first, self._winner)
            self._begin_round(None, None)
        return result

    def _describe(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"action {action} (outside 0..{self.num_actions - 1})"
        return f"action {action} ({self.action_to_move(action)})"

    def _illegal(self, what: str, why: str | None = None) -> IllegalMoveError:
        reason = f" ({why})" if why else ""
        return IllegalMoveError(
            f"illegal {what}{reason} for seat {self.to_play}: legal moves are {', '.join(self.legal_moves())}"
        )

    # -- the round as the reference engine and as a record ------------------------------------
    def reference_round(self) -> Round:
        """The current round rebuilt in the reference engine (for rendering and checks)."""
        hands, boneyard = deal_to_hands(self.rules, self.deal)
        rnd = Round(self.rules, hands, boneyard, self._start_opener, self._start_scores)
        for i, action in enumerate(self._actions):
            if i == 0:
                rnd.play_move("{}-{}".format(*self.opening))
            else:
                rnd.step(action)
        return rnd

    def round_record(self) -> dict:
        """The current round as a replay record (deal, opener, scores, rules and moves so far)."""
        rules, h = self.rules, self.rules.hand_size
        record: dict = {
            "preset": rules.name,
            "players": rules.players,
            "hands": [[tile_name(t) for t in self.deal[s * h : (s + 1) * h]] for s in range(self.players)],
            "boneyard": [tile_name(t) for t in self.deal[self.players * h :]],
            "scores": list(self._start_scores),
        }
        if self._start_opener is not None:
            record["opener"] = self._start_opener
        overrides = rule_overrides(rules)
        if overrides:
            record["rules"] = overrides
        moves = [action_to_move(a) for a in self._actions]
        if moves:
            moves[0] = "{}-{}".format(*self.opening)
        record["moves"] = moves
        return record

    def __repr__(self) -> str:
        state = "over" if self.over else f"seat {self.to_play} to move"
        return f"Game({self.rules.name!r}, players={self.players}, episode={self.episode!r}, {state})"
