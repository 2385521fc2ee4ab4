package node

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// cgroupMounts are the host's cgroup hierarchies (v1 controllers, the
// named systemd one and the empty unified one of these machines).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		for i, x := range fields {
			if x == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				out = append(out, fields[4])
			}
		}
	}
	sort.Strings(out)
	return out, s.Err()
}

// makeCgroupRoot creates the kubelet's cgroup root in every hierarchy
// (the kubelet refuses a root that does not exist); a new cpuset cgroup
// starts with no CPUs or memory nodes, so it takes its parent's.
func makeCgroupRoot(root string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		dir := filepath.Join(m, root)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if b, err := os.ReadFile(filepath.Join(m, f)); err == nil {
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return fmt.Errorf("cgroup %s: %w", filepath.Join(dir, f), err)
				}
			}
		}
	}
	return nil
}

// removeCgroupRoot removes the cgroup root and everything the kubelet and
// runc made below it, deepest first, once their processes are gone.
func removeCgroupRoot(root string, limit time.Duration) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(limit)
	for _, m := range mounts {
		top := filepath.Join(m, root)
		for {
			var dirs []string
			_ = filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			var last error
			for i := len(dirs) - 1; i >= 0; i-- {
				if err := os.Remove(dirs[i]); err != nil && !os.IsNotExist(err) {
					last = err
				}
			}
			if last == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("cgroup %s stays: %w", top, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// sweepCgroupRoots removes the cgroup roots of nodes whose test process
// died before its teardown (the kernel ended their processes with it).
func sweepCgroupRoots() {
	mounts, err := cgroupMounts()
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, m := range mounts {
		dirs, _ := filepath.Glob(filepath.Join(m, cgroupRootPrefix+"*"))
		for _, d := range dirs {
			seen["/"+filepath.Base(d)] = true
		}
	}
	for root := range seen {
		_ = removeCgroupRoot(root, time.Second)
	}
}
