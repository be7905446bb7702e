"""Agents of the GLM-cutoff lending setting (Jiang, Jiang and Pacchiano 2021)."""

from agents.lending._fast.replicas import CutoffReplicas
from agents.lending.adaptive import Adaptive
from agents.lending.bandits import LinUCB, ThompsonSampling
from agents.lending.base import CutoffAgent
from agents.lending.exploration import (
    EpsilonGreedy,
    Margin,
    Noise,
    OneSidedEpsilonGreedy,
    OneSidedNoise,
)
from agents.lending.greedy import Greedy
from agents.lending.passive import Passive
from agents.lending.sgd import SGD

__all__ = [
    "Adaptive",
    "CutoffAgent",
    "CutoffReplicas",
    "EpsilonGreedy",
    "Greedy",
    "LinUCB",
    "Margin",
    "Noise",
    "OneSidedEpsilonGreedy",
    "OneSidedNoise",
    "Passive",
    "SGD",
    "ThompsonSampling",
]
