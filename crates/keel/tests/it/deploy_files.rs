//! The deployment files as an operator's tools read them: every
//! Kubernetes manifest is valid, strictly (no field the API does not
//! know), for each Kubernetes version in support (kubernetes-validate,
//! offline), and meets the "restricted" Pod Security Standard with keel's
//! own rules (`crates/testkit/checkers/restricted.py`).

use std::path::{Path, PathBuf};

/// The Kubernetes versions in support (the upstream project's three, and
/// the one before for managed clusters' extended support).
const KUBERNETES: [&str; 4] = ["1.34.0", "1.35.0", "1.36.0", "1.37.0"];

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn checker(bin: &str) -> PathBuf {
    let path = keel_testkit::tools_dir().join("checkers/bin").join(bin);
    assert!(
        path.exists(),
        "{} is missing: scripts/test installs the checkers",
        path.display()
    );
    path
}

fn manifests() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/kubernetes"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

pub(crate) fn run(cmd: &mut std::process::Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

pub(crate) fn once() -> bool {
    if keel_testkit::db::postgres_url().is_some() {
        println!("no database involved: runs in the SQLite pass");
        return false;
    }
    true
}

#[test]
fn every_kubernetes_manifest_is_valid_for_every_version_in_support() {
    if !once() {
        return;
    }
    for version in KUBERNETES {
        let (ok, said) = run(std::process::Command::new(checker("kubernetes-validate"))
            .args(["--strict", "--quiet", "-k", version])
            .args(manifests()));
        assert!(ok, "Kubernetes {version}:\n{said}");
    }
}

#[test]
fn every_kubernetes_workload_meets_the_restricted_pod_security_standard() {
    if !once() {
        return;
    }
    let script = root().join("crates/testkit/checkers/restricted.py");
    let (ok, said) = run(std::process::Command::new(checker("python"))
        .arg(&script)
        .args(manifests()));
    assert!(ok, "{said}");
    // The checker itself finds what it is for.
    let dir = tempfile::tempdir().unwrap();
    let loose = dir.path().join("loose.yaml");
    std::fs::write(
        &loose,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers:\n        - name: x\n          image: keel:latest\n          env:\n            - name: KEEL_SECRET_KEY\n              valueFrom: {secretKeyRef: {name: keel, key: secret-key}}\n---\napiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: open}\nspec:\n  podSelector: {matchLabels: {app: y}}\n  egress:\n    - ports:\n        - {protocol: TCP, port: 5432}\n",
    )
    .unwrap();
    let (ok, said) = run(std::process::Command::new(checker("python"))
        .arg(&script)
        .arg(&loose));
    assert!(!ok);
    for problem in [
        "runAsNonRoot",
        "seccompProfile",
        "allowPrivilegeEscalation",
        "drop ALL",
        "readOnlyRootFilesystem",
        "no memory limit",
        "names no version",
        "as an environment variable",
        "automountServiceAccountToken",
        "no NetworkPolicy",
        "egress to PostgreSQL (port 5432) names no destination",
        "no PodDisruptionBudget",
        "no Service",
    ] {
        assert!(said.contains(problem), "{problem}: {said}");
    }
}

#[test]
fn the_tls_example_neither_compresses_nor_forces_https_on_other_subdomains() {
    let caddyfile = std::fs::read_to_string(root().join("deploy/caddy/Caddyfile")).unwrap();
    let directives: Vec<&str> = caddyfile
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#'))
        .collect();
    assert!(
        !directives.iter().any(|l| l.starts_with("encode")),
        "the proxy compresses (BREACH): keel compresses what it may itself"
    );
    let hsts: Vec<&&str> = directives
        .iter()
        .filter(|l| l.starts_with("Strict-Transport-Security"))
        .collect();
    assert_eq!(hsts.len(), 1, "{hsts:?}");
    assert!(hsts[0].contains("max-age=31536000"), "{hsts:?}");
    assert!(!hsts[0].contains("includeSubDomains"), "{hsts:?}");
}
