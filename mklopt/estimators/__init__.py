"""scikit-learn estimators: multiple kernel learning with kernels as hyperparameters.

* :class:`MKLClassifier` (:mod:`.classifier`): ℓp-MKL or any weight set Θ,
  binary or one-vs-rest, certified by mklopt's duality gap.
* :class:`MKLRegressor` (:mod:`.regressor`): ε-insensitive or squared loss.
* :class:`MKLOneClass` (:mod:`.one_class`): one-class ν-SVM novelty detection.
* :class:`VKRClassifier` (:mod:`.vkr`): Voted Kernel Regularization.
* :mod:`.kernel_specs`: kernel specifications and their defaults.
* :func:`forget_kernels`: drop the training kernels kept from recent fits for later fits on
  the same features (a grid search's).
"""

from ._kernel_reuse import forget_kernels
from .classifier import MKLClassifier
from .one_class import MKLOneClass
from .regressor import MKLRegressor
from .kernel_specs import default_kernels, resolve_kernel_specs
from .vkr import VKRClassifier

__all__ = ["MKLClassifier", "MKLRegressor", "MKLOneClass", "VKRClassifier", "default_kernels", "resolve_kernel_specs",
           "forget_kernels"]
