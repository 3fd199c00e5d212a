package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/spf13/cobra"
)

func newProvisionUsersCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "users",
		Short: "create (or read back) every service kind's NATS credentials and print the server's authorization block",
		Long: `Create the NATS users of a cluster: one nkey per service kind (admin,
orchestrator, compactor, projector, gateway, and a toolrunner per pool),
each seed in --out/<user>.nk (mode 0600, directory 0700), or with
--per-user in --out/<user>/<user>.nk, so that a container can mount its own
directory only. Seeds already there are kept, so running it again changes
nothing. Prints the
authorization block for every nats-server's configuration (also written to
--out/auth.conf): the public keys with each user's permissions
(docs/operations.md has the table). Give each service its own file with
--creds; cairn provision and operator commands use admin.nk.`,
		Args: cobra.NoArgs,
	}
	out := c.Flags().String("out", "", "directory of the credential files (required)")
	pools := c.Flags().StringSlice("pools", []string{provision.DefaultPool}, "toolrunner pools, one user each, comma separated")
	prefix := c.Flags().String("prefix", events.DefaultPrefix, "namespace of the streams, subjects and buckets")
	perUser := c.Flags().Bool("per-user", false, "each seed in a directory of its own, --out/<user>/<user>.nk")
	owner := c.Flags().String("chown", "", "UID:GID to give the files (run as root, e.g. in an init container)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *out == "" {
			return usagef("--out is required")
		}
		uid, gid, err := parseOwner(*owner)
		if err != nil {
			return err
		}
		if err := events.ValidatePrefix(*prefix); err != nil {
			return usagef("--prefix: %v", err)
		}
		users, err := provision.Users(events.Names{Prefix: *prefix}, *pools)
		var fe *events.FieldError
		if errors.As(err, &fe) {
			return usagef("--pools: %v", err)
		}
		if err != nil {
			return err
		}
		var creds []provision.Credential
		if *perUser {
			for _, u := range users {
				cs, err := provision.EnsureCredentials(filepath.Join(*out, u.Name()), []provision.User{u})
				if err != nil {
					return err
				}
				creds = append(creds, cs...)
			}
		} else if creds, err = provision.EnsureCredentials(*out, users); err != nil {
			return err
		}
		block := provision.AuthorizationConfig(creds)
		if err := os.WriteFile(filepath.Join(*out, "auth.conf"), []byte(block), 0o600); err != nil {
			return err
		}
		if err := chownTree(*out, uid, gid); err != nil {
			return err
		}
		fmt.Fprint(e.stdout, block)
		return nil
	}
	return c
}

func newProvisionCertsCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "certs",
		Short: "create a CA and a NATS server certificate for client and route TLS",
		Long: `Create the TLS files of a NATS cluster under --out, one directory per reader:
ca/ca.pem for every service (--tls-ca); server/ (server.pem,
server-key.pem, ca.pem) for every NATS node, clients and routes; ca-key/
for nobody: it signs server certificates, and whoever holds it can join the
cluster as a route. The server certificate is valid for --hosts, may serve
and may authenticate as a client (routes verify each other). An existing CA
is kept, so a renewed server certificate stays trusted. Keys are ECDSA
P-256, written 0600 in 0700 directories.`,
		Args: cobra.NoArgs,
	}
	out := c.Flags().String("out", "", "directory of the certificate files (required)")
	hosts := c.Flags().StringSlice("hosts", nil, "DNS names and IP addresses of the NATS servers, comma separated (required)")
	validity := c.Flags().Duration("validity", 365*24*time.Hour, "how long the server certificate is valid")
	owner := c.Flags().String("chown", "", "UID:GID to give the files (run as root, e.g. in an init container)")
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		if *out == "" {
			return usagef("--out is required")
		}
		uid, gid, err := parseOwner(*owner)
		if err != nil {
			return err
		}
		if len(*hosts) == 0 {
			return usagef("--hosts is required: the names clients and routes reach the servers by")
		}
		if *validity <= 0 {
			return usagef("--validity must be positive, got %s", *validity)
		}
		if err := provision.WriteCerts(*out, provision.CertOptions{Hosts: *hosts, Validity: *validity}); err != nil {
			return err
		}
		if err := chownTree(*out, uid, gid); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s, %s, %s, %s and %s in %s for %s\n", provision.CAFile, provision.CAKeyFile,
			provision.ServerFile, provision.ServerKeyFile, provision.ServerCAFile, *out, strings.Join(*hosts, ", "))
		return nil
	}
	return c
}

// parseOwner parses --chown UID:GID; empty means leave the owner alone (-1).
func parseOwner(s string) (int, int, error) {
	if s == "" {
		return -1, -1, nil
	}
	u, g, ok := strings.Cut(s, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if !ok || err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, usagef("--chown: %q is not UID:GID (numbers)", s)
	}
	return uid, gid, nil
}

// chownTree gives everything under dir to uid:gid; -1 changes nothing.
func chownTree(dir string, uid, gid int) error {
	if uid < 0 {
		return nil
	}
	return filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}
