"""A grading as Gradescope's autograder ``results.json``.

Gradescope runs an autograder's ``run_autograder`` script in a container
with the student's files in ``/autograder/submission`` and uploads
``/autograder/results/results.json``, whose fields are documented in
Gradescope's *Autograder Specifications*
(https://gradescope-autograders.readthedocs.io/en/latest/specs/): a
top-level ``score``, ``execution_time`` (seconds), ``output``,
``visibility`` and ``stdout_visibility``, ``tests`` (each with ``name``,
``score``, ``max_score``, ``status`` ``"passed"``/``"failed"``,
``output``, ``visibility``) and ``leaderboard`` (each with ``name``,
``value`` and ``order`` ``"asc"``/``"desc"``).

:func:`results` maps a grading onto them:

- one informational test per contract check (:data:`CONTRACT_CHECKS`, the
  grader's part of :func:`agents.base.check_agent` and the episodes): the
  checks before a failed one passed, the failed one carries the
  diagnosis, later ones did not run;
- one scored test per reference comparison: ``max_score / n_references``
  points when the submission is better than or tied with the reference
  (:func:`osfb_gym.grade.paired_comparisons`), none when it is worse or was not graded;
- the top-level ``score`` is the sum of the tests' scores, ``output`` the
  report the CLI prints (or the diagnosis);
- a leaderboard entry: the mean objective, sorted ``"asc"`` when lower is
  better.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.base import AGENT_CHECKS
from osfb_gym.core.validation import check_float
from osfb_gym.grade.sandbox import Diagnosis

if TYPE_CHECKING:
    from osfb_gym.grade import GradeReport

#: Gradescope's visibility settings (tests, the whole result, stdout)
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")

#: the checks of a grading, in the order the grader makes them: (name, what passing means).
#: The middle ones are :data:`agents.base.AGENT_CHECKS` (the one list of the
#: contract's checks) that the grader runs: all but the optional constraints table.
CONTRACT_CHECKS: tuple[tuple[str, str], ...] = (
    ("loads", "the file imports and defines one agents.base.Agent subclass"),
    ("env_ids", "env_ids (if declared) lists the graded env"),
    *((name, meaning) for name, meaning, optional in AGENT_CHECKS if not optional),
    ("signatures", "reset, act and update have the runner's signatures"),
    ("episodes", "every held-out episode runs: no exception, invalid action, time-out or limit"),
)
_NAMES = [name for name, _ in CONTRACT_CHECKS]
# check_agent's name for an __init__ that raises: part of building the class
_ALIASES = {"init raises": "hyperparameters"}


def failed_check(diagnosis: Diagnosis) -> str:
    """Return the name of the check (:data:`CONTRACT_CHECKS`) a diagnosis failed.

    Examples
    --------
    >>> failed_check(Diagnosis("contract", "Forgetful: init stores only: __init__ does not ..."))
    'init stores only'
    >>> failed_check(Diagnosis("invalid_action", "MyAgent.act() returned 0.7 ..."))
    'episodes'
    """
    message = diagnosis.message
    if diagnosis.kind == "import":
        return "loads"
    parts = message.split(": ", 2)
    if len(parts) == 3 and _ALIASES.get(parts[1], parts[1]) in _NAMES:
        return _ALIASES.get(parts[1], parts[1])
    if diagnosis.kind == "contract":
        if "has the signature" in message:
            return "signatures"
        if ".env_ids is" in message:
            return "env_ids"
        return "loads"  # no, or several, Agent subclasses in the file
    if "while importing the file" in message:
        return "loads"
    if "while checking" in message:
        return "hyperparameters"
    return "episodes"


def _check_visibility(value: Any, name: str) -> str:
    if value not in VISIBILITIES:
        raise ValueError(f"{name} must be one of {VISIBILITIES}, got {value!r}")
    return str(value)


def results(
    outcome: GradeReport | Diagnosis,
    *,
    max_score: float = 100.0,
    execution_time: float | None = None,
    visibility: str = "visible",
    stdout_visibility: str = "hidden",
    references: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Return the ``results.json`` of a grading (a report) or of a submission not graded.

    Parameters
    ----------
    outcome
        What :func:`osfb_gym.grade.grade` returned, or the :class:`Diagnosis` it raised.
    max_score
        The points of the assignment (> 0), shared equally by the reference comparisons.
    execution_time
        Seconds the grading took (default: the report's ``elapsed``; 0 for a diagnosis).
    visibility, stdout_visibility
        Gradescope's settings for the result and the autograder's stdout.
    references
        The reference agents' names, to list their comparisons as failed
        when the submission was not graded (a diagnosis carries none).

    Returns
    -------
    dict
        The JSON object, with only the fields Gradescope documents.
    """
    max_score = check_float(max_score, "max_score", low=0, low_inclusive=False)
    visibility = _check_visibility(visibility, "visibility")
    stdout_visibility = _check_visibility(stdout_visibility, "stdout_visibility")
    leaderboard: list[dict[str, Any]] = []
    if isinstance(outcome, Diagnosis):
        tests = _contract_tests(outcome, visibility)
        tests += _ungraded_tests(references or (), max_score, visibility)
        output = str(outcome)
        seconds = 0.0 if execution_time is None else execution_time
    else:
        tests = _contract_tests(None, visibility) + _comparison_tests(
            outcome, max_score, visibility
        )
        leaderboard = _leaderboard(outcome)
        output = str(outcome)
        seconds = outcome.elapsed if execution_time is None else execution_time
    seconds = check_float(seconds, "execution_time", low=0)
    return {
        "score": float(sum(test.get("score", 0.0) for test in tests)),
        "execution_time": int(math.ceil(seconds)),
        "output": output,
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
        "leaderboard": leaderboard,
    }


def _contract_tests(diagnosis: Diagnosis | None, visibility: str) -> list[dict[str, Any]]:
    """Return one test per contract check: passed up to the failed one (if any), then not run."""
    failed = None if diagnosis is None else failed_check(diagnosis)
    tests: list[dict[str, Any]] = []
    state = "passed"
    for name, meaning in CONTRACT_CHECKS:
        if name == failed:
            tests.append(_test(f"contract: {name}", "failed", str(diagnosis), visibility))
            state = "not run"
            continue
        output = meaning if state == "passed" else "not run: an earlier check failed"
        status = "passed" if state == "passed" else "failed"
        tests.append(_test(f"contract: {name}", status, output, visibility))
    return tests


def _comparison_tests(
    report: GradeReport, max_score: float, visibility: str
) -> list[dict[str, Any]]:
    """One scored test per reference: its share of ``max_score`` when yours is better or tied."""
    rows = list(report.comparisons.itertuples())
    points = max_score / max(len(rows), 1)
    direction = "lower" if report.lower_is_better else "higher"
    tests = []
    for row in rows:
        earned = points if row.verdict in ("better", "tied") else 0.0
        error = row.standard_error
        text = (
            f"yours minus {row.agent}, paired over {row.seeds} seeds: "
            f"{row.mean_difference:+.4g}"
            + (f" ± {error:.2g} (s.e.)" if math.isfinite(error) else "")
            + f"; yours is {row.verdict} ({direction} {report.objective} is better)"
        )
        tests.append(
            _test(
                f"{report.objective} against {row.agent}",
                "passed" if earned else "failed",
                text,
                visibility,
                score=earned,
                max_score=points,
            )
        )
    return tests


def _ungraded_tests(
    names: tuple[str, ...], max_score: float, visibility: str
) -> list[dict[str, Any]]:
    """Return the reference comparisons of a submission not graded: failed, no points."""
    points = max_score / max(len(names), 1)
    return [
        _test(
            f"against {name}",
            "failed",
            "not run: the submission was not graded",
            visibility,
            score=0.0,
            max_score=points,
        )
        for name in names
    ]


def _leaderboard(report: GradeReport) -> list[dict[str, Any]]:
    """Return the mean objective as Gradescope's leaderboard entry (none if not finite)."""
    mine = report.results.loc[report.results["agent"] == report.yours, report.objective]
    if not math.isfinite(float(mine.mean())):
        return []
    order = "asc" if report.lower_is_better else "desc"
    return [{"name": report.objective, "value": float(mine.mean()), "order": order}]


def _test(
    name: str,
    status: str,
    output: str,
    visibility: str,
    *,
    score: float | None = None,
    max_score: float | None = None,
) -> dict[str, Any]:
    test: dict[str, Any] = {"name": name, "status": status, "output": output}
    if score is not None:
        test["score"] = float(score)
        test["max_score"] = float(max_score if max_score is not None else score)
    test["visibility"] = visibility
    return test


def write(outcome: GradeReport | Diagnosis, path: Path, **options: Any) -> Path:
    """Write :func:`results` as JSON to ``path`` (atomically, creating its folder)."""
    data = results(outcome, **options)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(suffix=".json", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(data, stream, indent=2, allow_nan=False)
    os.replace(temporary, path)
    return path
