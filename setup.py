"""Build script. pyproject.toml holds the package's metadata; this file adds the optional native layer
(module 3): the fused ``Function.apply`` in C (torchlight/_native/apply.c, docs/function_api.md),
and the project's URLs.

``optional=True``: where no C compiler (or no Python headers) is found, installation still succeeds
and torchlight runs its Python apply; ``torchlight.autograd.native.path()`` says which one runs.

The URLs: no public copy of the repository or of the course site is known to this checkout, so
whoever publishes them says where at build time, with ``TORCHLIGHT_REPOSITORY_URL`` and
``TORCHLIGHT_SITE_URL``; without them the metadata names a placeholder (``example.invalid``, a
domain that can never resolve) rather than a guess that might be someone else's.
"""

import os

from setuptools import Extension, setup

PLACEHOLDER = "https://example.invalid/torchlight"
repository = os.environ.get("TORCHLIGHT_REPOSITORY_URL", "").rstrip("/") or PLACEHOLDER
site = os.environ.get("TORCHLIGHT_SITE_URL", "").rstrip("/") or repository

setup(
    project_urls={
        "Repository": repository,
        "Documentation": site,
    },
    ext_modules=[
        Extension(
            "torchlight._native_apply",
            sources=["torchlight/_native/apply.c", "torchlight/_native/launch.c", "torchlight/_native/walk.c"],
            optional=True,
        )
    ],
)
