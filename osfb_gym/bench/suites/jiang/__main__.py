"""``python -m osfb_gym.bench.suites.jiang PAPER_DIR NAME=DIR ...``: the sensitivity tables.

See :func:`osfb_gym.bench.suites.jiang.sensitivity.main`.
"""

from __future__ import annotations

from osfb_gym.bench.suites.jiang.sensitivity import main

raise SystemExit(main())
