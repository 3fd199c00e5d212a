package llm

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a provider failure.
type Kind int

const (
	KindOther           Kind = iota // not retried
	KindRetryable                   // overloaded, rate limited, 5xx, network: back off and retry
	KindContextOverflow             // the context does not fit the window: compact, then retry
	KindAuth                        // bad or missing credentials
	KindInvalidRequest              // the request itself is wrong
	KindAborted                     // ctx was cancelled
	KindQuota                       // the account's quota is used up: waiting does not bring it back, so not retried
)

var kindNames = [...]string{"other", "retryable", "context_overflow", "auth", "invalid_request", "aborted", "quota"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Sentinels matched by errors.Is against an *Error of that kind.
var (
	ErrRetryable       = errors.New("retryable provider error")
	ErrContextOverflow = errors.New("context overflow")
	ErrAuth            = errors.New("authentication failed")
	ErrInvalidRequest  = errors.New("invalid request")
	ErrAborted         = errors.New("aborted")
	ErrQuota           = errors.New("quota exhausted")
)

// Error is a classified provider failure.
type Error struct {
	Kind       Kind
	Status     int           // HTTP status, 0 if none
	RetryAfter time.Duration // when the provider said how long to wait
	Message    string        // what the provider said
	Err        error         // the underlying error, if any
}

func (e *Error) Error() string {
	s := e.Kind.String()
	if e.Status != 0 {
		s += fmt.Sprintf(" (status %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRetryable:
		return e.Kind == KindRetryable
	case ErrContextOverflow:
		return e.Kind == KindContextOverflow
	case ErrAuth:
		return e.Kind == KindAuth
	case ErrInvalidRequest:
		return e.Kind == KindInvalidRequest
	case ErrAborted:
		return e.Kind == KindAborted
	case ErrQuota:
		return e.Kind == KindQuota
	}
	return false
}

// ClassifyStatus gives the kind of an HTTP error status alone: the last of
// [Classify]'s rules, for when there is nothing else to go by.
func ClassifyStatus(status int) Kind {
	switch {
	case status == 401 || status == 403:
		return KindAuth
	case status == 408 || status == 409 || status == 425 || status == 429 || status >= 500:
		return KindRetryable
	case status >= 400:
		return KindInvalidRequest
	}
	return KindOther
}

// KindOf returns the kind of err: that of an *Error in its chain, else
// KindOther.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindOther
}
