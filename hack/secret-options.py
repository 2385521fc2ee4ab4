"""Writes krm/v1alpha1/zz_generated.secret_options.go: the options of
glance-api.conf that Glance registers with secret=True, and every
deprecated spelling of every option that oslo.config still reads from a
file, as the union over the Glance of every release glance-krm has an
option catalog for (krm/catalogs). A deprecated spelling sets the option
it stands for: without it, `[DEFAULT] sql_connection` would put a database
password into the plain ConfigMap, past the rules that know `[database]
connection` only.

Two steps, as make generate-secret-options (hack/generate-secret-options.sh)
runs them:
  secret-options.py scan RELEASE  with the python3 of that release's
      Glance (this machine's for 2022.2, a root file system's otherwise):
      prints, as JSON, its secret options and its deprecated spellings;
  secret-options.py write SCAN...  with any python3: prints the Go file
      from the scans (files), their union.

The options are read from the option objects, as oslo.config reads them:
an option by its dest, a deprecated one (deprecated_opts, deprecated_name,
deprecated_group) by its group (the option's own when it names none) and
its name (the option's dest when it names none); oslo.config adds the
underscore spelling of a dashed deprecated name itself, and reads both.
oslo-config-generator's YAML is not used: it drops the dashed names and
names a deprecated group's option by its name, not its dest. The groups
are hack/catalog.py's: the generator's namespaces, the password plugin's
options under [keystone_authtoken], the reserved filesystem stores and
[backend_defaults]. Store-template groups (glance.store.*.store) are left
out: store sections are GlanceBackends, whose keys are owned by
credentialsSecretRef. A section name is folded as oslo.config looks
groups up: lower-cased, except DEFAULT.
"""
import json
import os
import sys

# The oslo-config-generator namespaces of glance-api, one list for the
# three scripts that read them (krm/catalogs/namespaces.txt, passed in
# OSLO_NAMESPACES by their callers).
NAMESPACES = os.environ["OSLO_NAMESPACES"].split()


def fold(group):
    group = group or "DEFAULT"
    return group if group == "DEFAULT" else group.lower()


def options():
    """(group, option) of every option glance-api reads from a file."""
    import logging
    logging.disable(logging.CRITICAL)  # deprecation warnings, on stderr
    from oslo_config import generator
    for _, groups in generator._list_opts(NAMESPACES):
        for group, opts in groups:
            name = getattr(group, "name", group) or "DEFAULT"
            if name.startswith("glance.store."):
                continue
            for opt in opts:
                yield name, opt
    from keystoneauth1 import loading
    for opt in loading.get_auth_common_conf_options() + loading.get_auth_plugin_conf_options("password"):
        yield "keystone_authtoken", opt
    from glance_store import driver
    from glance_store._drivers import filesystem, s3

    def store_opts(store):
        return list(store.OPTIONS) + list(getattr(store, "MULTI_BACKEND_OPTIONS", None) or driver._MULTI_BACKEND_OPTS)
    for group in ("os_glance_staging_store", "os_glance_tasks_store"):
        for opt in store_opts(filesystem.Store):
            yield group, opt
    shared = getattr(driver, "SHARED_CONF_GROUP", None)
    if shared:
        for opt in list(s3.Store.OPTIONS) + list(filesystem.Store.OPTIONS):
            yield shared, opt


def scan(release):
    import importlib.metadata
    import platform
    secret, deprecated = set(), set()
    for group, opt in options():
        current = (fold(group), opt.dest)
        if opt.secret:
            secret.add(current)
        for d in opt.deprecated_opts:
            spelling = (fold(d.group or group), d.name or opt.dest)
            if spelling != current:
                deprecated.add(spelling + current)
    versions = ", ".join("%s %s" % (p, importlib.metadata.version(p))
                         for p in ("glance", "glance_store", "oslo.config", "keystonemiddleware", "keystoneauth1"))
    out = sys.stdout
    out.write('{"release": %s,\n "source": %s,\n' % (
        json.dumps(release), json.dumps("%s (%s; python3 %s)" % (release, versions, platform.python_version()))))
    for key, entries in (("secret", sorted(secret)), ("deprecated", sorted(deprecated))):
        out.write(' %s: [\n  %s\n ]%s\n' % (json.dumps(key), ",\n  ".join(json.dumps(e) for e in entries),
                                           "," if key == "secret" else "}"))


def go(s):
    return json.dumps(s)


def write(paths):
    scans = []
    for p in paths:
        with open(p) as f:
            scans.append(json.load(f))
    scans.sort(key=lambda s: s["release"])
    secret, deprecated = set(), {}
    for s in scans:
        secret.update(tuple(o) for o in s["secret"])
        for dg, dn, g, n in s["deprecated"]:
            if deprecated.setdefault((dg, dn), (g, n)) != (g, n):
                sys.exit("secret-options.py: [%s] %s is a deprecated spelling of both [%s] %s and [%s] %s" % (
                    (dg, dn) + deprecated[(dg, dn)] + (g, n)))
    # A spelling that sets a secret option holds its secret.
    for spelling, current in deprecated.items():
        if current in secret:
            secret.add(spelling)
    sections = {}
    for g, o in sorted(secret):
        sections.setdefault(g, []).append(o)

    out = sys.stdout
    out.write("// Code generated by hack/secret-options.py from the Glance of each release\n"
              "// (oslo-config-generator namespaces %s;\n"
              "// the password plugin under [keystone_authtoken], the reserved stores,\n"
              "// [backend_defaults]):\n" % ", ".join(NAMESPACES))
    for s in scans:
        out.write("//   - %s\n" % s["source"])
    out.write("// DO NOT EDIT.\n\npackage v1alpha1\n\n")
    out.write("// GlanceSecretOptions are the glance-api.conf options Glance registers\n"
              "// with secret=True in any of these releases, by section: each under its\n"
              "// name and under every deprecated spelling oslo.config still reads.\n")
    out.write("var GlanceSecretOptions = map[string][]string{\n")
    for g in sorted(sections):
        out.write("\t%s: {%s},\n" % (go(g), ", ".join(go(o) for o in sections[g])))
    out.write("}\n\n")
    out.write("// GlanceDeprecatedOptions maps every deprecated spelling of a\n"
              "// glance-api.conf option that oslo.config still reads from a file, in any\n"
              "// of these releases, to the option it sets. Sections are folded as\n"
              "// ConfigOption.Normalize folds them.\n")
    out.write("var GlanceDeprecatedOptions = map[ConfigOption]ConfigOption{\n")
    for (dg, dn), (g, n) in sorted(deprecated.items()):
        out.write("\t{%s, %s}: {%s, %s},\n" % (go(dg), go(dn), go(g), go(n)))
    out.write("}\n")


if len(sys.argv) == 3 and sys.argv[1] == "scan":
    scan(sys.argv[2])
elif len(sys.argv) >= 3 and sys.argv[1] == "write":
    write(sys.argv[2:])
else:
    sys.exit(__doc__)
