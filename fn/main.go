// Command glance-krm-fn is the glance-krm KRM function: a ResourceList on
// stdin, the ResourceList with rendered objects and results on stdout.
// It runs as a kustomize transformer (exec or container), in a kpt
// pipeline, in an Argo CD config-management plugin, or by hand:
//
//	glance-krm-fn < resourcelist.yaml
//
// Its subcommands live in their packages; this file only picks one.
package main

import (
	"io"
	"os"

	"github.com/c5c3/glance-krm/fn/credentials"
	"github.com/c5c3/glance-krm/fn/explain"
	"github.com/c5c3/glance-krm/fn/findings"
	"github.com/c5c3/glance-krm/fn/fluxsteps"
	"github.com/c5c3/glance-krm/fn/glancekrm"
	"github.com/c5c3/glance-krm/fn/validate"
)

type command func(args []string, stdin io.Reader, stdout, stderr io.Writer) int

// commands are the subcommands, by the first argument; anything else is
// the function itself.
var commands = map[string]command{
	"credentials":  credentials.Command,
	"keep-history": fluxsteps.KeepHistoryCommand,
	"flux-steps":   fluxsteps.Command,
	"explain": func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return explain.Command(args, stdin, stdout, stderr, tool("explain"))
	},
	"validate": func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return validate.Command(args, stdin, stdout, stderr, tool("validate"), glancekrm.Filter)
	},
}

func main() {
	run := func(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		return glancekrm.Filter(stdin, stdout, stderr)
	}
	args := os.Args[1:]
	if len(args) > 0 && commands[args[0]] != nil {
		run, args = commands[args[0]], args[1:]
	}
	os.Exit(run(args, os.Stdin, os.Stdout, os.Stderr))
}

// tool names a subcommand in SARIF and in its messages.
func tool(command string) findings.Tool {
	return findings.Tool{Name: glancekrm.Name + " " + command, Version: glancekrm.Version, InformationURI: "https://github.com/c5c3/glance-krm"}
}
