"""Test-suite wide settings: the order in which pytest-xdist hands out the test files.

The suite runs on every core (``-n auto --dist loadfile`` in ``pyproject.toml``): each
file goes whole to one worker, so module-scoped fixtures (the docs build, the installed
wheel) are computed once. A worker takes files in collection order; the files that take
minutes on their own are collected first, so that no worker starts one of them when the
others are nearly done.
"""

from __future__ import annotations

import os
import signal

import pytest
from threadpoolctl import threadpool_limits

#: Files that take minutes on two cores (the site's build runs every example; the
#: packaging test builds a wheel and installs it with its dependencies in a fresh venv).
LONG_FILES = ("test_docs.py", "test_packaging.py", "test_sweep_resilience.py",
              "test_chunking.py", "test_drivers.py", "test_regularizers.py")


def _share_the_cores() -> None:
    """Each of the W workers gets its share of the cores for BLAS and OpenMP.

    Every worker (and every process it starts: the site's build, CLI children,
    Dask workers) would otherwise run as many BLAS threads as the machine has
    cores, W times over; spinning BLAS threads then slow every process several
    times over. A user's single process keeps all cores.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        return
    share = str(max(1, (os.cpu_count() or 1) // workers))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, share)
    threadpool_limits(int(share))


_share_the_cores()


@pytest.fixture
def all_cores(monkeypatch):
    """The machine's cores for this test's fits (for tests of threading): the share the
    workers of a parallel test run get (``OMP_NUM_THREADS``, OpenMP limits) would cap them,
    since a fit takes only the threads its caller grants."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    # above the cores: a test may pretend to have more (os.cpu_count patched)
    with threadpool_limits(limits=4 * (os.cpu_count() or 1), user_api="openmp"):
        yield os.cpu_count() or 1


def pytest_collection_modifyitems(session, config, items):
    def rank(item) -> int:
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)

    items.sort(key=rank)  # stable: the order inside each file is kept


def _as_from_a_terminal() -> None:
    """In a child process: SIGINT delivered and handled by default, as in a shell."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.fixture
def sigint_as_in_a_terminal():
    """SIGINT raises KeyboardInterrupt here; the fixture's value, a ``preexec_fn``, does the same
    for a child. A runner started in the background ignores SIGINT, and children inherit that."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    blocked = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    yield _as_from_a_terminal
    signal.signal(signal.SIGINT, previous)
    if signal.SIGINT in blocked:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.fixture(autouse=True)
def _no_kernels_from_earlier_tests():
    """Each test's first fit makes its kernels: the estimators keep recent training kernels
    for later fits on the same data (a grid search's), which would carry over between tests
    (a test counting PSD screens or warnings would see another test's fit)."""
    from mklopt.estimators import forget_kernels

    forget_kernels()
    yield
    forget_kernels()
