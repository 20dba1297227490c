"""Runnable training scripts for the course: ``python -m project.train`` and friends."""
