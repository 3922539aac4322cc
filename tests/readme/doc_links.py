#!/usr/bin/env python3
"""Checks the links of README.md, docs/*.md and bench/RESULTS.md, so no page is an orphan and no
link points nowhere.

- Every docs/*.md is linked from README.md (a reader who starts there reaches every page).
- Every relative link `[text](path)` or `[text](path#anchor)` in these pages names a file or
  folder that exists, relative to the page.
- Every `#anchor` of a link to a .md page (or of a same-page `#anchor`) is a heading of that page,
  as GitHub makes anchors of headings: lower case, spaces to '-', punctuation other than '-' and
  '_' dropped, a repeated heading's anchor suffixed -1, -2, ...
Links with a scheme (https:, mailto:) are not followed. Code spans and fenced blocks are skipped.

    doc_links.py SOURCE_DIR
"""
import glob
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose_lines(path):
    """(line number, text) of the lines outside fenced blocks, with code spans removed."""
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", "", line)


def anchors(path):
    """The anchors GitHub gives the headings of a markdown file."""
    seen = {}
    out = set()
    fenced = False
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        text = m.group(1).strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text, flags=re.UNICODE).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def main():
    source = os.path.abspath(sys.argv[1])
    docs = sorted(glob.glob(os.path.join(source, "docs", "*.md")))
    pages = [os.path.join(source, "README.md")] + docs
    results = os.path.join(source, "bench", "RESULTS.md")
    if os.path.exists(results):
        pages.append(results)
    failures = []
    readme_targets = set()
    for page in pages:
        name = os.path.relpath(page, source)
        for number, text in prose_lines(page):
            for target in LINK.findall(text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                path, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if page.endswith("README.md") and os.path.dirname(page) == source:
                    readme_targets.add(resolved)
                if not os.path.exists(resolved):
                    failures.append(f"{name}:{number}: link to {target}: {path} does not exist")
                    continue
                if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                    failures.append(f"{name}:{number}: link to {target}: "
                                    f"{os.path.relpath(resolved, source)} has no heading #{anchor}")
    for doc in docs:
        if doc not in readme_targets:
            failures.append(f"README.md: no link to {os.path.relpath(doc, source)}")
    if not docs:
        failures.append("docs/: no page")
    for failure in failures:
        print(failure, file=sys.stderr)
    print(f"{len(pages)} pages checked, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
