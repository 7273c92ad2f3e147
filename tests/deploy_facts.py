#!/usr/bin/env python3
# keel tests: what Dockerfile and deploy/agones/*.yaml say, checked against
# each other and against keel-server (tests/test_deploy.c, tests/test_agones.c).
# MIT licence, see LICENSE.
#
#   deploy_facts.py command SRC          the image's command line (ENTRYPOINT
#                                        then CMD), one argument per line
#   deploy_facts.py check SRC HEALTH_MS  the checks below; prints one line per
#                                        check ("ok ..." or "FAIL ..."), exit 1
#                                        when one failed
import fnmatch
import json
import os
import re
import sys

import yaml


def dockerfile(src):
    """The runtime stage's instructions: a list of (INSTRUCTION, argument text)."""
    lines, cur = [], ""
    with open(os.path.join(src, "Dockerfile")) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not cur and (not line.strip() or line.lstrip().startswith("#")):
                continue
            cur += line[:-1] + " " if line.endswith("\\") else line
            if not line.endswith("\\"):
                word, _, rest = cur.strip().partition(" ")
                lines.append((word.upper(), rest.strip()))
                cur = ""
    last_from = max(i for i, (w, _) in enumerate(lines) if w == "FROM")
    return lines[last_from:]


def command(src):
    ins = dockerfile(src)
    entry = [json.loads(a) for w, a in ins if w == "ENTRYPOINT"][-1]
    cmd = [json.loads(a) for w, a in ins if w == "CMD"][-1]
    return entry + cmd


def flag(cmd, name):
    return cmd[cmd.index(name) + 1] if name in cmd else None


def dockerignore(src):
    """The .dockerignore patterns in order: (pattern, excluded) pairs."""
    pats = []
    with open(os.path.join(src, ".dockerignore")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                neg = line.startswith("!")
                pats.append((line.lstrip("!").strip("/"), not neg))
    return pats


def ignored(pats, path):
    """Whether Docker leaves `path` (relative to the context) out: the last
    pattern matching it or one of its parent folders decides, as Docker's
    own matcher (filepath.Match per part, "**" any number of folders)."""
    def match(pat, p):
        pp, parts = pat.split("/"), p.split("/")

        def rec(i, j):
            if i == len(pp):
                return j == len(parts)
            if pp[i] == "**":
                return any(rec(i + 1, k) for k in range(j, len(parts) + 1))
            return j < len(parts) and fnmatch.fnmatchcase(parts[j], pp[i]) and rec(i + 1, j + 1)
        return rec(0, 0)
    parts = path.split("/")
    out = False
    for pat, excl in pats:
        if any(match(pat, "/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            out = excl
    return out


def check(src, health_ms):
    results = []

    def expect(ok, what):
        results.append(("ok " if ok else "FAIL ") + what)

    ins = dockerfile(src)
    cmd = command(src)
    port = int(flag(cmd, "--port"))
    metrics_port = int(flag(cmd, "--metrics").rsplit(":", 1)[1])
    key_dir = os.path.dirname(flag(cmd, "--key"))
    record_dir = os.path.dirname(flag(cmd, "--record"))
    exposed = " ".join(a for w, a in ins if w == "EXPOSE").split()
    volumes = " ".join(a for w, a in ins if w == "VOLUME").split()
    user = [a for w, a in ins if w == "USER"]
    expect(cmd[0] == "keel-server" and "--agones" in cmd, "the image runs keel-server --agones: %s" % cmd)
    for limit in ("--empty-seconds", "--join-seconds"):  # no Allocated GameServer left behind
        expect(int(flag(cmd, limit) or 0) > 0, "the image ends a match with %s > 0" % limit)
    expect("%d/udp" % port in exposed, "EXPOSE %d/udp (--port)" % port)
    expect("%d/tcp" % metrics_port in exposed, "EXPOSE %d/tcp (--metrics)" % metrics_port)
    expect(record_dir in volumes, "VOLUME %s (--record's folder)" % record_dir)
    expect(("STOPSIGNAL", "SIGTERM") in ins, "STOPSIGNAL SIGTERM")
    expect(bool(user) and user[-1] not in ("0", "root"), "a non-root USER: %s" % user)

    # The build context: no key, token or build tree left in the tree goes
    # into it; the sources the build needs do.
    pats = dockerignore(src)
    for path in ("backend.key", "deploy/dev.key", "tmp/dev.key", "ada.token", "a/b/c.token", "tls.pem", ".env",
                 "build/keel-server", "build-asan/CMakeCache.txt", "match.krec", ".git/config"):
        expect(ignored(pats, path), ".dockerignore leaves %s out of the build context" % path)
    for path in ("CMakeLists.txt", "server/keel-server/main.c", "client/tokens/tokens.c", "net/src/token_key.c",
                 "sim/include/keel/sim_version.h"):
        expect(not ignored(pats, path), ".dockerignore keeps %s in the build context" % path)

    docs = {}
    for name in sorted(os.listdir(os.path.join(src, "deploy", "agones"))):
        if name.endswith(".yaml"):
            with open(os.path.join(src, "deploy", "agones", name)) as f:
                doc = yaml.safe_load(f)
            expect(isinstance(doc, dict) and "kind" in doc, "%s parses as YAML with a kind" % name)
            docs[doc["kind"]] = doc
    for kind in ("GameServer", "Fleet", "FleetAutoscaler", "GameServerAllocation"):
        expect(kind in docs, "deploy/agones has a %s" % kind)
    gs = docs["GameServer"]["spec"]
    fleet = docs["Fleet"]["spec"]["template"]["spec"]
    expect(gs == fleet, "the Fleet's template is the GameServer's spec")
    container = next(c for c in gs["template"]["spec"]["containers"] if c["name"] == gs["container"])
    expect(gs["container"] == "keel-server", "the container is keel-server")
    expect("args" not in container and "command" not in container, "the container runs the image's own command")
    game = gs["ports"][0]
    expect(game["containerPort"] == port and game["protocol"] == "UDP", "the game port is %d/UDP" % port)
    expect(any(p["containerPort"] == metrics_port and p.get("protocol", "TCP") == "TCP" for p in container["ports"]),
           "the metrics port is %d/TCP" % metrics_port)
    ann = gs["template"]["metadata"].get("annotations", {})
    expect(ann.get("prometheus.io/port") == str(metrics_port), "prometheus.io/port is %d" % metrics_port)
    h = gs["health"]
    # At least two pings in every period, and more than one period to fail.
    expect(h["periodSeconds"] * 1000 >= 2 * health_ms,
           "health periodSeconds %d >= 2 x keel-server's ping period %d ms" % (h["periodSeconds"], health_ms))
    expect(h["failureThreshold"] >= 2, "health failureThreshold %d >= 2" % h["failureThreshold"])
    expect(not h.get("disabled", False), "health checking is on")
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in gs["template"]["spec"]["volumes"]}
    expect(key_dir in mounts and "secret" in volumes[mounts[key_dir]],
           "a Secret is mounted at %s (--key %s)" % (key_dir, flag(cmd, "--key")))
    expect(key_dir in mounts and os.path.basename(flag(cmd, "--key")) in
           [i["path"] for i in volumes[mounts[key_dir]]["secret"].get("items", [])],
           "the Secret holds %s" % os.path.basename(flag(cmd, "--key")))
    expect(record_dir in mounts, "a volume is mounted at %s (--record)" % record_dir)
    expect(docs["FleetAutoscaler"]["spec"]["fleetName"] == docs["Fleet"]["metadata"]["name"],
           "the FleetAutoscaler scales the Fleet")
    # A restrictive securityContext (Kubernetes' "restricted" Pod Security
    # Standard for the keel-server container): non-root as the image's
    # user, no privilege escalation, no capabilities, a read-only root; the
    # pod's seccomp profile RuntimeDefault and its volumes group-owned by keel.
    sc = container.get("securityContext", {})
    pod_sc = gs["template"]["spec"].get("securityContext", {})
    uid = int(user[-1]) if user and user[-1].isdigit() else None
    expect(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == uid,
           "keel-server runs as non-root uid %s (the image's USER): %s" % (uid, sc))
    expect(sc.get("allowPrivilegeEscalation") is False and sc.get("privileged", False) is False,
           "no privilege escalation, not privileged")
    expect(sc.get("capabilities", {}).get("drop") == ["ALL"] and not sc.get("capabilities", {}).get("add"),
           "every capability dropped, none added")
    expect(sc.get("readOnlyRootFilesystem") is True, "a read-only root filesystem")
    expect(pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "the pod's seccomp profile is RuntimeDefault")
    expect(pod_sc.get("fsGroup") == uid, "the pod's fsGroup is keel's group %s (the Secret and volumes readable)" % uid)
    key_vol = volumes[mounts[key_dir]]["secret"] if key_dir in mounts else {}
    expect(key_vol.get("defaultMode", 0o644) & 0o007 == 0, "the key Secret is not world-readable (defaultMode %s)"
           % oct(key_vol.get("defaultMode", 0o644)))
    for field in ("runAsNonRoot", "allowPrivilegeEscalation", "privileged", "readOnlyRootFilesystem"):
        expect(isinstance(sc.get(field, False), bool), "securityContext.%s is a boolean" % field)
    for field in ("runAsUser", "runAsGroup"):
        expect(isinstance(sc.get(field, 0), int), "securityContext.%s is an integer" % field)
    grace = gs["template"]["spec"].get("terminationGracePeriodSeconds", 30)
    expect(grace >= 3, "terminationGracePeriodSeconds %d covers the 2 s drain" % grace)
    for r in results:
        print(r)
    return 0 if all(r.startswith("ok") for r in results) else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "command":
        print("\n".join(command(sys.argv[2])))
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], int(sys.argv[3])))
    print(__doc__ or "usage: deploy_facts.py command SRC | check SRC HEALTH_MS", file=sys.stderr)
    sys.exit(2)
