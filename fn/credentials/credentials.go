// Package credentials is the glance-krm-credentials init container's code:
// it runs in the pod (glance-krm-fn credentials), not in the build, and
// turns the mounted credential Secrets into one oslo.config file. The
// build uses its layout (Path, TargetOf) to wire the pod.
package credentials

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/c5c3/glance-krm/fn/oslo"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Credentials reach glance-api through a file, not the environment:
// oslo.config interpolates $name in values read from OS_<GROUP>__<OPT>
// variables exactly as in files, so a password such as pa$word cannot
// travel as an environment variable. The build never sees a credential:
// the kubelet mounts the Secrets into an init container (this program, from
// the function's own image), which writes them oslo-escaped into a
// memory-backed emptyDir that glance-api reads as its last --config-dir.
//
// The projected volume lays each value out as <kind>/<section>/<option>:
// required values (the database connection, the service password) stop
// the pod when unusable; optional ones (a store's S3 keys) are skipped,
// so that one bad or absent Secret disables one store, as glance_store
// disables a store without keys.
const (
	Required = "required"
	Optional = "optional"
)

// Path is where the projected volume puts one value.
func Path(required bool, section, option string) string {
	kind := Optional
	if required {
		kind = Required
	}
	return kind + "/" + section + "/" + option
}

// Write reads the values mounted under from and writes them as
// one oslo.config file at to. It reports every skipped value on log by
// section and option, never by value, and fails when a required value is
// missing or unusable.
func Write(from, to string, db *Target, log io.Writer) error {
	if info, err := os.Stat(from); err != nil || !info.IsDir() {
		return fmt.Errorf("%s credentials: --from %s is not a folder: the credential Secrets are not mounted there", v1alpha1.ManagedByGlanceKRM, from)
	}
	sections := map[string]*oslo.Section{}
	var failed []string
	if db != nil {
		dsn, problem := composeConnection(filepath.Join(from, DatabaseDir), *db)
		if problem != "" {
			failed = append(failed, problem)
		} else {
			sections[v1alpha1.SectionDatabase] = &oslo.Section{Name: v1alpha1.SectionDatabase}
			sections[v1alpha1.SectionDatabase].Set(v1alpha1.OptionDatabaseConnect, dsn)
		}
	}
	for _, kind := range []string{Required, Optional} {
		// The database's password and username are composed above, never
		// written as options of their own.
		values, err := readTree(filepath.Join(from, kind))
		if err != nil {
			return err
		}
		for _, v := range values {
			check := v1alpha1.CredentialProblem
			if v.option == v1alpha1.OptionS3AccessKey || v.option == v1alpha1.OptionS3SecretKey {
				check = v1alpha1.S3CredentialProblem
			}
			if problem := check(v.value); problem != "" {
				msg := fmt.Sprintf("[%s] %s %s", v.section, v.option, problem)
				if kind == Required {
					failed = append(failed, msg)
					continue
				}
				fmt.Fprintf(log, "%s credentials: %s: not written, so glance-api does not use it (store %q stays disabled)\n", v1alpha1.ManagedByGlanceKRM, msg, v.section)
				continue
			}
			s := sections[v.section]
			if s == nil {
				s = &oslo.Section{Name: v.section}
				sections[v.section] = s
			}
			s.Set(v.option, string(v.value))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s credentials: %s", v1alpha1.ManagedByGlanceKRM, strings.Join(failed, "; "))
	}
	names := make([]string, 0, len(sections))
	for n := range sections {
		names = append(names, n)
	}
	slices.Sort(names)
	f := &oslo.File{Header: []string{"Written by the glance-krm-credentials init container from the mounted Secrets. Do not edit."}}
	for _, n := range names {
		f.Sections = append(f.Sections, *sections[n])
	}
	out, err := f.String()
	if err != nil {
		return err
	}
	if len(out) > v1alpha1.CredentialsVolumeBytes {
		return fmt.Errorf("%s credentials: the credentials file would be %d bytes, more than the %s the credentials volume (emptyDir %s) holds: fewer or shorter credentials",
			v1alpha1.ManagedByGlanceKRM, len(out), v1alpha1.CredentialsVolumeSize, v1alpha1.VolumeCredentials)
	}
	if err := replaceFile(to, []byte(out)); err != nil {
		return fmt.Errorf("%s credentials: writing %s: %w", v1alpha1.ManagedByGlanceKRM, to, err)
	}
	fmt.Fprintf(log, "%s credentials: wrote %d option(s) in %d section(s) to %s\n", v1alpha1.ManagedByGlanceKRM, f.Count(), len(names), to)
	return nil
}

// replaceFile writes a read-only file in one step: a temporary file beside
// it, renamed over it. A write that fails (the memory volume full, a
// crash) leaves no file behind that a retry of the init container would
// trip over: its own temporary is removed, and those of a crashed earlier
// run are removed first.
func replaceFile(to string, b []byte) error {
	dir, base := filepath.Dir(to), filepath.Base(to)
	stale, _ := filepath.Glob(filepath.Join(dir, "."+base+".tmp-*"))
	for _, f := range append(stale, to+".tmp") { // and what glance-krm before v0.1.0 used
		_ = os.Remove(f)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), to)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// composeConnection reads the database password (and username) the
// volume holds and composes [database] connection; a problem names the
// key, never the value.
func composeConnection(dir string, t Target) (string, string) {
	read := func(key string) (string, string) {
		b, err := os.ReadFile(filepath.Join(dir, key))
		if err != nil {
			return "", fmt.Sprintf("[database] connection: key %q of spec.database.secretRef is missing", key)
		}
		// The same checks as every other credential: a trailing newline
		// (what kubectl create secret --from-file makes of a file) is
		// refused naming the key, not percent-encoded into the URL.
		if problem := v1alpha1.CredentialProblem(b); problem != "" {
			return "", fmt.Sprintf("[database] connection: key %q of spec.database.secretRef %s", key, problem)
		}
		return string(b), ""
	}
	password, problem := read(PasswordKey)
	if problem != "" {
		return "", problem
	}
	user := t.user
	if user == "" {
		if user, problem = read(UsernameKey); problem != "" {
			return "", problem
		}
	}
	return t.dsn(user, password), ""
}

// Flags are the init container's flags for composing the
// database connection; without --database-host it composes none.
type Flags struct{ host, name, user, query string }

// Register adds the flags to fs.
func (d *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&d.host, flagDBHost[2:], "", "database host:port ($(POD_NAMESPACE) expanded by the kubelet)")
	fs.StringVar(&d.name, flagDBName[2:], "", "database name")
	fs.StringVar(&d.user, flagDBUser[2:], "", "database username (default: the Secret's username key)")
	fs.StringVar(&d.query, flagDBQuery[2:], "", "connection URL query")
}

// Target is the composed target, or nil.
func (d *Flags) Target() *Target {
	if d.host == "" {
		return nil
	}
	return &Target{host: d.host, name: d.name, user: d.user, query: d.query}
}

type credentialValue struct {
	section, option string
	value           []byte
}

// readTree reads <dir>/<section>/<option>, skipping the kubelet's own
// ..data links; a missing dir holds nothing.
func readTree(dir string) ([]credentialValue, error) {
	sections, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []credentialValue
	for _, s := range sections {
		if strings.HasPrefix(s.Name(), "..") {
			continue
		}
		options, err := os.ReadDir(filepath.Join(dir, s.Name()))
		if err != nil {
			return nil, err
		}
		for _, o := range options {
			if strings.HasPrefix(o.Name(), "..") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, s.Name(), o.Name()))
			if err != nil {
				return nil, err
			}
			out = append(out, credentialValue{s.Name(), o.Name(), b})
		}
	}
	return out, nil
}
