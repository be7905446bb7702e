"""Reproduce the AcQUIre experiments (Section 5, Appendix E) on our populations.

``dean-services`` runs three measurements on MultiServiceChoice-v0:

1. **Total loss against k** (k = 1..30) for AcQUIre, Uniform and Greedy
   (largest loss) on each population: mean over seeds with a band of one
   standard error (PNG and table), the ratio to a reference optimum at a
   few k (Lloyd-style alternating minimisation from seeded restarts;
   scikit-learn's ``KMeans`` for the squared family), and how many
   uniformly acquired services it takes to match 5 AcQUIre services (the
   paper's MovieLens statement: about 30).
2. **Fairness**: the fairness objective (max over groups of the average
   loss, eq. 3) and each group's average loss, Fair AcQUIre against the
   group-balanced uniform baseline of Appendix E (AcQUIre and Uniform
   beside them).
3. **Learning dynamics**: the total loss right after initialisation and
   after rounds of learning dynamics (users re-choose, services refit),
   for each initialiser.

Where we differ from the paper: the census population is Adult's sex x
race x occupation cells with ``log(hours-per-week)`` as the score (the
paper used 2021 ACS data, zip code cells and log commute time); MovieLens
runs when ``ratings.dat`` is found, with 200 subpopulations and 50 movies
(the paper: 1000 and 200) and the mean squared error rather than the
paper's excess error of a per-subpopulation matrix factorisation;
the synthetic populations are ours (the paper's are not specified).
Each episode of every agent at a seed sees the same world (the env draws
it from the reset seed), so comparisons are paired.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from agents.base import Agent
from agents.services import AcQUIre, FairAcQUIre, GroupBalancedUniform, MaxLossGreedy, Uniform
from osfb_gym.bench.plots import panels, save
from osfb_gym.bench.store import ResultStore, stable_key
from osfb_gym.core.service_losses import reference_loss
from osfb_gym.data import DatasetNotFoundError, load
from osfb_gym.runner import run_episode

ENV = "MultiServiceChoice-v0"
AGENTS: dict[str, Callable[[], Agent]] = {
    "AcQUIre": AcQUIre,
    "Uniform": Uniform,
    "Greedy": MaxLossGreedy,
    "Fair AcQUIre": FairAcQUIre,
    "Group-balanced uniform": GroupBalancedUniform,
}
CURVE_AGENTS = ("AcQUIre", "Uniform", "Greedy")
FAIR_AGENTS = ("Fair AcQUIre", "Group-balanced uniform", "AcQUIre", "Uniform")
MATCH_K = 5  # "five AcQUIre services match about 30 uniform ones"


@dataclass(frozen=True)
class Setting:
    """One population: a label and the env's keyword arguments."""

    label: str
    env_kwargs: dict[str, Any]
    dataset: str | None = None


SYNTHETIC = (
    Setting("clusters, squared", {"loss": "squared"}),
    Setting("clusters, squared, 2% outliers", {"loss": "squared", "outlier_fraction": 0.02}),
    Setting("clusters, Mahalanobis", {"loss": "mahalanobis"}),
    Setting("clusters, Huber", {"loss": "huber"}),
    Setting("clusters, cosine (d=3)", {"loss": "cosine", "dim": 3}),
    Setting("linear predictors (d=3)", {"population": "linear", "dim": 3}),
)
CENSUS = Setting("census (Adult cells)", {"population": "census"}, dataset="adult")
MOVIELENS = Setting(
    "MovieLens 10M (200 subpopulations, 50 movies)",
    {"population": "movielens"},
    dataset="movielens",
)
LINEAR_SETTINGS = ("linear predictors (d=3)", CENSUS.label, MOVIELENS.label)
FAIR_SETTINGS = (
    Setting(
        "clusters, squared, 4 groups (correlation 0.9)",
        {"loss": "squared", "n_groups": 4, "group_correlation": 0.9},
    ),
    CENSUS,
)


@dataclass(frozen=True)
class DeanSuite:
    """The reproduction's sizes.

    Attributes
    ----------
    name
        ``"dean-services"``.
    max_services
        The largest k of the curves.
    reference_ks
        The k at which the reference optimum is computed (it costs restarts).
    reference_restarts
        Restarts of the reference solver.
    fair_ks
        The k at which the fairness table is laid out.
    dynamics_services, dynamics_rounds
        k and rounds of the learning-dynamics measurement.
    seeds
        Reset seeds: one world each (census: one order of its cells).
    """

    name: str = "dean-services"
    max_services: int = 30
    reference_ks: tuple[int, ...] = (5, 10, 20, 30)
    reference_restarts: int = 5
    fair_ks: tuple[int, ...] = (5, 10, 20)
    dynamics_services: int = 10
    dynamics_rounds: int = 50
    seeds: tuple[int, ...] = tuple(range(20))
    description: str = field(
        default=(
            "AcQUIre (Algorithms 1-2) against uniform, greedy and group-balanced "
            "acquisition on MultiServiceChoice-v0: total loss against k, ratio to a "
            "reference optimum, fairness, learning dynamics."
        ),
        compare=False,
    )


DEAN_SUITES = {"dean-services": DeanSuite()}


class OracleLog(gym.Wrapper):
    """Keep every step's oracle: the evaluator's record of an episode."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.oracles: list[dict[str, Any]] = []

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Reset and start a new record."""
        self.oracles = []
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        """Step and record the oracle."""
        result = self.env.step(action)
        self.oracles.append(result[4]["oracle"])
        return result


@dataclass
class DeanResult:
    """What a run produced: the per-episode tables, the report and the files."""

    curves: pd.DataFrame
    references: pd.DataFrame
    fairness: pd.DataFrame
    dynamics: pd.DataFrame
    report: str
    files: list[Path]


def settings_at_hand(data_home: str | None) -> tuple[list[Setting], list[Setting], list[str]]:
    """Return the curve settings, the fairness settings and notes on what was skipped."""
    found, skipped = set(), []
    for setting in (CENSUS, MOVIELENS):
        assert setting.dataset is not None
        try:
            load(setting.dataset, data_home=data_home)
            found.add(setting.dataset)
        except DatasetNotFoundError:
            skipped.append(f"{setting.label} ({setting.dataset} not found locally; --data-home)")
    usable = lambda s: s.dataset is None or s.dataset in found  # noqa: E731
    keep = [s for s in (*SYNTHETIC, CENSUS, MOVIELENS) if usable(s)]
    return keep, [s for s in FAIR_SETTINGS if usable(s)], skipped


def _make(setting: Setting, data_home: str | None, **extra: Any) -> OracleLog:
    kwargs = {**setting.env_kwargs, **extra}
    if setting.dataset is not None and data_home is not None:
        kwargs["data_home"] = data_home
    return OracleLog(gym.make(ENV, **kwargs))


MEASUREMENTS = ("curves", "fairness", "dynamics")


def _env_kwargs(measurement: str, suite: DeanSuite) -> dict[str, Any]:
    """Return the env's sizes for ``measurement`` (the reference optimum is computed here)."""
    if measurement == "curves":
        return {"n_services": suite.max_services, "reference_restarts": 0}
    if measurement == "fairness":
        return {"n_services": max(suite.fair_ks), "reference_restarts": 0}
    return {
        "n_services": suite.dynamics_services,
        "dynamics_rounds": suite.dynamics_rounds,
        "reference_restarts": 0,
    }


def run_cell(
    measurement: str, setting: Setting, seed: int, suite: DeanSuite, env: OracleLog
) -> dict[str, Any]:
    """One measurement of one population at one seed: its rows, as the store keeps them.

    ``"curves"``: the total loss after each of ``max_services`` services
    per agent, and the reference optimum at ``reference_ks``
    (``"references"``). ``"fairness"``: each group's average loss at each
    of ``fair_ks`` per agent (and the groups' names, if they have some).
    ``"dynamics"``: the total loss right after initialisation and after
    the learning dynamics, per agent.
    """
    rows: list[dict[str, Any]] = []
    cell: dict[str, Any] = {"rows": rows}
    key = {"setting": setting.label, "seed": seed}
    if measurement == "curves":
        for name in CURVE_AGENTS:
            run_episode(env, AGENTS[name](), seed)
            rows += [{**key, "agent": name, "k": k, "total_loss": oracle["total_loss"],
                      "excess_loss": oracle["excess_loss"], "fairness": oracle["fairness"]}
                     for k, oracle in enumerate(env.oracles, start=1)]  # fmt: skip
        world = env.unwrapped._world  # type: ignore[attr-defined]
        cell["references"] = [
            {**key, "k": k, "reference_loss": reference_loss(
                world, k, restarts=suite.reference_restarts, seed=seed)}
            for k in suite.reference_ks
        ]  # fmt: skip
    elif measurement == "fairness":
        for name in FAIR_AGENTS:
            run_episode(env, AGENTS[name](), seed)
            for k in suite.fair_ks:
                oracle = env.oracles[k - 1]
                groups = {f"group {g}": value for g, value in enumerate(oracle["group_losses"])}
                rows.append({**key, "agent": name, "k": k, "fairness": oracle["fairness"],
                             **groups})  # fmt: skip
        names = env.unwrapped._world.group_names  # type: ignore[attr-defined]
        cell["group_names"] = None if names is None else list(names)
    else:
        for name in CURVE_AGENTS:
            metrics = run_episode(env, AGENTS[name](), seed).metrics
            rows.append({**key, "agent": name,
                         "after_initialisation": metrics["loss_before_dynamics"],
                         "after_dynamics": metrics["loss_after_dynamics"]})  # fmt: skip
    return cell


def uniform_services_to_match(curves: pd.DataFrame, k: int = MATCH_K) -> pd.DataFrame:
    """Per setting: the fewest uniform services whose mean loss is at most AcQUIre's at ``k``.

    Examples
    --------
    >>> frame = pd.DataFrame({"setting": "s", "seed": 0,
    ...     "agent": ["AcQUIre"] * 3 + ["Uniform"] * 3, "k": [1, 2, 3] * 2,
    ...     "total_loss": [9.0, 4.0, 2.0, 9.0, 6.0, 3.5]})
    >>> uniform_services_to_match(frame, k=2)["uniform_services"].tolist()
    ['3']
    """
    mean = curves.groupby(["setting", "agent", "k"], sort=False)["total_loss"].mean()
    rows = []
    for setting in curves["setting"].unique():
        target = mean[(setting, "AcQUIre", k)]
        uniform = mean[setting]["Uniform"]
        matched = uniform[uniform <= target]
        text = str(int(matched.index.min())) if len(matched) else f"> {int(uniform.index.max())}"
        rows.append({"setting": setting, f"AcQUIre loss at k={k}": target,
                     "uniform_services": text})  # fmt: skip
    return pd.DataFrame(rows)


def _mean_sem(frame: pd.DataFrame, keys: list[str], column: str) -> pd.Series:
    grouped = frame.groupby(keys, sort=False)[column]
    return grouped.mean().map("{:.4g}".format) + " ± " + grouped.sem().map("{:.2g}".format)


def curve_table(
    curves: pd.DataFrame, ks: Sequence[int], column: str = "total_loss"
) -> pd.DataFrame:
    """Mean ± s.e. of ``column`` at ``ks``: a row per (setting, agent)."""
    picked = curves[curves["k"].isin(ks)]
    return _mean_sem(picked, ["setting", "agent", "k"], column).unstack("k").reset_index()


def ratio_table(curves: pd.DataFrame, references: pd.DataFrame) -> pd.DataFrame:
    """Mean (max) ratio of each agent's loss to the reference, per setting and k."""
    joined = curves.merge(references, on=["setting", "seed", "k"])
    joined["ratio"] = joined["total_loss"] / joined["reference_loss"]
    grouped = joined.groupby(["setting", "agent", "k"], sort=False)["ratio"]
    text = grouped.mean().map("{:.2f}".format) + " (" + grouped.max().map("{:.2f}".format) + ")"
    return text.unstack("k").reset_index()


def plot_curves(curves: pd.DataFrame, path: Path, column: str, ylabel: str) -> Path:
    """One panel per setting: mean over seeds against k, band one standard error."""
    settings = list(curves["setting"].unique())
    columns = min(3, len(settings))
    figure, grid = panels(-(-len(settings) // columns), columns, width=4.6, height=3.4)
    axes = grid.ravel()
    for axis, setting in zip(axes, settings, strict=False):
        part = curves[curves["setting"] == setting]
        for agent, runs in part.groupby("agent", sort=False):
            stats = runs.groupby("k")[column].agg(["mean", "sem"])
            axis.plot(stats.index, stats["mean"], label=agent)
            axis.fill_between(stats.index, stats["mean"] - stats["sem"].fillna(0),
                              stats["mean"] + stats["sem"].fillna(0), alpha=0.25)  # fmt: skip
        axis.set_yscale("log")
        axis.set_xlabel("services k")
        axis.set_ylabel(ylabel)
        axis.set_title(setting, fontsize=9)
        axis.legend(fontsize=8)
    for axis in axes[len(settings) :]:
        axis.set_visible(False)
    return save(figure, path)


def run_dean(
    suite: DeanSuite,
    out_dir: str | Path,
    *,
    seeds: Sequence[int] | None = None,
    data_home: str | None = None,
    max_services: int | None = None,
    progress: bool = True,
    resume: bool = False,
) -> DeanResult:
    """Run the three measurements and write tables, CSVs, PNGs and ``report.md``.

    Parameters
    ----------
    suite
        :data:`DEAN_SUITES` entry.
    out_dir
        Directory for the outputs.
    seeds
        Override the suite's seeds.
    data_home
        Where Adult is (the census population is skipped without it).
    max_services
        Override the largest k (quick checks; the reference and fairness ks
        above it are dropped).
    progress
        Show a progress bar.
    resume
        Skip the (measurement, population, seed) cells already in
        ``out_dir``'s store; each is stored atomically as it finishes
        (:class:`~osfb_gym.bench.store.ResultStore`).
    """
    if seeds is not None:
        suite = _replace(suite, seeds=tuple(seeds))
    if max_services is not None:
        suite = _replace(
            suite,
            max_services=max_services,
            reference_ks=tuple(k for k in suite.reference_ks if k <= max_services) or (1,),
            fair_ks=tuple(k for k in suite.fair_ks if k <= max_services) or (1,),
            dynamics_services=min(suite.dynamics_services, max_services),
        )
    settings, fair_settings, skipped = settings_at_hand(data_home)
    cells = [
        (measurement, setting, seed)
        for measurement, populations in zip(
            MEASUREMENTS, (settings, fair_settings, settings), strict=True
        )
        for setting in populations
        for seed in suite.seeds
    ]
    sizes = {name: value for name, value in dataclasses.asdict(suite).items()
             if name not in ("name", "seeds", "description")}  # fmt: skip
    keys = [stable_key("dean", m, setting.label, setting.env_kwargs, seed, sizes)
            for m, setting, seed in cells]  # fmt: skip
    store = ResultStore(out_dir)
    done = store.done() if resume else set()
    envs: dict[tuple[str, str], OracleLog] = {}
    with tqdm(total=len(cells), desc=f"osfb-bench {suite.name}", disable=not progress) as bar:
        for (measurement, setting, seed), key in zip(cells, keys, strict=True):
            if key not in done:
                if (measurement, setting.label) not in envs:
                    kwargs = _env_kwargs(measurement, suite)
                    envs[measurement, setting.label] = _make(setting, data_home, **kwargs)
                env = envs[measurement, setting.label]
                store.write({"key": key, **run_cell(measurement, setting, seed, suite, env)})
            bar.update()
    for env in envs.values():
        env.close()
    stored = list(zip([m for m, *_ in cells], store.rows(keys), strict=True))
    tables = {
        measurement: pd.DataFrame(
            [row for kind, entry in stored if kind == measurement for row in entry["rows"]]
        )
        for measurement in MEASUREMENTS
    }
    references = pd.DataFrame([row for _, entry in stored for row in entry.get("references", [])])
    group_names = {setting.label: tuple(entry["group_names"])
                   for (_, setting, _), (_, entry) in zip(cells, stored, strict=True)
                   if entry.get("group_names")}  # fmt: skip
    return write_report(
        suite,
        out_dir,
        tables["curves"],
        references,
        tables["fairness"],
        tables["dynamics"],
        skipped,
        group_names,
    )


def _replace(suite: DeanSuite, **changes: Any) -> DeanSuite:
    return dataclasses.replace(suite, **changes)


def write_report(
    suite: DeanSuite,
    out_dir: str | Path,
    curves: pd.DataFrame,
    references: pd.DataFrame,
    fairness: pd.DataFrame,
    dynamics: pd.DataFrame,
    skipped: Sequence[str] = (),
    group_names: dict[str, tuple[str, ...]] | None = None,
) -> DeanResult:
    """Lay out the tables and statements and write every file."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / name for name in ("curves.csv", "references.csv", "fairness.csv",
                                     "dynamics.csv", "total_loss.png", "report.md")]  # fmt: skip
    for frame, path in zip((curves, references, fairness, dynamics), files, strict=False):
        frame.to_csv(path, index=False)
    plot_curves(curves, files[4], "total_loss", "total loss L(Theta_k)")
    ks = sorted({1, MATCH_K, 10, 20, suite.max_services} & set(range(1, suite.max_services + 1)))
    match = uniform_services_to_match(curves, min(MATCH_K, suite.max_services))
    paired = curves.pivot_table(index=["setting", "seed", "k"], columns="agent",
                                values="total_loss").reset_index()  # fmt: skip
    last = paired[paired["k"] == suite.max_services]
    wins = (last["AcQUIre"] < last["Uniform"]).groupby(last["setting"], sort=False).mean()
    fair_table = (
        fairness.groupby(["setting", "k", "agent"], sort=False)
        .mean(numeric_only=True)
        .drop(columns="seed")
        .map(lambda v: "" if pd.isna(v) else f"{v:.4g}")
        .reset_index()
    )
    dyn = dynamics.assign(change=dynamics["after_dynamics"] / dynamics["after_initialisation"] - 1)
    increases = int(
        (dynamics["after_dynamics"] > dynamics["after_initialisation"] * (1 + 1e-9)).sum()
    )
    dyn_table = pd.DataFrame({
        "after initialisation": _mean_sem(dyn, ["setting", "agent"], "after_initialisation"),
        "after dynamics": _mean_sem(dyn, ["setting", "agent"], "after_dynamics"),
        "mean change": dyn.groupby(["setting", "agent"], sort=False)["change"].mean()
        .map("{:+.1%}".format),
    }).reset_index()  # fmt: skip
    seeds = len(suite.seeds)
    report = [
        f"# osfb-bench {suite.name}",
        "",
        suite.description,
        "",
        f"{seeds} seeds (one world each; every agent sees the same worlds); 500 users per "
        "synthetic population (subpopulations for linear predictors), 10 preference clusters "
        "of Dirichlet(1) shares; the census population is fixed by Adult.",
        "",
        "## Total loss against k",
        "",
        f"Mean ± standard error over seeds of L(Theta_k) (plot: `{files[4].name}`).",
        "",
        curve_table(curves, ks).to_markdown(index=False),
        "",
        f"AcQUIre's final loss (k = {suite.max_services}) is below Uniform's on the same world "
        "in this share of seeds: "
        + ", ".join(f"{setting}: {share:.0%}" for setting, share in wins.items())
        + ".",
        "",
        "Linear-predictor subpopulations keep their OLS residual whatever the services; "
        "the excess loss (the total minus those residuals) shows what acquisition changes:",
        "",
        curve_table(curves[curves["setting"].isin(LINEAR_SETTINGS)], ks, "excess_loss").to_markdown(
            index=False
        ),
        "",
        f"Uniform services needed to match the mean loss of {MATCH_K} AcQUIre services (the "
        "paper: about 30 on MovieLens):",
        "",
        match.to_markdown(index=False, floatfmt=".4g"),
        "",
        "## Ratio to the reference optimum",
        "",
        f"Mean (max) over seeds of L / L_ref; L_ref is the best of {suite.reference_restarts} "
        "restarts of Lloyd-style alternating minimisation (KMeans for the squared family), an "
        "upper bound on the optimum, so these ratios are lower bounds on the true ones. "
        "Theorem 1's regime is O(log k); ln k + 2 is "
        + ", ".join(f"{np.log(k) + 2:.1f} at k={k}" for k in suite.reference_ks)
        + ".",
        "",
        ratio_table(curves, references).to_markdown(index=False),
        "",
        "## Fairness",
        "",
        "Mean over seeds of each group's average loss and of the fairness objective (the "
        "largest of them, eq. 3). Fair AcQUIre (Algorithm 2) knows the groups; the baseline "
        "picks user i with probability proportional to 1/|G(i)| (Appendix E).",
        "",
        fair_table.to_markdown(index=False),
        "",
        *(
            f"Groups of {label}: "
            + ", ".join(f"{g} = {name}" for g, name in enumerate(names))
            + "."
            for label, names in (group_names or {}).items()
        ),
        "",
        "## Learning dynamics",
        "",
        f"k = {suite.dynamics_services} services, then up to {suite.dynamics_rounds} rounds "
        "(users re-choose, services refit; stop when the choices are stable). Mean ± s.e. "
        f"of the total loss. Episodes where the dynamics raised the loss: {increases} of "
        f"{len(dynamics)}.",
        "",
        dyn_table.to_markdown(index=False),
    ]
    if skipped:
        report += ["", "Skipped: " + "; ".join(skipped)]
    text = "\n".join(report) + "\n"
    files[5].write_text(text)
    return DeanResult(curves, references, fairness, dynamics, text, files)
