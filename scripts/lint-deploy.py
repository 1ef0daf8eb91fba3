#!/usr/bin/env python3
"""Checks what the Dockerfile and the examples under deploy/ promise, with
no container engine and no cluster at hand (scripts/lint-deploy.sh runs it),
and that promtool parses every expression of the Grafana dashboard.
Prints every problem found and exits 1 if there is one."""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

problems = []


def check(ok, msg):
    if not ok:
        problems.append(msg)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- Flags s3seal knows, so that every S3SEAL_* variable used is a real one.
src = "".join(read(p) for p in glob.glob("cmd/s3seal/*.go") if not p.endswith("_test.go"))
flags = set(re.findall(r'(?:fs\.\w+Var|str)\(&[\w.]+, "([a-z0-9-]+)"', src))
known_env = {"S3SEAL_" + f.upper().replace("-", "_") for f in flags}
check("backend-endpoint" in flags, "cmd/s3seal: found no flags (the pattern of this check is out of date)")
SECRET_FLAGS = ("--key", "--secret-key", "--backend-secret-key", "--lfs-api-key")
SECRET_VALUE_ENV = {"S3SEAL_KEY", "S3SEAL_SECRET_KEY", "S3SEAL_BACKEND_SECRET_KEY", "S3SEAL_LFS_API_KEY"}


def check_env(where, names):
    for n in names:
        if n.startswith("S3SEAL_"):
            check(n in known_env, f"{where}: {n} is not a variable s3seal reads")


def check_args(where, args):
    for a in args or []:
        for f in SECRET_FLAGS:
            check(not (a == f or a.startswith(f + "=")), f"{where}: secret flag {f} on a command line")


# --- Dockerfile
gomod = re.search(r"^go (\S+)$", read("go.mod"), re.M).group(1)
lines, cur = [], ""
for raw in read("Dockerfile").splitlines():
    if raw.strip().startswith("#") and not cur:
        continue
    cur += raw.rstrip("\\").strip() + " "
    if not raw.rstrip().endswith("\\"):
        if cur.strip():
            lines.append(cur.strip())
        cur = ""
args, stages = {}, []
for ln in lines:
    inst, _, rest = ln.partition(" ")
    inst = inst.upper()
    if inst == "ARG" and not stages:
        k, _, v = rest.partition("=")
        args[k] = v
    elif inst == "FROM":
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), rest.split()[0])
        check(":" in image.rsplit("/", 1)[-1] and not image.endswith(":latest"), f"Dockerfile: FROM {image} is not pinned to a tag")
        stages.append({"image": image, "lines": []})
    elif stages:
        stages[-1]["lines"].append((inst, rest))
check(any(s["image"] == f"golang:{gomod}-bookworm" for s in stages), f"Dockerfile: no build stage FROM golang:{gomod}-bookworm (go.mod says go {gomod})")
build = [r for s in stages for i, r in s["lines"] if i == "RUN" and "go build" in r]
check(build and "-trimpath" in build[0], "Dockerfile: go build without -trimpath")
# The image has no .git: s3seal version reports what the build arguments
# VERSION and COMMIT stamp in (cmd/s3seal/version.go).
build_args = {r.partition("=")[0] for s in stages for i, r in s["lines"] if i == "ARG"}
for var, arg in (("main.version", "VERSION"), ("main.commit", "COMMIT")):
    check(arg in build_args and build and f"-X {var}=${{{arg}}}" in build[0],
          f"Dockerfile: go build does not stamp {var} from the build argument {arg} (-ldflags -X {var}=${{{arg}}})")
check(any(i == "ENV" and "CGO_ENABLED=0" in r for s in stages for i, r in s["lines"]) or (build and "CGO_ENABLED=0" in build[0]),
      "Dockerfile: go build without CGO_ENABLED=0")
final = dict()
for inst, rest in stages[-1]["lines"] if stages else []:
    final.setdefault(inst, []).append(rest)
user = (final.get("USER") or ["root"])[-1].split(":")[0]
check(user not in ("root", "0"), "Dockerfile: the image runs as root")
check(any(f"--chown={user}" in r and r.split()[-1] == "/data" for r in final.get("COPY", [])), f"Dockerfile: /data is not owned by {user}")
check(any("/data" in r for r in final.get("VOLUME", [])), "Dockerfile: /data is not a volume")
exposed = " ".join(final.get("EXPOSE", [])).split()
check("7070" in exposed and "7071" in exposed, "Dockerfile: EXPOSE 7070 7071 missing")
hc = " ".join(final.get("HEALTHCHECK", []))
check("CMD" in hc and "127.0.0.1:7070/healthz" in hc, "Dockerfile: no HEALTHCHECK on http://127.0.0.1:7070/healthz")
m = re.search(r'CMD \[\s*"([^"]+)"', hc)
check(m and any(r.split()[-1] == m.group(1) for r in final.get("COPY", [])), "Dockerfile: the HEALTHCHECK's program is not copied into the image")
for inst in ("ENTRYPOINT", "CMD"):
    for r in final.get(inst, []):
        check_args(f"Dockerfile {inst}", re.findall(r'"([^"]*)"', r))
env_names = re.findall(r"(\w+)=", " ".join(final.get("ENV", [])))
check_env("Dockerfile ENV", env_names)
check(not SECRET_VALUE_ENV & set(env_names), "Dockerfile: a secret as ENV")
check(".git" in read(".dockerignore").split(), ".dockerignore: .git is not excluded")

# --- deploy/compose.yaml
compose = yaml.safe_load(read("deploy/compose.yaml"))
svc = compose["services"]["s3seal"]
env = svc.get("environment", {})
check_env("compose s3seal", env)
check(not SECRET_VALUE_ENV & set(env), "compose s3seal: a secret value in the environment, not a file")
check_args("compose s3seal", svc.get("command"))
check("/readyz" in " ".join(svc.get("healthcheck", {}).get("test", [])), "compose s3seal: healthcheck is not on /readyz")
check(svc.get("read_only") is True, "compose s3seal: root filesystem not read-only")
for name, s in compose["services"].items():
    img = s.get("image", "")
    check(s.get("build") or (":" in img and not img.endswith(":latest")), f"compose {name}: image {img!r} not pinned")
    for dep, cond in (s.get("depends_on") or {}).items():
        check(dep in compose["services"], f"compose {name}: depends on unknown {dep}")
for name, sec in compose.get("secrets", {}).items():
    check("file" in sec, f"compose secret {name}: not from a file")
    check(os.path.basename(sec.get("file", "")) in read("deploy/gen-secrets.sh"), f"compose secret {name}: deploy/gen-secrets.sh does not write it")
files = [v for k, v in env.items() if k.endswith("_FILE")]
mounts = [v.split(":")[1] for v in svc.get("volumes", [])]
for f in files:
    check(any(f.startswith(m + "/") for m in mounts), f"compose s3seal: {f} is not on a mounted volume")

# --- deploy/kubernetes
kdir = "deploy/kubernetes"
docs = {}
for p in sorted(glob.glob(kdir + "/*.yaml")):
    for d in yaml.safe_load_all(read(p)):
        if d and d.get("kind") != "Kustomization":
            docs[d["kind"]] = d
kust = yaml.safe_load(read(kdir + "/kustomization.yaml"))
check(sorted(kust["resources"]) == sorted(os.path.basename(p) for p in glob.glob(kdir + "/*.yaml") if not p.endswith(("kustomization.yaml", "secret.yaml"))),
      "kubernetes: kustomization.yaml does not list every manifest but secret.yaml")
for kind in ("Deployment", "Secret", "Service", "PodDisruptionBudget"):
    check(kind in docs, f"kubernetes: no {kind}")
dep = docs.get("Deployment", {})
pod = dep.get("spec", {}).get("template", {}).get("spec", {})
labels = dep.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
psc = pod.get("securityContext", {})
check(psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) != 0, "kubernetes: pod not runAsNonRoot with a non-zero runAsUser")
vols = {v["name"]: v for v in pod.get("volumes", [])}
for v in vols.values():
    if "secret" in v:
        check(v["secret"].get("defaultMode") == 0o400, f"kubernetes: secret volume {v['name']} without defaultMode 0400")
main = [c for c in pod.get("containers", []) if c["name"] == "s3seal"]
check(main, "kubernetes: no container named s3seal")
for c in pod.get("containers", []) + pod.get("initContainers", []):
    sc = c.get("securityContext", {})
    check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False,
          f"kubernetes: container {c['name']} without a read-only root and allowPrivilegeEscalation false")
    check(c.get("resources", {}).get("requests") and c.get("resources", {}).get("limits"), f"kubernetes: container {c['name']} without requests and limits")
    check(":" in c.get("image", "") and not c["image"].endswith(":latest") or c["name"] == "s3seal", f"kubernetes: image of {c['name']} not pinned")
for c in main:
    check(c.get("readinessProbe", {}).get("httpGet", {}).get("path") == "/readyz", "kubernetes: readiness probe not on /readyz")
    check(c.get("livenessProbe", {}).get("httpGet", {}).get("path") == "/healthz", "kubernetes: liveness probe not on /healthz")
    names = [e["name"] for e in c.get("env", [])]
    check_env("kubernetes s3seal", names)
    check(not SECRET_VALUE_ENV & set(names), "kubernetes s3seal: a secret in the environment, not a file")
    check_args("kubernetes s3seal", (c.get("args") or []) + (c.get("command") or []))
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
    check("emptyDir" in vols.get(mounts.get("/data", ""), {}) or "persistentVolumeClaim" in vols.get(mounts.get("/data", ""), {}),
          "kubernetes: /data (the spool) is not an emptyDir or PVC")
    for e in c.get("env", []):
        if e["name"].endswith("_FILE"):
            check(any(e.get("value", "").startswith(m + "/") for m in mounts), f"kubernetes: {e['value']} is not on a mounted volume")
for kind in ("Service", "PodDisruptionBudget"):
    sel = docs.get(kind, {}).get("spec", {}).get("selector", {})
    sel = sel.get("matchLabels", sel)
    check(sel and all(labels.get(k) == v for k, v in sel.items()), f"kubernetes: the {kind}'s selector does not match the pods")

# --- deploy/grafana: every expression of the dashboard is PromQL that
# promtool parses (its interval variables replaced by durations, the
# label_values of its variables by their series), given as recording rules.
# cmd/s3seal/monitoring_test.go checks the series and labels they name.
dash = json.loads(read("deploy/grafana/s3seal-dashboard.json"))
exprs = []


def panel_exprs(panels):
    for p in panels:
        panel_exprs(p.get("panels", []))
        exprs.extend(t["expr"] for t in p.get("targets", []) if t.get("expr"))


panel_exprs(dash.get("panels", []))
for v in dash.get("templating", {}).get("list", []):
    if v.get("type") == "query":
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"label_values\((.+),\s*\w+\)", q)
        check(m, f"grafana: variable {v.get('name')}: {q!r} is not label_values(series, label)")
        if m:
            exprs.append(m.group(1))
check(len(exprs) >= 30, f"grafana: only {len(exprs)} expressions found in the dashboard")
for var, dur in (("$__rate_interval", "5m"), ("$__interval", "1m"), ("$__range", "1h")):
    exprs = [e.replace(var, dur) for e in exprs]
rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    yaml.safe_dump(rules, f)
out = subprocess.run(["promtool", "check", "rules", f.name], capture_output=True, text=True)
os.unlink(f.name)
check(out.returncode == 0, f"grafana: promtool does not parse the dashboard's expressions:\n{out.stdout}{out.stderr}")

for p in problems:
    print("lint-deploy:", p, file=sys.stderr)
print(f"lint-deploy: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
