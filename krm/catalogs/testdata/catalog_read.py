"""Reads an option catalog's every option back through oslo.config, with
the options registered as glance-api registers them: the namespaces
hack/catalog.py reads, oslo.log's command-line options, the stores of
enabled_backends and the reserved stores, and the password plugin under
[keystone_authtoken].

Two requests on stdin, one JSON line each, each answered with one line:
  {"sections": {section: [option, ...]}, "store": name, "storeOptions":
   [option, ...], "fixed": {section: {option: value}}}
    -> {"values": {section: {option: value}}, "unknown": [[section,
       option, why], ...]}: a value for each option that is valid for
       its type and, unless it is its type's only one, differs from its
       default (fixed ones as given);
  {"file": path, "values": {section: {option: value}}}
    -> {section: {option: {"want": ..., "got": ..., "from": ...}}}: the
       value written as the option's type parses it, what oslo.config
       read (its default when it does not read the option from the file),
       and where it says the value came from ("user <path>" for the file).
An option is found by its dest or by its name, so a catalog naming the
command-line spelling finds the option and reads back its default.
"""
import json
import logging
import os
import sys
import tempfile
import traceback

from glance_store import multi_backend
from keystoneauth1 import loading
from oslo_config import cfg, generator, types
from oslo_log import log

logging.disable(logging.CRITICAL)  # deprecation warnings, on stderr

# The oslo-config-generator namespaces of glance-api, one list for the
# three scripts that read them (krm/catalogs/namespaces.txt, passed in
# OSLO_NAMESPACES by their callers).
NAMESPACES = os.environ["OSLO_NAMESPACES"].split()
# glance/common/wsgi.py's RESERVED_STORES, which glance-api passes to
# glance_store.
RESERVED = {"os_glance_staging_store": "file", "os_glance_tasks_store": "file"}
LISTED = generator._list_opts(NAMESPACES)


def registered(path):
    """cfg.CONF, the object glance-api reads (glance_store 5 registers a
    store's options on it, whatever object it is handed), having read
    path, with glance-api's options. Once per process: each request is
    answered in a fork."""
    conf = cfg.CONF
    log.register_options(conf)  # as glance/cmd/api.py: on the command line
    late = []
    for _, groups in LISTED:
        for group, opts in groups:
            name = getattr(group, "name", group) or "DEFAULT"
            if name.startswith("glance.store."):
                continue  # store templates: a store's group is its name
            if isinstance(group, cfg.OptGroup):
                conf.register_group(group)
            for opt in opts:
                if opt.required:
                    late.append((opt, name))
                    continue
                try:
                    conf.register_opt(opt, None if name == "DEFAULT" else name)
                except cfg.DuplicateOptError:
                    pass  # oslo.log's, registered above as the CLI options
    loading.register_auth_conf_options(conf, "keystone_authtoken")
    conf(args=[], project="glance", default_config_files=[path])
    # A required option is registered by the code that uses it, after the
    # files are read (glance-api would not start otherwise): the password
    # plugin's auth_url once keystonemiddleware loads it, sid's
    # [oslo_middleware_tracing] service_name.
    conf.register_opts(loading.get_auth_plugin_conf_options("password"), group="keystone_authtoken")
    for opt, name in late:
        conf.register_opt(opt, None if name == "DEFAULT" else name)
    # As glance-api once enabled_backends is read: the stores' options,
    # the reserved filesystem stores', each store's driver registering
    # its own (glance_store.create_multi_stores, without configuring).
    multi_backend.register_store_opts(conf, reserved_stores=RESERVED)
    for backend, kind in dict(conf.enabled_backends, **RESERVED).items():
        multi_backend._load_multi_store(conf, kind, backend=backend)
    # register_store_opts added the reserved stores to the cached value of
    # enabled_backends; registering an option clears that cache, so it is
    # read from the file again.
    return conf


def group_opts(conf, section):
    if section == "DEFAULT":
        return conf._opts
    return conf._groups[section]._opts if section in conf._groups else None


def find(conf, section, name):
    """The registered option a catalog names, by dest or by name."""
    opts = group_opts(conf, section)
    if opts is None:
        return None, "no group [%s] is registered" % section
    for info in opts.values():
        if name in (info["opt"].dest, info["opt"].name):
            return info["opt"], None
    return None, "no option of [%s] has this dest or name" % section


def group(conf, section):
    return conf if section == "DEFAULT" else conf[section]


def parse(opt, s):
    v = opt.type(s)
    return [v] if opt.multi else v


def candidates(t):
    """Strings to try as a value of type t, the likeliest valid first."""
    out = [str(c) for c in (getattr(t, "choices", None) or []) if c is not None]
    if isinstance(t, types.Boolean):
        out += ["true", "false"]
    if isinstance(t, (types.Integer, types.Float)):
        lo, hi = getattr(t, "min", None), getattr(t, "max", None)
        out += [str(x) for x in (lo, hi) if x is not None]
        out += [str(x + d) for x in (lo, hi) if x is not None for d in (1, -1)]
        out += ["7", "3", "1", "2", "0", "2.5"]
    if isinstance(t, (types.List, types.Dict)):
        if isinstance(t, types.List):
            items = candidates(t.item_type)
            lists = [",".join(items[:2]), items[0]]
        else:
            lists = ["k:" + candidates(t.value_type)[0]]
        out += ["[%s]" % v for v in lists] if getattr(t, "bounds", False) else lists
    if isinstance(t, types.URI):
        out += [s + "://host.example/x" for s in (getattr(t, "schemes", None) or [])]
        out += ["https://host.example/x"]
    out += ["127.0.0.2", "host.example", "7", "1-5", "catalog-test"]
    return out


def values(req):
    fd, path = tempfile.mkstemp(suffix=".conf")
    with os.fdopen(fd, "w") as f:
        f.write("[DEFAULT]\nenabled_backends = %s\n" % req["fixed"]["DEFAULT"]["enabled_backends"])
    conf = registered(path)
    os.unlink(path)
    sections = dict(req["sections"], **{req["store"]: req["storeOptions"]})
    out, unknown = {}, []
    for section, names in sections.items():
        for name in names:
            fixed = req["fixed"].get(section, {}).get(name)
            if fixed is not None:
                out.setdefault(section, {})[name] = fixed
                continue
            opt, why = find(conf, section, name)
            if opt is None:
                unknown.append([section, name, why])
                continue
            default = group(conf, section)[opt.dest]
            valid = []
            for c in candidates(opt.type):
                try:
                    valid.append((parse(opt, c) == default, c))
                except (ValueError, TypeError):
                    continue
            if not valid:
                unknown.append([section, name, "no candidate value is valid for %r" % opt.type])
                continue
            # Not the default where the type allows (a sole choice does
            # not): the read checks where the value came from as well.
            out.setdefault(section, {})[name] = min(valid, key=lambda v: v[0])[1]
    return {"values": out, "unknown": unknown}


def read(req):
    conf = registered(req["file"])
    out = {}

    def get(section, name, written):
        opt, why = find(conf, section, name)
        if opt is None:
            return {"want": repr(written), "got": why}
        try:
            got = repr(group(conf, section)[opt.dest])
            loc = conf.get_location(opt.dest, None if section == "DEFAULT" else section)
            where = "%s %s" % (loc.location.name, loc.detail) if loc else "nowhere (a default of None)"
        except Exception as e:  # noqa: BLE001 - reported: the test fails on it
            got, where = "%s: %s" % (type(e).__name__, e), ""
        return {"want": repr(parse(opt, written)), "got": got, "from": where}

    # The file sets fatal_deprecations, which makes reading any option
    # deprecated for removal raise: read it first, then turn it off.
    fatal = req["values"].get("DEFAULT", {}).get("fatal_deprecations")
    if fatal is not None:
        out.setdefault("DEFAULT", {})["fatal_deprecations"] = get("DEFAULT", "fatal_deprecations", fatal)
        conf.set_override("fatal_deprecations", False)
    for section, kv in req["values"].items():
        for name, written in kv.items():
            if (section, name) != ("DEFAULT", "fatal_deprecations"):
                out.setdefault(section, {})[name] = get(section, name, written)
    return out


def answer(handle):
    """Answers the next request in a fork, on a pristine cfg.CONF."""
    req = json.loads(sys.stdin.readline())
    pid = os.fork()
    if pid == 0:
        try:
            sys.stdout.write(json.dumps(handle(req)) + "\n")
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001 - the test shows it and fails
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(1)


answer(values)
answer(read)
