package explain

import (
	"slices"
)

// Report is what a change does, per Glance.
type Report struct {
	Glances  []GlanceChange `json:"glances"`
	Warnings []Warning      `json:"warnings"`
	records  []DrainRecord
}

// GlanceChange is one Glance's part of the change.
type GlanceChange struct {
	Glance  string `json:"glance"` // namespace/name
	Status  string `json:"status"` // added, removed, changed, unchanged
	Release string `json:"release,omitempty"`
	// ReleaseBefore is the release before the change, when it changes.
	ReleaseBefore string          `json:"releaseBefore,omitempty"`
	Stores        []StoreChange   `json:"stores,omitempty"`
	Defaults      []DefaultChange `json:"defaults,omitempty"`
	// Options: every option of glance-api.conf that changes, per API.
	Options []ConfigChange `json:"options,omitempty"`
	Renamed []Rename       `json:"renamed,omitempty"`
	Kept    []string       `json:"kept,omitempty"`  // hashed objects that keep their names
	Rolls   []string       `json:"rolls,omitempty"` // workloads whose pods are replaced
	Stays   []string       `json:"stays,omitempty"` // workloads left as they run
	// APIStores: an Image API whose set of stores changes.
	APIStores []APIStoresChange `json:"apiStores,omitempty"`
	// Added, Removed, Changed: the Glance's workloads and other generated
	// objects (Services, Jobs, …) that come, go, or change.
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// NoLongerRead: options of the render the previous release read and
	// the new one does not (a release change), "[section] option".
	NoLongerRead []string `json:"noLongerRead,omitempty"`
}

// APIStoresChange is the stores one Image API serves, before and after.
type APIStoresChange struct {
	API    string   `json:"api"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// StoreChange is one store added, removed or changed option by option.
type StoreChange struct {
	Store   string         `json:"store"`
	Change  string         `json:"change"`         // added, removed, renamed, changed, drains
	From    string         `json:"from,omitempty"` // renamed: the store's id before
	To      string         `json:"to,omitempty"`   // drains: the store its images move into
	Options []OptionChange `json:"options,omitempty"`
}

// OptionChange is one option of a store, before and after ("" when absent).
type OptionChange struct {
	Option string `json:"option"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// DefaultChange is the default store an Image API serves, before and after.
type DefaultChange struct {
	API    string `json:"api"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// Rename is a hashed object that gets a new name.
type Rename struct {
	Kind   string `json:"kind"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Warning is what a reviewer should read. ID names it for --acknowledge.
type Warning struct {
	ID           string `json:"id"`
	Kind         string `json:"kind"`
	Glance       string `json:"glance"`
	Message      string `json:"message"`
	Blocking     bool   `json:"blocking"`
	Acknowledged bool   `json:"acknowledged,omitempty"`
	// Cleared: what the warning is about is known to be done (a store
	// removed after its drain was recorded complete): it does not block.
	Cleared bool `json:"cleared,omitempty"`
}

// Options choose which warnings block (the exit code) and which of those
// a reviewer acknowledged.
type Options struct {
	FailOn       []string // warning kinds that block; default StoreRemoved
	Acknowledged []string // warning IDs
	// DrainRecords are the records of store drains a reviewer passes
	// (--drain-record): a store removed after its drain completed passes.
	DrainRecords []DrainRecord
}

// Blocked tells whether a blocking warning is not acknowledged.
func (r *Report) Blocked() bool {
	return slices.ContainsFunc(r.Warnings, func(w Warning) bool { return w.Blocking && !w.Acknowledged })
}
