"""Prints the option catalog of the Glance installed where it runs, as
JSON: what glance-api reads from a store section (the S3 driver's options
and the options every store has) and from glance-api.conf (every group
oslo-config-generator prints for glance-api's namespaces), with each
option's type and secret flag, and where it came from. Every option is
named as oslo.config reads it from a file: by its dest (log_dir), which
is not always its name (the command-line option log-dir).

Run with the Debian python of the release (make generate-catalogs runs it
on this machine and in each root file system). Never hand-edit its output.
Usage: catalog.py RELEASE SUITE
A release Debian does not ship is read where its release tarballs were
installed with pip over SUITE's glance (tests/e2e/glance/rootfs.sh 2025.2
and 2026.1): the provenance then names both. CATALOG_SOURCE, when set,
replaces it.
"""
import importlib.metadata
import json
import os
import platform
import subprocess
import sys

import yaml
from glance_store import driver
from glance_store._drivers import s3

# The oslo-config-generator namespaces of glance-api, one list for the
# three scripts that read them (krm/catalogs/namespaces.txt, passed in
# OSLO_NAMESPACES by their callers).
NAMESPACES = os.environ["OSLO_NAMESPACES"].split()


def version(pkg):
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                          capture_output=True, text=True).stdout or "unknown"


def kind(opt):
    return type(opt.type).__name__ if opt.type is not None else "String"


release, suite = sys.argv[1], sys.argv[2]
store = {}
for opt in list(s3.Store.OPTIONS) + list(getattr(s3.Store, "MULTI_BACKEND_OPTIONS", None) or driver._MULTI_BACKEND_OPTS):
    store[opt.dest] = {"type": kind(opt), "secret": bool(opt.secret)}

args = ["oslo-config-generator", "--format", "yaml"]
for ns in NAMESPACES:
    args += ["--namespace", ns]
data = yaml.safe_load(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
config = {}
for group, v in data["options"].items():
    if group.startswith("glance.store."):
        continue  # store templates: store sections are GlanceBackends
    # A file sets an option by its dest, never by its name: the generator
    # prints a command-line option (oslo.log's log-dir, use-json) by its
    # command-line spelling, which oslo.config ignores in a file. A
    # deprecated name (deprecated_opts) is read too, with a warning, but is
    # left out, so the release rules refuse it; the owned-option and
    # secret-option rules know every deprecated spelling
    # (hack/secret-options.py) and refuse it as the option it sets.
    opts = config[group] = {}
    for o in v["opts"]:
        if o["dest"] in opts:
            sys.exit("catalog.py: [%s] %s is registered twice" % (group, o["dest"]))
        opts[o["dest"]] = {"type": o["type"], "secret": bool(o.get("secret"))}

# Groups glance registers at run time, which the generator does not print:
# the password plugin's options under [keystone_authtoken] (auth_type is
# password, always), and the filesystem stores Glance reserves for staging
# and tasks.
from keystoneauth1 import loading  # noqa: E402
from glance_store._drivers import filesystem  # noqa: E402
ks = config.setdefault("keystone_authtoken", {})
for opt in loading.get_auth_common_conf_options() + loading.get_auth_plugin_conf_options("password"):
    ks.setdefault(opt.dest, {"type": kind(opt), "secret": bool(opt.secret)})
for group in ("os_glance_staging_store", "os_glance_tasks_store"):
    for opt in list(filesystem.Store.OPTIONS) + list(getattr(filesystem.Store, "MULTI_BACKEND_OPTIONS", None) or driver._MULTI_BACKEND_OPTS):
        config.setdefault(group, {})[opt.dest] = {"type": kind(opt), "secret": bool(opt.secret)}

# From glance_store 5.0 on, [backend_defaults] holds defaults for every
# store's options.
shared = getattr(driver, "SHARED_CONF_GROUP", None)
if shared:
    for opt in list(s3.Store.OPTIONS) + list(filesystem.Store.OPTIONS):
        config.setdefault(shared, {})[opt.dest] = {"type": kind(opt), "secret": bool(opt.secret)}

import glance  # noqa: E402
if glance.__file__.startswith("/usr/local/"):
    source = ("glance %s and glance_store %s from their release tarballs, on Debian %s (python3 %s), "
              "pip install --no-deps over glance-api %s, python3-oslo.config %s") % (
        importlib.metadata.version("glance"), importlib.metadata.version("glance_store"), suite,
        platform.python_version(), version("glance-api"), version("python3-oslo.config"))
else:
    source = "Debian %s: glance-api %s, python3-glance-store %s, python3-oslo.config %s" % (
        suite, version("glance-api"), version("python3-glance-store"), version("python3-oslo.config"))
source = os.environ.get("CATALOG_SOURCE") or source
json.dump({
    "release": release,
    "source": "%s; oslo-config-generator namespaces %s" % (source, ", ".join(NAMESPACES)),
    "storeOptions": store,
    "config": config,
}, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
