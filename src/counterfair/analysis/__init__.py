"""Analyses over an audit's pairs: the placebo-controlled identity effect (:mod:`.placebo`), the fairness gate
(:mod:`.gate`) and two classifiers compared on one pair set (:mod:`.compare`).
"""
