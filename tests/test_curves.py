"""Training curves: a tiny real run's TensorBoard events read back and plotted (agents.training.curves)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from torch.utils.tensorboard import SummaryWriter

from agents.training.curves import eval_opponents, plot_learning_curves, read_scalars

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("plot_curves_script", ROOT / "scripts" / "plot_curves.py")
plot_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plot_script)

GAMES, STEPS, UPDATES = 32, 8, 2


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two updates, an arena evaluation after each (random and strong as in quickstart.yaml, then best.pt)."""
    out = tmp_path_factory.mktemp("runs")
    command = [
        sys.executable, str(ROOT / "scripts" / "train.py"), "quickstart",
        f"total_updates={UPDATES}", f"num_games={GAMES}", f"rollout_steps={STEPS}", "eval.every=1",
        "eval.deals=20", f"output_dir={out}", "name=tiny", "progress=false", "device=cpu",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return out / "tiny"


def test_read_scalars_gives_every_eval_point_at_its_global_step(run_dir: Path) -> None:
    scalars = read_scalars(run_dir)
    assert eval_opponents(scalars) == ["random", "strong", "best"]  # best.pt: from the second evaluation on
    expected = np.arange(1, UPDATES + 1) * GAMES * STEPS
    np.testing.assert_array_equal(scalars["eval/diff_vs_best"][0], expected[1:])
    for bot in ("random", "strong"):
        for kind in ("diff", "ci", "round_win"):
            steps, values = scalars[f"eval/{kind}_vs_{bot}"]
            np.testing.assert_array_equal(steps, expected)
            assert values.shape == (UPDATES,) and np.isfinite(values).all()
        assert (scalars[f"eval/ci_vs_{bot}"][1] > 0).all()
    assert len(scalars["losses/entropy"][0]) == UPDATES and len(scalars["charts/SPS"][0]) == UPDATES
    seconds, _ = read_scalars(run_dir, x="wall_time")["losses/entropy"]
    assert seconds[0] >= 0 and (np.diff(seconds) >= 0).all()


def test_plot_to_a_file_and_into_given_axes(run_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "curves.png"
    plot_learning_curves([run_dir], path, x="wall_time")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    figure = Figure()
    ax = figure.subplots()
    assert plot_learning_curves([run_dir], ax, opponents=["strong"], labels=["mine"]) is figure
    assert ax.get_lines()[0].get_label() == "mine"
    with pytest.raises(ValueError, match="1 axes for 3 opponents"):
        plot_learning_curves([run_dir], ax)


def test_cli_writes_the_png_and_names_a_folder_without_events(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cli.png"
    assert plot_script.main([str(run_dir), "--out", str(out)]) == 0
    assert out.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no TensorBoard event files"):
        read_scalars(empty)
    assert plot_script.main([str(run_dir), str(empty), "--out", str(tmp_path / "no.png")]) == 2
    assert "no TensorBoard event files" in capsys.readouterr().err
    assert not (tmp_path / "no.png").exists()
    # The parent of run folders (runs/) is a common slip: the message lists the runs below it.
    with pytest.raises(FileNotFoundError, match=r"runs below it: .*tiny"):
        read_scalars(run_dir.parent)


def test_the_distillation_curve_is_drawn_over_positions_labelled(run_dir: Path, tmp_path: Path) -> None:
    """``distill.evaluate`` runs log ``distill_eval/*`` per round (tests/test_distill.py makes real ones)."""
    distilled = tmp_path / "distilled"
    with SummaryWriter(str(distilled)) as writer:
        for positions, diff in [(1000, -1.0), (2000, -0.3), (3000, 0.2)]:
            writer.add_scalar("distill_eval/diff_vs_pimc", diff, positions)
            writer.add_scalar("distill_eval/ci_vs_pimc", 0.4, positions)
    assert eval_opponents(read_scalars(distilled), "distill_eval") == ["pimc"]
    figure = Figure()
    ax = figure.subplots()
    plot_learning_curves([distilled], ax, section="distill_eval")
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [1000, 2000, 3000])
    assert ax.get_xlabel() == "positions labelled"
    out = tmp_path / "rounds.png"
    assert plot_script.main([str(distilled), "--distill", "--out", str(out)]) == 0 and out.exists()
    # A run without per-round evaluations says what to set.
    with pytest.raises(ValueError, match=r"distill\.evaluate: true"):
        plot_learning_curves([run_dir], tmp_path / "none.png", section="distill_eval")
