package wire

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/fn/glancekrm/ynode"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// configDirPlan is where the missing --config-dir flags go.
type configDirPlan struct {
	field   string // command or args
	missing []string
}

func (p configDirPlan) apply(c *yaml.RNode) error {
	if len(p.missing) == 0 {
		return nil
	}
	list, err := c.Pipe(yaml.LookupCreate(yaml.SequenceNode, p.field))
	if err != nil {
		return err
	}
	for _, d := range p.missing {
		if err := list.PipeE(yaml.Append(ynode.Str("--config-dir"), ynode.Str(d))); err != nil {
			return err
		}
	}
	return nil
}

var shells = []string{"sh", "bash", "dash", "ash", "ksh", "zsh", "busybox"}

// planConfigDirs decides how glance-api will read glance-krm's config
// dirs. oslo.config reads both by default for glance-api, but only while
// no --config-dir is given: a command line that names its own dirs gets
// ours appended at its end, where glance-api sees them and where they win.
// A shell script that names its own dirs must name ours or pass "$@" on;
// a container without a command (the image's entrypoint, and whether it
// passes --config-dir, is unknown at build time) and another program are
// refused with how to write them.
func planConfigDirs(c *yaml.RNode) (configDirPlan, error) {
	command, args := stringList(c, "command"), stringList(c, "args")
	argv := append(slices.Clone(command), args...)
	field := "args"
	if len(args) == 0 && len(command) > 0 {
		field = "command"
	}
	name := ynode.String(c, "name")
	if script, ok := shellScript(argv); ok {
		var missing []string
		for _, d := range ConfigDirs {
			if !scriptNamesDir(script, d) {
				missing = append(missing, d)
			}
		}
		switch {
		case len(missing) == 0 || !strings.Contains(script, "--config-dir"):
			return configDirPlan{}, nil
		case strings.Contains(script, "$@") && len(argv) > slices.Index(argv, script)+1:
			// sh -c '... glance-api "$@"' NAME: appended words become "$@".
			return configDirPlan{field: field, missing: missing}, nil
		}
		return configDirPlan{}, fmt.Errorf("container %s starts glance-api through a shell script that names its own --config-dir, which turns off oslo.config's default directories, and glance-krm cannot add its own to a script: end the glance-api line of the script with %s, or pass \"$@\" to glance-api and give the script a name argument, or drop the script's --config-dir",
			name, ConfigDirFlags(ConfigDirs))
	}
	switch {
	case len(command) == 0 && !runsGlanceAPI(args):
		return configDirPlan{}, fmt.Errorf("container %s sets no command, so the image's entrypoint runs glance-api with arguments unknown at build time (a --config-dir there would hide glance-krm's directories): set command: [glance-api] (or your WSGI server's command line)",
			name)
	case !runsGlanceAPI(argv):
		return configDirPlan{}, fmt.Errorf("container %s does not start glance-api in its command or args (%s): set command: [glance-api] (directly or through a wrapper), or a WSGI server serving glance (uwsgi --ini .../glance-api-uwsgi.ini)",
			name, strings.Join(argv, " "))
	case !slices.ContainsFunc(argv, func(a string) bool { return a == "--config-dir" || strings.HasPrefix(a, "--config-dir=") }):
		return configDirPlan{}, nil // oslo.config's defaults are ours
	}
	return configDirPlan{field: field, missing: missingDirs(argv)}, nil
}

// stripLegacyDirs removes the --config-dir flags an earlier glance-krm
// appended for directories it no longer mounts.
func stripLegacyDirs(c *yaml.RNode) error {
	for _, field := range []string{"command", "args"} {
		list, err := c.Pipe(yaml.Lookup(field))
		if err != nil || list == nil {
			continue
		}
		legacy := func(v string) bool {
			return slices.Contains(legacyConfigDirs, v) || slices.Contains(legacyConfigDirs, v+"/")
		}
		var out []*yaml.Node
		items := list.YNode().Content
		for i := 0; i < len(items); i++ {
			v := items[i].Value
			if d, ok := strings.CutPrefix(v, "--config-dir="); ok && legacy(d) {
				continue
			}
			if v == "--config-dir" && i+1 < len(items) && legacy(items[i+1].Value) {
				i++
				continue
			}
			out = append(out, items[i])
		}
		list.YNode().Content = out
	}
	return nil
}

// ConfigDirFlags is the --config-dir flags of a shell command line.
func ConfigDirFlags(dirs []string) string {
	var parts []string
	for _, d := range dirs {
		parts = append(parts, "--config-dir "+d)
	}
	return strings.Join(parts, " ")
}

// shellScript is the script of a `sh -c SCRIPT ...` command line.
func shellScript(argv []string) (string, bool) {
	if len(argv) < 2 || !slices.Contains(shells, base(argv[0])) {
		return "", false
	}
	for i, a := range argv[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") && i+2 < len(argv) {
			return argv[i+2], true
		}
	}
	return "", false
}

func scriptNamesDir(script, dir string) bool {
	d := strings.TrimSuffix(dir, "/")
	for _, form := range []string{"--config-dir " + d + "/", "--config-dir " + d + " ", "--config-dir=" + d + "/", "--config-dir=" + d + " "} {
		if strings.Contains(script+" ", form) {
			return true
		}
	}
	return strings.HasSuffix(script, "--config-dir "+d) || strings.HasSuffix(script, "--config-dir="+d)
}

func missingDirs(argv []string) []string {
	var missing []string
	for _, d := range ConfigDirs {
		want := strings.TrimSuffix(d, "/")
		found := false
		for i, a := range argv {
			if v, ok := strings.CutPrefix(a, "--config-dir="); ok && strings.TrimSuffix(v, "/") == want {
				found = true
			}
			if a == "--config-dir" && i+1 < len(argv) && strings.TrimSuffix(argv[i+1], "/") == want {
				found = true
			}
		}
		if !found {
			missing = append(missing, d)
		}
	}
	return missing
}

func stringList(c *yaml.RNode, field string) []string {
	n := c.Field(field)
	if n == nil {
		return nil
	}
	elems, err := n.Value.Elements()
	if err != nil {
		return nil
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		out[i] = e.YNode().Value
	}
	return out
}

// mountDirs are the directories glance-krm mounts into a glance-api
// container: ConfigDirs, and where a WSGI server runs a glance that reads
// the server's own directory (WSGIReadsServerDir) the credentials once
// more there, /etc/glance/<server>.conf.d/. A shell script starting a
// WSGI server on such a release is refused: which program the script
// finally runs decides the directory, and a script cannot be read for it.
func mountDirs(c *yaml.RNode, s *v1alpha1.GlanceSpec) ([]string, error) {
	if !s.WSGIReadsServerDir() {
		return ConfigDirs, nil
	}
	argv := append(stringList(c, "command"), stringList(c, "args")...)
	if script, ok := shellScript(argv); ok {
		for _, server := range wsgiServers {
			if strings.Contains(script, server) {
				return nil, fmt.Errorf("container %s starts %s through a shell script: glance before 2026.2 reads its credentials from /etc/glance/<program>.conf.d/, named after the program the script finally runs, which glance-krm cannot tell from a script: make %s the container's command (command: [%s, --ini, ...])",
					ynode.String(c, "name"), server, server, server)
			}
		}
		return ConfigDirs, nil
	}
	if i := serverOf(argv); i >= 0 {
		return append(slices.Clone(ConfigDirs), "/etc/glance/"+base(argv[i])+".conf.d/"), nil
	}
	return ConfigDirs, nil
}
