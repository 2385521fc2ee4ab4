package glancekrm

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c5c3/glance-krm/fn/glancekrm/render"

	"github.com/google/go-cmp/cmp"

	"github.com/c5c3/glance-krm/internal/testenv"
	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// TestJSONLoggingKeepsLevels renders a Glance with format json, debug and
// perLoggerLevels and sets logging up with each Debian release's oslo.log,
// as glance-api does (oslo.log's setup on the rendered glance-api.conf,
// which names logging.conf in log_config_append): the root logger is at
// DEBUG and every named logger at its level. oslo.log applies neither
// [DEFAULT] debug nor default_log_levels once log_config_append is set,
// so a logging.conf without them loses both.
func TestJSONLoggingKeepsLevels(t *testing.T) {
	const script = `
import json, logging, sys
from oslo_config import cfg
from oslo_log import log
conf = cfg.ConfigOpts()
log.register_options(conf)
conf(["--config-file", sys.argv[1]], project="glance")
log.setup(conf, "glance")
names = sys.argv[2:]
json.dump({n or "root": logging.getLevelName(logging.getLogger(n).level) for n in [""] + names}, sys.stdout)
`
	for _, py := range testenv.Pythons(t) {
		t.Run(py.Suite, func(t *testing.T) {
			rl, failed := runFnOn(t, docs(glanceWith(`  logging:
    format: json
    level: WARNING
    debug: true
    perLoggerLevels: {glance.api: ERROR, "sqlalchemy.engine": INFO, "odd%name": CRITICAL}
`), testBackend("a", "glance", true)))
			if failed {
				t.Fatalf("failed: %v", rl.Results)
			}
			dir := filepath.Join(os.TempDir(), "glance-krm-logging-"+py.Suite)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			for _, o := range rl.Items {
				if o.GetLabel(v1alpha1.LabelComponent) != v1alpha1.ComponentConfig {
					continue
				}
				conf, _, _ := o.NestedString("data", v1alpha1.KeyGlanceAPIConf)
				logging, _, _ := o.NestedString("data", render.LoggingFile)
				conf = strings.ReplaceAll(conf, v1alpha1.MountConfigDir+render.LoggingFile, filepath.Join(dir, render.LoggingFile))
				for name, text := range map[string]string{"glance-api.conf": conf, render.LoggingFile: logging} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, err := py.Command(script, filepath.Join(dir, "glance-api.conf"), "glance.api", "sqlalchemy.engine", "odd%name").Output()
			if err != nil {
				t.Fatalf("oslo.log setup: %v\n%s", err, stderrOf(err))
			}
			var got map[string]string
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"root": "DEBUG", "glance.api": "ERROR", "sqlalchemy.engine": "INFO", "odd%name": "CRITICAL"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("logger levels after oslo.log's setup (-want +got):\n%s", diff)
			}
		})
	}
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
