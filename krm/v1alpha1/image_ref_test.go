package v1alpha1

import "testing"

func TestImageRef(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := map[string]struct {
		img  ImageSpec
		want string
	}{
		"a tag":                        {ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2"}, "ghcr.io/c5c3/glance:2025.2"},
		"a digest wins over the tag":   {ImageSpec{Repository: "ghcr.io/c5c3/glance", Tag: "2025.2", Digest: digest}, "ghcr.io/c5c3/glance@" + digest},
		"a registry port is not a tag": {ImageSpec{Repository: "registry:5000/glance", Tag: "1"}, "registry:5000/glance:1"},
		"a digest alone":               {ImageSpec{Repository: "glance", Digest: digest}, "glance@" + digest},
	}
	for name, tc := range cases {
		if got := tc.img.Ref(); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}
