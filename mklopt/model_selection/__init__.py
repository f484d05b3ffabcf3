"""Model selection: regularization paths and cross-validated sweeps on a Dask cluster.

``regularization_path`` fits a sequence of C (or p) warm-started (:func:`path`);
``search`` runs a grid sweep fit by fit on ``dask.distributed`` (:func:`sweep`), with its
per-fit log (``sweep_log``), the cluster it runs on (``sweep_cluster``), the scheduling of its
fits (``sweep_run``), the task each worker runs (``sweep_tasks``) and what it returns
(``sweep_result``: :class:`SweepResult`, its rows and CSV).
"""

from .regularization_path import path
from .search import sweep
from .sweep_result import SweepResult

__all__ = ["path", "sweep", "SweepResult"]
