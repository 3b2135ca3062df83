"""``counterfair compare``: two classifiers on the same counterfactual pairs — B − A per group with an interval, a
paired permutation test and a verdict. The comparison itself is :mod:`counterfair.analysis.compare`, which the audit's
``--baseline`` and ``AuditResult.compare`` use too; this slice holds its command line (:mod:`.cli`).
"""
