package validate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"

	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/glancekrm"
)

// buildKustomization is validate on the kustomization in dir: kustomize's
// own build of it (krusty, with the options `kustomize build
// --enable-alpha-plugins --enable-exec` gives), the function running
// where the kustomization and its bases declare it, on exactly what the
// build hands it there. Running the function, not only its checks, is
// what makes the verdict the build's: its input in an overlay holds what
// a base's run rendered, and its later stages (wiring a workload) fail a
// build too. The view (view.go) runs this binary, and nothing else, in
// the place of every declared function, each run recording its results
// (AsFunction); the locator maps them to files and lines.
//
// ok is false when the function reported an error; err is set when the
// build fails for any other reason (kustomize's own message), when the
// kustomization needs the network, or when it declares a function
// validate does not run: then no verdict can be given.
func buildKustomization(dir, self string) (fs []findings.Finding, ok bool, err error) {
	if self == "" || !filepath.IsAbs(self) {
		return nil, false, fmt.Errorf("validate builds a kustomization with the glance-krm-fn binary as its function, and has no absolute path to it (%q)", self)
	}
	tree, err := readTree(dir, map[string]*kustomization{})
	if err != nil {
		return nil, false, err
	}
	tmp, err := os.MkdirTemp("", "glance-krm-validate-")
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	records, plugins := filepath.Join(tmp, "runs"), filepath.Join(tmp, "plugins")
	for _, d := range []string{records, plugins} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, false, err
		}
	}
	v, err := newView(dir, self, records)
	if err != nil {
		return nil, false, err
	}
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	// kustomize finds an exec or Go plugin (a transformer config of a kind
	// it does not know, without a function annotation) in its plugin home
	// on the disk, whatever file system it reads: an empty one keeps them
	// from running.
	restore := setenv(konfig.KustomizePluginHomeEnv, plugins)
	_, buildErr := krusty.MakeKustomizer(opts).Run(v, dir)
	restore()
	runs, err := readRuns(records)
	if err != nil {
		return nil, false, err
	}
	for _, r := range runs {
		if r.Refused != "" {
			return nil, false, fmt.Errorf("the build runs %s: validate runs no function but glance-krm, so it cannot know the build's verdict", r.Refused)
		}
	}
	failed := slices.ContainsFunc(runs, func(r run) bool {
		return r.Failed && slices.ContainsFunc(r.Results, func(res recorded) bool { return res.Level == findings.Error })
	})
	switch {
	case buildErr == nil, failed:
	case strings.Contains(buildErr.Error(), plugins):
		return nil, false, fmt.Errorf("the build runs a kustomize exec or Go plugin, and validate runs none, so it cannot know the build's verdict: %w", buildErr)
	default:
		return nil, false, fmt.Errorf("kustomize build: %w", buildErr)
	}
	l := newLocator(tree, dir)
	ok = true
	for _, r := range runs {
		for _, res := range r.Results {
			if f := l.finding(r, res); !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
			ok = ok && res.Level != findings.Error
		}
	}
	if len(runs) == 0 {
		fs = append(fs, findings.Finding{Rule: "not-declared", Level: findings.Warning, File: tree.file,
			Message: fmt.Sprintf("%s: neither this kustomization nor one it builds on declares glance-krm as a transformer: the build runs none of its checks", glancekrm.Name)})
	}
	return fs, ok, nil
}

// setenv sets an environment variable until restore is called.
func setenv(key, value string) (restore func()) {
	old, had := os.LookupEnv(key)
	_ = os.Setenv(key, value)
	return func() {
		if had {
			_ = os.Setenv(key, old)
		} else {
			_ = os.Unsetenv(key)
		}
	}
}
