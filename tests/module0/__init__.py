"""Module 0: scalar operators, list helpers, modules and toy data sets."""
