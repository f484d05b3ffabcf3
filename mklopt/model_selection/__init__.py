"""Model selection: regularization paths and cross-validated sweeps on a Dask cluster.

``regularization_path`` fits a sequence of C (or p) warm-started (:func:`path`);
``search`` runs a grid sweep fit by fit on ``dask.distributed`` (:func:`sweep`), with its
per-fit log (``sweep_log``), the cluster it runs on (``sweep_cluster``), the scheduling of its
fits (``sweep_run``) and the task each worker runs (``sweep_tasks``).
"""

from .regularization_path import path
from .search import SweepResult, sweep

__all__ = ["path", "sweep", "SweepResult"]
