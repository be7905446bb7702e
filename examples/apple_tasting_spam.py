"""Apple tasting on spam: the classical perceptron ratchets, margins and sampling repair it.

Sculley (2007)'s setting: a message predicted ham goes to the inbox, where its
label is seen; a message predicted spam is filtered and never looked at. So ham
is the positive class and only "tasted" messages teach the filter. The
classical perceptron updates only on mistakes it sees and drifts towards
filtering everything; the perceptron with margins also learns from
correctly tasted messages near its boundary, and Label Efficient sampling
tastes some predicted spam.

    python examples/apple_tasting_spam.py                       # sms_spam, 5 orders
    python examples/apple_tasting_spam.py --data-home DIR --fast

Needs the SMS Spam Collection (``sms_spam``; ``spambase`` with
``--dataset spambase``): found in ``--data-home`` or ``$OSFB_DATA``, or
fetched by ``osfb_gym.data.load``; without it the script says so in one line.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from agents.apple import LabelEfficient, MarginPerceptron, Perceptron  # noqa: E402
from osfb_gym.bench.suites.sculley import make_spam_env  # noqa: E402
from osfb_gym.data.sources import DatasetNotFoundError  # noqa: E402
from osfb_gym.runner import run_episode  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--dataset", default="sms_spam", help="sms_spam or spambase")
parser.add_argument("--data-home", default=None, help="folder of the dataset files")
parser.add_argument("--seeds", type=int, default=5, help="stream orders (seeds 0..)")
parser.add_argument("--horizon", type=int, default=None, help="truncate the stream")
parser.add_argument("--out", default="examples-output/apple-spam", help="folder for the plot")
parser.add_argument("--fast", action="store_true", help="1 order of 500 messages (tests)")
args = parser.parse_args()
Path(args.out).mkdir(parents=True, exist_ok=True)
if args.fast:
    args.seeds, args.horizon = 1, 500

# Figure 5's perceptrons have no bias term (the paper's); m = 2, eta = 1 as in Section 6.
runs = {
    "Perceptron": ("one_sided", Perceptron(eta=1.0, fit_intercept=False)),
    "Perceptron with margins": ("one_sided", MarginPerceptron(m=2.0, fit_intercept=False)),
    "Label Efficient (margins)": (
        "one_sided",
        LabelEfficient(MarginPerceptron(m=2.0, fit_intercept=False), beta=0.001),
    ),
    "Perceptron, full feedback": ("full", Perceptron(eta=1.0, fit_intercept=False)),
}
# the data first, so a missing dataset is one line, not a half-printed table
try:
    make_spam_env(args.dataset, data_home=args.data_home, horizon=args.horizon)
except DatasetNotFoundError as error:
    raise SystemExit(f"apple_tasting_spam.py needs the {args.dataset} dataset: {error}") from None
figure, axis = plt.subplots(figsize=(7, 4))
print("| learner | F1 | recall (ham kept) | precision | label requests |\n|---|---|---|---|---|")
for name, (feedback, agent) in runs.items():
    env = make_spam_env(
        args.dataset, feedback=feedback, data_home=args.data_home, horizon=args.horizon
    )
    episodes = [run_episode(env, agent.clone(), seed) for seed in range(args.seeds)]
    mean = {
        key: np.mean([e.metrics[key] for e in episodes])
        for key in ("f1", "recall", "precision", "label_requests")
    }
    print(
        f"| {name} | {mean['f1']:.3f} | {mean['recall']:.3f} | {mean['precision']:.3f} "
        f"| {mean['label_requests']:.0f} |"
    )
    axis.plot(np.mean([e.average_loss for e in episodes], axis=0), label=name)
axis.set(
    xlabel="message t",
    ylabel="mistakes per message so far",
    title=f"apple tasting on {args.dataset}",
)
axis.legend()
figure.tight_layout()
plot = Path(args.out) / "apple_tasting_spam.png"
figure.savefig(plot)
print(f"plot: {plot}")
