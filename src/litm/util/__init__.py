"""Leaf helpers shared by every layer: file writes, JSON Lines records, sentences, progress, settings by model spec.

Nothing here imports another litm package except :mod:`litm.errors`, so any layer may use it.
"""
