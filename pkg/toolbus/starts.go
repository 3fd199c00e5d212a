package toolbus

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// start states of a call in the cairn_toolstarts bucket.
const (
	stateStarted = "started" // a worker began executing the call
	stateDone    = "done"    // its result is stored in CAIRN_RESULTS
)

// startRecord is the value of a call's key in cairn_toolstarts.
type startRecord struct {
	State    string `json:"state"`
	Worker   string `json:"worker"`
	Delivery uint64 `json:"delivery"`
	At       string `json:"at"`
}

// claim records that worker starts the call under key. It returns the record
// that was already there (and false) if the call had been started before.
func claim(ctx context.Context, kv jetstream.KeyValue, key, worker string, delivery uint64) (startRecord, bool, error) {
	data, _ := json.Marshal(startRecord{State: stateStarted, Worker: worker, Delivery: delivery,
		At: time.Now().UTC().Format(time.RFC3339Nano)})
	_, err := kv.Create(ctx, key, data)
	if err == nil {
		return startRecord{}, true, nil
	}
	if !errors.Is(err, jetstream.ErrKeyExists) {
		return startRecord{}, false, err
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return startRecord{}, false, err
	}
	var prev startRecord
	if err := json.Unmarshal(e.Value(), &prev); err != nil {
		prev = startRecord{State: stateStarted, Worker: "unknown"}
	}
	return prev, false, nil
}

// markDone records that the call's result is stored.
func markDone(ctx context.Context, kv jetstream.KeyValue, key, worker string) error {
	data, _ := json.Marshal(startRecord{State: stateDone, Worker: worker, At: time.Now().UTC().Format(time.RFC3339Nano)})
	_, err := kv.Put(ctx, key, data)
	return err
}
