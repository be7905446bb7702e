"""The Sculley suites' claims, each read from paired verdicts (:mod:`osfb_gym.stats.claims`).

Every "beats", "better", "fewer" and "within" of the two pages comes from
paired sign-flip tests over the seeds (run s of every learner, variant and
method reads the same stream order), Holm-corrected over the page
(:class:`~osfb_gym.bench.suites.claims.ClaimsPage`). Counts and checks that
compare no runs read yes/no.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.claims import ClaimsPage, VerdictClaim, by_seed
from osfb_gym.bench.suites.sculley.paper import (
    LOCKUP_RECALL,
    MARGIN_LEARNERS,
    METHODS,
    NAMES,
    PAPER_LEARNERS,
    PAPER_TOPICS,
    SAMPLERS,
    SHORT,
    paper_values,
    published_reuters,
    published_spam,
)
from osfb_gym.stats import best_of, paired
from osfb_gym.stats.claims import at_least, ci_text, combine, read_best

__all__ = ["reuters_claims", "spam_claims"]

#: Table 1's claims on #FP: text, learners, (variant, against), what the paper states
FP_CLAIMS = (
    ("Label Efficient tastes fewer negatives (#FP) than Apple Tasting", PAPER_LEARNERS,
     SAMPLERS, "{le} of 6 corpus x learner pairs"),
    ("unmodified margin learners put less spam in the inbox (#FP) than with Apple Tasting",
     MARGIN_LEARNERS, ("one_sided", "apple_tasting"),
     "{at} of 4 pairs; SVM {svm}"),
)  # fmt: skip


class _Dataset:
    """One dataset's Table 1: means per (learner, variant) and the per-seed runs."""

    def __init__(self, cells: pd.DataFrame, runs: pd.DataFrame) -> None:
        self.cells, self.runs = cells, runs

    def ran(self, learner: str, *variants: str) -> bool:
        return all((learner, v) in self.cells.index for v in variants)

    def means(self, metric: str, learner: str, *variants: str) -> list[float]:
        return [self.cells.loc[(learner, v), metric] for v in variants]

    def seeds(self, metric: str, learner: str, variant: str) -> pd.Series:
        return self.runs.loc[(learner, variant), metric]


def spam_claims(summary: pd.DataFrame, results: pd.DataFrame) -> list[VerdictClaim]:
    """Return Table 1's claims per dataset as measured (the paper's: trec05p-1 / trec06p).

    ``summary`` (:func:`~osfb_gym.bench.suites.sculley.analysis.spam_summary`)
    gives the means shown; ``results`` the per-seed episodes the paired verdicts compare.
    """
    fp = published_spam()["fp"].unstack("variant")
    # per learner, on how many corpora a variant tastes fewer negatives than Apple Tasting
    fewer = fp.lt(fp["apple_tasting"], axis=0).groupby(level="learner").sum()
    paper = {"le": fewer["label_efficient"].sum()}
    paper["at"] = fewer.loc[list(MARGIN_LEARNERS), "one_sided"].sum()
    paper["svm"] = paper_values("svm", "fp", "one_sided", "apple_tasting")
    reported = results[results["phase"] == "eval"]
    runs = reported.set_index(["dataset", "learner", "variant", "seed"]).sort_index()
    page = ClaimsPage()
    for dataset in dict.fromkeys(summary.index.get_level_values("dataset")):
        table = _Dataset(summary.xs(dataset), runs.xs(dataset))
        _comparisons(page, f"{dataset}: ", table)
        _fp_claims(page, f"{dataset}: ", table, paper)
        _lockups(page, f"{dataset}: ", table.cells)
    return page.resolve()


def _comparisons(page: ClaimsPage, prefix: str, d: _Dataset) -> None:
    """Table 1's paired claims on F1 and recall on one dataset."""
    if d.ran("perceptron", "one_sided", "full"):
        one, full = d.means("recall", "perceptron", "one_sided", "full")
        one_sided = d.seeds("recall", "perceptron", "one_sided") + 0.1
        i = page.compare(
            one_sided,
            d.seeds("recall", "perceptron", "full"),
            ("one-sided + 0.1", "full"),
            lower_is_better=False,
        )
        bias = d.ran("perceptron_bias", "one_sided")
        page.add(
            prefix + "the classical perceptron's recall collapses one-sided (by > 0.1)",
            f"{paper_values('perceptron', 'recall', 'one_sided', 'full')} full",
            f"{one:.3f} against {full:.3f}, one-sided - full {ci_text(page.verdict(i), -0.1)}"
            + (
                "; with a bias {:.3f}".format(*d.means("recall", "perceptron_bias", "one_sided"))
                if bias
                else ""
            ),
            page.reads([i], ["full"]),
        )
    near = [lr for lr in MARGIN_LEARNERS if d.ran(lr, "one_sided", "full")]
    if near:
        tests = [
            paired(
                *by_seed(d.seeds("f1", lr, "one_sided"), d.seeds("f1", lr, "full")),
                lower_is_better=False,
            )
            for lr in near
        ]
        page.add(
            prefix + "unmodified margin learners come within 0.02 F1 of full feedback",
            "; ".join(paper_values(lr, "f1", "one_sided", "full") for lr in near),
            "; ".join(
                f"{NAMES[lr]} {o:.3f} against {f:.3f}, one-sided - full {ci_text(test)}"
                for lr, test in zip(near, tests, strict=True)
                for o, f in [d.means("f1", lr, "one_sided", "full")]
            ),
            combine([at_least(test, -0.02) for test in tests]),
        )
    if d.ran("perceptron", *SAMPLERS, "one_sided"):
        le, at, one = d.means("f1", "perceptron", *SAMPLERS, "one_sided")
        pairs = [("label_efficient", "one_sided"), ("apple_tasting", "one_sided"), SAMPLERS]
        index = [
            page.compare(
                d.seeds("f1", "perceptron", a),
                d.seeds("f1", "perceptron", b),
                (a, b),
                lower_is_better=False,
            )
            for a, b in pairs
        ]
        page.add(
            prefix + "Label Efficient and Apple Tasting repair the classical perceptron, Label "
            "Efficient better",
            f"F1 {paper_values('perceptron', 'f1', *SAMPLERS)}",
            f"F1 {le:.3f} against {at:.3f} (one-sided {one:.3f})",
            page.reads(index, [a for a, _ in pairs]),
        )


def _fp_claims(page: ClaimsPage, prefix: str, d: _Dataset, paper: dict[str, object]) -> None:
    """Add the #FP claims (:data:`FP_CLAIMS`): fewer tasted negatives than Apple Tasting."""
    for claim, learners, (a, b), stated in FP_CLAIMS:
        done = [lr for lr in learners if d.ran(lr, a, b)]
        if not done:
            continue
        index = [
            page.compare(d.seeds("fp", lr, a), d.seeds("fp", lr, b), (a, b), lower_is_better=True)
            for lr in done
        ]
        fps = {lr: d.means("fp", lr, a, b) for lr in done}
        shown = [
            f"{NAMES[lr]} {fps[lr][0]:.0f} against {fps[lr][1]:.0f}"
            + (
                " (sampled {:.0f} against {:.0f})".format(*d.means("sampled", lr, a, b))
                if a in SAMPLERS
                else ""
            )
            for lr in done
        ]
        more = a == "label_efficient" and any(x >= y for x, y in fps.values())
        why = "β is chosen for F1 alone, so Label Efficient may taste more to buy recall"
        page.add(
            prefix + claim,
            stated.format(**paper),
            "; ".join(shown),
            page.reads(index, [a] * len(index)),
            why if more else "",
        )


def _lockups(page: ClaimsPage, prefix: str, cells: pd.DataFrame) -> None:
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
            "no" if locked else "yes",
        )


def reuters_claims(best: pd.DataFrame, results: pd.DataFrame) -> list[VerdictClaim]:
    """Return the claims of Tables 2-3 as measured, the paper's over the same topics beside.

    ``best`` (:func:`~osfb_gym.bench.suites.sculley.analysis.reuters_best`) gives the
    means; ``results`` the per-seed F1 at each cell's chosen grid value, which the
    paired verdicts compare (seed s of every method reads the same stream order).
    The grid value is chosen on the same runs, as the paper's tables do (best F1
    over the grid).
    """
    keys = ["weighting", "learner", "method", "topic"]
    rows = results.merge(best["value"].reset_index(), on=[*keys, "value"])
    seeds = rows.set_index([*keys, "seed"])["f1"].sort_index()  # F1 at the chosen values
    # both indexed (weighting, learner, method, topic)
    tables = {"ours": best["f1"], "paper": published_reuters()[0].stack()}
    level = best.index.get_level_values
    topics = [t for t in PAPER_TOPICS if t in level("topic")]
    learners = [lr for lr in MARGIN_LEARNERS if lr in level("learner")]
    weightings = [w for w in ("threshold", "weight") if w in level("weighting")]
    cells = [(w, lr, t) for w in weightings for lr in learners for t in topics]
    quads = [(w, lr, m, t) for w in weightings for lr in learners for m in METHODS for t in topics]
    page = ClaimsPage()
    _method_claims(page, tables, cells, seeds)
    for learner in learners if len(weightings) == 2 else []:
        (ours_t, ours_w), (paper_t, paper_w) = (
            [np.mean([table[q] for q in quads if q[:2] == (w, learner)]) for w in weightings]
            for table in tables.values()
        )
        threshold, weight = (seeds.loc[w, learner].groupby("seed").mean() for w in weightings)
        i = page.compare(threshold, weight, ("threshold", "weight"), lower_is_better=False)
        page.add(
            f"{NAMES[learner]}: mean best F1, threshold biasing against example weighting",
            f"{paper_t:.3f} against {paper_w:.3f}",
            f"{ours_t:.3f} against {ours_w:.3f}, difference {ci_text(page.verdict(i))}",
            page.reads([i], ["threshold" if paper_t > paper_w else "weight"]),
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
        "yes" if low["ours"] == low["paper"] else "no",
    )
    return page.resolve()


def _method_claims(
    page: ClaimsPage,
    tables: dict[str, pd.Series],
    cells: list[tuple[str, str, str]],
    seeds: pd.Series,
) -> None:
    """Add the two claims over cells (Apple Tasting weakest, Marg. Only best) to ``page``.

    Each claim is tested once, on each seed's macro-averaged F1 (its mean over the
    topic x learner x weighting cells, every method over the same cells): Marg.
    Only and Label Eff. against Apple Tasting, and the best of the three
    (:func:`osfb_gym.stats.best_of`). Testing cell by cell instead would put four
    comparisons per cell in the page's Holm family (130 over Table 2's 32 cells),
    more than 10 seeds can ever pass (smallest p 2/1024; Holm needs m x p <= 0.05).
    The per-cell counts are of means, as the paper's are.
    """
    n = len(cells)
    per_cell = {m: [seeds.loc[(w, lr, m, t)] for w, lr, t in cells] for m in METHODS}
    macro = {m: pd.concat(runs, axis=1, join="inner").mean(axis=1) for m, runs in per_cell.items()}
    beats = {
        m: page.compare(
            macro[m], macro["apple_tasting"], (m, "apple_tasting"), lower_is_better=False
        )
        for m in ("margins_only", "label_efficient")
    }
    runs = dict(zip([NAMES[m] for m in macro], by_seed(*macro.values()), strict=True))
    top_index = page.page.add_best(best_of(runs, lower_is_better=False))
    counts = []
    for table in tables.values():
        scores = pd.DataFrame([{m: table[w, lr, m, t] for m in METHODS} for w, lr, t in cells])
        wins = scores[["margins_only", "label_efficient"]].gt(scores["apple_tasting"], axis=0)
        counts.append([*wins.sum(), (scores["margins_only"] >= scores.max(axis=1)).sum()])
    (mo, le, top), (p_mo, p_le, p_top) = counts
    page.add(
        "Apple Tasting is the weakest method: beaten by Marg. Only / Label Eff. (cells: topic x "
        "learner x weighting; the paper counts cells by mean; the verdict tests each seed's "
        "macro-averaged F1 over the cells)",
        f"{p_mo} / {p_le} of {n}",
        lambda found: (
            f"means {mo} / {le} of {n}; macro F1 "
            + "; ".join(f"{NAMES[m]} - Apple Tasting {ci_text(found[i])}" for m, i in beats.items())
        ),
        page.reads(beats.values(), beats),
    )
    page.add(
        "Marg. Only has the best F1 of the three methods (the paper counts cells by mean, ties "
        "counted; the verdict: the best macro-averaged F1)",
        f"{p_top} of {n}",
        lambda _: f"means {top} of {n}; macro F1: {page.page.bests[top_index].text}",
        lambda _: read_best(page.page.bests[top_index], NAMES["margins_only"]),
    )
