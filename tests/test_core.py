"""The batched core (``DominoCore``) on its own: invariants, hidden information,
determinism, explicit deals, errors, forced openings, batch sizes and match flow.

Everything checked here is recomputed independently from ``domino_env.engine.tiles`` and
the documented conventions (docs/engine.md, RULES.md); the core-vs-reference
comparison lives in the crosscheck tests.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domino_env import IllegalMoveError
from domino_env.engine.actions import action_to_move
from domino_env.engine.core import DominoCore, StepResult
from domino_env.engine.deals import random_deals
from domino_env.engine.observation import observation_fields
from domino_env.engine.rules import Rules, all_configurations
from domino_env.engine.tiles import HIGH, IS_DOUBLE, LOW, NUM_TILES, PIPS, RANK, TOTAL_PIPS

CONFIGS = all_configurations()
CONFIG_IDS = [f"{name}-{p}p" for name, p in CONFIGS]
FORCED = ("highest_tile", "six_six")
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# -- helpers ----------------------------------------------------------------------------
def unpack(boards: np.ndarray) -> np.ndarray:
    """uint64 bitboards (any shape) -> bool array with a trailing axis of 28 tiles."""
    boards = np.ascontiguousarray(boards, dtype=np.uint64)
    bytes_ = boards.view(np.uint8).reshape(*boards.shape, 8)
    return np.unpackbits(bytes_, axis=-1, count=NUM_TILES, bitorder="little").astype(bool)


def popcount(boards: np.ndarray) -> np.ndarray:
    return unpack(boards).sum(axis=-1)


def hand_of_deal(rules: Rules, deal: np.ndarray, seat: int) -> set[int]:
    h = rules.hand_size
    return {int(t) for t in deal[seat * h : (seat + 1) * h]}


def forced_tile(rules: Rules, deal: np.ndarray) -> int:
    """The tile the first-round rule forces (-1 for chance rules), from RANK by hand."""
    dealt = deal[: rules.players * rules.hand_size].astype(int)
    if rules.first_opener == "highest_tile":
        return int(dealt[np.argmax(RANK[dealt])])
    if rules.first_opener == "six_six":
        return NUM_TILES - 1
    return -1


def forced_holder(rules: Rules, deal: np.ndarray, tile: int) -> int:
    return int(np.flatnonzero(deal == tile)[0]) // rules.hand_size


def side_of(rules: Rules, seat) -> np.ndarray:
    seat = np.asarray(seat)
    return seat % 2 if rules.teams else seat


def results_equal(a: StepResult, b: StepResult) -> bool:
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(StepResult))


class Tracker:
    """Plays a core with random legal actions and checks every invariant after each step.

    It keeps its own model of what is on the table (who placed each tile, at which
    end, in which order), of the scores at the start of each round, and of whether a
    round is the first of its game, and compares the core and its observations with it.
    """

    def __init__(self, core: DominoCore) -> None:
        self.core = core
        self.rules = core.rules
        n, p = core.num_games, core.players
        self.fields = observation_fields(self.rules)
        self.placed_by = np.full((n, NUM_TILES), -1)
        self.tile_end = np.zeros((n, NUM_TILES), dtype=int)
        self.tile_order = np.zeros((n, NUM_TILES), dtype=int)
        self.first_round = np.ones(n, dtype=bool)
        self.round_start_scores = core.scores.astype(np.int64).copy()
        self.rounds = np.zeros(n, dtype=int)
        self.game_overs = 0
        self.ends_seen: set[int] = set()
        assert (core.scores == 0).all(), "scores must be 0 after a reset"
        assert p == self.rules.players

    # -- position invariants -------------------------------------------------------------
    def check_position(self) -> None:
        core, rules = self.core, self.rules
        n, p, h = core.num_games, rules.players, rules.hand_size
        ar = np.arange(n)
        hands = unpack(core.hands)  # (n, p, 28)
        table = unpack(core.table)  # (n, 28)
        assert table.sum(axis=1).tolist() == core.num_placed.tolist()

        # Every tile in exactly one place: hands, table, boneyard / set-aside tiles.
        rest = np.zeros((n, NUM_TILES), dtype=bool)
        if rules.drawing:
            assert ((core.bone_pos >= p * h) & (core.bone_pos <= NUM_TILES)).all()
        else:
            assert (core.bone_pos == NUM_TILES).all(), "block presets never draw"
        start = core.bone_pos if rules.drawing else np.full(n, p * h)
        for g in range(n):
            rest[g, core.deal[g, start[g] :].astype(int)] = True
        places = hands.sum(axis=1).astype(int) + table + rest
        assert (places == 1).all(), f"tiles not in exactly one place: {np.argwhere(places != 1).tolist()}"
        pips = core.hand_pips().sum(axis=1) + (table * PIPS).sum(axis=1) + (rest * PIPS).sum(axis=1)
        assert (pips == TOTAL_PIPS).all()
        assert (core.hand_pips() == (hands * PIPS).sum(axis=2)).all()
        assert (np.sort(core.deal, axis=1) == np.arange(NUM_TILES)).all(), "deals must be permutations"

        # Ends: empty table -> nothing open; the line-of-play parity of every number.
        empty = core.num_placed == 0
        assert (core.ends[empty] == -1).all()
        assert (core.ends[~empty, :2] >= 0).all()
        if not rules.spinner:
            assert (core.ends[:, 2:] == -1).all()
        halves = np.zeros((n, 7), dtype=int)
        for num in range(7):
            halves[:, num] = (table * ((num == LOW).astype(int) + (num == HIGH))).sum(axis=1)
        for g in np.flatnonzero(~empty):
            count = halves[g].copy()
            for e in range(4):
                end_number, outer = int(core.ends[g, e]), int(core.end_tile[g, e])
                if end_number < 0 or outer < 0:
                    continue
                assert table[g, outer], f"game {g}: outer tile {outer} of end {e} not on the table"
                assert end_number in (LOW[outer], HIGH[outer])
                count[end_number] -= 1
                if e >= 2:  # a tile on a short side pairs with nothing on the spinner
                    count[HIGH[core.spinner[g]]] -= 1
            assert (count % 2 == 0).all(), f"game {g}: ends {core.ends[g]} do not match the table"

        # Legal actions, recomputed from the hand of the seat to move.
        mask = core.legal_mask()
        assert mask.shape == (n, rules.num_actions) and mask.dtype == bool
        assert mask.any(axis=1).all(), "the seat to move must have a legal action"
        hand = hands[ar, core.to_play]
        expected = np.zeros((n, rules.num_ends, NUM_TILES), dtype=bool)
        for e in range(rules.num_ends):
            number = core.ends[:, e][:, None]
            expected[:, e] = hand & (number >= 0) & ((number == LOW) | (number == HIGH))
        for g in np.flatnonzero(empty):
            expected[g] = False
            forced_rule = rules.first_opener in FORCED and (
                core.episode == "round" or self.first_round[g] or rules.later_opener == "same"
            )
            if forced_rule:
                tile = forced_tile(rules, core.deal[g])
                assert core.to_play[g] == forced_holder(rules, core.deal[g], tile)
                expected[g, 0, tile] = True
            else:
                expected[g, 0] = hand[g]
            assert core.to_play[g] == core.opener[g]
        assert (mask == expected.reshape(n, -1)).all(), "legal mask differs from the hand and the ends"

        # Known-missing numbers: nobody holds a tile with a number they are known to lack
        # (the seat to move may hold the one tile it just drew).
        for s in range(p):
            lacking = (core.missing[:, s][:, None] >> np.arange(7)) & 1
            carries = (lacking[:, LOW] | lacking[:, HIGH]).astype(bool)
            held = (hands[:, s] & carries).sum(axis=1)
            allowed = np.where(core.to_play == s, 1, 0)
            assert (held <= allowed).all(), f"seat {s} holds tiles with numbers it is known to lack"

        # Observations of every seat.
        f = self.fields
        for s in range(p):
            obs = core.observe(np.full(n, s))
            assert obs.shape == (n, core.obs_size) and obs.dtype == np.int16
            owner = obs[:, f["tile_owner"]]
            assert ((owner == 1) == hands[:, s]).all(), "owner code 1 must be exactly the own hand"
            assert ((owner >= 2) == table).all(), "owner codes >= 2 must be exactly the table"
            assert ((owner == 0) == ~(hands[:, s] | table)).all(), "unseen tiles must have owner code 0"
            expected_owner = np.where(self.placed_by >= 0, 2 + (self.placed_by - s) % p, 0)
            assert (owner[table] == expected_owner[table]).all(), "owner code names the wrong placer"
            assert (obs[:, f["tile_end"]] == self.tile_end).all()
            assert (obs[:, f["tile_order"]] == self.tile_order).all()
            assert (obs[:, f["end_number"]] == core.ends).all()
            outer = core.end_tile
            end_double = np.where(outer >= 0, IS_DOUBLE[np.maximum(outer, 0)], False)
            assert (obs[:, f["end_double"]] == end_double).all()
            rotation = (s + np.arange(p)) % p
            assert (obs[:, f["hand_size"]] == hands.sum(axis=2)[:, rotation]).all()
            assert (obs[:, f["draw_pile"]][:, 0] == NUM_TILES - core.bone_pos).all()
            missing = (core.missing[:, rotation][:, :, None] >> np.arange(7)) & 1
            assert (obs[:, f["missing"]] == missing.reshape(n, 7 * p)).all()
            if rules.teams:
                side_rotation = (s % 2 + np.arange(2)) % 2
            else:
                side_rotation = rotation
            assert (obs[:, f["scores"]] == core.scores[:, side_rotation]).all()
            assert (obs[:, f["opener"]][:, 0] == (core.opener - s) % p).all()
            assert (obs[:, f["to_move"]][:, 0] == (core.to_play - s) % p).all()
        assert np.array_equal(core.observe(), core.observe(core.to_play))
        mixed = np.arange(n) % p
        by_seat = np.stack([core.observe(np.full(n, s)) for s in range(p)])
        assert np.array_equal(core.observe(mixed), by_seat[mixed, ar])

    # -- stepping -----------------------------------------------------------------------
    def step(self) -> StepResult:
        core, rules = self.core, self.rules
        n, p, sides = core.num_games, rules.players, rules.num_sides
        ar = np.arange(n)
        mask = core.legal_mask()
        actions = core.random_actions()
        assert actions.shape == (n,) and np.issubdtype(actions.dtype, np.integer)
        assert mask[ar, actions].all(), "random_actions returned an illegal action"
        placer, prev_opener = core.to_play.copy(), core.opener.copy()
        scores_before = core.scores.astype(np.int64).copy()
        opening = core.num_placed == 0
        tile, end = actions % NUM_TILES, actions // NUM_TILES

        result = core.step(actions)

        over = result.round_over
        assert result.end.dtype == np.int8 and set(np.unique(result.end)) <= {0, 1, 2, 3, 4}
        assert (over == (result.end > 0)).all()
        if not rules.closed_game:
            assert not (result.end == 3).any()
        if not rules.target_mid_round:
            assert not (result.end == 4).any()
        self.ends_seen.update(int(x) for x in result.end[over])
        assert (result.winner[~over] == -1).all()
        assert ((result.winner >= -1) & (result.winner < sides)).all()
        by_placer = (result.end == 1) | (result.end == 4)
        assert (result.winner[by_placer] == side_of(rules, placer[by_placer])).all()
        assert (result.points[~over] == 0).all()
        assert not (result.game_over & ~over).any(), "a game can only end with a round"
        assert (result.game_winner[~result.game_over] == -1).all()
        if core.episode == "round":
            assert (result.game_over == over).all()

        # Fives: multiples of 5, only in fives presets, and exactly the score change.
        assert ((result.fives >= 0) & (result.fives % 5 == 0)).all()
        if not rules.fives:
            assert (result.fives == 0).all()
        going = ~over
        assert (result.scores[going] == core.scores[going]).all()
        gained = core.scores.sum(axis=1) - scores_before.sum(axis=1)
        assert (gained[going] == result.fives[going]).all()
        assert (core.scores[going] - self.round_start_scores[going] == core.round_points[going]).all()

        # Round ends: points = score change over the round; scores persist or reset.
        for g in np.flatnonzero(over):
            points = result.points[g].astype(np.int64)
            assert (points == result.scores[g] - self.round_start_scores[g]).all(), (
                f"game {g}: points {points}, scores {self.round_start_scores[g]} -> {result.scores[g]}"
            )
            assert points.sum() == result.scores[g].sum() - self.round_start_scores[g].sum()
            if result.winner[g] == -1:  # nobody won: only this round's fives were scored
                assert (points >= 0).all() and (points % 5 == 0).all()
                if not rules.fives:
                    assert (points == 0).all()
            self.check_game_end(g, result)
            if result.game_over[g]:
                assert (core.scores[g] == 0).all(), "scores restart at 0 after a game (round mode: round)"
                self.game_overs += 1
            else:
                assert (core.scores[g] == result.scores[g]).all(), "scores must persist across rounds"
            self.check_next_opener(g, result, prev_opener[g])
            self.round_start_scores[g] = core.scores[g]
            self.first_round[g] = result.game_over[g]
            self.rounds[g] += 1

        # Update the table model.
        self.placed_by[over] = -1
        self.tile_end[over] = 0
        self.tile_order[over] = 0
        for g in np.flatnonzero(going):
            self.placed_by[g, tile[g]] = placer[g]
            self.tile_end[g, tile[g]] = 1 if opening[g] else end[g] + 2
            self.tile_order[g, tile[g]] = core.num_placed[g]
        for g in np.flatnonzero(over):
            assert core.num_placed[g] == 0 and core.table[g] == 0
            for s in range(p):
                assert set(np.flatnonzero(unpack(core.hands[g, s]))) == hand_of_deal(rules, core.deal[g], s)
        return result

    def check_game_end(self, g: int, result: StepResult) -> None:
        rules = self.rules
        scores = result.scores[g]
        best = scores.max()
        unique = (scores == best).sum() == 1
        decided = bool(best >= rules.target and unique)
        if self.core.episode == "round":
            assert result.game_over[g]
            return
        if result.end[g] == 4:
            assert result.game_over[g], "a 'target' end finishes the game"
            assert result.game_winner[g] == result.winner[g]
            assert scores[result.winner[g]] >= rules.target
            return
        assert bool(result.game_over[g]) == decided, (
            f"game {g}: scores {scores.tolist()} target {rules.target} game_over {result.game_over[g]}"
        )
        if decided:
            assert result.game_winner[g] == int(np.argmax(scores))

    def check_next_opener(self, g: int, result: StepResult, prev_opener: int) -> None:
        core, rules = self.core, self.rules
        assert core.to_play[g] == core.opener[g]
        if result.game_over[g] or rules.later_opener == "same":
            return  # the first-round rule: checked with the legal mask
        following = (prev_opener + 1) % rules.players
        if rules.later_opener == "next":
            assert core.opener[g] == following
        elif result.winner[g] >= 0:  # winner: sides are seats
            assert core.opener[g] == result.winner[g]
        else:
            assert core.opener[g] == following


# -- 1. invariants under hypothesis ------------------------------------------------------
@pytest.mark.parametrize("mode", ["round", "match"])
@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, steps=st.integers(min_value=1, max_value=90), num_games=st.integers(1, 6))
def test_invariants_hold_after_every_step(name, players, mode, seed, steps, num_games):
    core = DominoCore(Rules.preset(name, players), num_games, seed=seed, episode=mode)
    tracker = Tracker(core)
    tracker.check_position()
    for _ in range(steps):
        tracker.step()
        tracker.check_position()


# -- 2. hidden information -----------------------------------------------------------------
def swapped_deal(rules: Rules, deal: np.ndarray, rng: np.random.Generator):
    """A deal differing from ``deal`` only in tiles seat 0 cannot see, or None.

    Swaps tiles between other seats' hands, between another hand and the tiles set
    aside / in the boneyard, or inside the boneyard. Returns the new deal and the
    boneyard positions touched (a run must stop before any of them is drawn).
    """
    p, h = rules.players, rules.hand_size
    others = np.arange(h, p * h)
    rest = np.arange(p * h, NUM_TILES)
    kinds = []
    if p >= 3:
        kinds.append("hands")
    if len(rest):
        kinds.append("hand_rest")
    if len(rest) >= 2 and rules.drawing:
        kinds.append("rest_rest")
    new = deal.copy()
    for _ in range(int(rng.integers(1, 4))):
        kind = kinds[int(rng.integers(len(kinds)))]
        if kind == "hands":
            i = int(rng.choice(others))
            j = int(rng.choice([x for x in others if x // h != i // h]))
        elif kind == "hand_rest":
            i, j = int(rng.choice(others)), int(rng.choice(rest))
        else:
            i, j = (int(x) for x in rng.choice(rest, size=2, replace=False))
        new[i], new[j] = new[j], new[i]
    if np.array_equal(new, deal):
        return None
    if forced_tile(rules, new) != forced_tile(rules, deal):
        return None  # the forced opening tile is public: keep it
    if rules.first_opener in FORCED:
        tile = forced_tile(rules, deal)
        if forced_holder(rules, new, tile) != forced_holder(rules, deal, tile):
            return None
    if rules.redeal_doubles is not None:
        doubles = IS_DOUBLE[new[: p * h].astype(int)].reshape(p, h).sum(axis=1)
        if (doubles > rules.redeal_doubles).any():
            return None
    touched = [int(k) for k in np.flatnonzero(new != deal) if k >= p * h] if rules.drawing else []
    return new, touched


def public_state(core: DominoCore) -> tuple:
    """What the events reveal to everybody: to move, draws, passes, hand sizes."""
    return (
        core.to_play.tolist(),
        core.draws.tolist(),
        core.passes.tolist(),
        popcount(core.hands).tolist(),
        core.bone_pos.tolist(),
    )


@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS)
def test_hidden_tiles_do_not_change_seat_0_observations(name, players, seed):
    rules = Rules.preset(name, players)
    rng = np.random.default_rng(seed)
    deal = random_deals(rules, 1, rng)[0]
    variant = None
    for _ in range(50):
        variant = swapped_deal(rules, deal, rng)
        if variant is not None:
            break
    assert variant is not None, "could not build a deal differing in hidden tiles"
    other, touched = variant
    opener = int(rng.integers(players))
    cores = [DominoCore(rules, 1, seed=seed, deals=d[None], openers=[opener]) for d in (deal, other)]
    zero = np.zeros(1, dtype=int)
    compared = 0
    for _ in range(60):
        a, b = cores
        if public_state(a) != public_state(b) or any(pos < a.bone_pos[0] for pos in touched):
            break  # the public histories diverged (a legitimate difference): stop
        obs_a, obs_b = a.observe(zero), b.observe(zero)
        diff = np.flatnonzero(obs_a[0] != obs_b[0]).tolist()
        assert not diff, f"seat 0 observation differs at {diff}: {obs_a[0][diff]} vs {obs_b[0][diff]}"
        compared += 1
        mask_a, mask_b = a.legal_mask()[0], b.legal_mask()[0]
        if a.to_play[0] == 0:
            assert np.array_equal(mask_a, mask_b), "seat 0's legal moves depend only on what it sees"
        common = np.flatnonzero(mask_a & mask_b)
        if not len(common):
            break
        action = np.array([rng.choice(common)])
        over = [core.step(action).round_over[0] for core in cores]
        if any(over):
            break
    assert compared >= 1


@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
def test_seat_0_observation_changes_with_its_own_hand(name, players):
    rules = Rules.preset(name, players)
    rng = np.random.default_rng(17)
    h = rules.hand_size
    found = False
    for _ in range(100):
        deal = random_deals(rules, 1, rng)[0]
        other = deal.copy()
        i, j = int(rng.integers(h)), int(rng.integers(h, 2 * h))  # seat 0 <-> seat 1
        other[i], other[j] = other[j], other[i]
        if forced_tile(rules, other) != forced_tile(rules, deal) or forced_tile(rules, deal) in (
            deal[i],
            deal[j],
        ):
            continue
        if rules.redeal_doubles is not None:
            doubles = IS_DOUBLE[other[: players * h].astype(int)].reshape(players, h).sum(axis=1)
            if (doubles > rules.redeal_doubles).any():
                continue
        found = True
        break
    assert found
    cores = [DominoCore(rules, 1, seed=0, deals=d[None], openers=[1]) for d in (deal, other)]
    zero = np.zeros(1, dtype=int)
    obs = [core.observe(zero)[0] for core in cores]
    owner = observation_fields(rules)["tile_owner"]
    changed = np.flatnonzero(obs[0] != obs[1])
    assert sorted(changed.tolist()) == sorted({owner.start + int(deal[i]), owner.start + int(deal[j])})
    assert obs[0][owner][deal[i]] == 1 and obs[1][owner][deal[i]] == 0
    assert obs[0][owner][deal[j]] == 0 and obs[1][owner][deal[j]] == 1


def test_random_actions_are_uniform_over_legal_actions():
    # 12,000 copies of one position: after 5-5 opens, count how often each legal action is drawn.
    rules = Rules.preset("all_fives", 2)
    deal = random_deals(rules, 1, np.random.default_rng(3))[0]
    n = 12_000
    core = DominoCore(rules, n, seed=0, deals=deal, openers=[0])
    opening = np.flatnonzero(core.legal_mask()[0])
    assert len(opening) == 7
    counts = np.bincount(core.random_actions(), minlength=rules.num_actions)
    assert set(np.flatnonzero(counts)) <= set(opening)
    expected = n / len(opening)
    assert (np.abs(counts[opening] - expected) < 5 * np.sqrt(expected)).all(), counts[opening]
    # A position with several ends: play until some seat has >= 3 legal actions on >= 2 ends.
    for _ in range(20):
        mask = core.legal_mask()[0]
        per_end = mask.reshape(rules.num_ends, NUM_TILES).sum(axis=1)
        if mask.sum() >= 3 and (per_end > 0).sum() >= 2:
            break
        core.step(np.full(n, np.flatnonzero(mask)[0]))
    legal = np.flatnonzero(core.legal_mask()[0])
    assert len(legal) >= 3 and len({a // NUM_TILES for a in legal}) >= 2
    assert (core.legal_mask() == core.legal_mask()[0]).all(), "every copy is in the same position"
    counts = np.bincount(core.random_actions(np.random.default_rng(1)), minlength=rules.num_actions)
    assert set(np.flatnonzero(counts)) <= set(legal)
    expected = n / len(legal)
    assert (np.abs(counts[legal] - expected) < 5 * np.sqrt(expected)).all(), counts[legal]


def test_random_deals_stay_valid_and_fresh_across_buffer_refills():
    # 1,024 games draw deals from buffers of 4,096: several refills in a few hundred steps.
    rules = Rules.preset("spanish_pairs", 4)
    n = 1024
    core = DominoCore(rules, n, seed=8)
    seen = [core.deal.copy()]
    for _ in range(400):
        result = core.step(core.random_actions())
        seen.append(core.deal[result.round_over].copy())
        if sum(len(d) for d in seen) > 3 * 4096:
            break
    deals = np.concatenate(seen)
    assert len(deals) > 3 * 4096
    assert (np.sort(deals, axis=1) == np.arange(NUM_TILES)).all()
    doubles = IS_DOUBLE[deals.astype(int)].reshape(len(deals), 4, 7).sum(axis=2)
    assert doubles.max() <= 3, "spanish_pairs redeals hands with more than 3 doubles"
    assert len(np.unique(deals, axis=0)) == len(deals), "deals repeat"
    # The first tile of the deal is uniform over the 28 tiles (no favoured order).
    first = np.bincount(deals[:, 0], minlength=NUM_TILES)
    assert (np.abs(first - len(deals) / 28) < 5 * np.sqrt(len(deals) / 28)).all()


# -- 3. determinism --------------------------------------------------------------------------
def run_record(core: DominoCore, steps: int) -> list:
    out = [core.deal.copy(), core.observe().copy()]
    for _ in range(steps):
        actions = core.random_actions()
        result = core.step(actions)
        out.append((actions.copy(), result, core.observe().copy(), core.deal.copy()))
    return out


def records_equal(a: list, b: list) -> bool:
    if not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])):
        return False
    for (act_a, res_a, obs_a, deal_a), (act_b, res_b, obs_b, deal_b) in zip(a[2:], b[2:], strict=True):
        if not (
            np.array_equal(act_a, act_b)
            and results_equal(res_a, res_b)
            and np.array_equal(obs_a, obs_b)
            and np.array_equal(deal_a, deal_b)
        ):
            return False
    return True


DETERMINISM_CASES = [(name, p, "match") for name, p in CONFIGS] + [
    ("muggins", 2, "round"),
    ("spanish_pairs", 4, "round"),
    ("all_fives", 3, "round"),
]


@pytest.mark.parametrize(
    ("name", "players", "mode"), DETERMINISM_CASES, ids=[f"{n}-{p}p-{m}" for n, p, m in DETERMINISM_CASES]
)
def test_same_seed_same_run_and_reset_reproduces(name, players, mode):
    rules = Rules.preset(name, players)
    first = run_record(DominoCore(rules, 4, seed=123, episode=mode), 200)
    second = run_record(DominoCore(rules, 4, seed=123, episode=mode), 200)
    assert records_equal(first, second)

    other = DominoCore(rules, 4, seed=124, episode=mode)
    assert not np.array_equal(other.deal, first[0]), "different seeds must deal differently"
    assert not records_equal(first[:52], run_record(other, 50))

    reused = DominoCore(rules, 4, seed=999, episode=mode)
    run_record(reused, 37)
    reused.reset(seed=123)
    assert (reused.scores == 0).all()
    assert records_equal(first, run_record(reused, 200)), "reset(seed=s) must replay construction with s"


def test_seed_may_be_a_generator():
    rules = Rules.preset("draw", 3)
    a = run_record(DominoCore(rules, 3, seed=np.random.default_rng(5)), 60)
    b = run_record(DominoCore(rules, 3, seed=np.random.default_rng(5)), 60)
    assert records_equal(a, b)


# -- 4. explicit deals / duplicate -------------------------------------------------------------
@pytest.mark.parametrize("mode", ["round", "match"])
@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
def test_fixed_deal_list_is_walked_in_order_by_every_game(name, players, mode):
    rules = Rules.preset(name, players)
    deals = random_deals(rules, 3, np.random.default_rng(len(name) * 10 + players))
    openers = np.array([players - 1, 0, 1 % players])
    n = 5
    core = DominoCore(rules, n, seed=3, episode=mode, deals=deals, openers=openers)
    rounds = np.zeros(n, dtype=int)
    first_round = np.ones(n, dtype=bool)

    def check_round_start(g: int) -> None:
        k = rounds[g] % len(deals)
        assert np.array_equal(core.deal[g], deals[k]), f"game {g} round {rounds[g]} should use deal {k}"
        for s in range(players):
            assert set(np.flatnonzero(unpack(core.hands[g, s]))) == hand_of_deal(rules, deals[k], s)
        if rules.first_opener in FORCED:
            if first_round[g] or rules.later_opener == "same":
                assert core.opener[g] == forced_holder(rules, deals[k], forced_tile(rules, deals[k]))
        elif first_round[g]:
            assert core.opener[g] == openers[k], f"game {g}: openers fix the chance opener"

    for g in range(n):
        check_round_start(g)
    for _ in range(400):
        result = core.step(core.random_actions())
        for g in np.flatnonzero(result.round_over):
            rounds[g] += 1
            first_round[g] = result.game_over[g]
            check_round_start(g)
        if rounds.min() >= 4:
            break
    assert rounds.min() >= 4, "every game should finish 4 rounds in 400 steps"

    core.reset()
    rounds[:] = 0
    first_round[:] = True
    for g in range(n):
        check_round_start(g)


def test_single_deal_may_be_one_dimensional_and_openers_default_random():
    rules = Rules.preset("block", 2)
    deal = random_deals(rules, 1, np.random.default_rng(0))[0]
    core = DominoCore(rules, 200, seed=0, deals=deal)
    assert (core.deal == deal).all()
    assert set(core.opener.tolist()) == {0, 1}, "without openers a chance preset picks seats at random"


def test_openers_are_ignored_by_forced_presets():
    rules = Rules.preset("partnership", 4)
    deal = random_deals(rules, 1, np.random.default_rng(1))
    core = DominoCore(rules, 2, seed=0, deals=deal, openers=[3])
    assert (core.opener == forced_holder(rules, deal[0], 27)).all()


def idrd_five_doubles() -> np.ndarray:
    doubles = [t for t in range(NUM_TILES) if IS_DOUBLE[t]]
    non = [t for t in range(NUM_TILES) if not IS_DOUBLE[t]]
    return np.array(doubles[:5] + non[:2] + non[2:] + doubles[5:])


@pytest.mark.parametrize(
    ("deals", "match"),
    [
        (np.concatenate([[0, 0], np.arange(2, 28)]), "not a permutation"),
        (np.arange(1, 29), "not a permutation"),
        (np.concatenate([np.arange(27), [-1]]), "not a permutation"),
        (np.arange(27), "shape"),
        (np.tile(np.arange(28), (2, 1)), None),  # valid: two deals
        (np.tile(np.arange(28), (2, 2, 1)), "shape"),
        (np.arange(28, dtype=float), "integer"),
        (np.zeros((0, 28), dtype=int), "deal"),
        (idrd_five_doubles(), "redeal"),
        (np.stack([np.arange(28), idrd_five_doubles()]), "deal 1"),
    ],
    ids=[
        "tile-twice",
        "out-of-range",
        "negative",
        "27-tiles",
        "two-valid-deals",
        "3-dims",
        "float",
        "empty-list",
        "five-doubles",
        "second-deal-bad",
    ],
)
def test_invalid_deals_raise_value_error(deals, match):
    rules = Rules.preset("idrd_draw", 2)
    if match is None:
        DominoCore(rules, 2, seed=0, deals=deals)
        return
    with pytest.raises(ValueError, match=match):
        DominoCore(rules, 2, seed=0, deals=deals)


def test_five_doubles_message_names_the_rule():
    with pytest.raises(ValueError, match=r"more than 4 doubles.*idrd_draw.*redeal"):
        DominoCore(Rules.preset("idrd_draw", 2), 1, seed=0, deals=idrd_five_doubles())
    # The same deal is fine where nothing is redealt.
    DominoCore(Rules.preset("draw", 2), 1, seed=0, deals=idrd_five_doubles())


@pytest.mark.parametrize("openers", [[-1], [3], [0, 1], [0.5], [True]], ids=str)
def test_invalid_openers_raise_value_error(openers):
    rules = Rules.preset("block", 3)
    with pytest.raises(ValueError, match="opener"):
        DominoCore(rules, 2, seed=0, deals=np.arange(28), openers=openers)


def test_openers_need_deals():
    with pytest.raises(ValueError, match="openers"):
        DominoCore(Rules.preset("block", 3), 2, seed=0, openers=[1])


def test_reset_with_openers_does_not_silently_ignore_them():
    rules = Rules.preset("block", 3)
    core = DominoCore(rules, 4, seed=0, deals=np.arange(28), openers=[2])
    assert (core.opener == 2).all()
    with pytest.raises(ValueError, match="needs the deals"):
        core.reset(openers=[1])


def test_first_deal_starts_each_game_on_its_own_row_and_walks_on():
    """Duplicate play runs each game on its own stretch of one deal list (``first_deal``)."""
    rules = Rules.preset("block", 2)
    deals = random_deals(rules, 5, np.random.default_rng(3))
    first = np.array([0, 3, 4, 2])
    core = DominoCore(rules, 4, seed=0, deals=deals, first_deal=first)
    assert (core.deal == deals[first]).all()
    rng, checked = np.random.default_rng(4), np.zeros(4, dtype=bool)
    while not checked.all():
        ended = core.step(core.random_actions(rng)).round_over & ~checked
        assert (core.deal[ended] == deals[(first[ended] + 1) % 5]).all()
        checked |= ended
    core.reset()
    assert (core.deal == deals[first]).all(), "a reset restarts every game at its own first deal"


@pytest.mark.parametrize(
    ("first", "match"),
    [
        ([0, 1], "one per game"),
        ([0, 1, 2], "rows 0 to 1"),
        ([0, -1, 0], "rows 0 to 1"),
        ([0.0, 1.0, 0.0], "integers"),
    ],
    ids=["too-few", "past-the-list", "negative", "float"],
)
def test_invalid_first_deals_raise_value_error(first, match):
    rules = Rules.preset("block", 2)
    deals = random_deals(rules, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match=match):
        DominoCore(rules, 3, seed=0, deals=deals, first_deal=np.array(first))
    with pytest.raises(ValueError, match=r"first_deal.*needs the deals"):
        DominoCore(rules, 3, seed=0, first_deal=np.zeros(3, dtype=int))


# -- 5. errors ---------------------------------------------------------------------------------
def snapshot(core: DominoCore) -> list:
    return [
        core.hands.copy(),
        core.table.copy(),
        core.to_play.copy(),
        core.ends.copy(),
        core.num_placed.copy(),
        core.scores.copy(),
        core.bone_pos.copy(),
        core.observe().copy(),
    ]


@pytest.mark.parametrize(("name", "players"), [("block", 2), ("all_fives", 3), ("spanish_pairs", 4)])
def test_illegal_action_raises_with_game_move_and_legal_moves(name, players):
    rules = Rules.preset(name, players)
    core = DominoCore(rules, 3, seed=4)
    for _ in range(3):
        core.step(core.random_actions())
    mask = core.legal_mask()
    actions = core.random_actions()
    bad = int(np.flatnonzero(~mask[1])[0])
    actions[1] = bad
    before = snapshot(core)
    with pytest.raises(IllegalMoveError) as caught:
        core.step(actions)
    assert isinstance(caught.value, ValueError)
    message = str(caught.value)
    opening = core.num_placed[1] == 0
    assert "game 1" in message
    assert str(bad) in message and action_to_move(bad, opening) in message
    assert f"seat {core.to_play[1]}" in message
    legal = [action_to_move(a, opening) for a in np.flatnonzero(mask[1])]
    assert legal and all(move in message for move in legal), message
    after = snapshot(core)
    assert all(np.array_equal(x, y) for x, y in zip(before, after, strict=True)), (
        "a failed step changed state"
    )
    core.step(core.random_actions())  # still usable


@pytest.mark.parametrize("bad", [-1, 56, 10**12, -(10**12)])
def test_out_of_range_action_raises(bad):
    core = DominoCore(Rules.preset("block", 2), 2, seed=0)
    actions = core.random_actions()
    actions[0] = bad
    with pytest.raises(IllegalMoveError, match=rf"game 0: action {bad}.*out of range 0\.\.55"):
        core.step(actions)


@pytest.mark.parametrize(
    "actions",
    [
        np.zeros(3, dtype=int),
        np.zeros((2, 1), dtype=int),
        np.zeros((), dtype=int),
        np.zeros(2, dtype=float),
        np.zeros(2, dtype=bool),
        np.array(["0", "1"]),
    ],
    ids=["too-long", "2d", "scalar", "float", "bool", "str"],
)
def test_wrong_actions_shape_or_dtype_raises(actions):
    core = DominoCore(Rules.preset("block", 2), 2, seed=0)
    with pytest.raises(ValueError, match="actions must be an integer array of shape"):
        core.step(actions)


def test_actions_may_be_any_integer_dtype_or_a_list():
    for dtype in (np.int8, np.int32, np.uint16, np.uint64):
        core = DominoCore(Rules.preset("idrd_draw", 2), 2, seed=8)
        actions = core.random_actions()
        core.step(actions.astype(dtype))
    core = DominoCore(Rules.preset("idrd_draw", 2), 2, seed=8)
    core.step(core.random_actions().tolist())


@pytest.mark.parametrize("num_games", [0, -3, 2.5, True, "4", None])
def test_bad_num_games_raises(num_games):
    with pytest.raises(ValueError, match="num_games"):
        DominoCore(Rules.preset("block", 2), num_games, seed=0)


def test_bad_episode_raises_and_non_rules_is_a_type_error():
    with pytest.raises(ValueError, match="episode must be one of round, match; got 'game'"):
        DominoCore(Rules.preset("block", 2), 2, seed=0, episode="game")
    with pytest.raises(TypeError, match="Rules"):
        DominoCore("block", 2, seed=0)
    with pytest.raises(TypeError, match="Rules"):
        DominoCore(dataclasses.asdict(Rules.preset("block", 2)), 2, seed=0)
    core = DominoCore(Rules.preset("block", 2), np.int64(2), seed=0)
    assert core.num_games == 2


# -- 6. forced openings ---------------------------------------------------------------------
@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
def test_opening_moves(name, players):
    rules = Rules.preset(name, players)
    n = 400
    core = DominoCore(rules, n, seed=11)
    mask = core.legal_mask()
    assert (core.to_play == core.opener).all() and (core.table == 0).all()
    for g in range(n):
        deal = core.deal[g]
        legal = np.flatnonzero(mask[g])
        if rules.first_opener in FORCED:
            tile = forced_tile(rules, deal)
            if rules.first_opener == "six_six":
                assert tile == 27
            assert legal.tolist() == [tile], f"game {g}: forced opening should be {tile}, got {legal}"
            assert core.to_play[g] == forced_holder(rules, deal, tile)
        else:
            hand = sorted(hand_of_deal(rules, deal, int(core.to_play[g])))
            assert legal.tolist() == hand, "a chance opener may open with any tile of its hand"
    if rules.first_opener not in FORCED:
        counts = np.bincount(core.opener, minlength=players)
        assert (np.abs(counts - n / players) < 5 * np.sqrt(n / players)).all(), counts
    if rules.first_opener == "highest_tile":
        has_double = IS_DOUBLE[core.deal[:, : players * rules.hand_size].astype(int)].any(axis=1)
        for g in np.flatnonzero(has_double):
            legal = int(np.flatnonzero(mask[g])[0])
            dealt_doubles = [t for t in core.deal[g, : players * rules.hand_size] if IS_DOUBLE[t]]
            assert IS_DOUBLE[legal] and HIGH[legal] == max(HIGH[t] for t in dealt_doubles)


def test_highest_tile_without_doubles_uses_rank_ties():
    # idrd_block 2p: every double set aside; the highest dealt tile is 6-5, then 6-4 / 5-4 ...
    rules = Rules.preset("idrd_block", 2)
    doubles = [t for t in range(NUM_TILES) if IS_DOUBLE[t]]
    non = [t for t in range(NUM_TILES) if not IS_DOUBLE[t]]
    six_five = 26
    assert (LOW[six_five], HIGH[six_five]) == (5, 6)
    # Seat 1 holds 6-5; seat 0 holds 6-3 and 5-4 (pip sum 9, tie broken by the 6).
    hand1 = [six_five, *[t for t in non if PIPS[t] <= 5][:6]]
    rest = [t for t in non if t not in hand1]
    deal = np.array(rest[:7] + hand1 + rest[7:] + doubles)
    core = DominoCore(rules, 1, seed=0, deals=deal)
    assert core.to_play[0] == 1
    assert np.flatnonzero(core.legal_mask()[0]).tolist() == [six_five]
    # Without 6-5 in play: seat 0's 6-3 beats 5-4 on the higher single number.
    six_three, five_four = 21, 23
    assert (LOW[six_three], HIGH[six_three], LOW[five_four], HIGH[five_four]) == (3, 6, 4, 5)
    low_tiles = [t for t in non if PIPS[t] <= 8 and t not in (six_three, five_four)]
    hand0 = [six_three, five_four, *low_tiles[:5]]
    hand1 = low_tiles[5:12]
    rest = [t for t in range(NUM_TILES) if t not in hand0 + hand1]
    core = DominoCore(rules, 1, seed=0, deals=np.array(hand0 + hand1 + rest))
    assert core.to_play[0] == 0
    assert np.flatnonzero(core.legal_mask()[0]).tolist() == [six_three]


# -- 7. batch sizes ------------------------------------------------------------------------------
def numpy_bytes(root) -> int:
    """Bytes of every distinct numpy buffer reachable from domino_env objects under ``root``."""
    buffers: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            base = obj
            while isinstance(base.base, np.ndarray):
                base = base.base
            buffers[id(base)] = base
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif type(obj).__module__.startswith("domino_env") and hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return sum(b.nbytes for b in buffers.values())


@pytest.mark.parametrize("num_games", [1, 65536])
def test_batch_sizes(num_games):
    rules = Rules.preset("spanish_pairs", 4)
    core = DominoCore(rules, num_games, seed=2)
    assert core.observe().shape == (num_games, 129)
    assert core.legal_mask().shape == (num_games, 56)
    for _ in range(4):
        actions = core.random_actions()
        assert core.legal_mask()[np.arange(num_games), actions].all()
        result = core.step(actions)
        assert result.points.shape == (num_games, 2) and result.end.shape == (num_games,)
    hands = popcount(core.hands)
    assert (hands.sum(axis=1) + popcount(core.table) == NUM_TILES).all()
    if num_games > 1:
        total = numpy_bytes(core)
        assert total > numpy_bytes(core.views)
        assert total < 2**30, f"{total / 2**20:.0f} MiB of numpy arrays for {num_games} games"


# -- 8. match mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "players"), CONFIGS, ids=CONFIG_IDS)
def test_match_mode_scores_game_ends_and_opener_rotation(name, players):
    rules = Rules.preset(name, players)
    core = DominoCore(rules, 12, seed=21, episode="match")
    tracker = Tracker(core)
    for _ in range(700):
        result = tracker.step()
        if result.game_over.any():
            assert core.episode == "match"
        if tracker.game_overs >= 3 and tracker.rounds.min() >= 2:
            break
    assert tracker.game_overs >= 3, "several games should finish"
    assert tracker.rounds.min() >= 2
    tracker.check_position()


def test_muggins_target_ends_the_game_mid_round():
    rules = Rules.preset("muggins", 2, target=10)
    core = DominoCore(rules, 64, seed=5, episode="match")
    tracker = Tracker(core)
    for _ in range(200):
        tracker.step()
        if 4 in tracker.ends_seen:
            break
    assert 4 in tracker.ends_seen, "with target 10 a fives score should end a game mid-round"


def test_idrd_opener_rotates_after_every_round():
    rules = Rules.preset("idrd_block", 4)
    core = DominoCore(rules, 8, seed=9, episode="match")
    openers = [[int(o)] for o in core.opener]
    rotations = 0
    for _ in range(300):
        result = core.step(core.random_actions())
        for g in np.flatnonzero(result.round_over):
            if not result.game_over[g]:
                assert core.opener[g] == (openers[g][-1] + 1) % 4
                rotations += 1
            else:  # a new game: the highest double opens again
                tile = forced_tile(rules, core.deal[g])
                assert core.opener[g] == forced_holder(rules, core.deal[g], tile)
            openers[g].append(int(core.opener[g]))
    assert min(len(o) for o in openers) >= 3 and rotations >= 10


def test_block_winner_opens_the_next_round():
    rules = Rules.preset("block", 3)
    core = DominoCore(rules, 16, seed=12, episode="match")
    seen_winner = seen_nobody = 0
    for _ in range(300):
        before = core.opener.copy()
        result = core.step(core.random_actions())
        for g in np.flatnonzero(result.round_over & ~result.game_over):
            if result.winner[g] >= 0:
                assert core.opener[g] == result.winner[g]
                seen_winner += 1
            else:
                assert core.opener[g] == (before[g] + 1) % 3
                seen_nobody += 1
    assert seen_winner >= 5 and seen_nobody >= 1


@pytest.mark.parametrize(("name", "players"), [("block", 2), ("all_fives", 3), ("partnership", 4)])
def test_observe_and_mask_of_some_games_match_the_full_batch(name, players):
    core = DominoCore(Rules.preset(name, players), 64, seed=4)
    for _ in range(9):
        core.step(core.random_actions())
    games = np.array([5, 3, 60, 3, 0])
    assert (core.observe(games=games) == core.observe()[games]).all()
    assert (core.legal_mask(games) == core.legal_mask()[games]).all()
    seats = np.array([1, 0, players - 1, 1, 0])
    picked = core.observe(seats, games=games)
    for row, (game, seat) in enumerate(zip(games, seats, strict=True)):
        assert (picked[row] == core.observe(np.full(64, seat))[game]).all()
