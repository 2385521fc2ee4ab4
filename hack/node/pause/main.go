// Command pause is the sandbox process of every pod on the test node
// (containerd's sandbox_image): it holds the pod's namespaces and exits on
// SIGTERM or SIGINT. The node cannot pull registry.k8s.io/pause, so it is
// built here (hack/node-assets.sh) and imported.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
