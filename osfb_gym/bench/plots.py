"""PNG plots of benchmark results; the code lives in :mod:`osfb_gym.bench.report`."""

from osfb_gym.bench.report import panels, plot_average_loss, plot_curves, save

__all__ = ["panels", "plot_average_loss", "plot_curves", "save"]
