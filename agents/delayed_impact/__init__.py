"""Agents of the delayed-impact lending setting (Liu et al. 2018; ml-fairness-gym's lending)."""

from agents.delayed_impact.base import ThresholdLender
from agents.delayed_impact.thresholds import DemographicParity, EqualOpportunity, MaxProfit

__all__ = ["DemographicParity", "EqualOpportunity", "MaxProfit", "ThresholdLender"]
