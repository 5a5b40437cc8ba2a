"""Reading a folder: which files count, what each format yields, titles and errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from litm.errors import InputFormatError
from litm.retrieve._corpus import read_file, scan
from litm.retrieve._formats import read_bytes


def one(data: bytes | str, name: str):  # type: ignore[no-untyped-def]
    raw = data.encode("utf-8") if isinstance(data, str) else data
    [text] = read_bytes(raw, name)
    return text


def test_plain_text_keeps_its_bytes_as_text_and_is_titled_by_its_name() -> None:
    t = one("\ufeffLine one.\r\nLine two.\r\n", "notes/todo.txt")
    assert (t.key, t.source, t.title, t.text) == ("notes/todo.txt", "notes/todo.txt", "todo", "Line one.\nLine two.\n")


def test_undecodable_bytes_do_not_fail_the_file() -> None:
    assert one(b"caf\xe9 ok", "a.txt").text == "caf\ufffd ok"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Intro text.\n\n## Install\n\nRun pip.", "Install"),
        ("Guide\n=====\n\n# Later heading", "Guide"),
        ("no heading at all", "readme"),
    ],
)
def test_markdown_title_is_the_first_heading(text: str, title: str) -> None:
    assert one(text, "readme.md").title == title


def test_rst_title_is_the_underlined_line() -> None:
    assert one("Deploying\n---------\n\nUse the script.\n", "ops/deploy.rst").title == "Deploying"


def test_html_yields_visible_text_in_paragraphs() -> None:
    page = (
        "<html><head><title>VPN &amp; you</title><style>p {color: red}</style></head>"
        "<body><h1>Setup</h1><p>Install   the\nclient.</p><script>alert(1)</script><ul><li>Sign in</li></ul></body>"
    )
    t = one(page, "vpn.html")
    assert t.title == "VPN & you"
    assert t.text == "Setup\n\nInstall the client.\n\nSign in"


def test_jsonl_records_become_texts_with_their_fields() -> None:
    lines = [
        {"id": "q1", "text": "Paris is in France.", "title": "Paris", "source": "https://ex.org/paris", "lang": "en"},
        {"content": "No id here."},
    ]
    data = "\n".join(json.dumps(x) for x in lines) + "\n\n"
    a, b = read_bytes(data.encode(), "kb/faq.jsonl")
    assert (a.key, a.source, a.title, a.metadata["lang"], a.metadata["line"]) == (
        "kb/faq.jsonl#q1", "https://ex.org/paris", "Paris", "en", 1,
    )
    assert (b.key, b.source, b.text) == ("kb/faq.jsonl#doc-2", "kb/faq.jsonl", "No id here.")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"text": "ok"}\n{not json}\n', "faq.jsonl:2"),
        ('{"title": "no text"}\n', "faq.jsonl:1"),
        ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', "id 'a' already used on line 1"),
    ],
)
def test_bad_jsonl_names_the_file_and_line(data: str, message: str) -> None:
    with pytest.raises(InputFormatError, match=message):
        read_bytes(data.encode(), "faq.jsonl")


def make_pdf(pages: list[str], title: str = "Handbook") -> bytes:
    """A minimal valid PDF, one Helvetica text line per page, with a correct cross-reference table."""
    n = len(pages)
    objects = {
        1: "<< /Type /Catalog /Pages 2 0 R >>",
        2: f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>",
        3: "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for i, line in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET"
        objects[4 + 2 * i] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {5 + 2 * i} 0 R "
            "/Resources << /Font << /F1 3 0 R >> >> >>"
        )
        objects[5 + 2 * i] = f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"
    info = 4 + 2 * n
    objects[info] = f"<< /Title ({title}) >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number in sorted(objects):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{objects[number]}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {info} 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_pdf_pages_are_extracted_with_their_start_offsets() -> None:
    t = one(make_pdf(["First page about keys.", "Second page about badges."]), "handbook.pdf")
    assert t.title == "Handbook"
    assert "First page about keys." in t.text and "Second page about badges." in t.text
    starts = t.metadata["page_starts"]
    assert starts[0] == 0 and t.text[starts[1] :].startswith("Second page")


def test_a_damaged_pdf_is_an_input_error_naming_it() -> None:
    with pytest.raises(InputFormatError, match=r"broken\.pdf"):
        read_bytes(b"%PDF-1.4\nthis is not a pdf", "broken.pdf")


def test_unsupported_suffix_is_refused() -> None:
    with pytest.raises(InputFormatError, match="unsupported file type"):
        read_bytes(b"x", "image.png")


def test_scan_lists_supported_files_sorted_and_skips_hidden_and_excluded(tmp_path: Path) -> None:
    for rel in ["b.md", "a/z.txt", "a/y.HTML", ".hidden.md", ".git/config.txt", "photo.png", "idx/chunks-1.jsonl"]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("text")
    found = scan(tmp_path, exclude=[tmp_path / "idx"])
    assert [f.key for f in found.files] == ["a/y.HTML", "a/z.txt", "b.md"]
    assert found.skipped == 1  # photo.png; hidden files are not counted as skipped
    digest, texts = read_file(found.files[-1])
    assert len(digest) == 64 and texts[0].text == "text"


def test_scan_of_a_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="not a folder"):
        scan(tmp_path / "absent")
