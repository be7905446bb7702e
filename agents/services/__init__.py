"""Agents of the multi-service setting: AcQUIre, Fair AcQUIre and their baselines."""

from agents.services.acquire import AcQUIre, FairAcQUIre
from agents.services.base import ServiceAgent
from agents.services.baselines import GroupBalancedUniform, MaxLossGreedy, Uniform

__all__ = [
    "AcQUIre",
    "FairAcQUIre",
    "GroupBalancedUniform",
    "MaxLossGreedy",
    "ServiceAgent",
    "Uniform",
]
