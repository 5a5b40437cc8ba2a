"""Deprecated alias of :mod:`litm.util.progress` (moved in litm 0.2; this alias goes in 0.3)."""

from litm.util.deprecation import alias_module

alias_module(__name__, "litm.util.progress")
