"""Hardening II (issue 30): damaged archives, locked run folders, bounded YAML and values, full disks,
unwritable outputs and strict JSON.

Each test fails on the code before the fix: a flipped byte loaded silently, two trainers shared a
folder, a 500-byte YAML hung the loader, an error message expanded a shared list to gigabytes, a
full disk was a 30-line traceback, and ``deals=1`` wrote ``Infinity`` into the JSON.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.arena import evaluate, tournament
from agents.arena.config import load_config
from agents.bots.trained import SHIPPED_DIR
from agents.configuration import ConfigError, load_yaml
from agents.training import train
from agents.training.checkpoint import (
    MAX_CHECKPOINT_BYTES,
    CheckpointError,
    load_checkpoint,
    save_checkpoint,
)
from agents.training.config import load_train_config, parse_train_config
from agents.training.run_lock import RunFolderLocked, RunLock
from agents.training.tune import split_overrides
from domino_env import env, parallel_env, replay

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = SHIPPED_DIR / "block-2p-ppo.pt"
TINY = {
    "preset": "block",
    "players": 2,
    "seed": 1,
    "threads": 1,
    "num_games": 16,
    "rollout_steps": 8,
    "total_updates": 2,
    "model": {"hidden": [16]},
    "eval": {"every": 1, "deals": 4, "opponents": ["random"]},
    "checkpoint": {"every": 1, "keep": 5},
    "progress": False,
}


def tiny(folder: Path, **changes: Any) -> Any:
    return parse_train_config({**TINY, "output_dir": str(folder), "name": "tiny", **changes})


def flip_byte_in_tensor(path: Path) -> Path:
    """Flip one byte in the middle of the first tensor's data (``archive/data/0``), in place."""
    with zipfile.ZipFile(path) as archive:
        entry = next(e for e in archive.infolist() if e.filename.endswith("/data/0"))
    with path.open("rb") as file:
        file.seek(entry.header_offset + 26)
        name_length, extra_length = (int.from_bytes(file.read(2), "little") for _ in range(2))
    where = entry.header_offset + 30 + name_length + extra_length + entry.file_size // 2
    data = bytearray(path.read_bytes())
    data[where] ^= 0x55
    path.write_bytes(bytes(data))
    return path


# 1. Damaged archives.


def test_a_flipped_byte_in_a_checkpoint_is_refused_naming_the_entry(tmp_path: Path) -> None:
    damaged = tmp_path / "block-2p-ppo.pt"
    damaged.write_bytes(SHIPPED.read_bytes())
    flip_byte_in_tensor(damaged)
    with pytest.raises(CheckpointError, match=r"block-2p-ppo\.pt: damaged: .*data/0 does not match its CRC"):
        load_checkpoint(damaged, ("model",))
    load_checkpoint(SHIPPED, ("model",))  # the original still loads


def test_resume_refuses_a_damaged_last_checkpoint(tmp_path: Path) -> None:
    config = tiny(tmp_path)
    train.train(config)
    flip_byte_in_tensor(config.run_dir / "checkpoints" / "update_000002.pt")
    more = tiny(tmp_path, total_updates=3)
    with pytest.raises(CheckpointError, match=r"update_000002\.pt: damaged"):
        train.train(more, resume=True)


def test_a_deflated_giant_tensor_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    """A 1 GiB tensor of zeros deflates to about a megabyte; its declared size gives it away."""
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", b"\x80\x02}q\x00.")
        with archive.open("archive/data/0", "w", force_zip64=True) as entry:
            block = bytes(1 << 24)
            for _ in range((MAX_CHECKPOINT_BYTES >> 24) + 1):
                entry.write(block)
    assert bomb.stat().st_size < 2_000_000
    with pytest.raises(CheckpointError, match=r"refused beyond"):
        load_checkpoint(bomb)


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), min_size=1, max_size=3))
def test_fuzz_damaged_archives_load_or_name_the_file(
    tmp_path_factory, changes: list[tuple[int, int]]
) -> None:
    """Any bytes flipped anywhere in a shipped policy: it loads unchanged (bytes zip ignores) or is
    refused as a CheckpointError naming the file; never another exception, never other weights."""
    original = SHIPPED.read_bytes()
    data = bytearray(original)
    for where, mask in changes:
        data[where % len(data)] ^= mask
    path = tmp_path_factory.mktemp("fuzz") / "x.pt"
    path.write_bytes(bytes(data))
    try:
        loaded = load_checkpoint(path, ("model",))
    except CheckpointError as error:
        assert "x.pt" in str(error) and "\n" not in str(error)
        return
    reference = torch.load(io.BytesIO(original), weights_only=True)["model"]
    assert all(torch.equal(loaded["model"][k], reference[k]) for k in reference)


# 2. One trainer per run folder.


def test_a_second_trainer_on_the_same_run_folder_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    config = tiny(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import time; from agents.training.run_lock import RunLock\n"
         f"from pathlib import Path\nwith RunLock(Path({str(config.run_dir)!r})):\n"
         "    print('held', flush=True); time.sleep(60)"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunFolderLocked, match=rf"in use by another training run \(PID {holder.pid}\)"):
            train.train(config)
        assert not (config.run_dir / "checkpoints").exists()  # refused before writing anything
    finally:
        holder.kill()
        holder.wait()
    train.train(config)  # the holder is gone (killed): its lock went with it
    assert (config.run_dir / "checkpoints" / "update_000002.pt").exists()


def test_the_lock_is_held_only_while_the_run_lasts(tmp_path: Path) -> None:
    with RunLock(tmp_path / "run"), pytest.raises(RunFolderLocked), RunLock(tmp_path / "run"):
        pass
    with RunLock(tmp_path / "run"):
        pass


# 3. YAML: alias bombs and duplicate keys, in files, overrides and search spaces.

ALIAS_BOMB = "\n".join(
    f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}" if i else '"lol"'] * 9) + "]" for i in range(9)
)
"""The billion laughs: nine levels of aliases, each repeating the last nine times (in 300-odd bytes)."""
FLOW_BOMB = (
    "[" + ", ".join(f"&a{i} [" + ", ".join([f"*a{i - 1}" if i else "0"] * 9) + "]" for i in range(9)) + "]"
)
"""The same as one flow-style value, for an override or a search space's arguments."""


def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB + "\n")
    assert path.stat().st_size < 600
    for loader in (load_train_config, load_config):
        start = time.perf_counter()
        with pytest.raises(ConfigError, match="aliases expand to more than 100,000 values"):
            loader(path)
        with pytest.raises(ConfigError, match=r"override 'seed=.*aliases expand to more than"):
            loader(None, [f"seed={FLOW_BOMB}"])
        assert time.perf_counter() - start < 5
    with pytest.raises(ConfigError, match=r"arguments of grid\(\) are not valid YAML \(its aliases expand"):
        split_overrides([f"ppo.lr=grid({FLOW_BOMB})"])
    assert load_yaml("{a: &x [1, [2]], b: *x}") == {"a": [1, [2]], "b": [1, [2]]}  # small aliases are fine


def test_a_key_written_twice_is_refused_naming_it_and_its_line(tmp_path: Path) -> None:
    """A second ``ppo:`` section used to replace the first silently (its lr back to the default)."""
    path = tmp_path / "twice.yaml"
    path.write_text("preset: block\nppo:\n  lr: 0.001\nname: x\nppo:\n  epochs: 2\n")
    with pytest.raises(ConfigError, match=r"twice\.yaml: duplicate key 'ppo' \(line 5, column 1\)"):
        load_train_config(path)
    with pytest.raises(ConfigError, match=r"override 'eval=\{deals: 1, deals: 2\}'.*duplicate key 'deals'"):
        load_config(None, ["eval={deals: 1, deals: 2}"])
    assert load_yaml("base: &b {lr: 1, epochs: 2}\nppo: {<<: *b, lr: 3}")["ppo"] == {"lr": 3, "epochs": 2}


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (".=5", r"override '\.=5': '\.' has an empty key name"),
        ("ppo..lr=1", r"'ppo\.\.lr' has an empty key name"),
        ("rules.name=x", r"rules\.name: set it with the top-level key 'preset'"),
        ("rules.players=3", r"rules\.players: set it with the top-level key 'players'"),
    ],
)
def test_overrides_that_name_no_key_say_so(override: str, message: str) -> None:
    for loader in (load_train_config, load_config):
        with pytest.raises(ConfigError, match=message):
            loader(None, [override])


# 4. Values shown in errors are bounded.


def test_a_shared_nested_value_is_not_expanded_in_an_error() -> None:
    """10^9 leaves through shared references: ``repr`` needed gigabytes; the message is short."""
    value: Any = [0]
    for _ in range(9):
        value = [value] * 10
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"target must be an integer, got \[\[\[") as caught:
        parse_train_config({"preset": "block", "players": 2, "rules": {"target": value}})
    assert len(str(caught.value)) < 300 and time.perf_counter() - start < 2
    payload = torch.load(SHIPPED, weights_only=True)
    payload["config"]["rules"] = {"target": value}
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"shared-{os.getpid()}.pt"
    try:
        save_checkpoint(path, payload)
        with pytest.raises(CheckpointError, match="target must be an integer") as caught:
            load_checkpoint(path, ("config", "model"))
        assert len(str(caught.value)) < 400
    finally:
        path.unlink(missing_ok=True)


# 5. Full disks and unwritable outputs.


def test_a_full_disk_while_saving_is_one_line_naming_the_file(tmp_path: Path, monkeypatch, capsys) -> None:
    def full(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("[enforce fail at inline_container.cc:664] . unexpected pos 4160 vs 4054")

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({**TINY, "name": "quickstart", "output_dir": str(tmp_path)}))
    monkeypatch.setattr(torch, "save", full)
    code = train.main([str(config)])
    out = capsys.readouterr().out
    assert code == 1 and "Traceback" not in out
    assert "cannot write" in out and "update_000000.pt" not in out and "is the disk full?" in out
    assert len([line for line in out.splitlines() if "error" in line]) == 1
    assert not list((tmp_path / "quickstart" / "checkpoints").glob("*"))  # no half file left


@pytest.mark.parametrize("target", ["/dev/null", "read-only", "a-file"])
def test_an_unwritable_output_folder_is_refused_before_any_game(
    target: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    if target == "read-only":
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o500)
        if os.access(folder, os.W_OK):  # root writes anywhere
            pytest.skip("running as root: a read-only folder is writable")
        target = str(folder)
    elif target == "a-file":
        (tmp_path / "a-file").write_text("x")
        target = str(tmp_path / "a-file")
    played = []
    monkeypatch.setattr(evaluate, "run_arena", lambda *a, **k: played.append(1))
    code = evaluate.main(["bots", "deals=2", "matches=0", "progress=false", f"output.dir={target}"])
    out = capsys.readouterr().out
    assert code == 1 and not played and "Traceback" not in out
    assert f"cannot write {target}" in out.replace("\n", "")


def test_arena_results_are_replaced_whole_or_not_at_all(tmp_path: Path, monkeypatch, capsys) -> None:
    args = ["bots", "policies=[strong,random]", "deals=2", "matches=0", "progress=false",
            f"output.dir={tmp_path}", "output.plot=false"]  # fmt: skip
    assert evaluate.main(args) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real_dumps = json.dumps

    def disk_full_midway(*a: Any, **k: Any) -> str:
        raise OSError(28, "No space left on device", str(tmp_path / "block-2p.json"))

    monkeypatch.setattr("domino_env.files.os.replace", disk_full_midway)
    assert evaluate.main(args) == 1
    out = capsys.readouterr().out
    assert "No space left on device" in out and "Traceback" not in out
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before  # the previous JSON and CSV, whole; no temporary file left
    assert json.loads(before["block-2p.json"]) and real_dumps


# 10. Strict JSON.


def test_one_deal_writes_strict_json_with_null_and_its_reason(tmp_path: Path) -> None:
    args = ["bots", "policies=[strong,random]", "deals=1", "matches=0", "progress=false",
            f"output.dir={tmp_path}", "output.plot=false", "output.csv=false"]  # fmt: skip
    assert evaluate.main(args) == 0
    text = (tmp_path / "block-2p.json").read_text()
    assert "Infinity" not in text and "NaN" not in text

    def no_constants(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    result = json.loads(text, parse_constant=no_constants)
    assert result["pairs"][0]["ci"] is None and "two deals" in result["note"]


# 8. Records nested too deeply; replay's rules with non-string keys.


def test_a_deeply_nested_record_is_an_error_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"preset": "block", "players": 2, "hands": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = subprocess.run(
        [sys.executable, "-m", "domino_env", "replay", str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: the file nests lists or objects too deeply")


def test_replay_refuses_rules_with_non_string_keys() -> None:
    record = {"preset": "block", "players": 2, "hands": [["6-6"], ["5-5"]], "rules": {1: 2}}
    with pytest.raises(ValueError, match=r"'rules' must be an object of Rules field overrides"):
        replay(record)


# 9. Ctrl-C in the arena.


def test_ctrl_c_keeps_the_pairs_that_had_finished(tmp_path: Path, monkeypatch, capsys) -> None:
    args = ["policies=[random,strong,blocker]", "deals=6", "matches=2", "progress=false"]
    args += [f"output.dir={tmp_path}", "output.name=bots", "output.plot=false"]
    assert evaluate.main(args) == 0
    whole = json.loads((tmp_path / "bots.json").read_text())
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    calls, real_play = [], tournament.play

    def play_until_the_third_pair(*a: Any, **k: Any) -> Any:  # each pair: its rounds, then its matches
        calls.append(a[5])
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real_play(*a, **k)

    monkeypatch.setattr(tournament, "play", play_until_the_third_pair)
    capsys.readouterr()
    assert evaluate.main(args) == 130
    out = capsys.readouterr().out
    assert out.startswith("interrupted: 2 of 3 pairs had finished") and "Traceback" not in out
    assert calls == ["round", "match", "round", "match", "round"]
    partial = json.loads((tmp_path / "bots-partial.json").read_text())
    assert partial["pairs"] == whole["pairs"][:2]  # the same games: a pair does not depend on the others
    assert [p["name"] for p in partial["policies"]] == ["random", "strong", "blocker"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if "partial" not in p.name} == before

    calls.clear()
    monkeypatch.setattr(tournament, "play", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    args[-2] = "output.name=early"
    assert evaluate.main(args) == 130
    out = capsys.readouterr().out
    assert out.startswith("interrupted: no pair had finished") and len(out.splitlines()) <= 2
    assert not list(tmp_path.glob("early*"))

    def interrupted_while_reading(*a: Any, **k: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "load_config", interrupted_while_reading)  # before any config exists
    assert evaluate.main(args) == 130
    out = capsys.readouterr().out
    assert out.startswith("interrupted: no pair had finished") and "Traceback" not in out


# 11. PettingZoo env misuse.


def test_pettingzoo_reset_refuses_unknown_options_and_parallel_step_names_the_mover() -> None:
    game = env(preset="block", players=2)
    with pytest.warns(
        UserWarning, match=r"unknown reset options \['deals'\] ignored; the only option is 'deal'"
    ):
        game.reset(options={"deals": {}})
    table = parallel_env(preset="block", players=2)
    table.reset(seed=0)
    with pytest.raises(ValueError, match=r"no action for 'player_0', the agent to move"):
        table.step({"player_1": 0})


def test_a_crafted_checkpoint_declaring_a_huge_tensor_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A 1.1 MB file with a 2^30 x 2^30 tensor of zero strides crashed every command with an allocation
    error from the NaN check: the element count is checked against the size bound first."""
    from agents.bots.registry import load_policy
    from agents.training.checkpoint import POLICY_KEYS, CheckpointError, load_checkpoint

    payload = torch.load(SHIPPED_DIR / "block-2p.pt", weights_only=True)
    name = next(iter(payload["model"]))
    payload["model"][name] = torch.zeros(1).as_strided((2**30, 2**30), (0, 0))
    path = tmp_path / "crafted.pt"
    torch.save(payload, path)
    assert path.stat().st_size < 2**21
    with pytest.raises(CheckpointError, match=r"declares 1,152,921,504,606,846,976 elements"):
        load_checkpoint(path, POLICY_KEYS)
    with pytest.raises(ValueError, match=r"more than a checkpoint may hold"):
        load_policy(str(path))
