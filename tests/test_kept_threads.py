"""Worker threads kept from call to call (mklopt.kernels._pool): the same threads serve later
calls, nested calls and failing tasks end, a forked child starts its own."""

from __future__ import annotations

import multiprocessing
import threading
import time

import numpy as np
import pytest

import mklopt
from mklopt.kernels._pool import on_kept_threads


def _thread_name(_item) -> str:
    time.sleep(0.01)  # both threads take a task
    return threading.current_thread().name


def test_later_calls_run_on_the_threads_of_the_first():
    first = set(on_kept_threads("test-kept", _thread_name, range(4), 2))
    again = set(on_kept_threads("test-kept", _thread_name, range(4), 2))
    assert len(first) == 2 and again == first
    assert all(name.startswith("mklopt-test-kept") for name in first)


def test_a_call_from_a_pool_thread_does_not_wait_behind_itself():
    def outer(item):  # every thread of the pool busy with a task that calls the pool again
        return sum(on_kept_threads("test-nested", lambda k: k * item, range(3), 2))

    assert on_kept_threads("test-nested", outer, range(4), 2) == [0, 3, 6, 9]


def test_the_first_failure_is_raised_once_every_task_has_ended():
    ended = []

    def task(item):
        if item == 1:
            raise ValueError("task 1")
        time.sleep(0.05)
        ended.append(item)
        return item

    with pytest.raises(ValueError, match="task 1"):
        on_kept_threads("test-failing", task, range(4), 2)
    assert sorted(ended) == [0, 2, 3]  # none still running when the error is raised
    assert on_kept_threads("test-failing", lambda k: k + 1, range(3), 2) == [1, 2, 3]  # the pool still serves


def _fit_in_child(queue) -> None:
    X = np.random.default_rng(0).standard_normal((80, 3))
    model = mklopt.MKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})]).fit(X, np.argmax(X, axis=1))
    queue.put(model.score(X, np.argmax(X, axis=1)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
def test_a_forked_child_builds_kernels_on_threads_of_its_own(monkeypatch):
    from mklopt.kernels import _stack

    monkeypatch.setattr(_stack, "SMALL_BUILD_ENTRIES", 0)  # these small builds on the pools, the child's too
    X = np.random.default_rng(0).standard_normal((80, 3))
    mklopt.MKLClassifier(kernels=["linear", ("rbf", {"gamma": 0.5})]).fit(X, np.argmax(X, axis=1))  # pools started
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_fit_in_child, args=(queue,))
    child.start()
    child.join(120)
    assert child.exitcode == 0  # the parent's pools, whose threads the child lacks, would hang it
    assert queue.get(timeout=5) > 0.9
