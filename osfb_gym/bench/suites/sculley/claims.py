"""The Sculley suites' claims, each read from paired verdicts (:mod:`osfb_gym.stats`).

Every "beats", "better", "fewer" and "within" of the two pages comes from
paired sign-flip tests over the seeds (run s of every learner, variant and
method reads the same stream order), Holm-corrected over the page, read by
:mod:`osfb_gym.stats.claims`: "reproduced", "not reproduced", "tie (within
noise)" or "cannot tell at n=5". Counts and checks that compare no runs read
yes/no.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.sculley.paper import (
    LOCKUP_RECALL,
    MARGIN_LEARNERS,
    METHODS,
    NAMES,
    PAPER_LEARNERS,
    PAPER_TOPICS,
    PROTOCOL,
    SAMPLERS,
    SHORT,
    paper_values,
    published_reuters,
    published_spam,
)
from osfb_gym.bench.suites.tables import Claim
from osfb_gym.stats import Page, Verdict, best_of, paired
from osfb_gym.stats.claims import (
    NOT_REPRODUCED,
    REPRODUCED,
    TIE,
    at_least,
    cannot_tell,
    combine,
    count,
    read,
)

__all__ = ["CLAIMS_NOTE", "VerdictClaim", "reuters_claims", "spam_claims", "verdict_table"]


@dataclass(frozen=True)
class VerdictClaim(Claim):
    """A claim read from verdicts (:mod:`osfb_gym.stats.claims`).

    ``verdict`` is "reproduced", "not reproduced", "tie (within noise)" or
    "cannot tell at n=5"; ``holds`` is True only when reproduced.
    """

    verdict: str = ""


def _pair(a: pd.Series, b: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Return two per-seed series' values on the seeds both have, in seed order."""
    both = pd.concat([a, b], axis=1, join="inner").dropna().sort_index()
    return both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy()


class _Claims:
    """A page's claims: their comparisons join one Holm family, read once all are added."""

    def __init__(self) -> None:
        self.page = Page()
        self.pending: list[tuple[str, str | None, str, Callable[[list[Verdict]], str], str]] = []

    def compare(self, a: pd.Series, b: pd.Series, names: tuple[str, str], lower: bool) -> int:
        """Add the paired verdict of two per-seed series (seeds both have) to the page."""
        return self.page.add(paired(*_pair(a, b), lower_is_better=lower, names=names))

    def add(
        self,
        claim: str,
        paper: str | None,
        measured: str,
        decide: Callable[[list[Verdict]], str],
        why: str = "",
    ) -> None:
        """Add a claim; ``decide`` reads it from the page's Holm-adjusted verdicts."""
        self.pending.append((claim, paper, measured, decide, why))

    def resolve(self) -> list[Claim]:
        """Return the claims, each with its verdict."""
        verdicts = self.page.verdicts
        claims: list[Claim] = []
        for claim, paper, measured, decide, why in self.pending:
            reading = decide(verdicts)
            holds = reading in (REPRODUCED, "yes")
            if paper is None and reading in ("yes", "no"):  # a check of ours
                reading = "- (holds)" if holds else "- (does not hold)"
            claims.append(VerdictClaim(claim, paper, measured, holds, why, reading))
        return claims


def _reads(index: Iterable[int], sides: Iterable[str]) -> Callable[[list[Verdict]], str]:
    """Return the reading of a claim from the page's verdicts ``index``, won by ``sides``."""
    chosen, expected = list(index), list(sides)
    return lambda found: read([found[i] for i in chosen], expected)


def _fixed(holds: bool) -> Callable[[list[Verdict]], str]:
    """Return the reading of a claim that is a count or a check, not a comparison of runs."""
    return _fixed_reading("yes" if holds else "no")


def _fixed_reading(reading: str) -> Callable[[list[Verdict]], str]:
    """Return a reading decided without the page's verdicts (e.g. from a CI)."""
    return lambda _: reading


def _ci(verdict: Verdict, shift: float = 0.0) -> str:
    """``"-0.548 [-0.61, -0.49]"``: the mean difference and its CI (the level when below 95%)."""
    text = f"{verdict.effect + shift:+.3f} [{verdict.low + shift:.3g}, {verdict.high + shift:.3g}]"
    return text + (
        "" if verdict.level >= 1 - verdict.alpha - 1e-12 else f" ({verdict.level:.4g} CI)"
    )


def verdict_table(claims: Iterable[Claim]) -> str:
    """Markdown table: claim | paper | measured | verdict | why."""
    rows = [
        {
            "claim": c.claim,
            "paper": c.paper or "not stated",
            "measured": c.measured,
            "verdict": getattr(c, "verdict", "") or ("yes" if c.holds else "no"),
            "why": c.why,
        }
        for c in claims
    ]
    columns = ["claim", "paper", "measured", "verdict", "why"]
    return pd.DataFrame(rows, columns=columns).to_markdown(index=False)


CLAIMS_NOTE: str = PROTOCOL["claims_note"]  # how the verdicts are read, under the table


def _seeded(results: pd.DataFrame) -> pd.DataFrame:
    """Return the reported episodes indexed (dataset, learner, variant, seed)."""
    reported = results[results["phase"] == "eval"]
    return reported.set_index(["dataset", "learner", "variant", "seed"]).sort_index()


def spam_claims(summary: pd.DataFrame, results: pd.DataFrame) -> list[Claim]:
    """Return Table 1's claims per dataset as measured (the paper's: trec05p-1 / trec06p).

    ``summary`` (:func:`spam_summary`) gives the means shown; ``results`` the
    per-seed episodes the paired verdicts compare.
    """
    fp = published_spam()["fp"].unstack("variant")
    # per learner, on how many corpora a variant tastes fewer negatives than Apple Tasting
    fewer = fp.lt(fp["apple_tasting"], axis=0).groupby(level="learner").sum()
    paper = fewer["label_efficient"].sum(), fewer.loc[list(MARGIN_LEARNERS), "one_sided"].sum()
    page, seeded = _Claims(), _seeded(results)
    for dataset in dict.fromkeys(summary.index.get_level_values("dataset")):
        cells, runs = summary.xs(dataset), seeded.xs(dataset)
        _comparisons(page, f"{dataset}: ", cells, runs)
        _fp_claims(page, f"{dataset}: ", cells, runs, paper)
        _lockups(page, f"{dataset}: ", cells)
    return page.resolve()


def _comparisons(page: _Claims, prefix: str, cells: pd.DataFrame, runs: pd.DataFrame) -> None:
    """Table 1's paired claims on one dataset (means from ``cells``, seeds from ``runs``)."""

    def get(metric: str, lr: str, *variants: str) -> list[float]:
        rows = cells.reindex([(lr, v) for v in variants])
        return rows[metric].tolist() if metric in rows else [np.nan] * len(variants)

    def seeds(metric: str, lr: str, variant: str, shift: float = 0.0) -> pd.Series:
        return runs.loc[(lr, variant), metric] + shift

    def ran(lr: str, *variants: str) -> bool:
        return all((lr, v) in cells.index for v in variants)

    if ran("perceptron", "one_sided", "full"):
        (one, full), (bias,) = get("recall", "perceptron", "one_sided", "full"), [np.nan]
        if ran("perceptron_bias", "one_sided"):
            (bias,) = get("recall", "perceptron_bias", "one_sided")
        names = ("one-sided + 0.1", "full")
        i = page.compare(seeds("recall", "perceptron", "one_sided", 0.1),
                         seeds("recall", "perceptron", "full"), names, False)  # fmt: skip
        test = page.page.verdicts[i]
        page.add(
            prefix + "the classical perceptron's recall collapses one-sided (by > 0.1)",
            f"{paper_values('perceptron', 'recall', 'one_sided', 'full')} full",
            f"{one:.3f} against {full:.3f}, one-sided - full {_ci(test, -0.1)}"
            + (f"; with a bias {bias:.3f}" if not np.isnan(bias) else ""),
            _reads([i], ["full"]),
        )
    near = [lr for lr in MARGIN_LEARNERS if ran(lr, "one_sided", "full")]
    if near:
        tests = {
            lr: paired(
                *_pair(seeds("f1", lr, "one_sided"), seeds("f1", lr, "full")), lower_is_better=False
            )  # fmt: skip
            for lr in near
        }
        page.add(
            prefix + "unmodified margin learners come within 0.02 F1 of full feedback",
            "; ".join(paper_values(lr, "f1", "one_sided", "full") for lr in near),
            "; ".join(
                f"{NAMES[lr]} {o:.3f} against {f:.3f}, one-sided - full {_ci(tests[lr])}"
                for lr in near
                for o, f in [get("f1", lr, "one_sided", "full")]
            ),
            _fixed_reading(combine([at_least(t, -0.02) for t in tests.values()])),
        )
    if ran("perceptron", *SAMPLERS, "one_sided"):
        le, at, os_ = get("f1", "perceptron", *SAMPLERS, "one_sided")
        pairs = [("label_efficient", "one_sided"), ("apple_tasting", "one_sided"), SAMPLERS]
        index = [
            page.compare(seeds("f1", "perceptron", a), seeds("f1", "perceptron", b), (a, b), False)
            for a, b in pairs
        ]
        page.add(
            prefix + "Label Efficient and Apple Tasting repair the classical perceptron, Label "
            "Efficient better",
            f"F1 {paper_values('perceptron', 'f1', *SAMPLERS)}",
            f"F1 {le:.3f} against {at:.3f} (one-sided {os_:.3f})",
            _reads(index, [a for a, _ in pairs]),
        )


def _fp_claims(
    page: _Claims, prefix: str, cells: pd.DataFrame, runs: pd.DataFrame, paper: tuple[int, int]
) -> None:
    """Add the #FP claims: Label Efficient, and one-sided, against Apple Tasting."""
    for claim, learners, (a, b), stated in (
        ("Label Efficient tastes fewer negatives (#FP) than Apple Tasting", PAPER_LEARNERS,
         SAMPLERS, "{le} of 6 corpus x learner pairs"),
        ("unmodified margin learners put less spam in the inbox (#FP) than with Apple Tasting",
         MARGIN_LEARNERS, ("one_sided", "apple_tasting"),
         "{at} of 4 pairs; SVM " + paper_values("svm", "fp", "one_sided", "apple_tasting")),
    ):  # fmt: skip
        done = [lr for lr in learners if all((lr, v) in cells.index for v in (a, b))]
        if not done:
            continue
        index = {
            lr: page.compare(runs.loc[(lr, a), "fp"], runs.loc[(lr, b), "fp"], (a, b), True)
            for lr in done
        }
        shown = [
            f"{NAMES[lr]} {cells.loc[(lr, a), 'fp']:.0f} against {cells.loc[(lr, b), 'fp']:.0f}"
            + (
                f" (sampled {cells.loc[(lr, a), 'sampled']:.0f} against "
                f"{cells.loc[(lr, b), 'sampled']:.0f})"
                if a in SAMPLERS
                else ""
            )
            for lr in done
        ]
        why = ""
        if a == "label_efficient" and any(
            cells.loc[(lr, a), "fp"] >= cells.loc[(lr, b), "fp"] for lr in done
        ):
            why = "β is chosen for F1 alone, so Label Efficient may taste more to buy recall"
        page.add(
            prefix + claim,
            stated.format(le=paper[0], at=paper[1]),
            "; ".join(shown),
            _reads(index.values(), [a] * len(index)),
            why,
        )


def _lockups(page: _Claims, prefix: str, cells: pd.DataFrame) -> None:
    """Table 1's check that compares no runs: no margin learner locks up on an order."""
    if "lockup_seeds" in cells:
        locked = [
            f"{NAMES[lr]} {v.replace('_', ' ')} on seeds {s.replace(' ', ', ')}"
            for (lr, v), s in cells["lockup_seeds"].items()
            if s and lr in MARGIN_LEARNERS
        ]
        page.add(
            prefix + f"no margin learner locks up on an order (recall < {LOCKUP_RECALL})",
            None,
            "; ".join(locked) or "none",
            _fixed(not locked),
        )


def _reuters_seeds(best: pd.DataFrame, results: pd.DataFrame) -> pd.Series:
    """Return F1 per seed at each cell's chosen grid value.

    Indexed (weighting, learner, method, topic, seed).
    """
    keys = ["weighting", "learner", "method", "topic"]
    chosen = best["value"].reset_index()
    rows = results.merge(chosen, on=[*keys, "value"])
    return rows.set_index([*keys, "seed"])["f1"].sort_index()


def _cell_reading(found: list[Verdict], index: list[int], side: str) -> str:
    return read([found[i] for i in index], [side] * len(index))


def reuters_claims(best: pd.DataFrame, results: pd.DataFrame) -> list[Claim]:
    """Return the claims of Tables 2-3 as measured, the paper's over the same topics beside.

    ``best`` (:func:`reuters_best`) gives the means; ``results`` the per-seed
    F1 at each cell's chosen grid value, which the paired verdicts compare
    (seed s of every method reads the same stream order). The grid value is
    chosen on the same runs, as the paper's tables do (best F1 over the grid).
    """
    # both indexed (weighting, learner, method, topic)
    tables = {"ours": best["f1"], "paper": published_reuters()[0].stack()}
    level = best.index.get_level_values
    topics = [t for t in PAPER_TOPICS if t in level("topic")]
    learners = [lr for lr in MARGIN_LEARNERS if lr in level("learner")]
    weightings = [w for w in ("threshold", "weight") if w in level("weighting")]
    cells = [(w, lr, t) for w in weightings for lr in learners for t in topics]
    quads = [(w, lr, m, t) for w in weightings for lr in learners for m in METHODS for t in topics]
    seeds, page = _reuters_seeds(best, results), _Claims()
    beats = _method_claims(page, tables, cells, seeds)
    for learner in learners if len(weightings) == 2 else []:
        (ours_t, ours_w), (paper_t, paper_w) = (
            [np.mean([table[q] for q in quads if q[:2] == (w, learner)]) for w in weightings]
            for table in tables.values()
        )
        per_seed = [seeds.loc[w, learner].groupby("seed").mean() for w in weightings]
        i = page.compare(per_seed[0], per_seed[1], ("threshold", "weight"), False)
        side = "threshold" if paper_t > paper_w else "weight"
        page.add(
            f"{NAMES[learner]}: mean best F1, threshold biasing against example weighting",
            f"{paper_t:.3f} against {paper_w:.3f}",
            f"{ours_t:.3f} against {ours_w:.3f}, difference {_ci(page.page.verdicts[i])}",
            _reads([i], [side]),
        )
    low = {
        name: "; ".join(
            f"{t} ({SHORT[lr]} {NAMES[m]}, {NAMES[w][9:-1]}, {table[w, lr, m, t]:.3f})"
            for w, lr, m, t in quads
            if table[w, lr, m, t] < 0.1
        )
        or "none"
        for name, table in tables.items()
    }
    page.add(
        "Best F1 below 0.1 (no grid value lets the learner find the topic) in the same cells",
        low["paper"],
        low["ours"],
        _fixed(low["ours"] == low["paper"]),
    )
    return _with_counts(page.resolve(), page, beats, len(cells))


def _method_claims(
    page: _Claims,
    tables: dict[str, pd.Series],
    cells: list[tuple[str, str, str]],
    seeds: pd.Series,
) -> dict[str, list[int]]:
    """Add the two claims over cells (Apple Tasting weakest, Marg. Only best) to ``page``.

    Return each method's comparisons with Apple Tasting (page indices, a cell each).
    """
    n, needed = len(cells), (len(cells) + 1) // 2
    beats: dict[str, list[int]] = {"margins_only": [], "label_efficient": []}
    for w, lr, t in cells:
        runs = {m: seeds.loc[(w, lr, m, t)] for m in METHODS}
        for m, index in beats.items():
            index.append(page.compare(runs[m], runs["apple_tasting"], (m, "apple_tasting"), False))
        aligned = dict(zip(runs, _pairs(*runs.values()), strict=True))
        page.page.add_best(best_of(aligned, lower_is_better=False))
    counts = []
    for table in tables.values():
        scores = pd.DataFrame([{m: table[w, lr, m, t] for m in METHODS} for w, lr, t in cells])
        wins = scores[["margins_only", "label_efficient"]].gt(scores["apple_tasting"], axis=0)
        counts.append([*wins.sum(), (scores["margins_only"] >= scores.max(axis=1)).sum()])
    (mo, le, top), (p_mo, p_le, p_top) = counts

    def weakest(found: list[Verdict]) -> str:
        return combine([count([_cell_reading(found, [i], m) for i in index], needed)[0]
                        for m, index in beats.items()])  # fmt: skip

    def best_mo(_: list[Verdict]) -> str:
        readings = []
        for cell in page.page.bests:
            if cell.clear:
                readings.append(REPRODUCED if cell.best == "margins_only" else NOT_REPRODUCED)
            else:
                small = [cannot_tell(v.n) for v in cell.comparisons if not v.can_reject]
                readings.append(small[0] if small else TIE)
        return count(readings, needed)[0]

    page.add(
        "Apple Tasting is the weakest method: beaten by Marg. Only / Label Eff. (cells: "
        "topic x learner x weighting; means, then clearly beaten by the paired test)",
        f"{p_mo} / {p_le} of {n}",
        f"means {mo} / {le} of {n}",
        weakest,
    )
    page.add(
        "Marg. Only has the best F1 of the three methods (means, ties counted; then clearly)",
        f"{p_top} of {n}",
        f"means {top} of {n}",
        best_mo,
    )
    return beats


def _pairs(*runs: pd.Series) -> list[np.ndarray]:
    """Return per-seed series' values on the seeds all have, in seed order."""
    both = pd.concat(runs, axis=1, join="inner").dropna().sort_index()
    return [both.iloc[:, k].to_numpy() for k in range(both.shape[1])]


def _with_counts(
    claims: list[Claim], page: _Claims, beats: dict[str, list[int]], n: int
) -> list[Claim]:
    """Add the clear / undecided / opposite counts of the cell claims to their measured text."""
    found = page.page.verdicts
    parts = [
        f"{NAMES[m]}: " + count([_cell_reading(found, [i], m) for i in index], (n + 1) // 2)[1]
        for m, index in beats.items()
    ]
    readings = [
        "clear" if cell.clear and cell.best == "margins_only" else "other"
        for cell in page.page.bests
    ]
    claims[0] = replace(claims[0], measured=f"{claims[0].measured}; " + "; ".join(parts))
    claims[1] = replace(
        claims[1],
        measured=f"{claims[1].measured}; clearly in {readings.count('clear')} of {n}",
    )
    return claims
