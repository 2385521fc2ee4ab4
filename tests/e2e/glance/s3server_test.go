//go:build e2e

package glance_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/c5c3/glance-krm/internal/testenv"
)

// s3Server is versitygw with its posix backend on a temporary folder.
type s3Server struct {
	endpoint string
	client   *minio.Client
	// rekey restarts the server on the same data and port with only this
	// key pair: the old one is revoked.
	rekey func(t *testing.T, accessKey, secretKey string)
	// dir holds the buckets, one folder each (versitygw's posix backend).
	dir string
	// addUser makes one more key pair valid beside the server's own, with
	// every right on every bucket (versitygw's admin role); it stays valid
	// across rekey. Only on a server started with s3Options.iam.
	addUser func(t *testing.T, accessKey, secretKey string)
}

func startS3(t *testing.T, accessKey, secretKey string, buckets ...string) *s3Server {
	return startS3In(t, "us-east-1", "", accessKey, secretKey, buckets...)
}

// startS3In is startS3 for an S3 server of the given region (it refuses
// requests signed for another region) that, with a virtual domain, also
// serves <bucket>.<domain> (virtual-hosted style).
func startS3In(t *testing.T, region, virtualDomain, accessKey, secretKey string, buckets ...string) *s3Server {
	return startS3With(t, s3Options{region: region, virtualDomain: virtualDomain}, accessKey, secretKey, buckets...)
}

// s3Options shape a test S3 server.
type s3Options struct {
	region, virtualDomain string
	tls                   *testTLS // serve HTTPS with this certificate
	iam                   bool     // keep users beside the root pair (addUser)
}

func startS3With(t *testing.T, o s3Options, accessKey, secretKey string, buckets ...string) *s3Server {
	t.Helper()
	region, virtualDomain := o.region, o.virtualDomain
	bin := testenv.Env(t, "VERSITYGW_BIN", "make e2e-glance")
	root := t.TempDir()
	port := testenv.FreePort(t)
	endpoint := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"--access", accessKey, "--secret", secretKey, "--region", region, "--port", endpoint, "--quiet"}
	if virtualDomain != "" {
		args = append(args, "--virtual-domain", virtualDomain)
	}
	if o.tls != nil {
		args = append(args, "--cert", o.tls.certFile, "--key", o.tls.keyFile)
	}
	if o.iam {
		args = append(args, "--iam-dir", t.TempDir())
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	run := func(t *testing.T, args []string) {
		cmd = exec.Command(bin, append(args, "posix", root)...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	run(t, args)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rekey := func(t *testing.T, accessKey, secretKey string) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		args[1], args[3] = accessKey, secretKey // --access, --secret
		run(t, args)
		for deadline := time.Now().Add(30 * time.Second); ; {
			if c, err := net.Dial("tcp", endpoint); err == nil {
				_ = c.Close()
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("versitygw did not come back on %s: %v", endpoint, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	opts := &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region}
	if o.tls != nil {
		opts.Secure, opts.Transport = true, o.tls.transport()
	}
	client, err := minio.New(endpoint, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, b := range buckets {
		for {
			err := client.MakeBucket(ctx, b, minio.MakeBucketOptions{Region: region})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("versitygw on %s: creating bucket %s: %v", endpoint, b, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	s := &s3Server{endpoint: endpoint, client: client, rekey: rekey, dir: root}
	if o.iam {
		s.addUser = func(t *testing.T, access, secret string) {
			t.Helper()
			scheme := "http"
			if o.tls != nil {
				scheme = "https"
			}
			// The admin API answers to the pair the server runs with now.
			out, err := exec.Command(bin, "admin", "--access", args[1], "--secret", args[3], "--region", region,
				"--endpoint-url", scheme+"://"+endpoint, "--allow-insecure",
				"create-user", "--access", access, "--secret", secret, "--role", "admin").CombinedOutput()
			if err != nil {
				t.Fatalf("versitygw admin create-user: %v\n%s", err, out)
			}
		}
	}
	return s
}

// etag is an object's ETag: "<md5 of the part md5s>-<parts>" for a
// multipart upload.
func (s *s3Server) etag(t *testing.T, bucket, key string) string {
	t.Helper()
	info, err := s.client.StatObject(context.Background(), bucket, key, minio.StatObjectOptions{})
	if err != nil {
		t.Fatalf("stat %s/%s: %v", bucket, key, err)
	}
	return info.ETag
}

func (s *s3Server) has(t *testing.T, bucket, key string) bool {
	t.Helper()
	for obj := range s.client.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{}) {
		if obj.Err != nil {
			t.Fatalf("listing %s: %v", bucket, obj.Err)
		}
		if obj.Key == key {
			return true
		}
	}
	return false
}

// testTLS is a CA made in the test and a server certificate it signed for
// 127.0.0.1.
type testTLS struct {
	caPEM             []byte
	certFile, keyFile string
}

func makeTLS(t *testing.T) *testTLS {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "glance-krm e2e CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testTLS{
		caPEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certFile: write(t, filepath.Join(dir, "tls.crt"), string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))),
		keyFile:  write(t, filepath.Join(dir, "tls.key"), string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))),
	}
}

func (c *testTLS) transport() *http.Transport {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.caPEM)
	return &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
}
