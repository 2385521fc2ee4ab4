//go:build e2e

package packaging_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Bounds every hostile input must stay within, measured on the function
// binary as a process (peak RSS from the kernel's rusage).
const (
	hostileMaxRSS  = 2 << 30 // bytes
	hostileTimeout = 3 * time.Minute
)

const rlHead = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"

func glanceItem(ns, name string) string {
	return fmt.Sprintf(`- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: Glance
  metadata: {name: %s, namespace: %s}
  spec:
    openStackRelease: "2025.2"
    image: {repository: glance, tag: "1"}
    database: {host: mariadb, database: glance, secretRef: {name: db}}
    cache: {servers: ["memcached:11211"]}
    keystoneEndpoint: http://keystone:5000/v3
    serviceUser: {secretRef: {name: pw}}
`, name, ns)
}

func backendItem(ns, glance, name string, isDefault bool) string {
	return fmt.Sprintf(`- apiVersion: glance.openstack.c5c3.io/v1alpha1
  kind: GlanceBackend
  metadata: {name: %s, namespace: %s}
  spec: {glanceRef: {name: %s}, type: S3, isDefault: %t, s3: {host: "http://s3:9000", bucket: b, credentialsSecretRef: {name: c}}}
`, name, ns, glance, isDefault)
}

// hostileInputs: each must give correct output or a clear error result.
func hostileInputs() map[string]struct {
	in      string
	wantErr string // the error result's words; "" wants correct output
} {
	big := strings.Repeat("x", 10<<10)
	var fifty strings.Builder
	fifty.WriteString(rlHead + glanceItem("ns", "glance") + backendItem("ns", "glance", "primary", true))
	for i := 0; fifty.Len() < 50<<20; i++ {
		fmt.Fprintf(&fifty, "- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-%05d, namespace: ns}, data: {blob: %s}}\n", i, big)
	}
	var many strings.Builder
	many.WriteString(rlHead + glanceItem("ns", "glance"))
	for i := range 10_000 {
		many.WriteString(backendItem("ns", "glance", fmt.Sprintf("store-%05d", i), i == 0))
	}
	withBackend := func(glanceExtra string) string {
		return rlHead + glanceItem("ns", "glance") + glanceExtra + backendItem("ns", "glance", "primary", true)
	}
	nested := withBackend("    extraConfig: {DEFAULT: {x: " + strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000) + "}}\n")
	nestedOther := rlHead + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: deep}, data: " + strings.Repeat("{a: ", 5000) + "b" + strings.Repeat("}", 5000) + "}\n"
	bomb := rlHead + "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: bomb}\n  data:\n    a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	for i, prev := 1, "a"; i < 9; i++ {
		cur := string(rune('a' + i))
		bomb += fmt.Sprintf("    %s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", cur, cur, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = cur
	}
	aliasInGlance := withBackend("    extraConfig: &x {DEFAULT: {debug: \"true\"}}\n    region: *x\n")
	return map[string]struct {
		in      string
		wantErr string
	}{
		"a 50 MB ResourceList":          {fifty.String(), ""},
		"10,000 backends on one Glance": {many.String(), ""},
		// The YAML parser refuses more than 10,000 levels outright.
		"deeply nested YAML in a Glance": {nested, "exceeded max depth"},
		// 5,000 levels in an object that is not ours pass through untouched.
		"deeply nested YAML in another object": {nestedOther, ""},
		// Aliases stay aliases (nothing expands them) in objects not ours...
		"a YAML alias bomb in another object": {bomb, ""},
		// ...and are refused in ours, which are decoded.
		"YAML aliases in a Glance": {aliasInGlance, "YAML aliases are not supported"},
		"a YAML alias bomb in a Glance": {withBackend("    extraConfig:\n" + strings.ReplaceAll(bomb[strings.Index(bomb, "    a: &a"):], "    ", "      ")),
			"YAML aliases are not supported"},
		"non-UTF-8 bytes":       {rlHead + "- {apiVersion: v1, kind: ConfigMap, metadata: {name: \xff\xfe}}\n", "invalid leading UTF-8 octet"},
		"duplicate keys":        {withBackend("    region: a\n    region: b\n"), `duplicate field "spec.region"`},
		"an empty ResourceList": {"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n", ""},
	}
}

func TestHostileInput(t *testing.T) {
	bin := mustEnv(t, "GLANCE_KRM_FN")
	for name, tc := range hostileInputs() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), hostileTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin)
			cmd.Stdin = strings.NewReader(tc.in)
			var out, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &stderr
			start := time.Now()
			err := cmd.Run()
			elapsed := time.Since(start)
			if ctx.Err() != nil {
				t.Fatalf("no answer within %s", hostileTimeout)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			t.Logf("%d MB in, exit %d, %s, peak RSS %d MB", len(tc.in)>>20, cmd.ProcessState.ExitCode(), elapsed.Round(time.Millisecond), rss>>20)
			if code := cmd.ProcessState.ExitCode(); code != 0 && code != 1 {
				t.Fatalf("crashed (exit %d): %v\n%s", code, err, tail(stderr.String()))
			}
			if rss > hostileMaxRSS {
				t.Errorf("peak RSS %d MB, more than %d MB", rss>>20, hostileMaxRSS>>20)
			}
			rl, perr := fn.ParseResourceList(out.Bytes())
			if perr != nil {
				t.Fatalf("the answer is not a ResourceList: %v\n%s", perr, tail(stderr.String()))
			}
			var errs []string
			for _, r := range rl.Results {
				if r.Severity == fn.Error {
					errs = append(errs, r.Message)
				}
			}
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(strings.Join(errs, "\n"), tc.wantErr)):
				t.Errorf("want an error result saying %q, got exit %v and results %v", tc.wantErr, err, rl.Results)
			case tc.wantErr == "" && err != nil:
				t.Errorf("want correct output, got %v: %v", err, errs)
			case tc.wantErr == "" && !bytes.Contains(out.Bytes(), []byte("glance-krm")):
				t.Error("no glance-krm result in the output")
			}
			if len(errs) > 0 {
				t.Logf("error result: %s", truncate(errs[0]))
			}
		})
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return s[len(s)-2000:]
	}
	return s
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
