package kafkatest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles is a throw-away CA, a broker certificate it signed for
// 127.0.0.1, localhost and kafka.test, and a client certificate, as PEM
// files (keys mode 0600).
type TLSFiles struct {
	CAFile, CertFile, KeyFile     string // the broker's
	ClientCertFile, ClientKeyFile string
	Pool                          *x509.CertPool
	server                        tls.Certificate
}

// ServerConfig is the broker's TLS config for kfake.TLS; requireClient
// demands a client certificate signed by the CA.
func (f *TLSFiles) ServerConfig(requireClient bool) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{f.server}, ClientCAs: f.Pool, MinVersion: tls.VersionTLS12}
	if requireClient {
		c.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return c
}

// NewTLS writes the files into a temporary directory of t.
func NewTLS(t testing.TB) *TLSFiles {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "s3seal kafka test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	must(err)
	ca, err := x509.ParseCertificate(caDER)
	must(err)
	f := &TLSFiles{Pool: x509.NewCertPool()}
	f.Pool.AddCert(ca)
	f.CAFile = filepath.Join(dir, "ca.pem")
	must(os.WriteFile(f.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644))

	issue := func(serial int64, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		must(err)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost", "kafka.test"}
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		must(err)
		kb, err := x509.MarshalECPrivateKey(key)
		must(err)
		certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		must(os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
		must(os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
		return certFile, keyFile
	}
	f.CertFile, f.KeyFile = issue(2, "broker", x509.ExtKeyUsageServerAuth)
	f.ClientCertFile, f.ClientKeyFile = issue(3, "client", x509.ExtKeyUsageClientAuth)
	f.server, err = tls.LoadX509KeyPair(f.CertFile, f.KeyFile)
	must(err)
	return f
}
