"""scikit-learn estimators: multiple kernel learning with kernels as hyperparameters.

* :class:`MKLClassifier` (:mod:`.classifier`): ℓp-MKL or any weight set Θ,
  binary or one-vs-rest, certified by mklopt's duality gap.
* :class:`VKRClassifier` (:mod:`.vkr`): Voted Kernel Regularization.
* :mod:`.kernel_specs`: kernel specifications and their defaults.
"""

from .classifier import MKLClassifier
from .kernel_specs import default_kernels, resolve_kernel_specs
from .vkr import VKRClassifier

__all__ = ["MKLClassifier", "VKRClassifier", "default_kernels", "resolve_kernel_specs"]
