package v1alpha1

import (
	"fmt"
	"strings"
)

// The release upgrade path. Glance's database schema migrations only go
// forward, and OpenStack supports an upgrade to the next release, or
// between two SLURP releases (the .1 release of every year from 2023.1,
// "Skip Level Upgrade Release Process") straight to the next SLURP one.
// explain (both renders) and the function under kpt (the package's
// previous render) judge a change of spec.openStackRelease with it, in
// Problem's words.

// ReleasePath is what a change of release from one series to another
// does.
// +kubebuilder:object:generate=false
type ReleasePath struct {
	Downgrade bool
	// Skipped are the releases the change jumps over, when the jump is not
	// one between two SLURP releases.
	Skipped []string
}

// PathBetween judges the change from one release series (2025.2) to
// another; ok is false when either is not one.
func PathBetween(from, to string) (p ReleasePath, ok bool) {
	fy, fm, ok1 := series(from)
	ty, tm, ok2 := series(to)
	if !ok1 || !ok2 {
		return ReleasePath{}, false
	}
	f, t := fy*2+fm-1, ty*2+tm-1 // consecutive releases are consecutive numbers
	switch {
	case t < f:
		return ReleasePath{Downgrade: true}, true
	case t-f <= 1:
		return ReleasePath{}, true
	case t-f == 2 && IsSLURP(from) && IsSLURP(to):
		return ReleasePath{}, true
	}
	for n := f + 1; n < t; n++ {
		p.Skipped = append(p.Skipped, fmt.Sprintf("%d.%d", n/2, n%2+1))
	}
	return p, true
}

// Problem says what is wrong with going from one release to another, in
// the words every door uses, and its reason (the seed operator's:
// DowngradeNotSupported, UpgradePathInvalid); "" when the path is
// supported, when nothing changes, or when from is unknown ("": nothing
// to judge against). A value that is no release series is refused, as
// the seed refuses what it cannot parse: no path to or from it can be
// judged.
func Problem(from, to string) (reason, message string) {
	if from == "" || from == to {
		return "", ""
	}
	p, ok := PathBetween(from, to)
	switch {
	case !ok:
		bad := to
		if _, _, isSeries := series(from); !isSeries {
			bad = from
		}
		return ReasonUpgradePathInvalid, fmt.Sprintf("openStackRelease goes from %q to %q, and %q is no release series (YYYY.1 or YYYY.2): the upgrade path cannot be judged", from, to, bad)
	case p.Downgrade:
		return ReasonDowngradeNotSupported, fmt.Sprintf("openStackRelease goes down from %s to %s: Glance's database schema migrations only go forward, so the older glance-api cannot run on the newer schema", from, to)
	case len(p.Skipped) > 0:
		return ReasonUpgradePathInvalid, fmt.Sprintf("openStackRelease jumps from %s to %s over %s: OpenStack supports an upgrade to the next release, or between two SLURP releases (2025.1 -> 2026.1); upgrade through each release (%s -> %s -> %s)",
			from, to, strings.Join(p.Skipped, ", "), from, strings.Join(p.Skipped, " -> "), to)
	}
	return "", ""
}

// IsSLURP tells a SLURP release: the .1 release of a year from 2023.1.
func IsSLURP(release string) bool {
	y, m, ok := series(release)
	return ok && m == 1 && y >= 2023
}

func series(release string) (year, minor int, ok bool) {
	if _, err := fmt.Sscanf(release, "%d.%d", &year, &minor); err != nil || (minor != 1 && minor != 2) || fmt.Sprintf("%d.%d", year, minor) != release {
		return 0, 0, false
	}
	return year, minor, true
}
