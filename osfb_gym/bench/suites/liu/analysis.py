"""Liu et al.'s outcome curves, operating points and claims on the FICO tables; the page."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from osfb_gym.bench.report import panels, save
from osfb_gym.bench.suites.liu.settings import CRITERIA, NAME, PAIR, STATED, Settings
from osfb_gym.bench.suites.tables import Claim, claims_table
from osfb_gym.core.thresholds import expected_profit, threshold_policies
from osfb_gym.envs.delayed_impact.world import ImpactWorld, expected_score_change, fico_world


# ----------------------------------------------------------------------------- pure model
def operating_points(
    world: ImpactWorld,
    loss_ratio: float,
    score_changes: Sequence[float] = (75.0, -150.0),
    rates: int = 2001,
) -> pd.DataFrame:
    """Return the bank's policy per group under each criterion, and what it does to each group.

    MaxUtil approves where the expected profit ``rho - (1 - rho) * loss_ratio`` is
    positive, each group on its own. DemParity (equal selection rates) and
    EqOpt (equal true-positive rates) take the common rate, on a grid of
    ``rates`` rates in [0, 1], that maximises the bank's profit summed over
    the groups weighted by their shares ``world.proportions``, with each
    group's threshold randomised at its boundary score (Liu et al. Section 2,
    Hardt et al. 2016). So DemParity's and EqOpt's points depend on the groups'
    shares of the population; MaxUtil's do not.

    Returns
    -------
    pandas.DataFrame
        A row per (criterion, group): ``selection_rate``, ``tpr``, ``delta_mu``
        (the group's expected change of mean score, Liu et al.'s Delta mu),
        ``profit`` (the bank's expected profit per applicant of the group).
    """
    up, down = score_changes
    profit = expected_profit(world.rho, 1.0, loss_ratio)
    move = np.stack([expected_score_change(world.scores, r, up, down) for r in world.rho])
    grid = np.linspace(0.0, 1.0, rates)
    weight = world.proportions[:, None] * world.pi * profit
    policies = {"MaxUtil": (profit > 0).astype(float)}
    for name, mass in (("DemParity", world.pi), ("EqOpt", world.pi * world.rho)):
        stacked = np.stack([threshold_policies(m, grid) for m in mass], axis=1)  # (T, G, B)
        policies[name] = stacked[int(np.argmax(np.einsum("tgb,gb->t", stacked, weight)))]
    rows = []
    for criterion, tau in policies.items():
        for g, group in enumerate(world.group_names):
            repayers = world.pi[g] * world.rho[g]
            rows.append(
                {
                    "loss_ratio": loss_ratio,
                    "criterion": criterion,
                    "group": group,
                    "selection_rate": float(world.pi[g] @ tau[g]),
                    "tpr": float(repayers @ tau[g] / repayers.sum()),
                    "delta_mu": float((world.pi[g] * tau[g]) @ move[g]),
                    "profit": float((world.pi[g] * tau[g]) @ profit[g]),
                }
            )
    return pd.DataFrame(rows)


def curve_summary(rates: np.ndarray, delta: np.ndarray) -> dict[str, float]:
    """Return the landmarks of an outcome curve: its peak and where active harm begins.

    ``peak_rate`` maximises Delta mu (Liu et al.'s ``beta*``), ``harm_from`` is
    the smallest rate above the peak with Delta mu < 0 (Liu et al.'s
    ``beta_0``; NaN if the curve never turns negative): selecting more than
    that does the group active harm.

    Examples
    --------
    >>> curve_summary(np.linspace(0, 1, 5), np.array([0.0, 2.0, 1.0, -1.0, -3.0]))
    {'peak_rate': 0.25, 'peak_delta_mu': 2.0, 'harm_from': 0.75, 'delta_mu_at_1': -3.0}
    """
    peak = int(np.argmax(delta))
    negative = np.flatnonzero(delta[peak:] < 0)
    return {
        "peak_rate": float(rates[peak]),
        "peak_delta_mu": float(delta[peak]),
        "harm_from": float(rates[peak + negative[0]]) if negative.size else float("nan"),
        "delta_mu_at_1": float(delta[-1]),
    }


def classify(delta_mu: float, max_util: float) -> str:
    """Liu et al.'s Definition 2.3 of a policy's impact on a group, against MaxUtil's.

    >>> classify(-1.0, 3.0), classify(2.0, 3.0), classify(4.0, 3.0), classify(3.0, 3.0)
    ('active harm', 'relative harm', 'relative improvement', 'as MaxUtil')
    """
    if delta_mu < 0:
        return "active harm"
    if np.isclose(delta_mu, max_util, rtol=0.0, atol=1e-9):
        return "as MaxUtil"
    return "relative improvement" if delta_mu > max_util else "relative harm"


# ----------------------------------------------------------------------------- the run
def compute(tables: Any, settings: Settings) -> dict[str, pd.DataFrame]:
    """Return the suite's frames: the groups' curves, their landmarks, the operating points."""
    everyone = fico_world(tables, settings.groups)
    up, down = settings.score_changes
    grid = np.linspace(0.0, 1.0, settings.rates)
    curves, landmarks = [], []
    for g, group in enumerate(everyone.group_names):
        move = expected_score_change(everyone.scores, everyone.rho[g], up, down)
        delta = threshold_policies(everyone.pi[g], grid) @ (everyone.pi[g] * move)
        curves.append(pd.DataFrame({"group": group, "selection_rate": grid, "delta_mu": delta}))
        landmarks.append({"group": group, **curve_summary(grid, delta)})
    pair = fico_world(tables, PAIR)
    points = pd.concat(
        [
            operating_points(pair, ratio, settings.score_changes, settings.rates)
            for ratio in settings.loss_ratios
        ],
        ignore_index=True,
    )
    base = points[points["criterion"] == "MaxUtil"].set_index(["loss_ratio", "group"])["delta_mu"]
    points["impact"] = [
        classify(row.delta_mu, base[(row.loss_ratio, row.group)]) for row in points.itertuples()
    ]
    shares = pd.DataFrame({"group": pair.group_names, "share": pair.proportions})
    return {
        "curves": pd.concat(curves, ignore_index=True),
        "landmarks": pd.DataFrame(landmarks),
        "points": points,
        "shares": shares,
    }


def claims(frames: dict[str, pd.DataFrame], settings: Settings) -> list[Claim]:
    """Liu et al.'s FICO claims, each with the computed numbers (a plain comparison)."""
    points = frames["points"].set_index(["loss_ratio", "criterion", "group"])
    landmarks = frames["landmarks"].set_index("group")
    found: list[Claim] = []
    if "Black" in landmarks.index:
        black = landmarks.loc["Black"]
        found.append(
            Claim(
                "The Black group's outcome curve rises, peaks and turns negative: lending to "
                "more than some share of the group does it active harm",
                "Fig. 4-5: outcome curve concave in the selection rate, region of active harm "
                "at high selection rates",
                f"peak Delta mu = {black['peak_delta_mu']:+.2f} at selection rate "
                f"{black['peak_rate']:.3f}; Delta mu < 0 from rate {black['harm_from']:.3f}; "
                f"{black['delta_mu_at_1']:+.2f} at rate 1",
                bool(black["peak_delta_mu"] > 0 and np.isfinite(black["harm_from"])),
            )
        )
    peak = float(landmarks.loc["Black", "peak_rate"]) if "Black" in landmarks.index else np.nan
    for ratio in settings.loss_ratios:
        mu, dp, eo = (points.loc[(ratio, c, "Black")] for c in CRITERIA)
        tag = f"u-/u+ = -{ratio:g}"
        found += [
            Claim(
                f"{tag}: MaxUtil improves the Black group (Delta mu > 0)",
                STATED if ratio == 4 else None,
                f"Delta mu = {mu['delta_mu']:+.2f} at selection rate {mu['selection_rate']:.3f}",
                bool(mu["delta_mu"] > 0),
            ),
            Claim(
                f"{tag}: DemParity causes active harm to the Black group (Delta mu < 0)",
                STATED if ratio == 4 else None,
                f"Delta mu = {dp['delta_mu']:+.2f} at selection rate {dp['selection_rate']:.3f} "
                f"({dp['impact']})",
                bool(dp["delta_mu"] < 0),
                ""
                if dp["delta_mu"] < 0
                else "DemParity's common rate stays below the harm region at this loss ratio",
            ),
            Claim(
                f"{tag}: EqOpt does not harm the Black group (Delta mu > 0)",
                STATED if ratio == 4 else None,
                f"Delta mu = {eo['delta_mu']:+.2f} at selection rate {eo['selection_rate']:.3f} "
                f"({eo['impact']})",
                bool(eo["delta_mu"] > 0),
            ),
            Claim(
                f"{tag}: EqOpt leads to relative improvement of the Black group over MaxUtil",
                None,
                f"Delta mu: EqOpt {eo['delta_mu']:+.2f} against MaxUtil {mu['delta_mu']:+.2f}",
                bool(eo["delta_mu"] > mu["delta_mu"]),
                ""
                if eo["delta_mu"] > mu["delta_mu"]
                else f"EqOpt selects "
                f"{eo['selection_rate']:.3f} of the group, past the curve's peak at "
                f"{peak:.3f}: it improves the group by less than MaxUtil (relative harm)",
            ),
            Claim(
                f"{tag}: both fairness criteria select more of the Black group than MaxUtil",
                "Sec. 4 (fairness criteria over-select the disadvantaged group)",
                f"selection rates: MaxUtil {mu['selection_rate']:.3f}, DemParity "
                f"{dp['selection_rate']:.3f}, EqOpt {eo['selection_rate']:.3f}",
                bool(min(dp["selection_rate"], eo["selection_rate"]) > mu["selection_rate"]),
            ),
        ]
    return found


def figure(frames: dict[str, pd.DataFrame], settings: Settings, path: Path) -> Path:
    """Outcome curves of the pair with each loss ratio's operating points; the others extra."""
    curves, points = frames["curves"], frames["points"]
    groups = list(dict.fromkeys(curves["group"]))
    extra = [g for g in groups if g not in PAIR]
    fig, axes = panels(1, 3 if extra else 2, width=4.4, height=3.4)
    styles = dict(zip(CRITERIA, ("o", "s", "^"), strict=True))
    for axis, group in zip(axes[0], PAIR, strict=False):
        curve = curves[curves["group"] == group]
        x, y = curve["selection_rate"].to_numpy(), curve["delta_mu"].to_numpy()
        axis.plot(x, y, color="black", label="outcome curve")
        axis.fill_between(x, y, 0, where=y < 0, color="C3", alpha=0.25, label="active harm")
        axis.axhline(0, color="grey", lw=0.6)
        for i, ratio in enumerate(settings.loss_ratios):
            mine = points[(points["group"] == group) & (points["loss_ratio"] == ratio)]
            for row in mine.itertuples():
                axis.plot(
                    row.selection_rate,
                    row.delta_mu,
                    styles[row.criterion],
                    color=f"C{i}",
                    label=f"{row.criterion}, u-/u+ = -{ratio:g}",
                    ms=7,
                    mfc="none" if i else f"C{i}",
                )
        axis.set_title(f"{group}: Delta mu against selection rate", fontsize=9)
        axis.set_xlabel("selection rate")
        axis.set_ylabel("expected change of mean score (FICO points)")
    axes[0][0].legend(fontsize=6, loc="lower left")
    if extra:
        axis = axes[0][2]
        for group in groups:
            curve = curves[curves["group"] == group]
            axis.plot(curve["selection_rate"], curve["delta_mu"], label=group)
        axis.axhline(0, color="grey", lw=0.6)
        axis.set_title("every group of the tables", fontsize=9)
        axis.set_xlabel("selection rate")
        axis.legend(fontsize=7)
    return save(fig, path, title="Liu et al. (2018) on the FICO TransRisk tables")


def _points_table(points: pd.DataFrame) -> str:
    shown = points.assign(
        loss_ratio=[f"-{r:g}" for r in points["loss_ratio"]],
        **{c: points[c].round(3) for c in ("selection_rate", "tpr", "profit")},
        delta_mu=points["delta_mu"].round(2),
    ).rename(columns={"loss_ratio": "u-/u+", "delta_mu": "Delta mu"})
    return shown.to_markdown(index=False)


def page(
    frames: dict[str, pd.DataFrame], settings: Settings, found: list[Claim], plot: Path
) -> str:
    """Return the page: the setting, the claims, the pair's operating points, the landmarks."""
    shares = frames["shares"]
    share_text = ", ".join(f"{r.group} {r.share:.1%}" for r in shares.itertuples())
    landmarks = frames["landmarks"].round(3).to_markdown(index=False)
    return "\n".join(
        [
            f"# osfb-bench {NAME}",
            "",
            "Liu, Dean, Rolf, Simchowitz and Hardt (ICML 2018), Section 6, on the FICO "
            "TransRisk tables (scores mapped to 300-850 as Liu et al. do), score changes "
            f"{settings.score_changes[0]:+g} on repayment and {settings.score_changes[1]:+g} on "
            f"default, bank utility +1 per repaid loan and -r per default for r in "
            f"{', '.join(f'{r:g}' for r in settings.loss_ratios)}.",
            "",
            "Everything here is an exact computation on the tables: no episode, no seed, no "
            "noise. A claim's verdict is therefore a plain comparison of the computed numbers "
            "(no statistical test applies).",
            "",
            "The 'paper' column paraphrases Liu et al.'s FICO section (Figures 4-5 at "
            "u-/u+ = -4) as issue 35 summarises it; the paper's own sentences were not at hand "
            "to check their wording. Rows marked 'not stated' are checks of ours at the other "
            "loss ratio, or of Liu et al.'s definitions (relative improvement is against "
            "MaxUtil, Definition 2.3).",
            "",
            "## Claims",
            "",
            claims_table(found),
            "",
            "## Operating points of the pair",
            "",
            "MaxUtil's thresholds are each group's own (where an approved loan pays) and do "
            "not depend on the population. DemParity's and EqOpt's common rate maximises the "
            f"bank's profit summed over the groups weighted by their shares ({share_text}, the "
            "tables' totals): change the shares and these operating points move. 'impact' is "
            "Liu et al.'s Definition 2.3 against MaxUtil.",
            "",
            _points_table(frames["points"]),
            "",
            "## Outcome curves: landmarks",
            "",
            "`peak_rate`: the selection rate that raises the group's mean score most; "
            "`harm_from`: from this rate on the group's mean score falls (active harm). These "
            "depend on the group's own table only.",
            "",
            landmarks,
            "",
            f"![outcome curves]({plot.name})",
            "",
        ]
    )
