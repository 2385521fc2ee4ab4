package catalogs

import (
	"strings"
	"testing"
)

func TestCatalogsLoad(t *testing.T) {
	if err := Err(); err != nil {
		t.Fatal(err)
	}
	for _, r := range Releases() {
		c := For(r)
		if (!strings.HasPrefix(c.Source, "Debian ") && !strings.Contains(c.Source, " from their release tarballs, on Debian ")) || len(c.StoreOptions) == 0 || len(c.Config) == 0 {
			t.Errorf("catalog %s is incomplete: %q, %d store options, %d sections", r, c.Source, len(c.StoreOptions), len(c.Config))
		}
		for _, want := range []string{"s3_store_host", "s3_store_bucket", "store_description"} {
			if _, ok := c.StoreOptions[want]; !ok {
				t.Errorf("catalog %s lacks store option %s", r, want)
			}
		}
	}
	if For("1999.1") != nil {
		t.Error("a release without a catalog has one")
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"s3_store_thread_pools", "s3_store_host", "s3_store_bucket", "weight"}
	for in, want := range map[string]string{
		"s3_store_thread_pool": "s3_store_thread_pools",
		"s3_store_bukket":      "s3_store_bucket",
		"wieght":               "weight",
		"completely_else":      "",
	} {
		if got := Suggest(in, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
