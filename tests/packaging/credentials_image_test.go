//go:build e2e

package packaging_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCredentialsInitContainerImage runs the init container the function
// renders, as rendered (image, arguments, mounts, user, read-only root
// file system), from the function image with podman, on Secrets laid out
// as the kubelet's projected volume would. The file it writes holds every
// usable value oslo-escaped; an unusable store key is named, not printed.
func TestCredentialsInitContainerImage(t *testing.T) {
	env := containerEnv(t)
	tagPinned(t, env, fnImage)
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(execOutput(t))}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var init *yaml.RNode
	for _, n := range nodes {
		if n.GetKind() == "Deployment" {
			init, _ = n.Pipe(yaml.Lookup("spec", "template", "spec", "initContainers", "[name=glance-krm-credentials]"))
		}
	}
	if init == nil {
		t.Fatal("the rendered Deployment has no glance-krm-credentials init container")
	}
	image := init.Field("image").Value.YNode().Value
	var args []string
	elems, _ := init.Field("args").Value.Elements()
	for _, e := range elems {
		// The kubelet expands $(VAR) from the container's env; the
		// namespace comes from the downward API.
		args = append(args, strings.ReplaceAll(e.YNode().Value, "$(POD_NAMESPACE)", "openstack"))
	}
	mounts := map[string]string{}
	ms, _ := init.Field("volumeMounts").Value.Elements()
	for _, m := range ms {
		mounts[m.Field("name").Value.YNode().Value] = m.Field("mountPath").Value.YNode().Value
	}

	in, out := t.TempDir(), t.TempDir()
	if err := os.Chmod(out, 0o777); err != nil { // an emptyDir is world-writable
		t.Fatal(err)
	}
	for path, v := range map[string]string{
		"database/password":                    "db pa$s",
		"required/keystone_authtoken/password": " pa$word ",
		"optional/primary/s3_store_secret_key": `a$b"c`,
		"optional/broken/s3_store_secret_key":  "SECRET-MARKER\n",
	} {
		p := filepath.Join(in, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, err := run(t, env, "", "podman", append([]string{"run", "--rm", "--network", "none", "--read-only",
		"--user", "65532:65532", "--security-opt", "no-new-privileges", "--cap-drop", "ALL",
		"-v", in + ":" + mounts["glance-krm-credentials-in"] + ":ro",
		"-v", out + ":" + mounts["glance-krm-credentials"],
		image}, args...)...)
	if err != nil {
		t.Fatalf("the init container failed: %v\n%s%s", err, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "credentials.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"connection = mysql+pymysql://glance:db%20pa\\$s@openstack-db.openstack.svc:3306/glance?charset=utf8\n", "password = \" pa\\$word \"\n", "s3_store_secret_key = a\\$b\"c\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("credentials.conf lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "[broken]") || !strings.Contains(stderr, "[broken] s3_store_secret_key") || strings.Contains(stdout+stderr, "SECRET-MARKER") {
		t.Errorf("the unusable key must be named and left out, never printed; file:\n%s\nlog:\n%s%s", b, stdout, stderr)
	}
}
