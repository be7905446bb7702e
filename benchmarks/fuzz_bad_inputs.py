"""Fuzz every public entry point with bad inputs and count how each is answered.

Runs the cases of ``tests/bad_inputs.py`` (every env id, agent class, data
loader, sweep spec, CLI command and the runner) and prints, per area, how
many got a clear error naming the parameter, how many were accepted as
valid (with the reason), accepted silently, refused with an unclear message,
or took longer than ``SLOW`` seconds. ``--show KIND`` lists the cases of a kind.

    python benchmarks/fuzz_bad_inputs.py [--show silent,unclear,slow]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import warnings
from collections import Counter
from pathlib import Path

from tests.bad_inputs import all_cases, classify

KINDS = ("clear", "valid", "silent", "unclear", "slow")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", default="silent,unclear,slow", help="kinds to list")
    parser.add_argument("-k", default="", help="only cases whose id contains this")
    parser.add_argument(
        "--memory-gb", type=float, default=8.0, help="address-space cap of this process"
    )
    args = parser.parse_args()
    # a size that cannot fit must be refused from an estimate, not by the kernel's OOM killer
    cap = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [case for case in all_cases(Path(tmp)) if args.k in case.id]
        results = [classify(case) for case in cases]
    by_area: dict[str, Counter[str]] = {}
    for result in results:
        by_area.setdefault(result.case.id.split()[0], Counter())[result.kind] += 1
    show = set(args.show.split(","))
    for result in results:
        if result.kind in show:
            print(f"{result.kind:8s} {result.case.id}: {result.detail[:220]}")
    print(f"\n{'area':8s} " + " ".join(f"{kind:>8s}" for kind in KINDS) + "    total")
    total: Counter[str] = Counter()
    for area, counts in by_area.items():
        total.update(counts)
        print(
            f"{area:8s} "
            + " ".join(f"{counts[kind]:8d}" for kind in KINDS)
            + f" {sum(counts.values()):8d}"
        )
    n = sum(total.values())
    print(f"{'all':8s} " + " ".join(f"{total[kind]:8d}" for kind in KINDS) + f" {n:8d}")
    refused = n - total["valid"]
    print(
        f"clear errors: {total['clear']} of {refused} bad inputs "
        f"({100 * total['clear'] / max(refused, 1):.1f}%)"
    )


if __name__ == "__main__":
    main()
