package provision

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"
)

// Credentials are nkey users: each user's seed lives in a file of its own,
// <name>.nk (the seed on one line, mode 0600), read by nats.go's
// NkeyOptionFromSeed; the server knows only the public keys, with each
// user's permissions (see [AuthorizationConfig]). No JWT, no account
// server: a static set of service kinds needs neither, and rotating a key
// is adding a user to the server's list, rolling the services, removing
// the old one (docs/operations.md).

// Credential is one user's public key and the file that holds its seed.
type Credential struct {
	User      User
	PublicKey string // U..., what the server's config names
	SeedFile  string
	// Retiring marks the key of a <name>.nk.old file during a rotation:
	// the servers still accept it, the services should not use it.
	Retiring bool
}

// SeedFile is the name of the seed file of user u in dir.
func SeedFile(dir string, u User) string { return filepath.Join(dir, u.Name()+".nk") }

// EnsureCredentials returns a credential for each user, reading its seed
// file in dir or, when there is none, creating a new nkey and writing it
// (mode 0600; dir is created 0700). A <name>.nk.old file beside it (a key
// being rotated out) adds a second, retiring credential for the user with
// the same permissions, so the servers accept both while the services roll. It refuses a seed file or a directory
// that others may read or the group may write, naming it: a seed is a
// password.
func EnsureCredentials(dir string, users []User) ([]Credential, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if fi.Mode().Perm()&0o027 != 0 {
		return nil, fmt.Errorf("credentials: directory %s has mode %04o; others must have no access and the group no write (chmod 700)", dir, fi.Mode().Perm())
	}
	creds := make([]Credential, 0, len(users))
	for _, u := range users {
		path := SeedFile(dir, u)
		pub, err := ReadSeedFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			pub, err = writeSeedFile(path)
		}
		if err != nil {
			return nil, err
		}
		creds = append(creds, Credential{User: u, PublicKey: pub, SeedFile: path})
		old := path + ".old"
		if pub, err := ReadSeedFile(old); err == nil {
			creds = append(creds, Credential{User: u, PublicKey: pub, SeedFile: old, Retiring: true})
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return creds, nil
}

// ReadSeedFile checks the nkey user seed file at path (one user seed; no
// access for others, the group at most read, as Kubernetes mounts a Secret
// with an fsGroup) and returns its public key. Errors name the file, never
// its content.
func ReadSeedFile(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	if fi.Mode().Perm()&0o037 != 0 {
		return "", fmt.Errorf("credentials: %s has mode %04o; others must have no access and the group at most read (chmod 600)", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	defer wipe(data)
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return "", fmt.Errorf("credentials: %s holds no nkey user seed", path)
	}
	defer kp.Wipe()
	pub, err := kp.PublicKey()
	if err != nil || !nkeys.IsValidPublicUserKey(pub) {
		return "", fmt.Errorf("credentials: %s holds no nkey user seed", path)
	}
	return pub, nil
}

func writeSeedFile(path string) (string, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return "", fmt.Errorf("credentials: new nkey: %w", err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return "", fmt.Errorf("credentials: new nkey: %w", err)
	}
	defer wipe(seed)
	pub, err := kp.PublicKey()
	if err != nil {
		return "", fmt.Errorf("credentials: new nkey: %w", err)
	}
	// O_EXCL: two starts at once never overwrite each other's seed.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("credentials: %w", err)
	}
	_, err = f.Write(append(seed, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", errors.Join(fmt.Errorf("credentials: write %s: %w", path, err), os.Remove(path))
	}
	return pub, nil
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}

// AuthorizationConfig renders the authorization block of a nats-server
// configuration file for creds: one nkey user each, with its permissions
// (none for the admin). Include it in every node's configuration.
func AuthorizationConfig(creds []Credential) string {
	var b strings.Builder
	b.WriteString("authorization {\n  users = [\n")
	for _, c := range creds {
		name := c.User.Name()
		if c.Retiring {
			name += " (retiring: remove " + filepath.Base(c.SeedFile) + " when every service has the new key)"
		}
		fmt.Fprintf(&b, "    # %s\n    {\n      nkey: %q\n", name, c.PublicKey)
		if c.User.Role != RoleAdmin {
			b.WriteString("      permissions: {\n")
			writeList(&b, "publish", c.User.Permissions.Publish)
			writeList(&b, "subscribe", c.User.Permissions.Subscribe)
			if c.User.Permissions.Responses {
				b.WriteString("        allow_responses: true\n")
			}
			b.WriteString("      }\n")
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  ]\n}\n")
	return b.String()
}

func writeList(b *strings.Builder, name string, subjects []string) {
	fmt.Fprintf(b, "        %s: { allow: [\n", name)
	for _, s := range subjects {
		fmt.Fprintf(b, "          %q\n", s)
	}
	b.WriteString("        ] }\n")
}

// Options are the nats.go options that connect as c: its nkey (the seed is
// read from c.SeedFile when the server asks, not kept in memory) and its
// inbox prefix.
func (c Credential) Options() ([]nats.Option, error) {
	nk, err := nats.NkeyOptionFromSeed(c.SeedFile)
	if err != nil {
		return nil, fmt.Errorf("credentials: %s: %w", c.SeedFile, err)
	}
	opts := []nats.Option{nk}
	if c.User.Role != RoleAdmin {
		opts = append(opts, nats.CustomInboxPrefix(c.User.InboxPrefix()))
	}
	return opts, nil
}
