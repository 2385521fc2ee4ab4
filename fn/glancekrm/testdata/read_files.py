"""Reads config files as their readers do, for comparing two renders.

stdin: {"oslo": [path, ...], "ini": [path, ...]}
stdout: {path: {section: {option: value}}}
oslo: every option of the file, read back through oslo.config (the parser
glance-api uses: substitution, quoting and whitespace rules applied).
ini: Python's RawConfigParser, as PasteDeploy and logging.fileConfig read.
"""
import configparser
import json
import sys

from oslo_config import cfg

req = json.load(sys.stdin)
out = {}
for path in req.get("oslo", []):
    sections = {}
    cfg.ConfigParser(path, sections).parse()
    conf = cfg.ConfigOpts()
    for section, kv in sections.items():
        opts = [cfg.StrOpt(k) for k in kv]
        if section == "DEFAULT":
            conf.register_opts(opts)
        else:
            conf.register_opts(opts, group=section)
    conf(args=["--config-file", path], project="glance-krm-test", default_config_files=[])
    out[path] = {s: {k: (conf if s == "DEFAULT" else conf[s])[k] for k in kv} for s, kv in sections.items()}
for path in req.get("ini", []):
    p = configparser.RawConfigParser(strict=True)
    p.optionxform = str
    p.read(path)
    out[path] = {s: dict(p.items(s)) for s in p.sections()}
json.dump(out, sys.stdout)
