"""A page of a paper's claims, each read from paired verdicts with Holm over the whole page.

A suite's page adds the comparisons its claims rest on (:meth:`ClaimsPage.compare`:
two per-seed series, paired on the seeds both have), then each claim with how it
is read (:meth:`ClaimsPage.add`); :meth:`ClaimsPage.resolve` reads every claim
once all comparisons are in, so each p-value is adjusted over the page's whole
family. The readings ("reproduced", "not reproduced", "tie (within noise)",
"cannot tell at n=k") are :mod:`osfb_gym.stats.claims`'; :func:`verdict_table`
prints the claims.

Examples
--------
>>> runs = pd.Series([1.0, 2, 3, 4, 5, 6, 7, 8]), pd.Series([2.0, 3, 4, 5, 6, 7, 8, 9])
>>> page = ClaimsPage()
>>> i = page.compare(*runs, ("A", "B"), lower_is_better=True)
>>> page.add("A beats B", "A lower", "A 4.5, B 5.5", page.reads([i], ["A"]))
>>> page.add("a check of ours", None, "none", "yes")
>>> [(claim.verdict, claim.holds) for claim in page.resolve()]
[('reproduced', True), ('- (holds)', True)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from osfb_gym.bench.suites.tables import Claim
from osfb_gym.stats import Page, Verdict, paired
from osfb_gym.stats.claims import REPRODUCED, read

__all__ = ["ClaimsPage", "VerdictClaim", "by_seed", "verdict_table"]

#: what a claim's reading or measured text is: fixed, or read from the page's verdicts
Deferred = str | Callable[[list[Verdict]], str]


@dataclass(frozen=True)
class VerdictClaim(Claim):
    """A claim read from verdicts (:mod:`osfb_gym.stats.claims`).

    ``verdict`` is "reproduced", "not reproduced", "tie (within noise)" or
    "cannot tell at n=k" ("yes"/"no" for a count, "- (holds)"/"- (does not
    hold)" for a check the paper does not state); ``holds`` is True only when
    reproduced (or yes).
    """

    verdict: str = ""


def by_seed(*runs: pd.Series) -> list[np.ndarray]:
    """Return per-seed series' values on the seeds all of them have, in seed order."""
    both = pd.concat(runs, axis=1, join="inner").dropna().sort_index()
    return [both.iloc[:, k].to_numpy() for k in range(both.shape[1])]


class ClaimsPage:
    """A page's claims: their comparisons join one Holm family, read once all are added."""

    def __init__(self) -> None:
        self.page = Page()
        self._claims: list[tuple[str, str | None, Deferred, Deferred, str]] = []

    def compare(
        self, a: pd.Series, b: pd.Series, names: tuple[str, str], *, lower_is_better: bool
    ) -> int:
        """Add the paired verdict of two per-seed series (seeds both have); return its index."""
        verdict = paired(*by_seed(a, b), lower_is_better=lower_is_better, names=names)
        return self.page.add(verdict)

    def verdict(self, index: int) -> Verdict:
        """Return comparison ``index`` (its CI is its own; its p: Holm over the page so far)."""
        return self.page.verdicts[index]

    @staticmethod
    def reads(index: Iterable[int], sides: Iterable[str]) -> Callable[[list[Verdict]], str]:
        """Return the reading of a claim resting on comparisons ``index``, won by ``sides``."""
        chosen, expected = list(index), list(sides)
        return lambda found: read([found[i] for i in chosen], expected)

    def add(
        self, claim: str, paper: str | None, measured: Deferred, reading: Deferred, why: str = ""
    ) -> None:
        """Add a claim; ``measured`` and ``reading`` may be read from the page's final verdicts.

        ``paper`` None: a check of ours, whose "yes"/"no" prints as "- (holds)" or
        "- (does not hold)".
        """
        self._claims.append((claim, paper, measured, reading, why))

    def resolve(self) -> list[VerdictClaim]:
        """Return the claims, each with its verdict, read from the Holm-adjusted page."""
        found = self.page.verdicts
        claims = []
        for claim, paper, measured, reading, why in self._claims:
            verdict = reading(found) if callable(reading) else reading
            holds = verdict in (REPRODUCED, "yes")
            if paper is None and verdict in ("yes", "no"):
                verdict = "- (holds)" if holds else "- (does not hold)"
            shown = measured(found) if callable(measured) else measured
            claims.append(VerdictClaim(claim, paper, shown, holds, why, verdict))
        return claims


def verdict_table(claims: Sequence[VerdictClaim]) -> str:
    """Markdown table: claim | paper | measured | verdict | why."""
    rows = [
        {
            "claim": c.claim,
            "paper": c.paper or "not stated",
            "measured": c.measured,
            "verdict": c.verdict or ("yes" if c.holds else "no"),
            "why": c.why,
        }
        for c in claims
    ]
    columns = ["claim", "paper", "measured", "verdict", "why"]
    return pd.DataFrame(rows, columns=columns).to_markdown(index=False)
