"""Checks Kubernetes manifests against the "restricted" Pod Security
Standard's fields and keel's own rules for what it ships:

- every pod: runAsNonRoot, seccompProfile RuntimeDefault (pod or
  container), no host namespaces, host paths or host ports; every
  container: allowPrivilegeEscalation false, capabilities drop ALL (and
  adds nothing), readOnlyRootFilesystem, not privileged; requests and
  limits of CPU and memory; an image tag that names a version;
- no service-account token mounted; no secret passed as an environment
  variable (secretKeyRef): secrets are mounted files;
- every Deployment of more than one replica has a PodDisruptionBudget and
  a Service selecting it; every Deployment a NetworkPolicy, whose egress to
  a database's or a cache's port (PostgreSQL 5432, Redis 6379) names its
  destination (`to:`), not every host on that port.

    python restricted.py FILE...    exit 1 and a line per problem
"""

import sys

import yaml


def pod_problems(name, spec):
    out = []
    sc = spec.get("securityContext") or {}
    if spec.get("automountServiceAccountToken") is not False:
        out.append(f"{name}: automountServiceAccountToken is not false")
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(host):
            out.append(f"{name}: {host}")
    for v in spec.get("volumes") or []:
        if "hostPath" in v:
            out.append(f"{name}: hostPath volume {v.get('name')}")
    pod_seccomp = (sc.get("seccompProfile") or {}).get("type")
    containers = (spec.get("containers") or []) + (spec.get("initContainers") or [])
    if not containers:
        out.append(f"{name}: no containers")
    for c in containers:
        cn = f"{name}/{c.get('name')}"
        csc = c.get("securityContext") or {}
        if not (csc.get("runAsNonRoot") or sc.get("runAsNonRoot")):
            out.append(f"{cn}: runAsNonRoot is not true")
        if 0 in (csc.get("runAsUser"), sc.get("runAsUser")):
            out.append(f"{cn}: runs as user 0")
        seccomp = (csc.get("seccompProfile") or {}).get("type") or pod_seccomp
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{cn}: seccompProfile is not RuntimeDefault")
        if csc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{cn}: allowPrivilegeEscalation is not false")
        if csc.get("privileged"):
            out.append(f"{cn}: privileged")
        caps = csc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{cn}: capabilities do not drop ALL")
        if [a for a in caps.get("add") or [] if a != "NET_BIND_SERVICE"]:
            out.append(f"{cn}: adds capabilities {caps.get('add')}")
        if csc.get("readOnlyRootFilesystem") is not True:
            out.append(f"{cn}: readOnlyRootFilesystem is not true")
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.append(f"{cn}: hostPort {p['hostPort']}")
        res = c.get("resources") or {}
        for kind in ("requests", "limits"):
            for what in ("cpu", "memory"):
                if what not in (res.get(kind) or {}):
                    out.append(f"{cn}: no {what} {kind[:-1]}")
        image = c.get("image") or ""
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        if "@sha256:" not in image and (not tag or tag == "latest"):
            out.append(f"{cn}: image {image!r} names no version")
        for e in c.get("env") or []:
            if "secretKeyRef" in (e.get("valueFrom") or {}):
                out.append(f"{cn}: secret {e.get('name')} passed as an environment variable")
        if c.get("envFrom"):
            out.append(f"{cn}: envFrom (secrets must be mounted files)")
    return out


def selects(selector, labels):
    match = (selector or {}).get("matchLabels", selector or {})
    return bool(match) and all(labels.get(k) == v for k, v in match.items())


# Ports of services keel reaches inside the cluster: egress to them must
# name where (`to:`).
NAMED_PORTS = {5432: "PostgreSQL", 6379: "Redis"}


def egress_problems(policy):
    out = []
    name = f"NetworkPolicy/{policy['metadata']['name']}"
    for rule in policy["spec"].get("egress") or []:
        for p in rule.get("ports") or []:
            what = NAMED_PORTS.get(p.get("port"))
            if what and not rule.get("to"):
                out.append(f"{name}: egress to {what} (port {p['port']}) names no destination")
    return out


def problems(docs):
    out = []
    deployments = [d for d in docs if d.get("kind") in ("Deployment", "StatefulSet", "DaemonSet")]
    if not deployments:
        out.append("no workload in these files")
    for d in deployments:
        name = f"{d['kind']}/{d['metadata']['name']}"
        template = d["spec"]["template"]
        labels = template["metadata"].get("labels") or {}
        out += pod_problems(name, template["spec"])
        sa = template["spec"].get("serviceAccountName")
        for acct in [x for x in docs if x.get("kind") == "ServiceAccount"]:
            if acct["metadata"]["name"] == sa and acct.get("automountServiceAccountToken") is not False:
                out.append(f"ServiceAccount/{sa}: automountServiceAccountToken is not false")
        if not any(
            x.get("kind") == "NetworkPolicy" and selects(x["spec"].get("podSelector"), labels)
            for x in docs
        ):
            out.append(f"{name}: no NetworkPolicy selects its pods")
        if (d["spec"].get("replicas") or 1) > 1:
            for kind in ("PodDisruptionBudget", "Service"):
                if not any(
                    x.get("kind") == kind and selects(x["spec"].get("selector"), labels)
                    for x in docs
                ):
                    out.append(f"{name}: no {kind} selects its pods")
    for x in docs:
        if x.get("kind") == "NetworkPolicy":
            out += egress_problems(x)
    return out


def main(paths):
    found = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        found += [f"{path}: {p}" for p in problems(docs)]
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
