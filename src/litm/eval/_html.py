"""Pieces of the offline HTML reports (probe and benchmark): one stylesheet, escaping, inlined plots, colours.

Reports are single files that open offline: no scripts, plots inlined as base64 PNG.

Example:
    >>> esc("<b>"), colour(1.0)
    ('&lt;b&gt;', 'rgb(140,250,160)')
"""

from __future__ import annotations

import base64
import html
from pathlib import Path

__all__ = ["CSS", "colour", "esc", "img_tag"]

CSS = """
body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.box{background:#f7f7f9;border:1px solid #e2e2e8;padding:.6em 1em}
code{background:#f1f1f1;padding:0 3px}.small{color:#666;font-size:.9em}img{max-width:100%}
"""


def esc(x: object) -> str:
    return html.escape(str(x))


def img_tag(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{esc(path.stem)}" src="data:image/png;base64,{data}">'


def colour(acc: float) -> str:
    # Red (0) to green (1) through pale yellow, light enough to read black text on.
    r = int(250 - 110 * max(acc - 0.5, 0) * 2)
    g = int(170 + 80 * min(acc * 2, 1))
    return f"rgb({r},{g},160)"
