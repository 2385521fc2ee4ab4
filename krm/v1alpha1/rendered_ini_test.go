package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadRenderedINI(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		want map[string]map[string]string
	}{
		"sections and options": {text: "[fast]\ns3_store_host = https://s3\n\n[glance_store]\ndefault_backend = fast\n",
			want: map[string]map[string]string{"fast": {"s3_store_host": "https://s3"}, "glance_store": {"default_backend": "fast"}}},
		"a # is part of the value, as for oslo.config": {text: "[DEFAULT]\nx = a #b\n",
			want: map[string]map[string]string{"DEFAULT": {"x": "a #b"}}},
		"quotes are kept": {text: "[DEFAULT]\nx = \"q\"\n",
			want: map[string]map[string]string{"DEFAULT": {"x": `"q"`}}},
		"a comment line is no option": {text: "# Rendered by glance-krm\n[s]\n# GlanceBackend s\nk = v\n",
			want: map[string]map[string]string{"s": {"k": "v"}}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadRenderedINI([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
