"""litm's Haystack rankers, where Haystack loads integrations from (``Pipeline.load`` imports only here).

The classes live in :mod:`litm.integrations.haystack`; this package is their saved path. ``pip install
'litm[haystack]'`` brings Haystack.
"""

from litm.integrations.haystack import LitmRanker, LitmTrimmer

__all__ = ["LitmRanker", "LitmTrimmer"]
