"""Environment speed: random legal play through every engine and environment.

The engines (``domino_env.tools.benchmark``, whose docstring says what each counts): ``core``
(the vectorised core, compiled kernels; moves/s and peak memory), ``reference`` and
``game`` (the one-game engines), ``openspiel`` (OpenSpiel's ``python_block_dominoes``
when installed, 2p block only), ``aec`` / ``aec-raw`` (the PettingZoo env through
``env()`` or ``raw_env``, steps/s; ``aec-seeded`` / ``aec-raw-seeded`` with
``reset(seed=...)`` every episode), ``vector`` (the native Gymnasium vector env, learner
steps/s). Legal actions and the observation of the seat to move are built every move.

    python scripts/bench_env.py                                  # 2p block, N=8192
    python scripts/bench_env.py --all --seconds 2                # every preset x players
    python scripts/bench_env.py --preset spanish_pairs --players 4 --num-envs 65536 --json
    python scripts/bench_env.py --engines aec aec-raw vector --vector-envs 4096
    python scripts/bench_env.py --engines aec-raw aec-raw-seeded aec aec-seeded openspiel --repeat 3
"""

from domino_env.tools.benchmark import main

if __name__ == "__main__":
    raise SystemExit(main())
