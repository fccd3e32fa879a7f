#!/usr/bin/env python3
"""The documentation's code blocks and links, for the tests that run them (test_docs.sh and the
suites that read a named block). README.md and docs/ are Markdown, the reference pages
docs/reference/*.adoc AsciiDoc.

A block may be marked by an HTML comment (Markdown) or a // comment (AsciiDoc) on the line right
before its fence:
  <!-- not run: REASON -->        a command block no test runs, and why (keep these few)
  <!-- recipe:NAME -->             a block another test reads by NAME (doc_block in docs.sh)
  <!-- file: PATH -->             the reader saves the block as PATH: the page's test writes it
  <!-- run: binfmt-namespace -->  run as root of a user namespace with a private binfmt_misc
Command blocks are ```sh, ```bash, ```shell and ```console (Markdown), [source,sh] and
[source,console] (AsciiDoc); an unmarked one runs in its page's part of integration.docs.

  docs.py block FILE NAME              print the block marked recipe:NAME
  docs.py script FILE [PREFIX]         a bash script running FILE's blocks in order; with PREFIX,
                                       /usr/local in them is PREFIX (the test's install)
  docs.py coverage ROOT PAGE...        every command block of ROOT's docs is run by a page
                                       script (PAGE...), marked not run with a reason, or a
                                       recipe a test reads; every recipe is read by a test
  docs.py links ROOT                   relative links and anchors of README.md and docs/ resolve
  docs.py ci-jobs FILE                 a bash script running the jobs of a CI file (GitHub
                                       workflow, .gitlab-ci.yml, Jenkinsfile) in order
"""
import os
import re
import shlex
import sys

COMMAND_LANGS = {"sh", "bash", "shell", "console"}
EOF = "__EMURUN_DOC_EOF__"


class Block:
    def __init__(self, path, line, lang, text, marker):
        self.path, self.line, self.lang, self.text, self.marker = path, line, lang, text, marker

    @property
    def is_command(self):
        return self.lang in COMMAND_LANGS

    def where(self):
        return "%s:%d" % (self.path, self.line)


def marker_of(line):
    m = re.fullmatch(r"\s*(?:<!--|//)\s*((?:not run|recipe|file|run)\s*:.*?)\s*(?:-->)?\s*", line)
    return m.group(1) if m else None


def blocks(path):
    """The fenced blocks of a Markdown or AsciiDoc file, with their markers."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out = []
    i = 0
    adoc = path.endswith(".adoc")
    while i < len(lines):
        line = lines[i]
        if not adoc and line.startswith("```"):
            lang = line[3:].strip()
            start = i
            i += 1
            body = []
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            marker = marker_of(lines[start - 1]) if start > 0 else None
            out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", marker))
        elif adoc and line == "----":
            start = i
            style = lines[i - 1] if i > 0 else ""
            m = re.fullmatch(r"\[source,\s*(\w+)\]", style.strip())
            lang = m.group(1) if m else ""
            i += 1
            body = []
            while i < len(lines) and lines[i] != "----":
                body.append(lines[i])
                i += 1
            marker = marker_of(lines[start - 2]) if m and start >= 2 else None
            out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", marker))
        i += 1
    return out


def doc_files(root, top=("README.md",)):
    files = [os.path.join(root, n) for n in top]
    for d, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.join(d, n) for n in sorted(names) if n.endswith((".md", ".adoc"))]
    return sorted(files)


def console_commands(text):
    """The commands of a console block, each with the exit status its output shows (the line
    after a following `$ echo $?`), else 0."""
    lines = text.split("\n")
    entries = []  # [command, its output lines]
    i = 0
    while i < len(lines):
        if lines[i].startswith("$ "):
            cmd = lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd + "\n" + lines[i]
            entries.append([cmd, []])
        elif entries:
            entries[-1][1].append(lines[i])
        i += 1
    out = []
    for k, (cmd, _) in enumerate(entries):
        if cmd.strip() == "echo $?":
            continue
        status = 0
        if k + 1 < len(entries) and entries[k + 1][0].strip() == "echo $?":
            status = int(entries[k + 1][1][0].strip())
        out.append((cmd, status))
    return out


def script(path, prefix=None):
    """Bash that runs the page's blocks as a reader would, one shell, in order. It prints
    '::block WHERE' before each block and '::notrun WHERE REASON' for those not run."""
    out = ["# Generated by docs.py from %s" % path, "set -eo pipefail"]

    def text_of(b):
        t = b.text
        if prefix:
            t = t.replace("/usr/local", prefix)
        return t

    for b in blocks(path):
        m = b.marker or ""
        if m.startswith("not run"):
            if b.is_command:
                out.append("echo %s" % shlex.quote("::notrun %s %s" % (b.where(), m[len("not run:"):].strip())))
            continue
        if m.startswith("recipe"):
            continue
        if m.startswith("file:"):
            name = m[len("file:"):].strip()
            out.append("echo %s" % shlex.quote("::block %s (saved as %s)" % (b.where(), name)))
            out.append('mkdir -p "$(dirname %s)"' % shlex.quote(name))
            out.append("cat >%s <<'%s'\n%s%s" % (shlex.quote(name), EOF, text_of(b), EOF))
            continue
        if not b.is_command:
            continue
        out.append("echo %s" % shlex.quote("::block %s" % b.where()))
        if m == "run: binfmt-namespace":
            out.append("cat >.emurun-doc-block.sh <<'%s'\nset -eo pipefail\n%s%s" % (EOF, text_of(b), EOF))
            out.append("doc_in_binfmt_namespace .emurun-doc-block.sh")
            continue
        if m:
            raise SystemExit("%s: unknown marker '%s'" % (b.where(), m))
        if b.lang == "console":
            for cmd, status in console_commands(text_of(b)):
                if status == 0:
                    out.append(cmd)
                else:
                    out.append("__rc=0; %s || __rc=$?" % cmd)
                    out.append('[ "$__rc" = %d ] || { echo "expected exit %d, got $__rc: %s"; false; }'
                               % (status, status, cmd.replace('"', "'")))
        else:
            out.append(text_of(b).rstrip("\n"))
    out.append("echo ::done")
    return "\n".join(out) + "\n"


def find_block(path, name):
    for b in blocks(path):
        if b.marker == "recipe:" + name or b.marker == "recipe: " + name:
            return b
    return None


def coverage(root, pages):
    problems, notrun = [], []
    tests_dir = os.path.join(root, "tests", "integration")
    sources = ""
    for n in sorted(os.listdir(tests_dir)):
        if n.endswith(".sh"):
            sources += open(os.path.join(tests_dir, n), encoding="utf-8").read()
    run_pages = {os.path.normpath(os.path.join(root, p)) for p in pages}
    for f in doc_files(root):
        rel = os.path.relpath(f, root)
        for b in blocks(f):
            m = b.marker or ""
            where = "%s:%d" % (rel, b.line)
            if m.startswith("recipe"):
                name = m.split(":", 1)[1].strip()
                if not re.search(r"doc_block [^\n]*\b%s\b|recipe %s\b" % (re.escape(name), re.escape(name)), sources):
                    problems.append("%s: recipe:%s is read by no test (doc_block FILE %s)" % (where, name, name))
            elif m.startswith("not run"):
                reason = m[len("not run:"):].strip()
                if not reason:
                    problems.append("%s: 'not run' without a reason" % where)
                elif b.is_command:
                    notrun.append("%s: %s" % (where, reason))
            elif b.is_command or m.startswith("file:") or m.startswith("run:"):
                if os.path.normpath(f) not in run_pages:
                    problems.append("%s: a %s block of a page integration.docs does not run "
                                    "(add a part for %s, or mark the block)" % (where, b.lang or m, rel))
    for line in notrun:
        print("not run: " + line)
    for p in problems:
        print("problem: " + p)
    return 1 if problems else 0


def slug(text):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link: its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    found = set()
    if path.endswith(".adoc"):
        found.update(re.findall(r"\[\[([\w\-]+)(?:,[^\]]*)?\]\]", text))
        found.update(re.findall(r"^\[#([\w\-]+)\]", text, re.M))
        return found
    seen = {}
    fence = False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else "%s-%d" % (s, n))
        found.update(re.findall(r'<a (?:id|name)="([^"]+)"', line))
    return found


def links(root):
    problems = []
    checked = 0
    top = ("README.md", "ARCHITECTURE.md", "CONTRIBUTING.md", "NEWS.md")
    for f in doc_files(root, top):
        if not f.endswith(".md"):
            continue
        text = open(f, encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # code is not links
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            checked += 1
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, root)
            if not os.path.exists(dest):
                problems.append("%s: link to %s: no such file" % (rel, target))
                continue
            if anchor and os.path.isfile(dest) and anchor not in anchors(dest):
                problems.append("%s: link to %s: no anchor '%s' in %s" %
                                (rel, target, anchor, os.path.relpath(dest, root)))
    for p in problems:
        print("problem: " + p)
    print("%d relative links checked" % checked)
    return 1 if problems else 0


def ci_jobs(path):
    """Bash that runs the jobs of a CI file here, in order: what each job's shell lines do,
    with the files the jobs pass on left in place (one working directory)."""
    out = ["set -eo pipefail"]
    name = os.path.basename(path)
    if name == "Jenkinsfile":
        text = open(path, encoding="utf-8").read()
        for cmd in re.findall(r"\bsh '([^']*)'", text):
            out += ["echo %s" % shlex.quote("::job-line " + cmd), cmd]
        out.append("echo ::done")
        for report in re.findall(r"\bjunit '([^']*)'", text):
            out.append("test -s %s" % shlex.quote(report))
        return "\n".join(out) + "\n"
    import yaml  # python3-yaml
    doc = yaml.safe_load(open(path, encoding="utf-8"))
    if "jobs" in doc:  # a GitHub workflow
        for job, spec in doc["jobs"].items():
            out.append("echo %s" % shlex.quote("::job " + job))
            for step in spec["steps"]:
                uses = step.get("uses", "")
                if uses:
                    out.append("echo %s" % shlex.quote("::job-line uses: " + uses))
                if "run" in step:
                    out += ["echo %s" % shlex.quote("::job-line " + step["run"]), step["run"]]
                elif uses.startswith("actions/checkout"):
                    pass  # the working directory is the checkout
                elif uses == "OWNER/emurun@REF":
                    inputs = step.get("with", {})
                    if "pipeline" in inputs:
                        env = "EMURUN_PIPELINE=%s EMURUN_ARGS=%s" % (
                            shlex.quote(inputs["pipeline"]), shlex.quote(inputs.get("args", "")))
                        out.append('%s "$EMURUN_SOURCE_DIR/tools/action/pipeline.sh"' % env)
                    else:
                        out.append('"$EMURUN_SOURCE_DIR/tools/action/doctor.sh"')
                elif uses.startswith("actions/upload-artifact"):
                    for p in str(step["with"]["path"]).split():
                        out.append("test -e %s" % shlex.quote(p))
                else:
                    raise SystemExit("%s: step %s: no stand-in for it here" % (path, uses))
        out.append("echo ::done")
        return "\n".join(out) + "\n"
    # .gitlab-ci.yml: the jobs of each stage in order, default before_script first.
    before = doc.get("default", {}).get("before_script", [])
    for stage in doc["stages"]:
        for job, spec in doc.items():
            if not isinstance(spec, dict) or spec.get("stage") != stage:
                continue
            out.append("echo %s" % shlex.quote("::job " + job))
            for line in spec.get("before_script", before) + spec["script"]:
                out += ["echo %s" % shlex.quote("::job-line " + line), line]
            arts = spec.get("artifacts", {})
            for p in arts.get("paths", []) + list(arts.get("reports", {}).values()):
                out.append("test -e %s" % shlex.quote(p))
    out.append("echo ::done")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) >= 3 and argv[0] == "block":
        b = find_block(argv[1], argv[2])
        if not b:
            print("%s: no block marked recipe:%s" % (argv[1], argv[2]), file=sys.stderr)
            return 1
        sys.stdout.write(b.text)
        return 0
    if len(argv) in (2, 3) and argv[0] == "script":
        sys.stdout.write(script(argv[1], argv[2] if len(argv) == 3 else None))
        return 0
    if len(argv) >= 2 and argv[0] == "coverage":
        return coverage(argv[1], argv[2:])
    if len(argv) == 2 and argv[0] == "links":
        return links(argv[1])
    if len(argv) == 2 and argv[0] == "ci-jobs":
        sys.stdout.write(ci_jobs(argv[1]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
