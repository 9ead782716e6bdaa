#!/usr/bin/env python3
"""Hostile inputs of issue 33 for scripts/bench-hostile: generate one case's workspace, and
serve the upstream fixtures (with one answer replaced) on 127.0.0.1.

  hostile.py setup CASE DIR PORT   copy the demo into DIR and plant CASE's bytes
  hostile.py serve DIR PORT        serve the fixtures, plus DIR/override.json's one answer

The generators are those of tests/integration/hostile_limits.rs, in Python so the script
needs no test build. Large answers (the 200 MB CHECKSUM) are streamed by the server, never
held in memory, and sent without a Content-Length so the client's own byte bound is what
stops the read.
"""
import http.server
import json
import os
import shutil
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIX = os.path.join(ROOT, "tests", "fixtures", "upstream")

CLUSTER_STACK = """apiVersion: clusterstack.x-k8s.io/v1alpha1
kind: ClusterStack
metadata:
  name: {name}
  namespace: cluster
spec:
  provider: openstack
  name: scs2
  kubernetesVersion: "1.34"
  channel: stable
  autoSubscribe: false
  noProvider: true
  versions: []
"""

MIRRORS = [
    ("https://api.github.com", "/github"),
    ("https://dl.k8s.io/release", "/dl"),
    ("https://raw.githubusercontent.com/kubernetes/website/main/data/releases/schedule.yaml",
     "/web/k8s-schedule.yaml"),
    ("https://nbg1.your-objectstorage.com/osism/openstack-k8s-capi-images", "/capi"),
    ("https://kubernetes.github.io/cloud-provider-openstack", "/cpo"),
    ("https://helm.cilium.io", "/cilium"),
    ("https://kubernetes-sigs.github.io/metrics-server", "/metrics-server"),
]

CHECKSUM = "/capi/ubuntu-2404-kube-v1.34/ubuntu-2404-kube-v1.34.7.qcow2.CHECKSUM"


def wide_bomb(width, refs, indent=""):
    items = ",".join(["x"] * width)
    aliases = ",".join(["*a"] * refs)
    return f"{indent}anchor: &a [{items}]\n{indent}refs: [{aliases}]\n"


def laughs():
    s = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in range(1, 10):
        s += f"l{i}: &l{i} [" + ", ".join([f"*l{i-1}"] * 10) + "]\n"
    return s


def tenant_file(case):
    """The acme file of a tenant case, or None."""
    head = CLUSTER_STACK.format(name="openstack-scs2-1-34")
    if case == "tenant-wide-anchor-bomb":
        return head + "---\nkind: ConfigMap\ndata:\n" + wide_bomb(10_000, 10_000, "  ")
    if case == "tenant-nested-100000":
        return head + "---\nnested: " + "[" * 100_000 + "]" * 100_000 + "\n"
    if case == "tenant-billion-laughs":
        return head + "---\n" + laughs()
    if case == "tenant-10000-clusterstacks":
        return "---\n".join(CLUSTER_STACK.format(name=f"stack-{i}") for i in range(10_000))
    if case == "tenant-50-mb-file":
        line = "    " + "0123456789abcdef" * 6 + "\n"
        n = (50_000_000 - len(head)) // len(line) + 1
        return head + "---\nkind: ConfigMap\ndata:\n  blob: |\n" + line * n
    if case == "tenant-at-the-node-limit":
        # 499,000 scalars in one flow sequence: just under limits.tenant_files.max_nodes.
        return head + "---\nkind: ConfigMap\ndata:\n  many: [" + ",".join(["1"] * 499_000) + "]\n"
    return None


def override(case):
    """(path, status, body spec) of a live case's one hostile answer, or None."""
    if case == "upstream-schedule-bomb":
        with open(os.path.join(FIX, "k8s-schedule.yaml")) as f:
            text = f.read() + wide_bomb(10_000, 10_000).replace("anchor:", "bombA:").replace("refs:", "bombR:")
        return ("/web/k8s-schedule.yaml", 200, {"text": text})
    if case == "upstream-helm-1000000-entries":
        with open(os.path.join(FIX, "helm-index-cpo.yaml")) as f:
            text = f.read()
        key = "  openstack-cinder-csi:\n"
        at = text.index(key) + len(key)
        extra = "".join(f"  - name: openstack-cinder-csi\n    version: 0.{i // 1000}.{i % 1000}\n"
                        for i in range(1_000_000))
        return ("/cpo/index.yaml", 200, {"text": text[:at] + extra + text[at:]})
    if case == "checksum-200-mb":
        return (CHECKSUM, 200, {"repeat": "f", "bytes": 200 * 1024 * 1024})
    if case == "checksum-10-mb-first-line":
        return (CHECKSUM, 200, {"repeat": "a", "bytes": 10 * 1024 * 1024,
                                "then": "  ubuntu-2404-kube-v1.34.7.qcow2\n"})
    if case == "checksum-503":
        return (CHECKSUM, 503, {"text": "down"})
    if case == "checksum-bad-hash":
        return (CHECKSUM, 200, {"text": "0123456789  ubuntu-2404-kube-v1.34.7.qcow2\n"})
    return None


def setup(case, work, port):
    shutil.copytree(os.path.join(ROOT, "examples", "local"), os.path.join(work, "examples", "local"))
    shutil.copytree(os.path.join(ROOT, "templates"), os.path.join(work, "templates"))
    text = tenant_file(case)
    if text is not None:
        with open(os.path.join(work, "examples/local/tenants/acme/clusters/clusterstack.yaml"), "w") as f:
            f.write(text)
        return
    # Live: every upstream URL of the demo points at the server.
    cfg = os.path.join(work, "examples/local/stackbot.yaml")
    with open(cfg) as f:
        s = f.read()
    u = f"http://127.0.0.1:{port}"
    for real, path in MIRRORS:
        s = s.replace(real, u + path)
    s = s.replace("  snapshot: upstream-2026-05-01.json\n",
                  f"  cve_feed_url: {u}/cve/index.json\n  cve_record_url: \"{u}/cve/records/{{id}}\"\n")
    with open(cfg, "w") as f:
        f.write(s)
    o = override(case)
    with open(os.path.join(work, "override.json"), "w") as f:
        json.dump(o, f)


def fixture_path(path):
    path = path.split("?")[0]
    table = [
        ("/github/repos/kubernetes/kubernetes/releases", "kubernetes-releases.json"),
        ("/cpo/index.yaml", "helm-index-cpo.yaml"),
        ("/cilium/index.yaml", "helm-index-cilium.yaml"),
        ("/metrics-server/index.yaml", "helm-index-metrics-server.yaml"),
        ("/web/k8s-schedule.yaml", "k8s-schedule.yaml"),
    ]
    for p, f in table:
        if path == p:
            return os.path.join(FIX, f)
    for prefix, d in [("/dl/", "dl.k8s.io/release/"), ("/capi/", "capi-images/"), ("/cve/", "cve/")]:
        if path.startswith(prefix):
            return os.path.join(FIX, d + path[len(prefix):])
    return None


def serve(work, port):
    o = None
    p = os.path.join(work, "override.json")
    if os.path.exists(p):
        with open(p) as f:
            o = json.load(f)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            path = self.path.split("?")[0]
            if o and path == o[0]:
                status, spec = o[1], o[2]
                self.send_response(status)
                self.end_headers()
                try:
                    if "text" in spec:
                        self.wfile.write(spec["text"].encode())
                    else:
                        chunk = (spec["repeat"] * 65536).encode()
                        for _ in range(spec["bytes"] // len(chunk)):
                            self.wfile.write(chunk)
                        self.wfile.write(spec.get("then", "").encode())
                except (BrokenPipeError, ConnectionResetError):
                    pass
                return
            f = fixture_path(path)
            if f and os.path.isfile(f):
                with open(f, "rb") as fh:
                    body = fh.read()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "setup":
        setup(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], int(sys.argv[3]))
