"""litm's Haystack compressor, where Haystack loads integrations from (``Pipeline.load`` imports only here).

The class lives in :mod:`litm.integrations.haystack`; this package is its saved path. ``pip install
'litm[haystack]'`` brings Haystack.
"""

from litm.integrations.haystack import LitmCompressor

__all__ = ["LitmCompressor"]
