package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/services/gateway"
)

// Where client commands find their token, in order: --token, the
// CAIRN_TOKEN environment variable, then the key file `cairn up` recorded
// for the server. `cairn up --data DIR` writes DIR/admin.key (mode 0600) at
// its first start and records, in the user's config directory
// (os.UserConfigDir()/cairn/servers/, one file per server URL, so two
// platforms starting at once do not overwrite each other's entry), that
// this key file serves its URL.

// adminKeyFile is the platform admin key's file in a data directory.
func adminKeyFile(dataDir string) string { return filepath.Join(dataDir, "admin.key") }

// ensureAdminKey returns the admin key of the data directory, creating it
// (mode 0600) when there is none yet. created says it was just made.
func ensureAdminKey(dataDir string) (key secret.Secret, created bool, err error) {
	file := adminKeyFile(dataDir)
	if key, err = readKeyFile(file); err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(dataDir, 0o750); err != nil {
		return "", false, err
	}
	key, _, err = gateway.NewKey()
	if err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("admin key: %w", err)
	}
	if _, err := f.WriteString(key.Reveal() + "\n"); err != nil {
		_ = f.Close()
		return "", false, fmt.Errorf("admin key: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("admin key: %w", err)
	}
	return key, true, nil
}

// readKeyFile reads an API key from file (one line; surrounding space
// ignored) and checks its form. Errors name the file, never the content.
func readKeyFile(file string) (secret.Secret, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	key := secret.Secret(strings.TrimSpace(string(data)))
	if _, _, err := gateway.ParseKey(key); err != nil {
		return "", fmt.Errorf("%s does not hold an API key: %w", file, err)
	}
	return key, nil
}

// serversDir is where the key files of servers are recorded.
func serversDir() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "cairn", "servers"), nil
}

// serverEntry is one server's record.
type serverEntry struct {
	Server  string `json:"server"`
	KeyFile string `json:"keyFile"`
}

func serverFile(dir, server string) string {
	return filepath.Join(dir, url.QueryEscape(strings.TrimRight(server, "/"))+".json")
}

// rememberServer records that keyFile holds the admin key of server.
func rememberServer(server, keyFile string) error {
	dir, err := serversDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	abs, err := filepath.Abs(keyFile)
	if err != nil {
		return err
	}
	data, err := json.Marshal(serverEntry{Server: strings.TrimRight(server, "/"), KeyFile: abs})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".entry-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o600)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), serverFile(dir, server))
}

// rememberedToken is the key recorded for server, or "" when none is.
func rememberedToken(server string) (secret.Secret, error) {
	dir, err := serversDir()
	if err != nil {
		return "", nil // no config directory: nothing recorded
	}
	data, err := os.ReadFile(serverFile(dir, server))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var e serverEntry
	if err := json.Unmarshal(data, &e); err != nil || e.KeyFile == "" {
		return "", fmt.Errorf("%s: not a server entry", serverFile(dir, server))
	}
	key, err := readKeyFile(e.KeyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil // the platform's data is gone: as if nothing were recorded
	}
	return key, err
}

// tokenFor is the token a client command sends to server: flag (--token),
// else CAIRN_TOKEN, else the key recorded for server.
func tokenFor(server, flag string) (secret.Secret, error) {
	if flag != "" {
		return secret.Secret(flag), nil
	}
	if env := os.Getenv("CAIRN_TOKEN"); env != "" {
		return secret.Secret(env), nil
	}
	return rememberedToken(server)
}
