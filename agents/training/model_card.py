"""Model cards: what each trained agent is, how it was trained and how strong it measured, inside its file.

A card travels in the checkpoint itself (the ``card`` key of a policy file, plain data that
``torch.load(weights_only=True)`` reads), so a figure cannot drift from the weights it
describes: replacing a shipped file replaces its card, and the agents table of the README and
of docs/agents.md is generated from the cards (``agents_table``; ``tests/test_docs.py`` fails
when the committed table is stale).

    python scripts/model_card.py block-2p                 # print the card of a shipped agent
    python scripts/model_card.py runs/x/best.pt --set card.yaml   # write one (YAML, checked)
    python scripts/model_card.py --table                  # the generated agents table
    python scripts/model_card.py draw-2p --exploit runs/exploit-draw-2p-s0/exploit.json \
        runs/exploit-pimc-draw-2p-s0/exploit.json        # add an exploitability measurement
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, model_validator
from rich.console import Console

from agents.bots.registry import BOT_NAMES, checkpoint_path
from agents.bots.trained import SHIPPED_AGENTS, SHIPPED_DIR
from agents.cli import error_exit
from agents.configuration import DEALS_MAX, SEED_MAX, ConfigError, ConfigModel, load_yaml, unknown_name
from agents.training.checkpoint import (
    MEMBERS,
    POLICY_KEYS,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
    weights_digest,
)
from agents.training.exploit import FIGURE_SETTINGS, figure_settings
from agents.training.run_lock import exclusive
from domino_env.engine.rules import PRESET_NAMES
from domino_env.files import write_atomic

NAME = r"^[\w.+/-]{1,200}$"
"""Names, config paths and commits: no Markdown or HTML can hide in them."""
TEXT_MAX = 2000
"""Characters of the free text (method, notes)."""
POINTS_MAX = 1000.0
"""Points per round no game reaches (the largest round scores a few hundred)."""
UPDATES_MAX = 10**7
MINUTES_MAX = 10**6
MEMORY_MAX = 10**4


class Result(ConfigModel):
    """One arena measurement: the agent's points per round minus the opponent's, on duplicate deals."""

    opponent: str = Field(pattern=NAME)
    diff: float = Field(ge=-POINTS_MAX, le=POINTS_MAX)
    """Points per round, the agent minus the opponent (95% CI: ``ci``)."""
    ci: float = Field(ge=0, le=POINTS_MAX)
    deals: int = Field(ge=2, le=DEALS_MAX)
    """Duplicate deals (every seat rotation of each)."""
    seed: int = Field(ge=0, le=SEED_MAX)
    """The arena's deal seed: never the seed the agent was selected on."""
    round_win: float | None = Field(None, ge=0, le=1)
    """Share of rounds won (ties half), where measured."""
    match_win: float | None = Field(None, ge=0, le=1)
    """Share of duplicate matches to the target won, where measured."""
    matches: int | None = Field(None, ge=1, le=DEALS_MAX)
    """Duplicate matches behind ``match_win`` (from the arena seed ``seed``), where a run of its
    own measured them: the agents table then shows the share, e.g. against ``pimc``."""

    @model_validator(mode="after")
    def _matches_need_their_share(self) -> Result:
        if self.matches is not None and self.match_win is None:
            raise ConfigError("matches needs the match_win they measured")
        return self


class Exploitability(ConfigModel):
    """What a fresh PPO exploiter (``scripts/exploit.py``) wins from the agent, beside what one of the
    same budget and seed wins from ``pimc`` on the same deals: lower is harder to exploit."""

    updates: int = Field(ge=1, le=UPDATES_MAX)
    """The exploiters' budget in PPO updates."""
    decisions: int = Field(ge=1, le=UPDATES_MAX * 2**20)
    """The same budget in training decisions (updates x games x table steps)."""
    deals: int = Field(ge=2, le=DEALS_MAX)
    """Duplicate deals of the measurement."""
    seed: int = Field(ge=0, le=SEED_MAX)
    """The measurement's deal seed (never a training deal of the exploiters)."""
    diff: float = Field(ge=-POINTS_MAX, le=POINTS_MAX)
    """The exploiter's points per round against the agent (95% CI: ``ci``)."""
    ci: float = Field(ge=0, le=POINTS_MAX)
    pimc_diff: float = Field(ge=-POINTS_MAX, le=POINTS_MAX)
    """The same budget's exploiter's points per round against ``pimc`` (95% CI: ``pimc_ci``)."""
    pimc_ci: float = Field(ge=0, le=POINTS_MAX)

    @property
    def apart(self) -> bool:
        """True where the agent is shown harder to exploit than ``pimc``: the intervals do not meet."""
        return self.diff + self.ci < self.pimc_diff - self.pimc_ci


def exploitability(
    agent_result: dict[str, Any], pimc_result: dict[str, Any], preset: str, players: int
) -> Exploitability:
    """The card entry of two ``exploit.json`` results: one against the agent, one against ``pimc``
    in the agent's game, under the same settings (ConfigError naming what differs)."""
    try:
        if agent_result["agent"] in BOT_NAMES:
            raise ConfigError(f"the first result is against the bot {agent_result['agent']!r}, not the agent")
        if pimc_result["agent"] != "pimc":
            raise ConfigError(f"the second result is against {pimc_result['agent']!r}, not pimc")
        for result in (agent_result, pimc_result):
            if (result["preset"], result["players"]) != (preset, players):
                raise ConfigError(
                    f"a result against {result['agent']!r} plays {result['preset']} {result['players']}p, "
                    f"the agent {preset} {players}p"
                )
        agent_figure, pimc_figure = (figure_settings(r["settings"]) for r in (agent_result, pimc_result))
        for key in FIGURE_SETTINGS:
            if agent_figure[key] != pimc_figure[key]:
                raise ConfigError(
                    f"the two exploiters differ in {key} ({agent_figure[key]} against "
                    f"{pimc_figure[key]}): compare them under the same settings"
                )
        return Exploitability.parse(
            {
                "updates": agent_result["budget"]["updates"],
                "decisions": agent_result["budget"]["decisions"],
                "deals": agent_result["deals"],
                "seed": agent_result["eval_seed"],
                "diff": round(agent_result["exploitability"], 2),
                "ci": round(agent_result["ci"], 2),
                "pimc_diff": round(pimc_result["exploitability"], 2),
                "pimc_ci": round(pimc_result["ci"], 2),
            }
        )
    except (KeyError, TypeError) as error:
        raise ConfigError(f"not the exploit.json of scripts/exploit.py: no {error}") from None


class ModelCard(ConfigModel):
    """What a shipped agent is (``card`` in its policy file)."""

    config_name = "the model card"

    name: str = Field(pattern=NAME)
    """The agent's name (its file's stem); a default agent's, ``<preset>-<n>p``, names its game."""
    preset: str
    players: int = Field(ge=2, le=4)
    method: str = Field(max_length=TEXT_MAX)
    """How it was trained, in a few words (``distillation: playouts, after-state inputs``)."""
    config: str = Field(pattern=NAME)
    """The training config (``configs/train/<x>.yaml``), run as ``python scripts/train.py <config>``."""
    commit: str = Field(pattern=NAME)
    """The commit the run was trained at."""
    training_minutes: float = Field(ge=0, le=MINUTES_MAX)
    """Wall-clock minutes of the run, on the 2-core machine."""
    timed_alone: bool = False
    """True: ``training_minutes`` is the documented command from scratch, alone on the 2-core machine
    (the bound a user can expect); False: the run shared the machine, or reused cached labels."""
    peak_memory_gib: float | None = Field(None, ge=0, le=MEMORY_MAX)
    """Peak resident memory of the run (``/usr/bin/time -v``), where measured."""
    results: list[Result] = Field(default_factory=list)
    exploitability: list[Exploitability] = Field(default_factory=list)
    """Exploiter measurements (``scripts/exploit.py``), one per budget and deal set."""
    notes: str = Field("", max_length=TEXT_MAX)
    """Anything a user should know (how it was measured, what it is for)."""

    @model_validator(mode="after")
    def _names_its_own_game(self) -> ModelCard:
        if self.preset not in PRESET_NAMES:
            raise ConfigError(unknown_name("preset", self.preset, PRESET_NAMES, "preset"))
        for game in PRESET_NAMES:
            claimed = re.match(rf"^{game}-(\d)p\b", self.name)
            if claimed and (game, int(claimed[1])) != (self.preset, self.players):
                raise ConfigError(
                    f"name {self.name!r} is a {game} {claimed[1]}p agent's, but the card is for "
                    f"{self.preset} {self.players}p"
                )
        return self

    def result(self, opponent: str) -> Result | None:
        return next((r for r in self.results if r.opponent == opponent), None)


def read_card(spec: str | Path) -> ModelCard | None:
    """The card of a checkpoint (path or shipped name); None if it has none. CheckpointError if the
    file is not a checkpoint, ConfigError if its card is malformed or claims another game than the
    network plays."""
    path = checkpoint_path(spec)
    payload = load_checkpoint(path, POLICY_KEYS)
    if payload.get("card") is None:
        return None
    card = ModelCard.parse(payload["card"])
    check_fits(card, payload, path)
    return card


def check_fits(card: ModelCard, payload: dict[str, Any], path: Path) -> None:
    """A ConfigError unless the card is for the game the file's network plays."""
    config = payload["config"]
    if (card.preset, card.players) != (config["preset"], config["players"]):
        raise ConfigError(
            f"card: {card.preset} {card.players}p, but {path} plays {config['preset']} {config['players']}p"
        )


def write_card(path: Path, card: ModelCard) -> None:
    """Put ``card`` into the policy file at ``path`` (atomically), after checking it fits the file."""
    with exclusive(path):
        store(path, card)


def store(path: Path, card: ModelCard) -> None:
    """Write ``card`` into the file (checked against it), holding the file's lock already."""
    payload = load_checkpoint(path, POLICY_KEYS)
    check_fits(card, payload, path)
    payload["card"] = card.to_dict()
    save_checkpoint(path, {key: payload[key] for key in (*POLICY_KEYS, MEMBERS, "card") if key in payload})


def read_result(path: Path) -> dict[str, Any]:
    """An ``exploit.json``; ConfigError naming the file if it cannot be read or is not a JSON object."""
    try:
        result = json.loads(path.read_text())
    except (json.JSONDecodeError, RecursionError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not JSON ({type(error).__name__}: {str(error)[:100]})") from None
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    if not isinstance(result, dict):
        raise ConfigError(f"{path}: not the exploit.json of scripts/exploit.py (a JSON object)")
    return result


def check_same_agent(result: dict[str, Any], path: Path) -> None:
    """A ConfigError unless the exploit result was measured against the network in ``path``."""
    named = result.get("agent")
    if not isinstance(named, str):
        raise ConfigError(f"the first result's agent is {type(named).__name__}, not an agent's name or file")
    try:
        same = weights_digest(checkpoint_path(named)) == weights_digest(path)
    except (ValueError, OSError) as error:
        raise ConfigError(
            f"the first result is against {named!r}, which cannot be checked: {error}"
        ) from None
    if not same:
        raise ConfigError(f"the first result is against {named!r}, another network than {path}")


def add_exploitability(agent: str | Path, agent_result: dict[str, Any], pimc_result: dict[str, Any]) -> None:
    """Add (or replace, for the same budget and deals) the card's measurement from two ``exploit.json``,
    the first measured against this very network."""
    path = checkpoint_path(agent)
    with exclusive(path):  # one read-modify-write at a time: a second writer waits, none is lost
        card = read_card(path)
        if card is None:
            raise ConfigError(f"{agent}: no model card to add to (write one with --set)")
        if agent_result.get("agent") not in BOT_NAMES:
            check_same_agent(agent_result, path)
        entry = exploitability(agent_result, pimc_result, card.preset, card.players)
        same = (entry.updates, entry.deals, entry.seed)
        kept = [e for e in card.exploitability if (e.updates, e.deals, e.seed) != same]
        store(path, card.model_copy(update={"exploitability": [*kept, entry]}))


def default_agent(preset: str, players: int) -> str:
    """The name of a preset's default agent: the strongest shipped one, ``load_policy("<preset>-<n>p")``."""
    return f"{preset}-{players}p"


def _figure(result: Result | None) -> str:
    if result is None:
        return "–"
    text = f"{result.diff:+.2f} ± {result.ci:.2f}"
    return f"**{text}**" if result.diff - result.ci > 0 else text


def _cost(card: ModelCard) -> str:
    """Training time and memory as measured: a time taken on a shared machine says so."""
    where = "alone" if card.timed_alone else "shared machine"
    memory = f", {card.peak_memory_gib:.1f} GiB peak" if card.peak_memory_gib is not None else ""
    return f"{card.training_minutes:.0f} min ({where}){memory}"


def _exploit_figure(card: ModelCard) -> str:
    """The largest budget's measurement (then the most deals): the agent's figure bold where it is
    shown harder to exploit than ``pimc``."""
    if not card.exploitability:
        return "–"
    best = max(card.exploitability, key=lambda e: (e.updates, e.deals))
    agent = f"{best.diff:+.2f} ± {best.ci:.2f}"
    return (
        f"{f'**{agent}**' if best.apart else agent} / {best.pimc_diff:+.2f} ± {best.pimc_ci:.2f} "
        f"({best.updates:,} updates, {best.deals:,} deals)"
    )


def agents_table(folder: Path = SHIPPED_DIR) -> str:
    """The Markdown table of the default agents, one row per preset, from their cards."""
    lines = [
        "| preset | agent | vs `strong` | vs `pimc` | exploiter vs agent / vs `pimc` | how it was trained |",
        "|---|---|---|---|---|---|",
    ]
    for name in sorted(path.stem for path in folder.glob("*.pt")):
        card = read_card(folder / f"{name}.pt")
        if card is None or name != default_agent(card.preset, card.players):
            continue
        pimc = card.result("pimc")
        deals = f" ({pimc.deals:,} deals, seed {pimc.seed})" if pimc else ""
        if pimc and pimc.matches and pimc.match_win is not None:
            deals += f"; {pimc.match_win:.1%} of {pimc.matches:,} matches"
        lines.append(
            f"| {card.preset} {card.players}p | `{name}` | {_figure(card.result('strong'))} | "
            f"{_figure(pimc)}{deals} | {_exploit_figure(card)} | "
            f"{markdown_text(card.method)}; `{card.config}`, {_cost(card)} |"
        )
    return "\n".join(lines)


TABLE_START, TABLE_END = "<!-- agents-table -->", "<!-- /agents-table -->"
TABLE_PAGES = ("README.md", "docs/agents.md")
"""The pages that carry the generated table between the two markers (committed, so that the table
reads the same on a code host as on the site)."""


def markdown_text(text: str) -> str:
    """Free text of a card as one table cell's plain text: no HTML, link, code or cell break gets through."""
    text = " ".join(text.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|#!])", r"\\\1", text)


def with_table(text: str, table: str, page: str = "the page") -> str:
    """``text`` with ``table`` between its markers: exactly one of each, the start first (ValueError
    naming ``page`` otherwise, so a stray marker never decides where the table ends)."""
    starts, ends = text.count(TABLE_START), text.count(TABLE_END)
    if (starts, ends) != (1, 1) or text.find(TABLE_END) < text.find(TABLE_START):
        raise ValueError(
            f"{page} must hold one {TABLE_START} and, after it, one {TABLE_END}; it has {starts} and {ends}"
        )
    start, end = text.find(TABLE_START), text.find(TABLE_END)
    return text[: start + len(TABLE_START)] + "\n" + table + "\n" + text[end:]


def write_table(root: Path, table: str) -> list[Path]:
    """Put ``table`` into every page of ``TABLE_PAGES`` under ``root``: all are read and checked before
    any is written, and each is written whole (a full disk leaves the page as it was)."""
    pages = [root / page for page in TABLE_PAGES]
    texts = []
    for path in pages:
        try:
            texts.append(with_table(path.read_text(), table, str(path)))
        except OSError as error:
            raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
    for path, text in zip(pages, texts, strict=True):
        write_atomic(path, text)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "agent", nargs="?", help=f"a checkpoint or shipped agent ({', '.join(SHIPPED_AGENTS)})"
    )
    parser.add_argument("--set", metavar="CARD.yaml", help="write this card (YAML) into the agent's file")
    parser.add_argument(
        "--exploit",
        nargs=2,
        metavar=("AGENT.json", "PIMC.json"),
        help="add to the card the exploit.json of scripts/exploit.py against the agent and against pimc",
    )
    parser.add_argument("--table", action="store_true", help="print the default agents' table (Markdown)")
    parser.add_argument(
        "--write-table", metavar="ROOT", help=f"write the table into {' and '.join(TABLE_PAGES)} under ROOT"
    )
    args = parser.parse_args(argv)
    console = Console()
    try:
        if args.table:
            console.print(agents_table(), markup=False, highlight=False, soft_wrap=True)
            return 0
        if args.write_table:
            for path in write_table(Path(args.write_table), agents_table()):
                console.print(f"wrote the agents table into {path}")
            return 0
        if args.agent is None:
            raise ConfigError("name an agent (or pass --table)")
        if args.set:
            try:
                text = Path(args.set).read_text()
            except OSError as error:
                raise ConfigError(f"cannot read {args.set}: {error.strerror or error}") from None
            raw: Any = load_yaml(text)
            write_card(checkpoint_path(args.agent), ModelCard.parse(raw))
        if args.exploit:
            add_exploitability(args.agent, *(read_result(Path(path)) for path in args.exploit))
        card = read_card(args.agent)
    except (ConfigError, CheckpointError, ValueError, OSError) as error:
        return error_exit(console, error)
    if card is None:
        console.print(f"{args.agent}: no model card", soft_wrap=True)
        return 1
    console.print(yaml.safe_dump(card.to_dict(), sort_keys=False), markup=False, highlight=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
