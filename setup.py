"""Build script. setup.cfg holds the package's metadata; this file adds only the optional native layer
(module 3): the fused ``Function.apply`` in C (torchlight/_native/apply.c, docs/function_api.md).

``optional=True``: where no C compiler (or no Python headers) is found, installation still succeeds
and torchlight runs its Python apply; ``torchlight.autograd.native.path()`` says which one runs.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "torchlight._native_apply",
            sources=["torchlight/_native/apply.c"],
            optional=True,
        )
    ]
)
