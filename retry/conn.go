package retry

import (
	"errors"
	"io"
	"syscall"
)

// isConnReset reports a connection that broke under a request: reset,
// refused, a broken pipe or a response cut short.
func isConnReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF)
}
