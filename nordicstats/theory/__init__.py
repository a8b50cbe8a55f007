"""Theory of ordinal classification (paper, Section 5.1) and the simulation designs' truth.

* :mod:`~nordicstats.theory.bayes` -- the mode and median Bayes rules and their
  conditional risks under 0-1, absolute and cost-matrix losses;
* :mod:`~nordicstats.theory.losses` -- a library of margin losses V(u);
* :mod:`~nordicstats.theory.consistency` -- numerical checks of generalized
  Fisher consistency (Definition 1), one eta at a time or over many, also
  under a cost matrix (cost-weighted hinge, cost-Bayes rule);
* :mod:`~nordicstats.theory.weighted` -- the cost-weighted boundary problems:
  masses, the cross-ratio condition, near-tie eta;
* :mod:`~nordicstats.theory.designs` -- true class probabilities given the
  *observed* covariates of the paper's nonlinear and donut designs
  (Section 6), Bayes errors and excess risks;
* :mod:`~nordicstats.theory.population` -- the population linear SVM of a
  Gaussian-mixture design (the truth that inference is checked against).
"""

from nordicstats.theory.bayes import (
    bayes_boundary_signs,
    bayes_rule_cost,
    bayes_rule_multiclass,
    bayes_rule_ordinal,
    check_probabilities,
    conditional_risk,
    loss_matrix,
    prediction_risks,
    upper_tail,
)
from nordicstats.theory.consistency import (
    FisherConsistencyResult,
    FisherReport,
    fisher_consistency,
    fisher_consistency_report,
    near_half_probabilities,
)
from nordicstats.theory.designs import (
    BayesErrorResult,
    bayes_error,
    design_probabilities,
    donut_probabilities,
    excess_risk,
    nonlinear_observed_probabilities,
)
from nordicstats.theory.losses import MARGIN_LOSSES, MarginLoss, get_margin_loss
from nordicstats.theory.population import population_svm
from nordicstats.theory.weighted import (
    boundary_masses,
    cost_crossing_triples,
    near_tie_probabilities,
)

__all__ = [
    "bayes_rule_ordinal",
    "bayes_rule_multiclass",
    "bayes_rule_cost",
    "bayes_boundary_signs",
    "check_probabilities",
    "upper_tail",
    "loss_matrix",
    "conditional_risk",
    "prediction_risks",
    "MarginLoss",
    "MARGIN_LOSSES",
    "get_margin_loss",
    "fisher_consistency",
    "fisher_consistency_report",
    "near_half_probabilities",
    "near_tie_probabilities",
    "boundary_masses",
    "cost_crossing_triples",
    "FisherConsistencyResult",
    "FisherReport",
    "nonlinear_observed_probabilities",
    "donut_probabilities",
    "design_probabilities",
    "bayes_error",
    "excess_risk",
    "BayesErrorResult",
    "population_svm",
]
