package provision

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
)

// Certificate files [WriteCerts] writes, relative to its directory. Each
// directory is what one kind of reader mounts: ca/ the services (the CA
// certificate only), server/ the NATS nodes, ca-key/ nobody (it signs new
// server certificates; whoever holds it can join the cluster as a route).
const (
	CAFile        = "ca/ca.pem"
	CAKeyFile     = "ca-key/ca-key.pem" // 0600, directory 0700
	ServerFile    = "server/server.pem" // directory 0700
	ServerKeyFile = "server/server-key.pem"
	ServerCAFile  = "server/ca.pem" // the CA again: the nodes verify routes with it
)

// CertOptions shape [WriteCerts].
type CertOptions struct {
	// Hosts are the DNS names and IP addresses the servers' certificate is
	// valid for (clients and routes verify them). Required.
	Hosts []string
	// Validity of the server certificate; default 1 year (the CA: 10 years).
	Validity time.Duration
}

// WriteCerts writes a CA and a server certificate signed by it under dir,
// for NATS client and route TLS: the server certificate may serve (clients
// verify it) and may authenticate as a client (routes between nodes verify
// each other with it). An existing CA in dir is reused, so certificates
// renewed later stay trusted; the server certificate is always new. Keys
// are ECDSA P-256, written 0600.
func WriteCerts(dir string, opts CertOptions) error {
	if len(opts.Hosts) == 0 {
		return &events.FieldError{Field: "hosts", Problem: "name at least one DNS name or IP address of the servers"}
	}
	if opts.Validity == 0 {
		opts.Validity = 365 * 24 * time.Hour
	}
	if opts.Validity < 0 {
		return &events.FieldError{Field: "validity", Problem: "must be positive"}
	}
	for sub, mode := range map[string]os.FileMode{"ca": 0o755, "ca-key": 0o700, "server": 0o700} {
		if err := os.MkdirAll(filepath.Join(dir, sub), mode); err != nil {
			return fmt.Errorf("certs: %w", err)
		}
	}
	ca, caKey, err := loadCA(dir)
	if errors.Is(err, fs.ErrNotExist) {
		ca, caKey, err = newCA(dir)
	}
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: opts.Hosts[0], Organization: []string{"Cairn"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(opts.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range opts.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("certs: sign the server certificate: %w", err)
	}
	if err := writePEM(filepath.Join(dir, ServerFile), "CERTIFICATE", der, 0o644); err != nil {
		return err
	}
	if err := writePEM(filepath.Join(dir, ServerCAFile), "CERTIFICATE", ca.Raw, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, ServerKeyFile), key)
}

func newCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "Cairn NATS CA", Organization: []string{"Cairn"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: create the CA: %w", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %w", err)
	}
	if err := writeKey(filepath.Join(dir, CAKeyFile), key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(filepath.Join(dir, CAFile), "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	return ca, key, nil
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s exists without its key %s: %w", CAFile, CAKeyFile, err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("certs: %s or %s in %s is not PEM", CAFile, CAKeyFile, dir)
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s: %w", CAFile, err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: %s: %w", CAKeyFile, err)
	}
	return ca, key, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	// Replace atomically, never widening the mode of an existing file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
