#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that no function of the stages is longer than a reader can hold: 80 lines, from the line of its header's
opening brace to its closing brace.

Usage: check_function_length.py SOURCE_DIR [--most N]

In the C++ sources of every library and of the CLI (tests, test apps and generated code left out), with comments
and string literals removed, a function is a brace block whose header ends with a parameter list: a function, a
member function, a constructor or a lambda (`) {`, `) const {`, `) -> T {`, `] {`); blocks of control statements
(if, for, while, switch, catch, do, else), namespaces, classes and initialisers are not functions. A function counts
the lines of the lambdas it holds. Exit 1, naming each function over the limit, when there is any.
"""
import os
import re
import sys

SCANNED = ("analyzer", "modeler", "cli", "common", "interpose", "replay", "vocabulary")
EXTENSIONS = (".c", ".h", ".cpp", ".hpp")
MOST_LINES = 80
CONTROL = re.compile(r'\b(?:if|for|while|switch|catch|do|else|try)\s*(?:\(|$)')
# What may stand between a parameter list and the body: qualifiers and a trailing return type. A constructor whose
# initialiser list ends with `)` counts as its header; one ending with a braced initialiser is not seen (a miss).
AFTER_PARAMETERS = re.compile(r'\)\s*(?:const\s*|noexcept\s*(?:\([^()]*\))?\s*|override\s*|final\s*|mutable\s*|'
                              r'&\s*|&&\s*|->\s*[\w:<>,\s*&]+?\s*)*$')


def blank_comments_and_strings(text):
    """Comments and literals replaced by spaces (newlines kept), so braces in them do not count."""
    def blank(m):
        return re.sub(r'[^\n]', ' ', m.group(0))
    pattern = r'R"(\w*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/'
    return re.sub(pattern, blank, text, flags=re.S)


def header_before(text, brace):
    """The text of the statement that a `{` at `brace` opens: back to the previous `;`, `{` or `}`, except that a
    lambda's capture list [..] and its parameters are kept."""
    start = brace
    depth = 0
    while start > 0:
        c = text[start - 1]
        if c in ')]':
            depth += 1
        elif c in '([':
            depth -= 1
            if depth < 0:  # the argument list a lambda is passed in
                break
        elif depth == 0 and c in ';{},':
            break
        start -= 1
    return text[start:brace]


def is_function(header):
    h = ' '.join(header.split())
    if not h:
        return False
    if CONTROL.search(h.split('(')[0] + '(') or re.match(r'^(?:else|do|try)\b', h):
        return False
    if re.search(r'\]\s*(?:\([^()]*(?:\([^()]*\)[^()]*)*\))?\s*(?:mutable\s*)?(?:->\s*[\w:<>,\s*&]+)?$', h):
        return True  # a lambda: [..] {, [..](..) {
    if re.search(r'\b(?:namespace|class|struct|union|enum)\b[^()]*$', h):
        return False
    if AFTER_PARAMETERS.search(h):
        return not re.search(r'=\s*[^=]*$', h.split('(')[0])  # `x = f(..) {` is no definition
    return False


def long_functions(path, most):
    with open(path, encoding='utf-8', errors='replace') as f:
        text = blank_comments_and_strings(f.read())
    out = []
    stack = []  # (offset of '{', is a function)
    for m in re.finditer(r'[{}]', text):
        if m.group(0) == '{':
            stack.append((m.start(), is_function(header_before(text, m.start()))))
            continue
        if not stack:
            continue
        start, function = stack.pop()
        if not function:
            continue
        first = text.count('\n', 0, start) + 1
        last = text.count('\n', 0, m.start()) + 1
        if last - first + 1 > most:
            name = ' '.join(header_before(text, start).split())[-90:]
            out.append((last - first + 1, first, name))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = argv[1]
    most = MOST_LINES
    if '--most' in argv:
        most = int(argv[argv.index('--most') + 1])
    found = []
    files = 0
    for top in SCANNED if os.path.isdir(os.path.join(root, SCANNED[0])) else ('.',):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith('build'))
            for name in sorted(filenames):
                if not name.endswith(EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                files += 1
                for lines, line, header in long_functions(path, most):
                    found.append(f'{os.path.relpath(path, root)}:{line}: {lines} lines: {header}')
    for f in found:
        print(f)
    print(f'{files} files checked, {len(found)} functions over {most} lines')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
