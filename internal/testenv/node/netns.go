package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// DialContext connects from inside the node's network namespace: the
// socket is made on an OS thread that has entered the namespace, and that
// thread is thrown away afterwards (its goroutine exits locked), so no
// other goroutine ever runs in the node's namespace. The connection then
// belongs to the node's network: its routes, kube-proxy's rules, its pods.
func (n *Node) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return inNetwork(n, func() (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	})
}

// Listen opens a listener inside the node's network namespace, as
// DialContext connects: an address there is the node's own, 127.0.0.1
// included, which containerd and the kubelet reach and the host does not.
func (n *Node) Listen(network, address string) (net.Listener, error) {
	return inNetwork(n, func() (net.Listener, error) {
		var lc net.ListenConfig
		return lc.Listen(context.Background(), network, address)
	})
}

// inNetwork makes a socket with open on an OS thread that entered the
// node's network namespace and is thrown away afterwards (its goroutine
// exits locked), so no other goroutine ever runs in the namespace; the
// socket keeps the namespace it was made in.
func inNetwork[S any](n *Node, open func() (S, error)) (S, error) {
	var zero S
	if n.netns == nil {
		return zero, errors.New("the node has no network namespace")
	}
	type result struct {
		s   S
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Setns(int(n.netns.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{zero, err}
			return
		}
		s, err := open()
		ch <- result{s, err}
	}()
	r := <-ch
	return r.s, r.err
}

// InNetwork runs a program of the host in the node's network namespace
// alone (nsenter), e.g. iptables -S for the rules kube-proxy and
// kube-router made there; it sees the host's files, not the node's.
func (n *Node) InNetwork(name string, args ...string) ([]byte, error) {
	if n.pid1 == 0 {
		return nil, errors.New("the node has no network namespace")
	}
	argv := append([]string{fmt.Sprintf("--net=/proc/%d/ns/net", n.pid1), "--", name}, args...)
	out, err := exec.Command("nsenter", argv...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s in the node's network: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return out, nil
}

// Forward listens on a loopback port of the host and carries each
// connection to target inside the node; closing the listener stops it.
func (n *Node) Forward(target string) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				u, err := n.DialContext(context.Background(), "tcp", target)
				if err != nil {
					return
				}
				defer func() { _ = u.Close() }()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return l, nil
}
