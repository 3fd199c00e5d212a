package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/cairn-agents/cairn/pkg/provision"
)

// defaultNATS is where services and operator commands find NATS unless told.
const defaultNATS = "nats://127.0.0.1:4222"

// natsFlags are how a command reaches NATS: the servers, the credentials
// of its NATS user and the CA that signed the servers' certificates.
type natsFlags struct {
	URL   string
	Creds string // an nkey seed file (.nk) or a JWT .creds file; empty: none
	CA    string // PEM file of the CA of the servers' TLS certificates; empty: system roots
}

// addNATSFlag adds --nats (env CAIRN_NATS), --creds (env CAIRN_NATS_CREDS)
// and --tls-ca (env CAIRN_NATS_CA) to c.
func addNATSFlag(c *cobra.Command) *natsFlags {
	f := &natsFlags{}
	f.add(c, envOr("CAIRN_NATS", defaultNATS), "NATS server URL(s), comma separated (env CAIRN_NATS)")
	return f
}

func (f *natsFlags) add(c *cobra.Command, defURL, urlHelp string) {
	c.Flags().StringVar(&f.URL, "nats", defURL, urlHelp)
	c.Flags().StringVar(&f.Creds, "creds", os.Getenv("CAIRN_NATS_CREDS"),
		"credentials of this command's NATS user: an nkey seed file (cairn provision users) or a .creds file (env CAIRN_NATS_CREDS)")
	c.Flags().StringVar(&f.CA, "tls-ca", os.Getenv("CAIRN_NATS_CA"),
		"CA certificate (PEM) that signed the NATS servers' certificates; verified on every connection (env CAIRN_NATS_CA)")
}

// options are the connection options of the flags for a service of role
// (pool for toolrunners): the credentials, with the role's inbox prefix,
// and TLS. Errors name the file, never its content.
func (f *natsFlags) options(role provision.Role, pool string) ([]nats.Option, error) {
	var opts []nats.Option
	if f.Creds != "" {
		data, err := os.ReadFile(f.Creds)
		if err != nil {
			return nil, usagef("--creds: %v", err)
		}
		isJWT := strings.Contains(string(data), "BEGIN NATS USER JWT")
		clear(data)
		if isJWT {
			opts = append(opts, nats.UserCredentials(f.Creds))
		} else {
			if _, err := provision.ReadSeedFile(f.Creds); err != nil {
				return nil, usagef("--creds: %v", err)
			}
			nk, err := nats.NkeyOptionFromSeed(f.Creds)
			if err != nil {
				return nil, usagef("--creds: %s: %v", f.Creds, err)
			}
			opts = append(opts, nk)
		}
		if role != provision.RoleAdmin {
			u := provision.User{Role: role, Pool: pool}
			opts = append(opts, nats.CustomInboxPrefix(u.InboxPrefix()))
		}
	}
	if f.CA != "" {
		if _, err := os.Stat(f.CA); err != nil {
			return nil, usagef("--tls-ca: %v", err)
		}
		opts = append(opts, nats.RootCAs(f.CA))
	}
	return opts, nil
}

// connectNATS connects as role with reconnects forever, as a service
// should; a permission the server refuses is logged to log (nil: dropped).
func connectNATS(f *natsFlags, name string, role provision.Role, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	opts, err := f.options(role, "")
	if err != nil {
		return nil, nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts = append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.Timeout(5 * time.Second), nats.ErrorHandler(natsErrorLogger(log))}, opts...)
	nc, err := nats.Connect(f.URL, opts...)
	if err != nil {
		return nil, nil, natsConnectErr(f.URL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// natsConnectErr explains a refused connection.
func natsConnectErr(url string, err error) error {
	if errors.Is(err, nats.ErrAuthorization) {
		return fmt.Errorf("connect to NATS at %s: %w (the server requires credentials: --creds, env CAIRN_NATS_CREDS)", url, err)
	}
	return fmt.Errorf("connect to NATS at %s: %w", url, err)
}

// natsErrorLogger logs the asynchronous errors of a connection, permission
// violations above all: the server names the subject it refused.
func natsErrorLogger(log *slog.Logger) nats.ErrHandler {
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if sub != nil {
			log.Error("nats", "err", err, "subject", sub.Subject)
			return
		}
		log.Error("nats", "err", err)
	}
}
