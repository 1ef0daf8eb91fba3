#!/usr/bin/env python3
"""Checks the Helm chart deploy/helm/s3seal against deploy/kubernetes/
(scripts/lint-deploy.sh runs it, after helm lint):

1. With its default values the chart renders what the kustomize files
   apply: the same replicas, grace period, pod and container security
   contexts, image, args, env (names and values), ports, probes,
   resources, volume mounts, init container, volumes, Service ports and
   PodDisruptionBudget; its selectors may add labels (the release's) to
   the kustomize files' and must match its own pods.
2. With ci/full-values.yaml (every optional part on) it renders the parts
   it promises (the KMS key and its credentials, the LFS and Kafka
   listeners and their Service ports, the metrics listener with the
   readiness probe on it, the autoscaler with no fixed replicas, the
   chart-made Secret, the ServiceMonitor), every S3SEAL_* variable is one
   s3seal reads, and no secret is a plain value.

  HELM=~/go/bin/helm python3 scripts/lint-helm.py [helm template flags for the default render]

Extra arguments go to the default render's helm template (--set
terminationGracePeriodSeconds=30 makes check 1 fail, as it should).
Prints every problem and exits 1 if there is one."""

import glob
import os
import re
import subprocess
import sys

import yaml

CHART = "deploy/helm/s3seal"
KDIR = "deploy/kubernetes"
RELEASE = "s3seal"

problems = []


def check(ok, msg):
    if not ok:
        problems.append(msg)


def render(*args):
    helm = os.environ.get("HELM", "helm")
    out = subprocess.run([helm, "template", RELEASE, CHART, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"lint-helm: helm template {' '.join(args)} failed:\n{out.stderr}")
    docs = {}
    for d in yaml.safe_load_all(out.stdout):
        if d:
            check(d["kind"] not in docs, f"chart: two {d['kind']} objects")
            docs[d["kind"]] = d
    return docs


def kustomize():
    kust = yaml.safe_load(open(f"{KDIR}/kustomization.yaml", encoding="utf-8"))
    docs = {}
    for r in kust["resources"]:
        for d in yaml.safe_load_all(open(f"{KDIR}/{r}", encoding="utf-8")):
            if d:
                docs[d["kind"]] = d
    return docs


def pod_spec(dep):
    return dep["spec"]["template"]["spec"]


def container(pod, name, key="containers"):
    cs = [c for c in pod.get(key, []) if c["name"] == name]
    return cs[0] if cs else {}


def env_map(c):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def same(where, got, want):
    check(got == want, f"{where}: the chart renders {got!r}, deploy/kubernetes has {want!r}")


def selects(where, selector, labels):
    sel = selector.get("matchLabels", selector)
    check(sel and all(labels.get(k) == v for k, v in sel.items()), f"{where}: selector {sel} does not match the pods' labels {labels}")


def compare_default(extra):
    """Check 1: the default render against the kustomize files."""
    chart, kust = render(*extra), kustomize()
    for kind in ("Deployment", "Service", "PodDisruptionBudget"):
        check(kind in chart, f"chart (default values): no {kind}")
        check(kind in kust, f"{KDIR}: no {kind}")
    if problems:
        return
    check(set(chart) == set(kust), f"chart (default values): renders {sorted(chart)}, deploy/kubernetes applies {sorted(kust)}")
    cd, kd = chart["Deployment"], kust["Deployment"]
    same("Deployment replicas", cd["spec"].get("replicas"), kd["spec"].get("replicas"))
    cp, kp = pod_spec(cd), pod_spec(kd)
    for f in ("terminationGracePeriodSeconds", "automountServiceAccountToken", "securityContext"):
        same(f"pod {f}", cp.get(f), kp.get(f))
    labels = cd["spec"]["template"]["metadata"]["labels"]
    klabels = kd["spec"]["template"]["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in klabels.items()), f"pod labels {labels} lack the kustomize files' {klabels}")
    selects("Deployment", cd["spec"]["selector"], labels)
    same("containers", [c["name"] for c in cp.get("containers", [])], [c["name"] for c in kp.get("containers", [])])
    same("initContainers", [c["name"] for c in cp.get("initContainers", [])], [c["name"] for c in kp.get("initContainers", [])])
    for key in ("containers", "initContainers"):
        for kc in kp.get(key, []):
            c = container(cp, kc["name"], key)
            where = f"{key[:-1]} {kc['name']}"
            for f in ("image", "command", "args", "ports", "readinessProbe", "livenessProbe", "resources", "securityContext", "volumeMounts"):
                same(f"{where} {f}", c.get(f), kc.get(f))
            same(f"{where} env", env_map(c), env_map(kc))
            same(f"{where} env order", [e["name"] for e in c.get("env", [])], [e["name"] for e in kc.get("env", [])])
    vols = {v["name"]: v for v in cp.get("volumes", [])}
    kvols = {v["name"]: v for v in kp.get("volumes", [])}
    same("volumes", sorted(vols), sorted(kvols))
    for name, kv in kvols.items():
        v = dict(vols.get(name, {}))
        if "secret" in v:
            # The chart names the Secret's files it mounts (items); the
            # kustomize file mounts them all: the same files, as the init
            # container copies the same list.
            v["secret"] = {k: x for k, x in v["secret"].items() if k != "items"}
        same(f"volume {name}", v, kv)
    cs, ks = chart["Service"], kust["Service"]
    same("Service ports", cs["spec"].get("ports"), ks["spec"].get("ports"))
    same("Service type", cs["spec"].get("type", "ClusterIP"), ks["spec"].get("type", "ClusterIP"))
    check(all(cs["spec"]["selector"].get(k) == v for k, v in ks["spec"]["selector"].items()), "Service selector lacks the kustomize file's labels")
    selects("Service", cs["spec"]["selector"], labels)
    cb, kb = chart["PodDisruptionBudget"], kust["PodDisruptionBudget"]
    same("PodDisruptionBudget spec (but its selector)", {k: v for k, v in cb["spec"].items() if k != "selector"},
         {k: v for k, v in kb["spec"].items() if k != "selector"})
    selects("PodDisruptionBudget", cb["spec"]["selector"], labels)


def s3seal_flags():
    src = "".join(open(p, encoding="utf-8").read() for p in glob.glob("cmd/s3seal/*.go") if not p.endswith("_test.go"))
    flags = set(re.findall(r'(?:fs\.\w+Var|str)\(&[\w.]+, "([a-z0-9-]+)"', src))
    check("backend-endpoint" in flags, "cmd/s3seal: found no flags (the pattern of this check is out of date)")
    return {"S3SEAL_" + f.upper().replace("-", "_") for f in flags}


SECRET_VALUE_ENV = {"S3SEAL_KEY", "S3SEAL_SECRET_KEY", "S3SEAL_BACKEND_SECRET_KEY", "S3SEAL_LFS_API_KEY",
                    "S3SEAL_LFS_KAFKA_SASL_PASSWORD", "AWS_SECRET_ACCESS_KEY", "VAULT_TOKEN"}


def check_full():
    """Check 2: every optional part, on."""
    docs = render("-f", f"{CHART}/ci/full-values.yaml")
    for kind in ("Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "Secret", "ServiceAccount", "ServiceMonitor"):
        check(kind in docs, f"chart (ci/full-values.yaml): no {kind}")
    if problems:
        return
    dep = docs["Deployment"]
    pod = pod_spec(dep)
    c = container(pod, "s3seal")
    env = env_map(c)
    known = s3seal_flags()
    for name, val in env.items():
        if name.startswith("S3SEAL_"):
            check(name in known, f"chart (full): {name} is not a variable s3seal reads")
        if name in SECRET_VALUE_ENV:
            check(isinstance(val, dict) and "secretKeyRef" in val, f"chart (full): {name} is a plain value, not from a Secret")
    for a in (c.get("args") or []) + (c.get("command") or []):
        check(not re.match(r"--(key|secret-key|backend-secret-key|lfs-api-key|lfs-kafka-sasl-password)(=|$)", a), f"chart (full): secret flag {a} on the command line")
    for want in ("S3SEAL_KMS_KEY", "S3SEAL_LFS", "S3SEAL_LFS_LISTEN", "S3SEAL_LFS_API_KEY", "S3SEAL_LFS_KAFKA_LISTEN", "S3SEAL_METRICS_LISTEN", "AWS_REGION"):
        check(want in env, f"chart (full): no {want}")
    check(any(e.get("secretRef") for e in c.get("envFrom", [])), "chart (full): the KMS credentials are not taken from a Secret (envFrom)")
    check("replicas" not in dep["spec"], "chart (full): the autoscaler is on, yet the Deployment fixes its replicas")
    hpa = docs["HorizontalPodAutoscaler"]["spec"]
    check(hpa["scaleTargetRef"]["name"] == dep["metadata"]["name"], "chart (full): the autoscaler scales another Deployment")
    ports = {p["name"]: p["containerPort"] for p in c.get("ports", [])}
    check(set(ports) == {"s3", "metrics", "lfs", "kafka"}, f"chart (full): container ports {sorted(ports)}")
    check(env.get("S3SEAL_METRICS_LISTEN", "").endswith(f":{ports.get('metrics')}"), "chart (full): the metrics listener is not on the metrics port")
    check(env.get("S3SEAL_LFS_LISTEN", "").endswith(f":{ports.get('lfs')}"), "chart (full): the LFS listener is not on the lfs port")
    check(env.get("S3SEAL_LFS_KAFKA_LISTEN", "").endswith(f":{ports.get('kafka')}"), "chart (full): the Kafka listener is not on the kafka port")
    # --metrics-listen moves /readyz off the S3 port.
    check(c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}, "chart (full): readiness is not on the metrics listener's /readyz")
    check(c["livenessProbe"]["httpGet"]["path"] == "/healthz", "chart (full): liveness is not on /healthz")
    ann = dep["spec"]["template"]["metadata"].get("annotations", {})
    check(ann.get("prometheus.io/port") == str(ports.get("metrics")), "chart (full): prometheus.io/port is not the metrics port")
    svc = {p["name"]: p["targetPort"] for p in docs["Service"]["spec"]["ports"]}
    check(svc == {n: n for n in ports}, f"chart (full): Service ports {svc} are not the container's {sorted(ports)}")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    for kind in ("Service", "PodDisruptionBudget", "ServiceMonitor"):
        selects(f"chart (full) {kind}", docs[kind]["spec"]["selector"], labels)
    check(docs["ServiceMonitor"]["spec"]["endpoints"][0]["port"] == "metrics", "chart (full): the ServiceMonitor does not scrape the metrics port")
    sec = docs["Secret"]
    check(sec["metadata"].get("annotations", {}).get("helm.sh/resource-policy") == "keep", "chart (full): the chart-made Secret is not kept on uninstall")
    files = set(sec.get("stringData", {}))
    vols = {v["name"]: v for v in pod["volumes"]}
    check(vols["secret-source"]["secret"]["secretName"] == sec["metadata"]["name"], "chart (full): the pods do not read the chart-made Secret")
    items = {i["key"] for i in vols["secret-source"]["secret"].get("items", [])}
    check(items <= files, f"chart (full): the pods mount {sorted(items - files)}, which the Secret lacks")
    for name, val in env.items():
        if name.endswith("_FILE"):
            check(val.startswith("/run/s3seal/") and val.rsplit("/", 1)[1] in items, f"chart (full): {name}={val} is no file the init container copies")
    check("ephemeral" in vols["data"], "chart (full): the spool is not a volume of its own")
    check(pod.get("serviceAccountName") == docs["ServiceAccount"]["metadata"]["name"], "chart (full): the pods do not run as the chart's ServiceAccount")
    for ic in pod.get("initContainers", []) + pod.get("containers", []):
        sc = ic.get("securityContext", {})
        check(sc.get("readOnlyRootFilesystem") is True and sc.get("allowPrivilegeEscalation") is False, f"chart (full): container {ic['name']} is not read-only and unprivileged")


compare_default(sys.argv[1:])
check_full()
for p in problems:
    print("lint-helm:", p, file=sys.stderr)
print(f"lint-helm: {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
