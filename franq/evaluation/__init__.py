"""Evaluation harness (issue 7): metrics tables, bootstrap intervals and plots."""
