"""Render real job summaries (``summary.md``) to HTML with GitHub-like CSS and screenshot them with
headless Chromium: ``docs/summary-blocked.png`` and ``docs/summary-void.png``.

Usage (needs ``markdown`` — python-markdown — and ``chromium``)::

    verdict-gate demo --keep        # prints: kept /tmp/verdict-gate-demo-XXXX
    python docs/screenshots.py /tmp/verdict-gate-demo-XXXX/evidence

It takes ``new-tax-failure`` (blocked) and ``edit-ledger`` (void) from the demo's evidence.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import markdown

CSS = """
body { font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
       font-size: 14px; line-height: 1.5; color: #1f2328; background: #f6f8fa; margin: 0; padding: 24px; }
.box { max-width: 1012px; margin: 0 auto; background: #fff; border: 1px solid #d1d9e0; border-radius: 6px; }
.box-header { padding: 12px 16px; border-bottom: 1px solid #d1d9e0; font-weight: 600; background: #f6f8fa;
              border-radius: 6px 6px 0 0; }
.markdown-body { padding: 16px 32px 24px; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin-top: 8px; }
h3 { font-size: 1.25em; margin-top: 24px; }
code { font-family: ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, monospace; font-size: 85%;
       background: rgba(175,184,193,.2); padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 12px 16px; border-radius: 6px; overflow: auto; font-size: 85%; }
pre code { background: none; padding: 0; font-size: 100%; }
table { border-collapse: collapse; margin: 16px 0; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; vertical-align: top; }
th { font-weight: 600; background: #f6f8fa; }
tr:nth-child(2n) td { background: #f6f8fa; }
details { margin: 4px 0; }
summary { cursor: pointer; }
"""


def render(summary_md: Path, title: str, open_first: bool) -> str:
    text = summary_md.read_text()
    # GitHub renders Markdown inside <details> after a blank line; python-markdown wants markdown="1".
    text = text.replace("<details>", '<details markdown="1">')
    body = markdown.markdown(text, extensions=["tables", "fenced_code", "md_in_html"])
    if open_first:  # show the blocks expanded, the way a reader would click them
        body = body.replace("<details>", "<details open>")
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{CSS}</style></head><body>"
            f"<div class='box'><div class='box-header'>{html.escape(title)}</div>"
            f"<div class='markdown-body'>{body}</div></div></body></html>")


def shoot(page: Path, png: Path, height: int) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--hide-scrollbars", f"--user-data-dir={profile}", f"--screenshot={png}",
                        f"--window-size=1100,{height}", page.as_uri()],
                       check=True, capture_output=True, timeout=120)


def main(evidence: Path) -> None:
    docs = Path(__file__).resolve().parent
    shots = [("new-tax-failure", "summary-blocked.png", "gate / verdict-gate summary — blocked run", True, 1340),
             ("edit-ledger", "summary-void.png", "gate / verdict-gate summary — void run", False, 400)]
    with tempfile.TemporaryDirectory() as tmp:
        for name, png, title, open_first, height in shots:
            page = Path(tmp) / f"{name}.html"
            page.write_text(render(evidence / name / "summary.md", title, open_first))
            shoot(page, docs / png, height)
            print(f"wrote {docs / png}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
