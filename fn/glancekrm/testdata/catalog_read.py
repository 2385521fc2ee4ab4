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
       its type and differs from its default (fixed ones as given);
  {"file": path, "values": {section: {option: value}}}
    -> {section: {option: {"want": ..., "got": ...}}}: the value written
       as the option's type parses it, and what oslo.config read from the
       file (its default when it does not read the option from a file).
An option is found by its dest or by its name, so a catalog naming the
command-line spelling finds the option and reads back its default.
"""
import json
import logging
import os
import sys
import tempfile

from oslo_config import cfg, generator, types

logging.disable(logging.CRITICAL)  # deprecation warnings, on stderr

NAMESPACES = [
    "glance.api", "glance", "glance.store", "glance.multi_store", "oslo.log", "oslo.db",
    "oslo.concurrency", "oslo.policy", "oslo.middleware", "oslo.messaging",
    "keystonemiddleware.auth_token", "castellan.config",
]
# glance/common/wsgi.py's RESERVED_STORES, which glance-api passes to
# glance_store.
RESERVED = {"os_glance_staging_store": "file", "os_glance_tasks_store": "file"}


def registered(path):
    """A ConfigOpts that has read path, with glance-api's options."""
    from glance_store import multi_backend
    from keystoneauth1 import loading
    from oslo_log import log

    conf = cfg.ConfigOpts()
    log.register_options(conf)  # as glance/cmd/api.py: on the command line
    for _, groups in generator._list_opts(NAMESPACES):
        for group, opts in groups:
            name = getattr(group, "name", group) or "DEFAULT"
            if name.startswith("glance.store."):
                continue  # store templates: a store's group is its name
            if isinstance(group, cfg.OptGroup):
                conf.register_group(group)
            for opt in opts:
                try:
                    conf.register_opt(opt, None if name == "DEFAULT" else name)
                except cfg.DuplicateOptError:
                    pass  # oslo.log's, registered above as the CLI options
    loading.register_auth_conf_options(conf, "keystone_authtoken")
    conf(args=[], project="glance", default_config_files=[path])
    # keystonemiddleware registers its auth plugin's options once it loads
    # the plugin, after the files are read (auth_url is required).
    conf.register_opts(loading.get_auth_plugin_conf_options("password"), group="keystone_authtoken")
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
            for c in candidates(opt.type):
                try:
                    if parse(opt, c) != default:
                        out.setdefault(section, {})[name] = c
                        break
                except (ValueError, TypeError):
                    continue
            else:
                unknown.append([section, name, "no candidate value is valid for %r and differs from its default %r" % (opt.type, default)])
    return {"values": out, "unknown": unknown}


def read(req):
    conf = registered(req["file"])
    out = {}
    for section, kv in req["values"].items():
        for name, written in kv.items():
            opt, why = find(conf, section, name)
            if opt is None:
                out.setdefault(section, {})[name] = {"want": repr(written), "got": why}
                continue
            try:
                got = group(conf, section)[opt.dest]
            except Exception as e:  # noqa: BLE001 - reported: the test fails on it
                got = "%s: %s" % (type(e).__name__, e)
            out.setdefault(section, {})[name] = {"want": repr(parse(opt, written)), "got": repr(got)}
    return out


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


answer(values(json.loads(sys.stdin.readline())))
answer(read(json.loads(sys.stdin.readline())))
