"""Spend cap (being built)."""
