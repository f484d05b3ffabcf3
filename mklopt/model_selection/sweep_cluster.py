"""The Dask cluster a sweep runs on: connected or started, and closed quietly on Ctrl-C.

* ``scheduler=ADDRESS`` connects to a running scheduler and leaves it running.
* Without one, a ``LocalCluster`` of single-threaded worker processes is started
  and closed after the sweep. Its workers are the sweep's own: a worker whose
  heartbeat meets the scheduler already gone (the sweep is ending) stays silent.
* After a Ctrl-C, the client side's Dask loggers are silenced while the client
  and the cluster shut down, so the command line's one line is all the user sees.
"""

from __future__ import annotations

import logging
import signal
import threading
from contextlib import contextmanager

from ..exceptions import BackendError

__all__ = ["cluster_client"]

#: Loggers that print tracebacks from Dask's event-loop thread when Ctrl-C cancels a wait.
_SHUTDOWN_LOGGERS = ("tornado.application", "asyncio", "distributed", "distributed.utils",
                     "distributed.client", "distributed.nanny")

#: What a worker logs (with a traceback) when its heartbeat finds the scheduler closed.
_HEARTBEAT_FAILURE = "Failed to communicate with scheduler during heartbeat"


@contextmanager
def cluster_client(distributed, scheduler, n_workers, timeout):
    """``(client, dashboard link, scheduler address, workers)``; a local cluster is closed after."""
    cluster = None
    try:
        if scheduler is None:
            with _workers_ignore_sigint():
                cluster = distributed.LocalCluster(n_workers=int(n_workers), threads_per_worker=1,
                                                   processes=True)
        client = distributed.Client(scheduler if cluster is None else cluster, timeout=timeout)
        if cluster is not None:
            client.register_plugin(_quiet_heartbeat_plugin(distributed))
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        where = f"the Dask scheduler at {scheduler!r}" if scheduler else "a local Dask cluster"
        raise BackendError(f"cannot connect to {where} ({exc}); start one with 'dask scheduler' "
                           "and 'dask worker ADDRESS', or leave out the scheduler.") from None
    with _quiet_after_interrupt():
        try:
            yield (client, client.dashboard_link, client.scheduler.address,
                   len(client.scheduler_info().get("workers", {})))
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


@contextmanager
def _workers_ignore_sigint():
    """The worker processes started inside the block ignore SIGINT (they inherit it).

    Ctrl-C in a terminal reaches every process of the foreground group: the workers would each
    die with a KeyboardInterrupt traceback while the sweep itself stops them anyway. Python
    (and asyncio) leave an ignored SIGINT ignored, so the sweep alone handles the interrupt.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _not_a_cancellation(record: logging.LogRecord) -> bool:
    """A logging filter: ``False`` for a worker's record of a task cancelled while it ran."""
    return "CancelledError" not in record.getMessage()


def _not_a_heartbeat_failure(record: logging.LogRecord) -> bool:
    """A logging filter: ``False`` for a worker's failed-heartbeat record."""
    return not record.getMessage().startswith(_HEARTBEAT_FAILURE)


def _quiet_heartbeat_plugin(distributed):
    """A worker plugin that drops the failed-heartbeat record from ``distributed.worker``.

    When the sweep ends, the local cluster closes its workers and then its scheduler,
    but a heartbeat already on its way can meet the closed connection, and the worker
    logs a traceback into the user's terminal (a race inside Dask's shutdown, more
    likely on a loaded machine). The scheduler runs in the sweep's own process, so
    it is gone only when the sweep is: the record never tells the user anything.
    Workers the plugin does not reach (a user's ``scheduler=``) are left alone.
    """

    class QuietHeartbeat(distributed.WorkerPlugin):
        name = "mklopt-quiet-heartbeat"

        def setup(self, worker) -> None:
            logging.getLogger("distributed.worker").addFilter(_not_a_heartbeat_failure)
            # a Ctrl-C cancels the running fits: their cancellation is no news to the user
            logging.getLogger("distributed.worker.state_machine").addFilter(_not_a_cancellation)

    return QuietHeartbeat()


@contextmanager
def _quiet_after_interrupt():
    """After a Ctrl-C, Dask's loggers are silenced while the client shuts down.

    Ctrl-C during a wait makes Dask cancel it from its event-loop thread, which can
    log a traceback of Dask's own (a race in ``distributed.utils.sync``); the user
    asked to stop, and the command line prints one line for that. The loggers are
    disabled by the signal handler itself, before the interrupt reaches Dask.
    """
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield  # a thread cannot set handlers; an ignored Ctrl-C stays ignored
        return
    loggers = [logging.getLogger(name) for name in _SHUTDOWN_LOGGERS]
    states = [logger.disabled for logger in loggers]

    def interrupted(signum, frame):
        for logger in loggers:
            logger.disabled = True
        previous(signum, frame)
        raise KeyboardInterrupt  # when the previous handler did not raise

    signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        for logger, state in zip(loggers, states):
            logger.disabled = state
