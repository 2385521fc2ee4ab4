#!/usr/bin/python3
"""Copies the seed system's Glance and GlanceBackend objects into
krm/testdata/seed/: every complete document (apiVersion, kind, name, spec)
of its test suites (tests/**.yaml: e2e, chaos, tempest) and of the YAML blocks of its docs
(docs/**.md), unchanged, one file each, named after its source path. The
invalid-cr suites go to invalid/, the rest to valid/; c5c3 ControlPlanes that
declare services.glance go to controlplane-valid/ and, from the c5c3
invalid-cr suite's Glance cases, controlplane-invalid/. They are data: the
tests load them as they are.
Usage: seed-crs.py SEED_CHECKOUT OUT_DIR
"""
import os, re, sys, yaml

src, out = sys.argv[1], sys.argv[2]
KINDS = {"Glance", "GlanceBackend"}

REQUIRED = {"Glance": {"openStackRelease", "image", "database", "cache", "keystoneEndpoint", "serviceUser"},
            "GlanceBackend": {"glanceRef", "type"}}


def controlplane_with_glance(d):
    """A c5c3 ControlPlane that declares services.glance: the input of
    glance-krm's ControlPlane stage."""
    return (isinstance(d, dict) and d.get("kind") == "ControlPlane"
            and str(d.get("apiVersion", "")).startswith("c5c3.io/")
            and isinstance((d.get("spec") or {}).get("services"), dict)
            and (d["spec"]["services"].get("glance") is not None))


def complete(d):
    """A whole object, not a merge patch an e2e step applies to one: its
    kind's required spec fields are all there."""
    if controlplane_with_glance(d):
        return True
    return (isinstance(d, dict) and d.get("kind") in KINDS
            and str(d.get("apiVersion", "")).startswith("glance.openstack.c5c3.io/")
            and (d.get("metadata") or {}).get("name") and isinstance(d.get("spec"), dict)
            and REQUIRED[d["kind"]] <= set(d["spec"]))

def docs_of(path):
    text = open(path).read()
    if path.endswith(".md"):
        for block in re.findall(r"```ya?ml\n(.*?)```", text, re.S):
            yield from safe(block)
    else:
        yield from safe(text)

def safe(text):
    try:
        for d in yaml.safe_load_all(text):
            yield d
    except yaml.YAMLError:
        return

n = 0
names = set()
seen = set()
for root, _, files in os.walk(src):
    rel_root = os.path.relpath(root, src)
    if not (rel_root.startswith("tests/") or rel_root.startswith("docs")):
        continue
    for f in sorted(files):
        if not (f.endswith(".yaml") or f.endswith(".md")) or f == "chainsaw-test.yaml":
            continue
        path = os.path.join(root, f)
        if path in seen:
            continue
        seen.add(path)
        rel = os.path.relpath(path, src)
        kind = "invalid" if "/invalid-" in rel else "valid"
        # The c5c3 invalid-cr suite holds ControlPlanes wrong for every
        # service: only the cases about Glance are ours.
        if "/c5c3/invalid-cr/" in rel and "glance" not in f:
            continue
        for i, d in enumerate(x for x in docs_of(path) if complete(x)):
            sub = ("controlplane-" + kind) if d.get("kind") == "ControlPlane" else kind
            stem = re.sub(r"\.(ya?ml|md)$", "", rel).replace("/", "__")
            name = stem + (f"-{i}" if i else "") + ".yaml"
            os.makedirs(os.path.join(out, sub), exist_ok=True)
            with open(os.path.join(out, sub, name), "w") as w:
                w.write(f"# source: {rel} (document {i}), C5C3/cobaltcore\n")
                yaml.safe_dump(d, w, sort_keys=False)
            n += 1
            names.add(name)
print(f"{len(names)} objects ({n} writes)", file=sys.stderr)
