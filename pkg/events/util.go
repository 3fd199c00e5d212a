package events

import (
	"errors"
	"strconv"
)

func itoa(i int) string { return strconv.Itoa(i) }

func asType[T error](err error, target *T) bool { return errors.As(err, target) }
