package fluxsteps

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// FluxSteps are the folders hack/flux-prerender.sh writes: Flux has no
// sync waves, so each wave (v1alpha1's waves) becomes a folder, applied
// by its own Flux Kustomization after the one before it is ready
// (dependsOn, wait). An object in a wave before the first goes to the
// first folder, one after the last to the last.
var FluxSteps = [...]string{"0-prepare", "1-workload", "2-after"}

// FluxStep is the index of the folder of an object's wave.
func FluxStep(annotations map[string]string) int {
	return min(max(v1alpha1.WaveOf(annotations), 0), len(FluxSteps)-1)
}

// SplitSteps sorts a stream of objects (a build, with keep-history's
// carried copies) into the folders of FluxSteps: each object byte for
// byte as the stream holds it, in the stream's order.
func SplitSteps(stream []byte) ([len(FluxSteps)][]byte, error) {
	var out [len(FluxSteps)][]byte
	for i, doc := range documents(stream) {
		if blank(doc) {
			continue
		}
		n, err := yaml.Parse(string(doc))
		if err != nil {
			return out, fmt.Errorf("document %d: %w", i+1, err)
		}
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			return out, fmt.Errorf("document %d is not a Kubernetes object", i+1)
		}
		s := FluxStep(n.GetAnnotations())
		if len(out[s]) > 0 {
			out[s] = append(out[s], "---\n"...)
		}
		out[s] = append(out[s], doc...)
		if !bytes.HasSuffix(doc, []byte("\n")) {
			out[s] = append(out[s], '\n')
		}
	}
	return out, nil
}

// documents splits a YAML stream at its document markers: "---" at the
// start of a line, which YAML forbids inside any scalar (c-forbidden), so
// that each document keeps its bytes (a writer's line folding included).
func documents(b []byte) [][]byte {
	var docs [][]byte
	var cur []byte
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		if rest, ok := marker(line); ok {
			docs = append(docs, cur)
			cur = rest // a document may start on its marker's line
			continue
		}
		cur = append(cur, line...)
	}
	return append(docs, cur)
}

// marker tells a document marker line, and what follows the marker on
// it when that is content rather than a comment.
func marker(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok || (len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '\r') {
		return nil, false
	}
	if t := bytes.TrimLeft(rest, " \t"); len(t) > 0 && t[0] != '#' && t[0] != '\n' && t[0] != '\r' {
		return bytes.Clone(t), true
	}
	return nil, true
}

// blank is a document of nothing but spaces and comments.
func blank(doc []byte) bool {
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}
