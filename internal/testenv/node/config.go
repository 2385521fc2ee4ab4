package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The node's addresses, all inside its own network namespace: the node IP
// sits on its loopback, pods on one bridge, Services in their own range.
// Nothing of it is routed out of the namespace.
const (
	Name          = "glance-krm-node"
	IP            = "10.200.0.2"
	podCIDR       = "10.244.0.0/24"
	clusterCIDR   = "10.244.0.0/16"
	serviceCIDR   = "10.96.0.0/16"
	ClusterDomain = "cluster.local"
	apiPort       = 6443
	// PauseImage is the sandbox image containerd starts every pod with;
	// it is built locally, as is every image here.
	PauseImage = "localhost/glance-krm-node/pause:1"
)

// DNSIP is CoreDNS's Service address (the kubelet's clusterDNS).
var DNSIP = serviceIP(10)

func serviceIP(n int) string { return fmt.Sprintf("10.96.0.%d", n) }

// layout is where one node keeps its state; every path is below dir,
// which the test removes.
type layout struct{ dir string }

func (l layout) path(parts ...string) string {
	return filepath.Join(append([]string{l.dir}, parts...)...)
}
func (l layout) pki(name string) string { return l.path("pki", name) }
func (l layout) socket() string         { return l.path("containerd", "containerd.sock") }

func (l layout) write(name, content string) error {
	p := l.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// kubeconfig is a client configuration for the API server at server with
// the certificate pair name of the PKI.
func (l layout) kubeconfig(server, name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: node
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: node
  context: {cluster: node, user: %s}
current-context: node
`, server, l.pki("ca.crt"), name, l.pki(name+".crt"), l.pki(name+".key"), name)
}

// containerdConfig is containerd 1.6's: its own root, state and socket
// under the node's folder (never /etc/containerd or /var/lib/containerd);
// no negative oom_score_adj, which needs CAP_SYS_RESOURCE the VM withholds;
// registries configured per host under certs.d (StartRegistry's).
func (l layout) containerdConfig() string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    discard_unpacked_layers = false
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %q
`, l.path("containerd", "root"), l.path("containerd", "state"), l.socket(), PauseImage, l.path("cni"), l.path("certs.d"))
}

// cniConfig is one bridge for every pod, with hairpin mode so that a pod
// reaches itself through its own Service.
func cniConfig() string {
	return fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "glance-krm-node",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
`, podCIDR)
}

// kubeletConfig carries what these machines need (tools README): cgroup v1
// allowed, the cgroupfs driver under a cgroup root of the node's own,
// host kernel settings only read (protectKernelDefaults), and no image
// garbage collection (no registry could bring an image back).
func (l layout) kubeletConfig(cgroupRoot string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: %s
cgroupsPerQOS: true
protectKernelDefaults: true
failSwapOn: false
containerRuntimeEndpoint: unix://%s
clusterDNS: [%s]
clusterDomain: %s
resolvConf: %s
staticPodPath: ""
address: %s
healthzBindAddress: 127.0.0.1
healthzPort: 10248
readOnlyPort: 0
tlsCertFile: %s
tlsPrivateKeyFile: %s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %s}
authorization:
  mode: AlwaysAllow
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
  nodefs.inodesFree: 1%%
serializeImagePulls: false
registerNode: true
maxPods: 60
shutdownGracePeriod: 0s
syncFrequency: 10s
fileCheckFrequency: 10s
nodeStatusUpdateFrequency: 5s
`, cgroupRoot, l.socket(), DNSIP, ClusterDomain, l.path("resolv.conf"), IP,
		l.pki("kubelet.crt"), l.pki("kubelet.key"), l.pki("ca.crt"))
}

// kubeProxyConfig leaves the host's conntrack settings alone (they are not
// per network namespace): every conntrack tunable zero means "do not set".
func (l layout) kubeProxyConfig() string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: %s
hostnameOverride: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clientConnection:
  kubeconfig: %s
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
  udpTimeout: 0s
  udpStreamTimeout: 0s
`, clusterCIDR, Name, IP, l.path("kube-proxy.kubeconfig"))
}

// daemon is one program the node's init keeps running, logging to
// log/<name>.log.
type daemon struct {
	name string
	argv []string
}

// init is the node's PID 1: it sets up the namespaces it runs in and
// starts every daemon, each logging to its own file, extra ones (an
// option's) last. It runs until the test kills it, which ends every
// process of the node.
func (l layout) init(a Assets, cgroupRoot string, extra ...daemon) string {

	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
# The node's PID 1 (written by internal/testenv/node): network, mounts and
# kernel settings of its own, then every daemon.
set -eu
S=%q
ip link set lo up
ip addr add %s/32 dev lo
ip route add blackhole default
# A Service address must have a route for a socket of the node's own to
# connect to it (a blackhole refuses); kube-proxy then rewrites it.
ip route add %s dev lo
echo 1 > /proc/sys/net/ipv4/ip_forward
echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
echo 1 > /proc/sys/net/bridge/bridge-nf-call-ip6tables
# The paths kubelet, containerd and CNI fix, on tmpfs or the node's folder,
# inside this mount namespace only.
for d in /run /var/lib /var/log; do mount -t tmpfs -o mode=0755 tmpfs "$d"; done
for d in /var/lib/kubelet /var/log/pods /var/log/containers; do
  mkdir -p "$S/host$d" "$d"; mount --bind "$S/host$d" "$d"
done
mkdir -p /run/containerd /var/lib/cni
# The kubelet reads these (protectKernelDefaults) and would otherwise ask
# to change them on the host.
for k in kernel/panic kernel/panic_on_oops vm/overcommit_memory vm/panic_on_oom; do
  mount --bind "$S/sysctl/$(echo "$k" | tr / .)" "/proc/sys/$k"
done
cd "$S"
# Each daemon restarts when it exits, as under systemd: the controller
# manager, for one, exits when it starts before the API server's RBAC.
start() {
  name=$1; shift
  ( set +e; while :; do "$@"; echo "glance-krm-node: $name exited with $?; restarting" >&2; sleep 1; done ) > "$S/log/$name.log" 2>&1 &
}
`, l.dir, IP, serviceCIDR)
	for _, d := range append(l.daemons(a), extra...) {
		fmt.Fprintf(&b, "start %s %s\n", d.name, shellQuote(d.argv))
	}
	b.WriteString("echo started > \"$S/started\"\nwhile :; do wait || true; sleep 1; done\n")
	return b.String()
}

// daemons are the node's own programs and their flags, in the order init
// starts them.
func (l layout) daemons(a Assets) []daemon {
	pki := l.pki
	apiserver := []string{a.bin("kube-apiserver"),
		"--etcd-servers=http://127.0.0.1:2379",
		"--advertise-address=" + IP, "--bind-address=0.0.0.0", fmt.Sprintf("--secure-port=%d", apiPort),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		"--client-ca-file=" + pki("ca.crt"),
		"--tls-cert-file=" + pki("apiserver.crt"), "--tls-private-key-file=" + pki("apiserver.key"),
		"--kubelet-client-certificate=" + pki("apiserver-kubelet-client.crt"), "--kubelet-client-key=" + pki("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc." + ClusterDomain,
		"--service-account-key-file=" + pki("sa.pub"), "--service-account-signing-key-file=" + pki("sa.key"),
		"--requestheader-client-ca-file=" + pki("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-", "--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + pki("front-proxy-client.crt"), "--proxy-client-key-file=" + pki("front-proxy-client.key"),
		"--enable-aggregator-routing=true",
		"--audit-log-path=" + l.path("log", "audit.log"), "--audit-policy-file=" + l.path("audit-policy.yaml"),
		"--audit-log-maxsize=200",
	}
	controllerManager := []string{a.bin("kube-controller-manager"),
		"--kubeconfig=" + l.path("controller-manager.kubeconfig"),
		"--authentication-kubeconfig=" + l.path("controller-manager.kubeconfig"),
		"--authorization-kubeconfig=" + l.path("controller-manager.kubeconfig"),
		"--service-account-private-key-file=" + pki("sa.key"), "--root-ca-file=" + pki("ca.crt"),
		"--use-service-account-credentials=true", "--leader-elect=false",
		"--cluster-cidr=" + clusterCIDR, "--service-cluster-ip-range=" + serviceCIDR,
		"--bind-address=127.0.0.1", "--controllers=*,-bootstrapsigner,-tokencleaner",
		"--horizontal-pod-autoscaler-sync-period=5s",
	}
	scheduler := []string{a.bin("kube-scheduler"),
		"--kubeconfig=" + l.path("scheduler.kubeconfig"),
		"--authentication-kubeconfig=" + l.path("scheduler.kubeconfig"),
		"--authorization-kubeconfig=" + l.path("scheduler.kubeconfig"),
		"--leader-elect=false", "--bind-address=127.0.0.1",
	}
	kubelet := []string{a.bin("kubelet"),
		"--config=" + l.path("kubelet.yaml"), "--kubeconfig=" + l.path("kubelet.kubeconfig"),
		"--hostname-override=" + Name, "--node-ip=" + IP,
		"--root-dir=/var/lib/kubelet",
	}
	kubeProxy := []string{a.bin("kube-proxy"), "--config=" + l.path("kube-proxy.yaml")}
	etcd := []string{a.bin("etcd"), "--data-dir=" + l.path("etcd"),
		"--listen-client-urls=http://127.0.0.1:2379", "--advertise-client-urls=http://127.0.0.1:2379",
		"--listen-peer-urls=http://127.0.0.1:2380", "--initial-advertise-peer-urls=http://127.0.0.1:2380",
		"--initial-cluster=default=http://127.0.0.1:2380", "--unsafe-no-fsync",
		"--quota-backend-bytes=4294967296",
	}
	containerd := []string{"containerd", "--config", l.path("containerd.toml")}
	return []daemon{
		{"containerd", containerd}, {"etcd", etcd}, {"kube-apiserver", apiserver},
		{"kube-controller-manager", controllerManager}, {"kube-scheduler", scheduler},
		{"kubelet", kubelet}, {"kube-proxy", kubeProxy},
	}
}

func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// auditPolicy records every request's metadata, for tests that count
// what a component asked of the API server.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy", "system:kube-scheduler", "system:kube-controller-manager", "system:node:glance-krm-node", "` + kubeRouterUser + `"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/openapi*", "/api*"]
- level: Metadata
`
