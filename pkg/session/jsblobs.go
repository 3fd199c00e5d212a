package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// objectBlobs is a BlobStore on a JetStream object store bucket.
type objectBlobs struct{ obs jetstream.ObjectStore }

func (b objectBlobs) Put(ctx context.Context, name string, data []byte) error {
	if _, err := b.obs.GetInfo(ctx, name); err == nil {
		return nil // content-addressed: the same name holds the same bytes
	}
	_, err := b.obs.PutBytes(ctx, name, data)
	return err
}

func (b objectBlobs) Get(ctx context.Context, name string) ([]byte, error) {
	data, err := b.obs.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: blob %s", ErrNotFound, name)
	}
	return data, err
}
