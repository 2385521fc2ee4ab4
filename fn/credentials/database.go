package credentials

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/c5c3/glance-krm/krm/v1alpha1"
)

// The database connection is composed, as the seed operator composes it
// (C5C3/cobaltcore internal/common/database: BuildDSN, ResolveHost,
// ResolveUsername), from the Glance's spec and the password (and, outside
// Static managed mode, the username) of spec.database.secretRef. The build
// knows everything but the credentials, so it hands the init container the
// rest as flags; the kubelet expands $(POD_NAMESPACE) in them, so the
// managed cluster's Service name follows the namespace the pod runs in,
// whatever kustomize or kpt set after this function ran.

const (
	DatabaseDir  = "database" // under the credentials volume: password, username
	TLSDir       = "db-tls/"  // under the config volume, which oslo.config does not read
	PodNamespace = "POD_NAMESPACE"
	flagDBHost   = "--database-host"
	flagDBName   = "--database-name"
	flagDBUser   = "--database-user"
	flagDBQuery  = "--database-query"
	PasswordKey  = "password"
	UsernameKey  = "username"
	TLSCAFile    = "ca.crt"
	TLSCertFile  = "tls.crt"
	TLSKeyFile   = "tls.key"
)

// Target is the connection minus its credentials.
type Target struct {
	host, name, user, query string
}

// TargetOf is what the Glance says about its database.
func TargetOf(g *v1alpha1.Glance) Target {
	d := &g.Spec.Database
	host := d.Host
	if d.ClusterRef != nil {
		host = fmt.Sprintf("%s.$(%s).svc", d.ClusterRef.Name, PodNamespace)
	}
	t := Target{host: host + ":" + strconv.Itoa(int(d.DatabasePort())), name: d.Database}
	if !d.UsernameFromSecret() {
		t.user = g.Name
	}
	q := url.Values{}
	q.Set("charset", "utf8")
	if tls := d.TLS; tls != nil && tls.Mode != "" && tls.Mode != "disabled" {
		dir := v1alpha1.MountConfigDir + TLSDir
		q.Set("ssl_ca", dir+TLSCAFile)
		q.Set("ssl_cert", dir+TLSCertFile)
		q.Set("ssl_key", dir+TLSKeyFile)
		switch tls.Mode {
		case "verify-ca":
			q.Set("ssl_verify_cert", "true")
		case "verify-full":
			q.Set("ssl_verify_cert", "true")
			q.Set("ssl_verify_identity", "true")
		}
	}
	// A literal "/" in the file paths keeps "%" out of the URL, which
	// alembic's ConfigParser would read as interpolation.
	t.query = strings.ReplaceAll(q.Encode(), "%2F", "/")
	return t
}

// Args are the init container's flags for the target.
func (t Target) Args() []string {
	out := []string{flagDBHost, t.host, flagDBName, t.name, flagDBQuery, t.query}
	if t.user != "" {
		out = append(out, flagDBUser, t.user)
	}
	return out
}

// dsn is the SQLAlchemy URL: userinfo percent-encoded (RFC 3986), so any
// password travels exactly.
func (t Target) dsn(user, password string) string {
	u := url.URL{Scheme: "mysql+pymysql", User: url.UserPassword(user, password), Host: t.host, Path: t.name, RawQuery: t.query}
	return u.String()
}
