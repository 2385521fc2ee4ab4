// Command copy is the start-up floor of `make bench`: the least a Go
// program that reads a ResourceList on stdin and writes it on stdout does.
package main

import (
	"io"
	"os"
)

func main() {
	if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
		os.Exit(1)
	}
}
