"""glance-krm's drain: move every image out of one store into another.

For each image with a location in the leaving store it asks Glance for a
copy-image import into the target store, reads the copy back from the
target bucket and compares it with the image's os_hash_value, and only
then deletes the leaving store's location (DELETE /v2/stores/FROM/ID).
Every step is read back from Glance, so a second run continues where a
failed or killed one stopped. It runs on glance-api's own files: the
service user of [keystone_authtoken] and the target store's section.

usage: drain.py FROM TO   (GLANCE_URL: the Image API; a record of the
progress goes to GLANCE_KRM_DRAIN_RECORD_FILE, or into the ConfigMap
GLANCE_KRM_DRAIN_RECORD, which the render holds, through the pod's
service account; GLANCE_KRM_DRAIN_JOB names the Job in the record)
"""
import hashlib
import json
import os
import signal
import ssl
import sys
import time
import urllib.error
import urllib.request

from keystoneauth1 import loading
from keystoneauth1 import session as ks_session
from oslo_config import cfg
import keystonemiddleware.auth_token  # noqa: F401 (registers [keystone_authtoken])
from glance.common import config as _glance_config  # noqa: F401 (glance's options)
try:
    from glance.common import wsgi as _glance_wsgi  # noqa: F401 (registers enabled_backends)
except ImportError:
    _glance_wsgi = None
from glance_store import multi_backend

import boto3
from botocore import config as boto_config

COPY_TIMEOUT = int(os.environ.get("GLANCE_KRM_DRAIN_COPY_TIMEOUT", "1800"))
RECORD_WAIT = int(os.environ.get("GLANCE_KRM_DRAIN_RECORD_WAIT", "60"))
# Glance's list API shows an admin every image only with these filters:
# without visibility=all a community image of another project is left out
# (glance/db/sqlalchemy/api.py _image_get_all), and os_hidden is false
# unless asked (glance/api/v2/images.py index), so hidden images take a
# second listing; member_status=all is for a caller Glance does not take
# for an admin. Any status is listed (deleted images are not: their
# locations are the scrubber's).
LISTINGS = ("visibility=all&member_status=all&os_hidden=false", "visibility=all&member_status=all&os_hidden=true")
RESERVED = {"os_glance_staging_store": "file", "os_glance_tasks_store": "file"}


def say(msg):
    print("drain: " + msg, flush=True)


class Drain:
    def __init__(self, source, target):
        self.source, self.target = source, target
        conf = cfg.CONF
        if "enabled_backends" not in conf:
            conf.register_opt(cfg.DictOpt("enabled_backends"))
        loading.register_auth_conf_options(conf, "keystone_authtoken")
        conf(args=[], project="glance", prog="glance-api")
        plugin = loading.get_plugin_loader(conf.keystone_authtoken.auth_type)
        conf.register_opts(loading.get_auth_plugin_conf_options(plugin), group="keystone_authtoken")
        multi_backend.register_store_opts(conf, reserved_stores=RESERVED)
        for store in (source, target):
            if store not in (conf.enabled_backends or {}):
                raise SystemExit("drain: store %r is not in [DEFAULT] enabled_backends" % store)
        self.conf = conf
        auth = loading.load_auth_from_conf_options(conf, "keystone_authtoken")
        # authtoken's own TLS options (keystonemiddleware registers them;
        # keystoneauth's session options would clash with them).
        ka = conf.keystone_authtoken
        self.session = ks_session.Session(auth=auth, verify=False if ka.insecure else (ka.cafile or True))
        self.url = os.environ["GLANCE_URL"].rstrip("/")
        self.record = {"glance": os.environ.get("GLANCE_KRM_GLANCE", ""), "from": source, "to": target,
                       "state": "Running", "moved": [], "remaining": None, "failed": {}}

    def api(self, method, path, body=None, ok=(200,)):
        resp = self.session.request(self.url + path, method, json=body, raise_exc=False,
                                    headers={"OpenStack-API-Version": "image 2.0"})
        if resp.status_code not in ok:
            raise RuntimeError("%s %s: %d %s" % (method, path, resp.status_code, resp.text[:300]))
        return resp.json() if resp.content and resp.headers.get("Content-Type", "").startswith("application/json") else None

    def images(self):
        """Every image Glance holds (any project, visibility, membership,
        status, hidden or not) with a location in the leaving store."""
        out = {}
        for filters in LISTINGS:
            path = "/v2/images?limit=100&" + filters
            while path:
                page = self.api("GET", path)
                out.update((i["id"], i) for i in page["images"] if self.source in stores(i))
                path = page.get("next")
        return [out[k] for k in sorted(out)]

    def copy(self, image):
        iid = image["id"]
        if self.target in stores(image):
            return image
        if self.target not in split(image.get("os_glance_importing_to_stores")):
            self.api("POST", "/v2/images/%s/import" % iid, ok=(202, 409),
                     body={"method": {"name": "copy-image"}, "stores": [self.target], "all_stores_must_succeed": True})
        deadline = time.time() + COPY_TIMEOUT
        while time.time() < deadline:
            time.sleep(1)
            image = self.show(iid)
            if self.target in stores(image):
                return image
            if self.target not in split(image.get("os_glance_importing_to_stores")):
                raise RuntimeError("copy-image into %s failed (os_glance_failed_import: %s)"
                                   % (self.target, image.get("os_glance_failed_import", "")))
        raise RuntimeError("copy-image into %s did not finish in %d s" % (self.target, COPY_TIMEOUT))

    def show(self, iid):
        """The image as the list API gives it (with the filters that show
        every image). Not GET /v2/images/ID: on glance 31 and 32 (2025.2,
        2026.1) that read, by a caller who may modify the image, saves its
        S3 locations again whenever s3_store_host carries a scheme, a write
        beside the copy-image task's (docs/day2.md)."""
        found = []
        for filters in LISTINGS:
            found += self.api("GET", "/v2/images?id=in:%s&%s" % (iid, filters))["images"]
        if len(found) != 1:
            raise RuntimeError("GET /v2/images?id=in:%s lists %d images" % (iid, len(found)))
        return found[0]

    def remove(self, iid):
        """Delete the leaving store's location, each of them if the image
        has several there (a DELETE removes one)."""
        for _ in range(10):
            self.api("DELETE", "/v2/stores/%s/%s" % (self.source, iid), ok=(204, 404))
            if self.source not in stores(self.show(iid)):
                return
        raise RuntimeError("still has a location in %s after 10 removals" % self.source)

    def verify(self, image):
        """Read the copy from the target bucket, as glance_store wrote it
        (object key: the image's ID), and compare its hash."""
        algo, want = image.get("os_hash_algo"), image.get("os_hash_value")
        if not algo or not want:
            raise RuntimeError("no os_hash_value to verify the copy against")
        c = self.conf[self.target]
        host = c.s3_store_host if "://" in c.s3_store_host else "http://" + c.s3_store_host
        client = boto3.session.Session(aws_access_key_id=c.s3_store_access_key,
                                       aws_secret_access_key=c.s3_store_secret_key).client(
            "s3", endpoint_url=host, region_name=getattr(c, "s3_store_region_name", None) or None,
            verify=getattr(c, "s3_store_cacert", "") or None,
            config=boto_config.Config(s3={"addressing_style": c.s3_store_bucket_url_format}))
        h = hashlib.new(algo)
        body = client.get_object(Bucket=c.s3_store_bucket, Key=image["id"])["Body"]
        for chunk in iter(lambda: body.read(1 << 20), b""):
            h.update(chunk)
        if h.hexdigest() != want:
            raise RuntimeError("the copy in %s hashes to %s, os_hash_value is %s" % (self.target, h.hexdigest(), want))

    def run(self):
        self.record_ready()
        todo = self.images()
        say("%d images have a location in %s; target %s" % (len(todo), self.source, self.target))
        self.record["remaining"] = len(todo)
        self.save()
        for image in todo:
            iid = image["id"]
            try:
                if image.get("status") != "active":
                    # Glance copies, and removes a location of, only an
                    # active image. Reactivating a deactivated one would let
                    # every project that sees it download it while it is
                    # copied: an operator's decision, not the drain's.
                    raise RuntimeError("status %s: Glance copies only an active image; reactivate it for the drain "
                                       "(and deactivate it after) or delete it, then run the drain again" % image.get("status"))
                image = self.copy(image)
                self.verify(image)
                self.remove(iid)
            except Exception as e:  # one image's failure stops nothing else
                self.record["failed"][iid] = str(e)
                self.record["remaining"] -= 1
                self.save()
                say("image %s: %s; its location in %s is kept" % (iid, e, self.source))
            else:
                self.record["moved"].append(iid)
                self.record["remaining"] -= 1
                self.save()
                say("image %s: copied to %s, %s verified, removed from %s" % (iid, self.target, image["os_hash_algo"], self.source))
        # What is left is what Glance lists now, never what this run
        # started with: an image it did not move (added during the run, or
        # whose removal did not hold) is named as failed.
        left = self.images()
        for image in left:
            if image["id"] not in self.record["failed"]:
                self.record["failed"][image["id"]] = "still has a location in %s after the drain: run it again" % self.source
                say("image %s: still has a location in %s after the drain" % (image["id"], self.source))
        self.record["remaining"] = len(left)
        self.record["state"] = "Complete" if not left and not self.record["failed"] else "Failed"
        self.save()
        say("%s: %d moved, %d failed, %d left in %s" % (self.record["state"], len(self.record["moved"]),
                                                       len(self.record["failed"]), len(left), self.source))
        return 0 if self.record["state"] == "Complete" else 1

    def record_ready(self):
        """The record ConfigMap the render holds must be there: the drain
        never creates it (its Role cannot)."""
        name = os.environ.get("GLANCE_KRM_DRAIN_RECORD")
        if name:
            wait_configmap(name, RECORD_WAIT)

    def save(self):
        data = {"from": self.source, "to": self.target, "state": self.record["state"],
                "remaining": str(self.record["remaining"]), "job": os.environ.get("GLANCE_KRM_DRAIN_JOB", ""),
                "record.json": json.dumps(self.record, sort_keys=True)}
        path = os.environ.get("GLANCE_KRM_DRAIN_RECORD_FILE")
        if path:
            with open(path + ".tmp", "w") as f:
                json.dump(data, f, sort_keys=True)
            os.replace(path + ".tmp", path)
        name = os.environ.get("GLANCE_KRM_DRAIN_RECORD")
        if name:
            save_configmap(name, data)


class KubeAPI:
    """The API server, as the pod's service account."""

    def __init__(self):
        sa = os.environ.get("GLANCE_KRM_SERVICEACCOUNT_DIR", "/var/run/secrets/kubernetes.io/serviceaccount").rstrip("/") + "/"
        with open(sa + "token") as f:
            self.token = f.read().strip()
        with open(sa + "namespace") as f:
            self.ns = f.read().strip()
        self.base = "https://%s:%s/api/v1/namespaces/%s/configmaps/" % (
            os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"], self.ns)
        self.ctx = ssl.create_default_context(cafile=sa + "ca.crt")

    def call(self, method, name, body=None, content_type="application/json"):
        req = urllib.request.Request(self.base + name, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "Bearer " + self.token, "Content-Type": content_type})
        with urllib.request.urlopen(req, context=self.ctx, timeout=30) as resp:
            return json.load(resp)


def wait_configmap(name, wait):
    """GET the record; a 404 is retried for wait seconds (the record and
    the Job may be applied a moment apart), then the drain stops."""
    kube = KubeAPI()
    deadline = time.time() + wait
    while True:
        try:
            return kube.call("GET", name)
        except urllib.error.HTTPError as e:
            if e.code != 404:
                raise RuntimeError("reading the record ConfigMap %s/%s: %d %s" % (kube.ns, name, e.code, e.read()[:300].decode("utf-8", "replace")))
        if time.time() >= deadline:
            raise SystemExit("drain: the record ConfigMap %s/%s does not exist: the rendered record ConfigMap %s/%s must be "
                             "applied with the Job (the drain never creates it)" % (kube.ns, name, kube.ns, name))
        time.sleep(2)


def save_configmap(name, data):
    """Write the record's data into the ConfigMap the render holds (a merge
    patch of data alone: its metadata stays the render's)."""
    kube = KubeAPI()
    try:
        kube.call("PATCH", name, {"data": data}, "application/merge-patch+json")
    except urllib.error.HTTPError as e:
        raise RuntimeError("writing the record ConfigMap %s/%s: %d %s" % (kube.ns, name, e.code, e.read()[:300].decode("utf-8", "replace")))


def split(value):
    return {s for s in (value or "").split(",") if s}


def stores(image):
    return split(image.get("stores"))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] == sys.argv[2]:
        raise SystemExit(__doc__)
    # PID 1 of its container: without a handler the kernel ignores SIGTERM
    # and a deleted pod would go on for its whole grace period. Stopping
    # anywhere is safe; the next run resumes from what Glance says.
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    sys.exit(Drain(sys.argv[1], sys.argv[2]).run())
