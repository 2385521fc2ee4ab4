//go:build e2e

package glance_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// mariaDB is Debian's MariaDB server on a temporary data directory,
// listening on loopback: the database the rendered connection names.
type mariaDB struct {
	port   int
	socket string
}

// sqlString quotes s as a MariaDB string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\x00", `\0`).Replace(s) + "'"
}

// startMariaDB starts a server with one database and one user that may
// reach it over TCP with the password, and stops it when the test ends.
func startMariaDB(t *testing.T, database, user, password string) *mariaDB {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// Its own temporary directory: the servers of tests running side by
	// side never share /tmp's internal temporary tables (a CI run had one
	// bootstrap fail on a temporary table gone from /tmp).
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--user=root",
		"--auth-root-authentication-method=socket", "--skip-test-db", "--tmpdir="+tmp).CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db (make deps-glance installs MariaDB): %v\n%s", err, out)
	}
	m := &mariaDB{port: testenv.FreePort(t), socket: filepath.Join(dir, "mysqld.sock")}
	log, err := os.Create(filepath.Join(dir, "mariadbd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mariadbd", "--no-defaults", "--datadir="+data, "--tmpdir="+tmp, "--socket="+m.socket,
		fmt.Sprintf("--port=%d", m.port), "--bind-address=127.0.0.1", "--user=root", "--skip-log-bin",
		"--innodb-buffer-pool-size=32M", "--pid-file="+filepath.Join(dir, "mariadbd.pid"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := m.exec(t, "SELECT 1"); err == nil {
			break
		} else if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("MariaDB did not come up: %v\n%s", err, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		if err := m.exec(t, fmt.Sprintf("CREATE USER %s@%s IDENTIFIED BY %s", sqlString(user), sqlString(host), sqlString(password))); err != nil {
			t.Fatal(err)
		}
		if err := m.exec(t, fmt.Sprintf("GRANT ALL ON `%s`.* TO %s@%s", database, sqlString(user), sqlString(host))); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.exec(t, fmt.Sprintf("CREATE DATABASE `%s`", database)); err != nil {
		t.Fatal(err)
	}
	return m
}

// exec runs one statement as the server's root, over its socket.
func (m *mariaDB) exec(t *testing.T, sql string) error {
	t.Helper()
	cmd := exec.Command("mariadb", "--no-defaults", "--socket="+m.socket, "-uroot", "--batch", "--skip-column-names")
	cmd.Stdin = strings.NewReader(sql + ";\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, out)
	}
	return nil
}

// query runs one statement as root and returns its rows.
func (m *mariaDB) query(t *testing.T, sql string) []string {
	t.Helper()
	return strings.Fields(string(m.output(t, sql)))
}

// values runs a one-column query as root and returns its values as they
// are stored (unescaped, spaces kept), one per row.
func (m *mariaDB) values(t *testing.T, sql string) []string {
	t.Helper()
	out := m.output(t, sql, "--raw")
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// locations are the values of an image's live locations in Glance's
// database: what glance_store wrote, keys included where it writes them.
func (m *mariaDB) locations(t *testing.T, image string) []string {
	t.Helper()
	return m.values(t, "SELECT value FROM glance.image_locations WHERE deleted = 0 AND image_id = '"+image+"'")
}

func (m *mariaDB) output(t *testing.T, sql string, flags ...string) []byte {
	t.Helper()
	args := append([]string{"--no-defaults", "--socket=" + m.socket, "-uroot", "--batch", "--skip-column-names"}, flags...)
	out, err := exec.Command("mariadb", append(args, "-e", sql)...).Output()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}
