package node

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// hostState is what a node could leave behind on the host: processes of
// its programs, mounts, cgroups, network interfaces, kernel settings and
// packet-filter rules of the host's own namespaces.
type hostState struct {
	processes, mounts, cgroups, interfaces, sysctls, rules []string
}

// nodePrograms are the names a node's processes run under.
var nodePrograms = []string{"containerd", "containerd-shim", "containerd-shim-runc-v2", "runc", "etcd", "kube-apiserver",
	"kube-controller", "kube-scheduler", "kubelet", "kube-proxy", "kube-router", "coredns", "metrics-server", "pause"}

// hostSysctls are the kernel settings a node's components would write if
// they were not kept in the node's namespaces or told to only read them.
var hostSysctls = []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "vm/panic_on_oom",
	"net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "net/netfilter/nf_conntrack_max",
	"net/ipv4/conf/all/route_localnet", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
	"fs/inotify/max_user_instances", "fs/inotify/max_user_watches"}

func snapshotHost() (hostState, error) {
	var s hostState
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		name := strings.TrimSpace(string(b))
		if slices.Contains(nodePrograms, name) {
			s.processes = append(s.processes, fmt.Sprintf("%s (pid %s)", name, filepath.Base(filepath.Dir(p))))
		}
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(mi)), "\n") {
		if f := strings.Fields(line); len(f) > 4 {
			s.mounts = append(s.mounts, f[4])
		}
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return s, err
	}
	for _, m := range mounts {
		entries, _ := os.ReadDir(m)
		for _, e := range entries {
			if e.IsDir() {
				s.cgroups = append(s.cgroups, filepath.Join(m, e.Name()))
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return s, err
	}
	for _, i := range ifs {
		s.interfaces = append(s.interfaces, i.Name)
	}
	for _, k := range hostSysctls {
		if b, err := os.ReadFile("/proc/sys/" + k); err == nil {
			s.sysctls = append(s.sysctls, k+"="+strings.TrimSpace(string(b)))
		}
	}
	for _, table := range []string{"filter", "nat", "mangle"} {
		out, err := exec.Command("iptables", "-t", table, "-S").Output()
		if err == nil {
			for _, r := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				s.rules = append(s.rules, table+": "+r)
			}
		}
	}
	for _, l := range [][]string{s.processes, s.mounts, s.cgroups, s.interfaces, s.sysctls, s.rules} {
		slices.Sort(l)
	}
	return s, nil
}

// diff says what after has that s had not (or lost), by kind; "" when
// the host is as it was.
func (s hostState) diff(after hostState) string {
	var out []string
	for _, k := range []struct {
		what         string
		before, then []string
	}{
		{"processes", s.processes, after.processes}, {"mounts", s.mounts, after.mounts},
		{"cgroups", s.cgroups, after.cgroups}, {"interfaces", s.interfaces, after.interfaces},
		{"kernel settings", s.sysctls, after.sysctls}, {"iptables rules", s.rules, after.rules},
	} {
		var added, gone []string
		for _, x := range k.then {
			if !slices.Contains(k.before, x) {
				added = append(added, x)
			}
		}
		for _, x := range k.before {
			if !slices.Contains(k.then, x) {
				gone = append(gone, x)
			}
		}
		if len(added) > 0 {
			out = append(out, fmt.Sprintf("%s added: %s", k.what, strings.Join(added, ", ")))
		}
		if len(gone) > 0 {
			out = append(out, fmt.Sprintf("%s changed or removed: %s", k.what, strings.Join(gone, ", ")))
		}
	}
	return strings.Join(out, "; ")
}
