"""Independent tasks through joblib, with one progress line per finished share of them.

The long operations of the package (reference models of the attacks, releases of a canary
audit, the starts and refits of a worst-case search, the row blocks of an MLP audit) are
sums of independent tasks. :func:`run_tasks` runs them through :class:`joblib.Parallel`
(any backend: processes, threads, or dask under ``joblib.parallel_config``) and returns
the results in task order, so that the result never depends on ``n_jobs`` or the backend;
with ``verbose`` it prints ``[who] done k of N <unit>`` in the calling process as the
results arrive (a process pool's workers print nowhere a user sees).
"""

from __future__ import annotations

__all__ = ["progress_steps", "run_tasks"]


def progress_steps(n_tasks: int, verbose: int) -> set:
    """Task counts after which a progress line is printed: every task for ``verbose >=
    2``, about every tenth (and the last) for ``verbose == 1``, none for 0."""
    if not verbose or n_tasks <= 0:
        return set()
    if verbose >= 2:
        return set(range(1, n_tasks + 1))
    every = max(1, n_tasks // 10)
    return set(range(every, n_tasks + 1, every)) | {n_tasks}


def run_tasks(func, tasks, *, n_jobs=None, verbose: int = 0, who: str = "",
              unit: str = "tasks", prefer: str | None = None,
              require: str | None = None) -> list:
    """``[func(*task) for task in tasks]``, computed through :class:`joblib.Parallel`.

    Parameters
    ----------
    func : callable
        A module-level function (process and cluster backends pickle it).
    tasks : list of tuple
        The arguments of every call.
    n_jobs : int or None
        Passed to :class:`joblib.Parallel` (``None``: joblib's default, one at a time
        outside a ``joblib.parallel_config`` context).
    verbose : int
        0: silent; 1: ``[who] done k of N unit`` about ten times; 2 and more: after every
        task, and joblib's own messages at ``verbose - 1``.
    who, unit : str
        Names in the progress lines.
    prefer : {None, "threads", "processes"}
        joblib's backend hint (``"threads"`` for numpy work that releases the GIL).
    require : {None, "sharedmem"}
        ``"sharedmem"``: threads whatever the configured backend (tasks that read an
        in-memory state that is never serialised).

    Returns
    -------
    results : list
        In the order of ``tasks``, whatever the backend and ``n_jobs``.
    """
    from joblib import Parallel, delayed

    tasks = list(tasks)
    n = len(tasks)
    marks = progress_steps(n, verbose)
    parallel = Parallel(n_jobs=n_jobs, verbose=max(int(verbose) - 1, 0), prefer=prefer,
                        require=require, return_as="generator")
    results = []
    for result in parallel(delayed(func)(*task) for task in tasks):
        results.append(result)
        if len(results) in marks:
            print(f"[{who}] done {len(results)} of {n} {unit}", flush=True)
    return results
