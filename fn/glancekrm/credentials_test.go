package glancekrm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// credentialValues are values a Kubernetes Secret holds and Glance can
// use, which environment variables could not carry: oslo.config
// interpolates $ there as in files.
var credentialValues = []string{
	"pa$word", "Xy$username", "${x}", "$$", `\$`, "100%", "%(user)s", "#hash", "; semi", `"quoted"`, "'single'",
	`"`, " leading space", "trailing space ", `back\slash`, "a = b", "ünï ✓ 🙂", "[section]", "$ % # \" ' x",
}

// layCredentials writes values as the kubelet's projected volume does,
// with its ..data indirection.
func layCredentials(t *testing.T, values map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "..2026_11_29_00_00_00.000000000")
	for path, v := range values {
		p := filepath.Join(data, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{credentialsRequired, credentialsOptional} {
		if _, err := os.Stat(filepath.Join(data, kind)); err == nil {
			if err := os.Symlink(filepath.Join("..data", kind), filepath.Join(dir, kind)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// TestCredentialsReachGlanceExactly: every value goes through the init
// container's writer and is read back by Debian's oslo.config exactly.
func TestCredentialsReachGlanceExactly(t *testing.T) {
	if _, err := exec.Command("/usr/bin/python3", "-c", "import oslo_config").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-oslo.config is required (make deps-python): %v", err)
	}
	values := map[string]string{}
	want := map[string]map[string]string{}
	for i, v := range credentialValues {
		section := "section-" + string(rune('a'+i))
		values[credentialPath(true, section, "password")] = v
		want[section] = map[string]string{"password": v}
		if strings.ContainsAny(v, "#?@:") {
			continue // glance_store cannot carry these in an S3 key: see the next test
		}
		store := "store-" + string(rune('a'+i))
		values[credentialPath(false, store, "s3_store_secret_key")] = v
		values[credentialPath(false, store, "s3_store_access_key")] = "AK" + v
		want[store] = map[string]string{"s3_store_secret_key": v, "s3_store_access_key": "AK" + v}
	}
	values[credentialPath(true, "database", "connection")] = "sqlite:////var/lib/glance/$db %s.sqlite"
	values[credentialPath(true, "keystone_authtoken", "password")] = " pa$word#1 "
	want["database"] = map[string]string{"connection": "sqlite:////var/lib/glance/$db %s.sqlite"}
	want["keystone_authtoken"] = map[string]string{"password": " pa$word#1 "}

	out := t.TempDir()
	var log bytes.Buffer
	if err := WriteCredentials(layCredentials(t, values), filepath.Join(out, "credentials.conf"), nil, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	osloReadBack(t, []string{out}, want)
	assertNoValue(t, log.String(), values)
}

// TestCredentialsRefuseUnrepresentable: a value oslo.config cannot read
// back is never written. An optional one (a store key) is skipped, so the
// store stays disabled; a required one stops the init container. The log
// names the section and option, never the value.
func TestCredentialsRefuseUnrepresentable(t *testing.T) {
	for name, v := range map[string]string{
		"newline": "secret-one\n", "carriage return": "sec\rret", "NUL": "se\x00cret", "tab": "sec\tret",
		"invalid UTF-8": "sec\xffret", "empty": "",
		// glance_store writes S3 keys into image location URLs.
		"a # in an S3 key": "sec#ret", "a ? in an S3 key": "sec?ret", "an @ in an S3 key": "sec@ret", "a : in an S3 key": "sec:ret",
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "credentials.conf")
			optional := map[string]string{
				credentialPath(false, "bad", "s3_store_secret_key"):  v,
				credentialPath(false, "good", "s3_store_secret_key"): "fine-value",
			}
			var log bytes.Buffer
			if err := WriteCredentials(layCredentials(t, optional), out, nil, &log); err != nil {
				t.Fatalf("an unusable store key must not stop the pod: %v", err)
			}
			b, _ := os.ReadFile(out)
			if strings.Contains(string(b), "[bad]") || !strings.Contains(string(b), "[good]") {
				t.Errorf("written file:\n%s", b)
			}
			if !strings.Contains(log.String(), "[bad] s3_store_secret_key") {
				t.Errorf("log does not name the option: %s", log.String())
			}
			assertNoValue(t, log.String(), optional)

			if strings.Contains(name, "S3 key") {
				return // fine elsewhere: a password may hold them
			}
			required := map[string]string{credentialPath(true, "database", "connection"): v}
			log.Reset()
			err := WriteCredentials(layCredentials(t, required), filepath.Join(t.TempDir(), "c.conf"), nil, &log)
			if err == nil || !strings.Contains(err.Error(), "[database] connection") {
				t.Errorf("an unusable database connection must stop the init container naming it, got %v", err)
			}
			if err != nil {
				assertNoValue(t, err.Error(), required)
			}
		})
	}
}

func assertNoValue(t *testing.T, text string, values map[string]string) {
	t.Helper()
	for _, v := range values {
		if v = strings.TrimSpace(v); len(v) > 3 && strings.Contains(text, v) {
			t.Errorf("a credential value leaks into %q", text)
		}
	}
}
