"""Reads rendered files with oslo.config, the parser glance-api uses.

stdin: {"files": [...], "dirs": [...], "options": {section: [option, ...]}}
stdout: {section: {option: value}} as oslo.config returns each value
(substitution, quoting and whitespace rules applied).
"""
import json
import sys

from oslo_config import cfg

req = json.load(sys.stdin)
conf = cfg.ConfigOpts()
for section, options in req["options"].items():
    opts = [cfg.StrOpt(o) for o in options]
    if section == "DEFAULT":
        conf.register_opts(opts)
    else:
        conf.register_opts(opts, group=section)
args = []
for f in req["files"]:
    args += ["--config-file", f]
for d in req["dirs"]:
    args += ["--config-dir", d]
conf(args=args, project="glance-krm-test", default_config_files=[])
out = {}
for section, options in req["options"].items():
    group = conf if section == "DEFAULT" else conf[section]
    out[section] = {o: group[o] for o in options}
json.dump(out, sys.stdout)
