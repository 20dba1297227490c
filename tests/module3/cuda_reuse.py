"""Module 2's tensor tests, rerun on the cuda backend in numba's simulator, with fewer examples.

The simulator runs every CUDA thread as a Python thread: an operation costs milliseconds, not
microseconds. So module 2's property tests run here with CUDA_EXAMPLES hypothesis examples each
(their own settings stay as they are for the other backends), on the small shapes they draw.
"""

import functools

from hypothesis import settings

CUDA_EXAMPLES = 2


def fewer_examples(test, examples=CUDA_EXAMPLES):
    """``test`` (module 2's function) run with at most ``examples`` hypothesis examples; a test
    without hypothesis is returned as it is."""
    if not getattr(test, "is_hypothesis_test", False):
        return test

    @functools.wraps(test)
    def run(*args, **kwargs):
        # hypothesis reads the settings from the test function when it runs: swapped for this
        # run only, so that the same function run on another backend keeps its own
        saved = test._hypothesis_internal_use_settings
        test._hypothesis_internal_use_settings = settings(saved, max_examples=min(examples, saved.max_examples))
        try:
            return test(*args, **kwargs)
        finally:
            test._hypothesis_internal_use_settings = saved

    return run


def cuda_versions(found, examples=CUDA_EXAMPLES):
    """reuse.tests(...)'s dict of test functions, each with fewer examples."""
    return {name: fewer_examples(fn, examples) for name, fn in found.items()}
