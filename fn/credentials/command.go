package credentials

import (
	"flag"
	"fmt"
	"io"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// Command is the init container the function wires into every
// glance-api pod: it turns the mounted credential Secrets into one
// oslo.config file (see Write).
func Command(args []string, _ io.Reader, _ io.Writer, stderr io.Writer) int {
	fs := flag.NewFlagSet("credentials", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", v1alpha1.MountCredentialsIn, "folder the credential Secrets are mounted at")
	to := fs.String("to", v1alpha1.MountCredentialsDir+v1alpha1.CredentialsFile, "oslo.config file to write")
	var db Flags
	db.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := Write(*from, *to, db.Target(), stderr); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
