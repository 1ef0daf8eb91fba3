#!/usr/bin/env python3
"""Reads s3-tests JUnit reports (written by scripts/s3-tests.sh).

  s3-tests-compare.py RUN.xml [--aws-set=FILE]
                                       passes and failures per family, and
                                       the passes among FILE's test names
  s3-tests-compare.py A.xml B.xml      tests that pass in A and fail in B,
                                       by family, then their causes in B
                                       (the first "E " line of each failure)
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET

FAMILIES = [("object_lock", "lock"), ("versioning|version", "versioning"), ("post_object", "browser POST"),
            ("tagging|tags", "tagging"), ("policy", "bucket policy"), ("cors", "cors"), ("lifecycle", "lifecycle"),
            ("acl|grant|ownership", "acl"), ("checksum", "checksum"), ("multipart|_mp_|upload_part", "multipart"),
            ("encoding", "encoding"), ("if_|condition|_match", "conditional"), ("attributes", "attributes")]


def family(name):
    return next((label for pat, label in FAMILIES if re.search(pat, name)), "other")


def load(path):
    """Maps test name to (passed, cause). A teardown error (the suite cleans
    its buckets with ListObjectVersions) does not undo what the test itself
    asserted, so it counts as a pass. pytest writes a second testcase with
    the same name for a teardown error; a failure in either one is kept."""
    runs = {}
    for tc in ET.parse(path).iter("testcase"):
        if not runs.get(tc.get("name"), (True,))[0]:
            continue
        bad = [c for c in tc if c.tag in ("failure", "skipped") or
               (c.tag == "error" and not (c.get("message") or "").startswith("failed on teardown"))]
        cause = ""
        if bad:
            text = bad[0].text or ""
            lines = [l[1:].strip() for l in text.splitlines() if l.startswith("E ")]
            cause = lines[0] if lines else (bad[0].get("message") or bad[0].tag).splitlines()[0]
            cause = f"{bad[0].tag}: {cause}"[:160]
        runs[tc.get("name")] = (not bad, cause)
    return runs


def summary(path, aws_set=None):
    runs = load(path)
    count = collections.defaultdict(lambda: [0, 0])
    for name, (ok, _) in runs.items():
        count[family(name)][0 if ok else 1] += 1
    print("family            pass  fail")
    for f in sorted(count):
        print(f"{f:16} {count[f][0]:5} {count[f][1]:5}")
    print(f"{'all':16} {sum(c[0] for c in count.values()):5} {sum(c[1] for c in count.values()):5}")
    if aws_set:
        names = [l.strip() for l in open(aws_set) if l.strip()]
        passed = sum(runs.get(n, (False,))[0] for n in names)
        print(f"AWS set (test_s3.py, not fails_on_aws nor fails_on_rgw): {passed} of {len(names)} pass")


def compare(path_a, path_b, causes=15):
    a, b = load(path_a), load(path_b)
    lost = sorted(n for n, (ok, _) in a.items() if ok and not b.get(n, (False, ""))[0])
    print(f"pass in A: {sum(ok for ok, _ in a.values())}, pass in B: {sum(ok for ok, _ in b.values())}, "
          f"pass in A and not in B: {len(lost)}  (A={path_a}, B={path_b})")
    by_family = collections.defaultdict(list)
    for n in lost:
        by_family[family(n)].append(n)
    for f in sorted(by_family, key=lambda f: -len(by_family[f])):
        print(f"\n{f} ({len(by_family[f])})")
        for n in by_family[f]:
            print(f"  {n}")
    why = collections.Counter(b[n][1] if n in b else "not run in B" for n in lost)
    print(f"\ntop causes in B (first E line), {len(why)} distinct")
    for cause, k in why.most_common(causes):
        print(f"{k:5}  {cause}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2].startswith("--aws-set="):
        summary(sys.argv[1], sys.argv[2].split("=", 1)[1])
    elif len(sys.argv) == 2:
        summary(sys.argv[1])
    elif len(sys.argv) == 3:
        compare(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
