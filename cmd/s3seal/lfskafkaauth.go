package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/s3seal/s3seal/lfs/brokers"
)

// lfsKafkaAuth is the TLS config and SASL mechanism toward the brokers,
// built from the --lfs-kafka-* settings (nil when not configured).
type lfsKafkaAuth struct {
	tls  *tls.Config
	sasl sasl.Mechanism
}

// validateLFSKafka checks the --lfs-kafka-* settings (reading the files
// they name) so that serve refuses bad ones at start.
func (c *config) validateLFSKafka() error {
	_, err := c.lfsKafkaAuth()
	return err
}

// lfsKafkaAuth builds TLS and SASL toward the brokers. Errors name the
// flag (or S3SEAL_* variable) and the value at fault.
func (c *config) lfsKafkaAuth() (lfsKafkaAuth, error) {
	l := &c.LFS
	var a lfsKafkaAuth
	if !l.Enabled {
		return a, nil
	}
	useTLS := l.KafkaTLS || l.KafkaTLSCAFile != "" || l.KafkaTLSCertFile != "" || l.KafkaTLSKeyFile != "" || l.KafkaTLSServerName != ""
	useSASL := l.KafkaSASLMechanism != "" || l.KafkaSASLUser != "" || l.KafkaSASLPassword != ""
	if (useTLS || useSASL) && l.Brokers == "" && l.EtcdEndpoints == "" {
		return a, usagef("the --lfs-kafka-* TLS and SASL settings apply to real brokers: give --lfs-brokers or --lfs-etcd-endpoints (the development Kafka of --lfs-dev-kafka speaks neither)")
	}
	if useTLS {
		t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: l.KafkaTLSServerName}
		if l.KafkaTLSCAFile != "" {
			pem, err := os.ReadFile(l.KafkaTLSCAFile)
			if err != nil {
				return a, usagef("%s: %v", c.src("lfs-kafka-tls-ca-file"), err)
			}
			t.RootCAs = x509.NewCertPool()
			if !t.RootCAs.AppendCertsFromPEM(pem) {
				return a, usagef("%s %s: no PEM certificate in it", c.src("lfs-kafka-tls-ca-file"), l.KafkaTLSCAFile)
			}
		}
		if (l.KafkaTLSCertFile == "") != (l.KafkaTLSKeyFile == "") {
			return a, usagef("%s and %s go together: give both for a client certificate, or neither",
				c.src("lfs-kafka-tls-cert-file"), c.src("lfs-kafka-tls-key-file"))
		}
		if l.KafkaTLSCertFile != "" {
			certPEM, err := os.ReadFile(l.KafkaTLSCertFile)
			if err != nil {
				return a, usagef("%s: %v", c.src("lfs-kafka-tls-cert-file"), err)
			}
			keyPEM, err := readPrivateFile(l.KafkaTLSKeyFile)
			if err != nil {
				return a, usagef("%s: %v", c.src("lfs-kafka-tls-key-file"), err)
			}
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return a, usagef("%s %s with %s %s: %v", c.src("lfs-kafka-tls-cert-file"), l.KafkaTLSCertFile,
					c.src("lfs-kafka-tls-key-file"), l.KafkaTLSKeyFile, err)
			}
			t.Certificates = []tls.Certificate{cert}
		}
		a.tls = t
	}
	if useSASL {
		switch {
		case l.KafkaSASLMechanism == "":
			return a, usagef("%s is needed with a SASL user or password: one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512", c.src("lfs-kafka-sasl-mechanism"))
		case l.KafkaSASLUser == "":
			return a, usagef("%s %s needs %s", c.src("lfs-kafka-sasl-mechanism"), l.KafkaSASLMechanism, c.src("lfs-kafka-sasl-user"))
		case l.KafkaSASLPassword == "":
			return a, usagef("%s %s needs a password: S3SEAL_LFS_KAFKA_SASL_PASSWORD or --lfs-kafka-sasl-password-file",
				c.src("lfs-kafka-sasl-mechanism"), l.KafkaSASLMechanism)
		}
		m, err := brokers.SASL(l.KafkaSASLMechanism, l.KafkaSASLUser, l.KafkaSASLPassword)
		if err != nil {
			return a, usagef("%s: %v", c.src("lfs-kafka-sasl-mechanism"), err)
		}
		a.sasl = m
	}
	return a, nil
}

// String names what is configured, for the start log (no secrets).
func (a lfsKafkaAuth) String() string {
	s := "plaintext"
	if a.tls != nil {
		s = "TLS"
	}
	if a.sasl != nil {
		s += fmt.Sprintf(", SASL %s", a.sasl.Name())
	}
	return s
}
