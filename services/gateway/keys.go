package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairn-agents/cairn/pkg/events"
	"github.com/cairn-agents/cairn/pkg/jsretry"
	"github.com/cairn-agents/cairn/pkg/provider/secret"
	"github.com/cairn-agents/cairn/pkg/provision"
	"github.com/nats-io/nats.go/jetstream"
)

// API keys. A key's token is "cairn_<id>_<secret>": id is 16 hex digits
// (64 random bits), the key's name in the keys bucket and the principal's
// id ("key:<id>"); secret is 64 hex digits (256 random bits). The bucket
// stores the SHA-256 of the secret, never the secret: the token is shown
// once, when the key is created. A secret of 256 random bits needs no slow
// hash; the comparison runs in constant time (crypto/subtle), and a token
// whose id is unknown is compared against a fixed digest all the same, so
// the time a check takes says nothing about how much of a key matched.
//
// Every gateway watches the bucket (KV watch) and answers from the cache it
// keeps, so a key revoked on one gateway fails on every gateway as soon as
// the watch delivers the change (milliseconds on a healthy cluster). A
// revoked key keeps its record, marked revoked: a bootstrap key that was
// revoked does not come back when its gateway restarts.

const (
	tokenPrefix = "cairn_"
	keyIDLen    = 16 // hex digits
	keySecret   = 64 // hex digits
	tokenLen    = len(tokenPrefix) + keyIDLen + 1 + keySecret
)

// KeyRecord is what the keys bucket holds for one API key.
type KeyRecord struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Role   Role   `json:"role"`
	Name   string `json:"name,omitempty"`
	// Hash is the hex SHA-256 of the key's secret.
	Hash      string    `json:"hash"`
	CreatedAt time.Time `json:"createdAt"`
	// CreatedBy is the principal that created the key ("bootstrap" for the
	// key a gateway stores at start).
	CreatedBy string     `json:"createdBy"`
	RevokedAt *time.Time `json:"revokedAt,omitempty"`
	RevokedBy string     `json:"revokedBy,omitempty"`
}

// NewKey returns a fresh API key token and its id. The token is the
// secret: show it once, store only [KeyRecord.Hash].
func NewKey() (secret.Secret, string, error) {
	var b [keyIDLen/2 + keySecret/2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("gateway: random key: %w", err)
	}
	id := hex.EncodeToString(b[:keyIDLen/2])
	return secret.Secret(tokenPrefix + id + "_" + hex.EncodeToString(b[keyIDLen/2:])), id, nil
}

// ParseKey splits an API key token into its id and the SHA-256 of its
// secret. The error says what is wrong with the form, never the token.
func ParseKey(token secret.Secret) (id string, hash [sha256.Size]byte, err error) {
	t := token.Reveal()
	if len(t) != tokenLen || !strings.HasPrefix(t, tokenPrefix) || t[len(tokenPrefix)+keyIDLen] != '_' {
		return "", hash, errors.New("an API key is cairn_<16 hex digits>_<64 hex digits>")
	}
	id = t[len(tokenPrefix) : len(tokenPrefix)+keyIDLen]
	sec := t[len(tokenPrefix)+keyIDLen+1:]
	if !isHex(id) || !isHex(sec) {
		return "", hash, errors.New("an API key is cairn_<16 hex digits>_<64 hex digits>")
	}
	return id, sha256.Sum256([]byte(sec)), nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// decoyHash is compared with a token whose id is unknown, so that check
// costs what a known id's costs.
var decoyHash = sha256.Sum256([]byte("cairn: no such key"))

// keyStore is a gateway's view of the keys bucket: a cache filled and kept
// current by a watch.
type keyStore struct {
	js     jetstream.JetStream
	names  events.Names
	loaded chan struct{} // closed once the watch delivered every existing key
	mu     struct {
		sync.RWMutex
		kv   jetstream.KeyValue
		keys map[string]cachedKey
	}
}

type cachedKey struct {
	rec  KeyRecord
	hash [sha256.Size]byte
	rev  uint64
}

func newKeyStore(js jetstream.JetStream, n events.Names) *keyStore {
	s := &keyStore{js: js, names: n, loaded: make(chan struct{})}
	s.mu.keys = map[string]cachedKey{}
	return s
}

// open returns the bucket, creating it as `cairn provision` does when it is
// missing (a gateway started before anything was provisioned).
func (s *keyStore) open(ctx context.Context) (jetstream.KeyValue, error) {
	s.mu.RLock()
	kv := s.mu.kv
	s.mu.RUnlock()
	if kv != nil {
		return kv, nil
	}
	name := s.names.KeysBucket()
	err := jsretry.Do(ctx, func(ctx context.Context) error {
		var err error
		kv, err = s.js.KeyValue(ctx, name)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			kv, err = s.js.CreateKeyValue(ctx, provision.KeysBucket(s.names, 1))
			if errors.Is(err, jetstream.ErrBucketExists) {
				kv, err = s.js.KeyValue(ctx, name)
			}
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("keys bucket %s: %w", name, err)
	}
	s.mu.Lock()
	s.mu.kv = kv
	s.mu.Unlock()
	return kv, nil
}

// run watches the bucket until ctx ends, keeping the cache current.
func (s *keyStore) run(ctx context.Context) error {
	kv, err := s.open(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for ctx.Err() == nil {
		// While NATS cannot answer (a node lost, a leader elected) the
		// watch is retried; the cache keeps answering meanwhile.
		var w jetstream.KeyWatcher
		err := jsretry.Do(ctx, func(ctx context.Context) error {
			var err error
			w, err = kv.WatchAll(context.WithoutCancel(ctx))
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("watch the keys bucket: %w", err)
		}
		s.follow(ctx, w)
		_ = w.Stop() // the watch ended (ctx, or the connection): stop it and start anew
	}
	return nil
}

func (s *keyStore) follow(ctx context.Context, w jetstream.KeyWatcher) {
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.Updates():
			if !ok {
				return
			}
			if e == nil { // every existing key delivered
				select {
				case <-s.loaded:
				default:
					close(s.loaded)
				}
				continue
			}
			s.apply(e)
		}
	}
}

// apply puts one bucket entry in the cache, unless the cache holds a newer
// revision already (a key this gateway just wrote).
func (s *keyStore) apply(e jetstream.KeyValueEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if have, ok := s.mu.keys[e.Key()]; ok && have.rev >= e.Revision() {
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		delete(s.mu.keys, e.Key()) // deleted or purged by an operator: gone
		return
	}
	var rec KeyRecord
	if json.Unmarshal(e.Value(), &rec) != nil || rec.ID != e.Key() || validRole(rec.Role) != nil {
		delete(s.mu.keys, e.Key()) // unreadable: such a key authenticates no one
		return
	}
	if hash, err := hex.DecodeString(rec.Hash); err != nil || len(hash) != sha256.Size {
		delete(s.mu.keys, e.Key())
		return
	}
	s.putLocked(rec, e.Revision())
}

func (s *keyStore) putLocked(rec KeyRecord, rev uint64) {
	c := cachedKey{rec: rec, rev: rev}
	hash, _ := hex.DecodeString(rec.Hash)
	copy(c.hash[:], hash)
	s.mu.keys[rec.ID] = c
}

// check returns the record of the key token names when the token's secret
// matches and the key is not revoked.
func (s *keyStore) check(id string, hash [sha256.Size]byte) (KeyRecord, bool) {
	s.mu.RLock()
	c, found := s.mu.keys[id]
	s.mu.RUnlock()
	want := decoyHash
	if found {
		want = c.hash
	}
	match := subtle.ConstantTimeCompare(hash[:], want[:]) == 1
	if !found || !match || c.rec.RevokedAt != nil {
		return KeyRecord{}, false
	}
	return c.rec, true
}

// active reports whether key id is in the cache and not revoked.
func (s *keyStore) active(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.mu.keys[id]
	return ok && c.rec.RevokedAt == nil
}

// ready reports whether the cache holds every key the bucket held when the
// watch started.
func (s *keyStore) ready() bool {
	select {
	case <-s.loaded:
		return true
	default:
		return false
	}
}

// errKeyExists: a key of that id is in the bucket already.
var errKeyExists = errors.New("a key of that id exists")

// create stores a new key record (the id must be new) and caches it at once.
func (s *keyStore) create(ctx context.Context, rec KeyRecord) error {
	kv, err := s.open(ctx)
	if err != nil {
		return err
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	rev, err := kv.Create(ctx, rec.ID, data)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return errKeyExists
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.putLocked(rec, rev)
	s.mu.Unlock()
	return nil
}

// get reads one key's record from the bucket (not the cache), with its revision.
func (s *keyStore) get(ctx context.Context, id string) (KeyRecord, uint64, error) {
	kv, err := s.open(ctx)
	if err != nil {
		return KeyRecord{}, 0, err
	}
	e, err := kv.Get(ctx, id)
	if err != nil {
		return KeyRecord{}, 0, err
	}
	var rec KeyRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return KeyRecord{}, 0, fmt.Errorf("key %s: unreadable record: %w", id, err)
	}
	return rec, e.Revision(), nil
}

// revoke marks a key revoked (compare-and-set on its revision) and caches
// the change at once.
func (s *keyStore) revoke(ctx context.Context, rec KeyRecord, rev uint64, by string, at time.Time) (KeyRecord, error) {
	kv, err := s.open(ctx)
	if err != nil {
		return rec, err
	}
	rec.RevokedAt, rec.RevokedBy = &at, by
	data, err := json.Marshal(rec)
	if err != nil {
		return rec, err
	}
	nrev, err := kv.Update(ctx, rec.ID, data, rev)
	if err != nil {
		return rec, err
	}
	s.mu.Lock()
	s.putLocked(rec, nrev)
	s.mu.Unlock()
	return rec, nil
}

// list returns the cached records, of one tenant or (tenant "") of all.
func (s *keyStore) list(tenant string) []KeyRecord {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []KeyRecord{}
	for _, c := range s.mu.keys {
		if tenant == "" || c.rec.Tenant == tenant {
			out = append(out, c.rec)
		}
	}
	return out
}

// bootstrap stores token as a platform admin key unless its id is in the
// bucket already; a record of that id with another secret is an error (two
// different bootstrap files for one platform).
func (s *keyStore) bootstrap(ctx context.Context, token secret.Secret, now time.Time) (created bool, err error) {
	id, hash, err := ParseKey(token)
	if err != nil {
		return false, fmt.Errorf("bootstrap admin key: %w", err)
	}
	rec := KeyRecord{ID: id, Tenant: DefaultTenant, Role: RoleAdmin, Name: "bootstrap admin", Hash: hex.EncodeToString(hash[:]),
		CreatedAt: now.UTC(), CreatedBy: "bootstrap"}
	err = s.create(ctx, rec)
	if !errors.Is(err, errKeyExists) {
		return err == nil, err
	}
	have, _, err := s.get(ctx, id)
	if err != nil {
		return false, err
	}
	if subtle.ConstantTimeCompare([]byte(have.Hash), []byte(rec.Hash)) != 1 {
		return false, fmt.Errorf("bootstrap admin key: key %s exists with another secret", id)
	}
	return false, nil
}
