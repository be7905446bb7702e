"""Throughput of a sweep of cheap agents: 1 vs 2 local processes, 1 vs 2 Ray workers.

The sweep: OneSidedEpsilonGreedy over 8 alphas x SEEDS seeds on the default
lending world (T = HORIZON), the bulk of the paper suites in miniature.
Every configuration runs the same cells (checked: identical metrics);
cells/second counts the execution alone (a local Ray is started before the
clock and shut down after; the local pool's process start-up is counted).
The machine's load average is printed before and after: on a shared machine
the ratios say as much about the other jobs as about the executors. Each
cell also times itself inside its worker: the busy fraction (the cells'
own time over workers x wall time) near 1 means the executor adds little,
and a cell's mean time growing with the workers means they were
time-sliced with other jobs for the cores.

    python benchmarks/bench_scaling.py [--seeds 20] [--horizon 500] [--no-ray]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

from osfb_gym.bench.executors import execute
from osfb_gym.bench.sweep import spec_from_dict


def sweep(seeds: int, horizon: int) -> list:
    return spec_from_dict(
        {
            "name": "scaling",
            "seeds": seeds,
            "envs": [{"id": "OneSidedLending-v0", "kwargs": {"horizon": horizon}}],
            "agents": [
                {"name": "OneSidedEpsilonGreedy", "grid": {"alpha": [2.0**k for k in range(-6, 2)]}}
            ],
        }
    ).cells()


def timed(cells: list, **options) -> tuple[float, float, pd.DataFrame]:
    """Wall seconds, the sum of the cells' own seconds (timed in the workers), the rows."""
    rows: list[dict] = []
    started = time.perf_counter()
    execute(cells, rows.extend, **options)
    seconds = time.perf_counter() - started
    frame = pd.DataFrame(rows)
    in_cells = float(frame["seconds"].sum())
    return (
        seconds,
        in_cells,
        frame.drop(columns="seconds").sort_values("key").reset_index(drop=True),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=500)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    cells = sweep(args.seeds, args.horizon)
    print(f"{len(cells)} cells; load average before: {os.getloadavg()}")
    results: dict[str, float] = {}
    reference = None
    configs = [("local", 1), ("local", 2)] + ([] if args.no_ray else [("ray", 1), ("ray", 2)])
    for executor, workers in configs:
        if executor == "ray":
            import ray

            root = str(Path(__file__).resolve().parents[1])
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": root}},
            )
            timed(cells[:4], executor="ray")  # warm the workers' imports before the clock
        seconds, in_cells, frame = timed(cells, executor=executor, workers=workers)
        if executor == "ray":
            ray.shutdown()
        if reference is None:
            reference = frame
        assert frame.equals(reference), f"{executor} x{workers} gave other rows"
        results[f"{executor} x{workers}"] = len(cells) / seconds
        print(
            f"{executor} x{workers}: {seconds:.1f} s, {len(cells) / seconds:.1f} cells/s; "
            f"the cells' own time {in_cells:.1f} s (mean {1000 * in_cells / len(cells):.0f} ms); "
            f"busy fraction {in_cells / (workers * seconds):.2f}"
        )
    print(f"load average after: {os.getloadavg()}")
    print(f"local 2 vs 1 workers: {results['local x2'] / results['local x1']:.2f}x")
    if not args.no_ray:
        print(f"ray 2 vs 1 workers:   {results['ray x2'] / results['ray x1']:.2f}x")


if __name__ == "__main__":
    main()
