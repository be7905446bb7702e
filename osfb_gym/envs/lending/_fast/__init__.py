"""The lending env's speed-only paths (see :mod:`~osfb_gym.envs.lending._fast.one_stream`)."""
