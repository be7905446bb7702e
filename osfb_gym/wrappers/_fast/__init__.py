"""The RL views' speed-only paths, behind one seam.

:mod:`~osfb_gym.wrappers._fast.writers` writes a view's observation straight
into one ``float32`` vector (:func:`~osfb_gym.wrappers._fast.writers.make_writer`,
:func:`~osfb_gym.wrappers._fast.writers.dict_plan`), equal to
:func:`osfb_gym.core.spaces.encode` bit for bit (tested); with numba
installed, its squash and code tables run as compiled loops
(:mod:`~osfb_gym.wrappers._fast.compiled`; the same bits, off with
``OSFB_NUMBA=0``).
"""
