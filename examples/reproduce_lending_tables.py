"""Reproduce a slice of Jiang, Jiang and Pacchiano (2021), Table 1, with the bench's own code.

Section 8's protocol: stratified 5% warm start, the rest of the dataset
streamed one applicant at a time, cutoffs at the 50% and 70% quantiles of
mu(x.beta*), every exploring method's alpha tuned over powers of two. The
full tables are ``osfb-bench run jiang-linear`` / ``jiang-logistic``; this
script runs one small dataset so it finishes in about a minute.

    python examples/reproduce_lending_tables.py --data-home DIR   # German credit
    python examples/reproduce_lending_tables.py --fast            # breast_cancer, tiny

Without the dataset files it falls back to scikit-learn's bundled
``breast_cancer`` (not in the paper, so no paper numbers beside it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from osfb_gym.bench.driver import RunOptions  # noqa: E402
from osfb_gym.bench.suites import run  # noqa: E402
from osfb_gym.data.registry import available_datasets  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--dataset", default="german", help="a lending dataset name (see the README)")
parser.add_argument("--data-home", default=None, help="folder of the dataset files")
parser.add_argument("--seeds", type=int, default=5, help="random splits (the paper: 10)")
parser.add_argument("--alphas", default="-6:3", help="exponents LOW:HIGH of the grid 2^k")
parser.add_argument("--out", default="examples-output/lending-tables", help="output folder")
parser.add_argument("--fast", action="store_true", help="breast_cancer, 2 seeds, T = 100")
args = parser.parse_args()
low, high = (int(k) for k in args.alphas.split(":"))
horizon = None
if args.fast:
    args.dataset, args.seeds, low, high, horizon = "breast_cancer", 2, -1, 0, 100

found, missing = available_datasets([args.dataset], args.data_home)
if not found:
    print(f"{args.dataset} not found ({missing[args.dataset]}); using breast_cancer instead")
    args.dataset = "breast_cancer"

# the suite's driver, as `osfb-bench run jiang-linear --seeds N --set datasets=...` runs it
options = RunOptions(seeds=args.seeds, horizon=horizon, data_home=args.data_home, progress=False)
result = run(
    "jiang-linear",
    args.out,
    options,
    datasets=(args.dataset,),
    alphas=tuple(2.0**k for k in range(low, high + 1)),
)
print(result.table)

# One bar per method and cutoff: the tuned mean loss, with its standard error.
tuned = result.tuned.reset_index()
figure, axis = plt.subplots(figsize=(9, 4))
for offset, (cutoff, cells) in enumerate(tuned.groupby("cutoff")):
    positions = [i + 0.4 * offset for i in range(len(cells))]
    axis.bar(positions, cells["mean"], width=0.4, yerr=cells["sem"], label=f"cutoff {cutoff:.0%}")
axis.set_xticks([i + 0.2 for i in range(len(cells))], list(cells["method"]), rotation=20)
axis.set(ylabel="cumulative one-sided loss (tuned)", title=f"Table 1 protocol on {args.dataset}")
axis.legend()
figure.tight_layout()
plot = Path(args.out) / "lending_table.png"
figure.savefig(plot)
print(f"plot: {plot}")
