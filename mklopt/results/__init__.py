"""Results: the one result class every solve and fit returns, saved and loaded, and polished.

``result`` holds :class:`MKLResult` (the answer and its certificate); ``result_io`` saves
and loads it (``.npz``, written atomically); ``polish`` finishes an exact solve's weights
on the optimal face of the weight set.
"""

from .result import MKLResult, decision_values
from .result_io import load_result, save_result

__all__ = ["MKLResult", "decision_values", "save_result", "load_result"]
