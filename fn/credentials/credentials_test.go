package credentials

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/internal/testenv"
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
	for _, kind := range []string{Required, Optional} {
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
	testenv.OsloConfig(t)
	values := map[string]string{}
	want := map[string]map[string]string{}
	for i, v := range credentialValues {
		section := "section-" + string(rune('a'+i))
		values[Path(true, section, "password")] = v
		want[section] = map[string]string{"password": v}
		if strings.ContainsAny(v, "#?@:") {
			continue // glance_store cannot carry these in an S3 key: see the next test
		}
		store := "store-" + string(rune('a'+i))
		values[Path(false, store, "s3_store_secret_key")] = v
		values[Path(false, store, "s3_store_access_key")] = "AK" + v
		want[store] = map[string]string{"s3_store_secret_key": v, "s3_store_access_key": "AK" + v}
	}
	values[Path(true, "database", "connection")] = "sqlite:////var/lib/glance/$db %s.sqlite"
	values[Path(true, "keystone_authtoken", "password")] = " pa$word#1 "
	want["database"] = map[string]string{"connection": "sqlite:////var/lib/glance/$db %s.sqlite"}
	want["keystone_authtoken"] = map[string]string{"password": " pa$word#1 "}

	out := t.TempDir()
	var log bytes.Buffer
	if err := Write(layCredentials(t, values), filepath.Join(out, "credentials.conf"), nil, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	testenv.OsloReadBack(t, []string{out}, want)
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
				Path(false, "bad", "s3_store_secret_key"):  v,
				Path(false, "good", "s3_store_secret_key"): "fine-value",
			}
			var log bytes.Buffer
			if err := Write(layCredentials(t, optional), out, nil, &log); err != nil {
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
			required := map[string]string{Path(true, "keystone_authtoken", "password"): v}
			log.Reset()
			err := Write(layCredentials(t, required), filepath.Join(t.TempDir(), "c.conf"), nil, &log)
			if err == nil || !strings.Contains(err.Error(), "[keystone_authtoken] password") {
				t.Errorf("an unusable service password must stop the init container naming it, got %v", err)
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

// TestDatabaseConnectionComposed: the init container composes [database]
// connection as the seed operator does, from the password (and, outside
// Static managed mode, the username) of spec.database.secretRef; any
// character travels, percent-encoded; a missing key stops the pod naming
// the key, never a value.
func TestDatabaseConnectionComposed(t *testing.T) {
	password := ` p@ss:w/o?r#d[]%$ "'\`
	for name, tc := range map[string]struct {
		target  Target
		files   map[string]string
		want    string
		problem string
	}{
		"static managed: the Glance's name is the user": {
			target: Target{host: "openstack-db.openstack.svc:3306", name: "glance", user: "glance", query: "charset=utf8"},
			files:  map[string]string{"database/password": password},
			want:   "mysql+pymysql://glance:%20p%40ss%3Aw%2Fo%3Fr%23d%5B%5D%25$%20%22%27%5C@openstack-db.openstack.svc:3306/glance?charset=utf8",
		},
		"brownfield: the Secret's username": {
			target: Target{host: "db.example:3307", name: "glance", query: "charset=utf8"},
			files:  map[string]string{"database/password": "pw", "database/username": "glance@db"},
			want:   "mysql+pymysql://glance%40db:pw@db.example:3307/glance?charset=utf8",
		},
		"no password": {
			target:  Target{host: "db:3306", name: "glance", user: "glance"},
			files:   map[string]string{},
			problem: `[database] connection: key "password" of spec.database.secretRef is missing`,
		},
		"a password with a trailing newline (kubectl create secret --from-file)": {
			target:  Target{host: "db:3306", name: "glance", user: "glance"},
			files:   map[string]string{"database/password": "pw\n"},
			problem: `[database] connection: key "password" of spec.database.secretRef contains a newline or carriage return`,
		},
		"a username with a trailing newline": {
			target:  Target{host: "db:3306", name: "glance"},
			files:   map[string]string{"database/password": "pw", "database/username": "glance\n"},
			problem: `[database] connection: key "username" of spec.database.secretRef contains a newline or carriage return`,
		},
		"an empty password, like an empty service password": {
			target:  Target{host: "db:3306", name: "glance", user: "glance"},
			files:   map[string]string{"database/password": ""},
			problem: `[database] connection: key "password" of spec.database.secretRef is empty`,
		},
		"no username outside static mode": {
			target:  Target{host: "db:3306", name: "glance"},
			files:   map[string]string{"database/password": "pw"},
			problem: `[database] connection: key "username" of spec.database.secretRef is missing`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for p, v := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, p), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, problem := composeConnection(filepath.Join(dir, DatabaseDir), tc.target)
			if problem != tc.problem || got != tc.want {
				t.Errorf("got %q, problem %q; want %q, problem %q", got, problem, tc.want, tc.problem)
			}
			assertNoValue(t, problem, tc.files)
		})
	}
}

// TestWriteLeavesNothingBehind: a write that fails removes its temporary
// file, and what a crashed run left (a read-only temporary) does not stop
// the next one.
func TestWriteLeavesNothingBehind(t *testing.T) {
	from := layCredentials(t, map[string]string{Path(true, "keystone_authtoken", "password"): "pw"})
	out := t.TempDir()
	to := filepath.Join(out, "credentials.conf")
	// A crashed run: its read-only temporary, and the name an earlier
	// glance-krm used.
	for _, f := range []string{"." + filepath.Base(to) + ".tmp-123", filepath.Base(to) + ".tmp"} {
		if err := os.WriteFile(filepath.Join(out, f), []byte("x"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	// A failed write: the target is a folder, so the rename fails.
	if err := os.Mkdir(to, 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := Write(from, to, nil, &log); err == nil {
		t.Fatal("writing over a folder succeeded")
	}
	if left, _ := os.ReadDir(out); len(left) != 1 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("a failed write left %v beside the target", names)
	}
	if err := os.Remove(to); err != nil {
		t.Fatal(err)
	}
	if err := Write(from, to, nil, &log); err != nil {
		t.Fatalf("the retry failed: %v", err)
	}
	if info, err := os.Stat(to); err != nil || info.Mode().Perm() != 0o444 {
		t.Errorf("written file %v, %v; want mode 0444", info, err)
	}
}

// TestWriteChecksItsBudget: the credentials volume is a 1Mi memory
// emptyDir; a file over it is refused naming the volume.
func TestWriteChecksItsBudget(t *testing.T) {
	values := map[string]string{}
	for i := range 40 {
		values[Path(false, fmt.Sprintf("store-%02d", i), "s3_store_secret_key")] = strings.Repeat("k", 30000)
	}
	err := Write(layCredentials(t, values), filepath.Join(t.TempDir(), "credentials.conf"), nil, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "more than the 1Mi the credentials volume (emptyDir glance-krm-credentials) holds") {
		t.Fatalf("got %v", err)
	}
	assertNoValue(t, err.Error(), values)
}

func TestWriteNeedsItsFolder(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing"), filepath.Join(t.TempDir(), "c.conf"), nil, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is not a folder") {
		t.Fatalf("got %v", err)
	}
}
