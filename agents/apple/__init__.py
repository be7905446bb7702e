"""Agents of apple tasting: learning from one-sided feedback (Sculley 2007).

Base learners (:class:`LinearLearner` subclasses) decide by a hyperplane and
learn from the labels of what they taste; sampling strategies wrap a base
learner and taste some of its predicted negatives too:
``LabelEfficient(MarginPerceptron(m=2))``.
"""

from agents.apple.base import LinearLearner
from agents.apple.perceptron import MarginPerceptron, Perceptron
from agents.apple.sampling import AppleTastingSampling, LabelEfficient, SamplingStrategy
from agents.apple.svm import OnlineSVM

__all__ = [
    "AppleTastingSampling",
    "LabelEfficient",
    "LinearLearner",
    "MarginPerceptron",
    "OnlineSVM",
    "Perceptron",
    "SamplingStrategy",
]
