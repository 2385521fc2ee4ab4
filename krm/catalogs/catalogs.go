// Package catalogs holds, per OpenStack release, the options Glance reads:
// a store section's (the S3 driver's and every store's) and
// glance-api.conf's, each with its type and secret flag. They are
// generated from Debian's glance-api of that release by
// `make generate-catalogs` (hack/catalog.py, run on this machine and in
// the root file systems of tests/e2e/glance/rootfs.sh) and never edited by
// hand; each records its provenance. glance_store ignores an unknown
// option without a word, so the function checks names against them at
// build time. The API server cannot (a release's catalog is not CEL).
package catalogs

import (
	"embed"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

//go:embed *.json
var files embed.FS

// Option is one option's type and secret flag.
type Option struct {
	Type   string `json:"type"`
	Secret bool   `json:"secret"`
}

// Catalog is one release's options.
type Catalog struct {
	Release      string                       `json:"release"`
	Source       string                       `json:"source"`
	StoreOptions map[string]Option            `json:"storeOptions"`
	Config       map[string]map[string]Option `json:"config"`
}

var (
	load     sync.Once
	byName   map[string]*Catalog
	releases []string
	loadErr  error
)

func loadAll() {
	byName = map[string]*Catalog{}
	entries, err := files.ReadDir(".")
	if err != nil {
		loadErr = err
		return
	}
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			loadErr = err
			return
		}
		c := &Catalog{}
		if err := json.Unmarshal(b, c); err != nil {
			loadErr = err
			return
		}
		byName[c.Release] = c
		releases = append(releases, c.Release)
	}
	slices.Sort(releases)
}

var commit = regexp.MustCompile(` \([0-9a-f]{40}\)`)

// Short is where the catalog comes from, in a few words: the packages or
// the source tags, without commits.
func (c *Catalog) Short() string {
	s, _, _ := strings.Cut(c.Source, ";")
	s, _, _ = strings.Cut(s, ", python3-oslo.config")
	s, _, _ = strings.Cut(s, ", with Debian")
	return commit.ReplaceAllString(s, "")
}

// For is the catalog of a release, or nil when there is none.
func For(release string) *Catalog {
	load.Do(loadAll)
	return byName[release]
}

// Releases are the releases with a catalog, sorted.
func Releases() []string {
	load.Do(loadAll)
	return releases
}

// Err is the error loading the embedded catalogs, if any (a test fails on it).
func Err() error {
	load.Do(loadAll)
	return loadErr
}

// Section is a glance-api.conf section's options; oslo.config looks groups
// up case-insensitively except DEFAULT.
func (c *Catalog) Section(name string) (map[string]Option, bool) {
	if s, ok := c.Config[name]; ok {
		return s, true
	}
	s, ok := c.Config[strings.ToLower(name)]
	return s, ok && name != "DEFAULT"
}

// Suggest is the closest of names to s, when it is close enough to be a
// likely misspelling, or "".
func Suggest(s string, names []string) string {
	best, bestD := "", len(s)/3+2
	for _, n := range names {
		if d := distance(s, n); d < bestD || (d == bestD && best != "" && n < best) {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
