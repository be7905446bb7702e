"""The services family's speed-only paths, behind one seam.

The world (:mod:`osfb_gym.envs.services.world`) and the env call the loss
kernels, the step's settle and the reset's draws only through
:mod:`~osfb_gym.envs.services._fast.kernels`: it keeps NumPy's lines as the
reference path and picks, once per world, a loop compiled by numba
(:mod:`~osfb_gym.envs.services._fast.compiled`,
:mod:`~osfb_gym.envs.services._fast.compiled_draws`; the optional ``fast``
extra, off with ``OSFB_NUMBA=0``) that performs the same floating-point
operations in the same order. The tests compare the two byte for byte.
"""
