#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The README's synopsis of each command names every option the command takes, and no option it does not.

    check_synopsis.py README.md p3s p3s-replay

A synopsis is a line of a ```sh block that starts with the command ("p3s model", or "p3s-replay" after a launcher)
and the indented lines after it. The options are read off each command's --help.
"""
import re
import subprocess
import sys

OPTION = re.compile(r"^\s+(?:(-\w),)?(--[a-z][a-z0-9-]*)")
MENTION = re.compile(r"(?<![\w-])(--?[a-z][a-z0-9-]*)")


def options(cmd):
    """{long option: its short form or None} from the command's --help."""
    out = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=60).stdout
    found = {m.group(2): m.group(1) for line in out.splitlines() if (m := OPTION.match(line))}
    found.pop("--help", None)
    return found


def synopses(readme):
    """Each command's synopsis text, from the README's sh blocks: {command words: text}."""
    out = {}
    block = False
    current = None
    for line in open(readme, encoding="utf-8"):
        if line.startswith("```"):
            block = line.strip() == "```sh"
            current = None
            continue
        if not block:
            continue
        words = line.split()
        if line[:1].isspace() and current is not None:
            out[current] += " " + line.strip()
            continue
        current = None
        if len(words) >= 2 and words[0] == "p3s" and not words[1].startswith("-"):
            current = "p3s " + words[1]
        elif "p3s-replay" in words:
            current = "p3s-replay"
        if current is not None:
            text = line.split("#")[0]
            if current == "p3s-replay":  # the launcher's own options come before it
                text = text[text.index("p3s-replay"):]
            out[current] = out.get(current, "") + " " + text.strip()
    return out


def main():
    readme, p3s, replay = sys.argv[1:4]
    written = synopses(readme)
    commands = {f"p3s {sub}": [p3s, sub] for sub in ("record", "analyze", "model", "predict", "curve", "scale", "report", "simulate",
                                                        "calibrate")}
    commands["p3s-replay"] = [replay]
    problems = []
    for name, cmd in commands.items():
        if name not in written:
            problems.append(f"README.md has no synopsis of `{name}`")
            continue
        mentioned = set(MENTION.findall(written[name]))
        taken = options(cmd)
        for o, short in sorted(taken.items()):
            if o not in mentioned and short not in mentioned:
                problems.append(f"`{name}` takes {o}, which its synopsis in README.md does not name")
        for o in sorted(x for x in mentioned - set(taken) if x.startswith("--")):
            problems.append(f"the synopsis of `{name}` in README.md names {o}, which `{name}` does not take")
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{len(commands)} synopses name every option of their command")


if __name__ == "__main__":
    main()
