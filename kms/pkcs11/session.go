//go:build pkcs11 && cgo

package pkcs11

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	p11 "github.com/miekg/pkcs11"

	"github.com/s3seal/s3seal/kms"
)

// maxSessions bounds the sessions a provider has open at once, and so
// the calls it makes at once.
const maxSessions = 8

// ckrAEADDecryptFailed is PKCS#11 3.0's answer to a tag mismatch, which
// the binding's constants (2.40) lack.
const ckrAEADDecryptFailed = 0x35

var (
	modulesMu sync.Mutex
	// modules holds each module loaded, by path. A module is initialised
	// once per process and never finalised: C_Finalize would end every
	// session of every provider on it.
	modules = map[string]*p11.Ctx{}
)

// loadModule loads and initialises the module at path, once per process.
func loadModule(path string) (*p11.Ctx, error) {
	path = filepath.Clean(path)
	modulesMu.Lock()
	defer modulesMu.Unlock()
	if c, ok := modules[path]; ok {
		return c, nil
	}
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("PKCS#11 module: %w", err)
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("PKCS#11 module %s is not a regular file", path)
	}
	c := p11.New(path)
	if c == nil {
		return nil, fmt.Errorf("PKCS#11 module %s could not be loaded (is it a PKCS#11 library built for this system?)", path)
	}
	if err := c.Initialize(); err != nil && !isRV(err, p11.CKR_CRYPTOKI_ALREADY_INITIALIZED) {
		c.Destroy()
		return nil, fmt.Errorf("PKCS#11 module %s: C_Initialize: %w", path, err)
	}
	modules[path] = c
	return c, nil
}

// sessions is a provider's pool of logged-in sessions on its token. A
// PKCS#11 session serves one call at a time; the login is the
// application's, shared by its sessions of the token, and lost when the
// last one closes, so a session taken from the pool is logged in again
// when it is found logged out.
type sessions struct {
	mod   *p11.Ctx
	token tokenSpec
	pin   string
	// slots bounds the sessions in use: a call holds one from before it
	// takes a session until it gives it back.
	slots chan struct{}

	mu     sync.Mutex
	idle   []p11.SessionHandle
	slot   uint
	found  bool  // slot holds the token's slot
	badPIN error // the PIN was refused: no more logins with it
	closed bool
}

func newSessions(mod *p11.Ctx, token tokenSpec, pin string) *sessions {
	return &sessions{mod: mod, token: token, pin: pin, slots: make(chan struct{}, maxSessions)}
}

// run calls f with a logged-in session. PKCS#11 calls cannot be
// interrupted, so f runs in a goroutine: when ctx ends first, run
// returns at once (Unavailable) and the session goes back to the pool
// when f returns; discard, if not nil, then clears what a successful f
// left for the caller. f's own errors are returned as they are.
func (s *sessions) run(ctx context.Context, f func(p11.SessionHandle) error, discard func()) error {
	if ctx.Err() != nil {
		return ended(ctx)
	}
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return ended(ctx)
	}
	done := make(chan error, 1)
	go func() {
		h, err := s.get()
		if err == nil {
			err = f(h)
			s.put(h, err)
		}
		<-s.slots
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		go func() {
			if err := <-done; err == nil && discard != nil {
				discard()
			}
		}()
		return ended(ctx)
	}
}

// ended is the error of a call whose context ended first.
func ended(ctx context.Context) error {
	return kms.Errorf(kms.Unavailable, "the call was left before the HSM answered: %w", ctx.Err())
}

// get returns a logged-in session: an idle one or a new one.
func (s *sessions) get() (p11.SessionHandle, error) {
	for {
		s.mu.Lock()
		n := len(s.idle)
		if n == 0 {
			s.mu.Unlock()
			break
		}
		h := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		err := s.login(h)
		if err == nil {
			return h, nil
		}
		s.mod.CloseSession(h)
		if kindOf(err) == kms.Denied {
			return 0, err
		}
	}
	slot, err := s.findSlot()
	if err != nil {
		return 0, err
	}
	h, err := s.mod.OpenSession(slot, p11.CKF_SERIAL_SESSION)
	if err != nil {
		s.forgetSlot(err)
		return 0, fail("C_OpenSession", err)
	}
	if err := s.login(h); err != nil {
		s.mod.CloseSession(h)
		return 0, err
	}
	return h, nil
}

// login logs the user in on h unless the application is logged in.
func (s *sessions) login(h p11.SessionHandle) error {
	info, err := s.mod.GetSessionInfo(h)
	if err != nil {
		return fail("C_GetSessionInfo", err)
	}
	if info.State == p11.CKS_RO_USER_FUNCTIONS || info.State == p11.CKS_RW_USER_FUNCTIONS {
		return nil
	}
	s.mu.Lock()
	bad := s.badPIN
	s.mu.Unlock()
	if bad != nil {
		return bad
	}
	err = s.mod.Login(h, p11.CKU_USER, s.pin)
	if err == nil || isRV(err, p11.CKR_USER_ALREADY_LOGGED_IN) {
		return nil
	}
	err = fail("C_Login", err)
	if isRV(err, p11.CKR_PIN_INCORRECT, p11.CKR_PIN_INVALID, p11.CKR_PIN_LEN_RANGE, p11.CKR_PIN_LOCKED) {
		s.mu.Lock()
		s.badPIN = fmt.Errorf("%w (no further login is tried with this PIN: fix the PIN file and restart s3seal)", err)
		s.mu.Unlock()
	}
	return err
}

// put gives h back after a call that ended with err, or closes it when
// err says the session, the token or the module failed.
func (s *sessions) put(h p11.SessionHandle, err error) {
	s.mu.Lock()
	keep := !s.closed && sessionSurvives(err)
	if keep {
		s.idle = append(s.idle, h)
	}
	s.mu.Unlock()
	if !keep {
		s.mod.CloseSession(h)
		s.forgetSlot(err)
	}
}

// close closes the idle sessions and those in use as their calls end.
func (s *sessions) close() {
	s.mu.Lock()
	idle := s.idle
	s.idle, s.closed = nil, true
	s.mu.Unlock()
	for _, h := range idle {
		s.mod.CloseSession(h)
	}
}

// findSlot returns the slot of the token s names, looked up once and
// again after the token was found missing.
func (s *sessions) findSlot() (uint, error) {
	s.mu.Lock()
	slot, found := s.slot, s.found
	s.mu.Unlock()
	if found {
		return slot, nil
	}
	list, err := s.mod.GetSlotList(true)
	if err != nil {
		return 0, fail("C_GetSlotList", err)
	}
	var match []uint
	var labels []string
	for _, id := range list {
		ti, err := s.mod.GetTokenInfo(id)
		if err != nil {
			continue // the token left between the two calls
		}
		if ti.Flags&p11.CKF_TOKEN_INITIALIZED != 0 {
			labels = append(labels, fmt.Sprintf("%q", ti.Label))
		}
		if s.token.matches(id, ti.Label, ti.ManufacturerID, ti.Model, ti.SerialNumber) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		slices.Sort(labels)
		return 0, kms.Errorf(kms.Unavailable, "no token labelled %q (with the URI's manufacturer, model, serial and slot-id) is present; tokens present: %s",
			s.token.label, orNone(labels))
	case 1:
	default:
		return 0, kms.Errorf(kms.Failed, "%d tokens are labelled %q: tell them apart in the URI with serial=", len(match), s.token.label)
	}
	s.mu.Lock()
	s.slot, s.found = match[0], true
	s.mu.Unlock()
	return match[0], nil
}

// forgetSlot makes the next session look the token up again when err
// says it left its slot.
func (s *sessions) forgetSlot(err error) {
	if isRV(err, p11.CKR_SLOT_ID_INVALID, p11.CKR_TOKEN_NOT_PRESENT, p11.CKR_TOKEN_NOT_RECOGNIZED, p11.CKR_DEVICE_REMOVED) {
		s.mu.Lock()
		s.found = false
		s.mu.Unlock()
	}
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// sessionSurvives reports whether a session can serve another call after
// one that ended with err: a call that failed for its key or its data
// leaves the session as it was (C_Encrypt and C_Decrypt end their
// operation whatever they answer); any other failure of the module
// closes it.
func sessionSurvives(err error) bool {
	var rv p11.Error
	if err == nil || !errors.As(err, &rv) {
		return true
	}
	switch rv {
	case p11.CKR_ENCRYPTED_DATA_INVALID, p11.CKR_ENCRYPTED_DATA_LEN_RANGE, ckrAEADDecryptFailed,
		p11.CKR_KEY_FUNCTION_NOT_PERMITTED, p11.CKR_KEY_HANDLE_INVALID, p11.CKR_OBJECT_HANDLE_INVALID,
		p11.CKR_KEY_TYPE_INCONSISTENT, p11.CKR_KEY_SIZE_RANGE, p11.CKR_MECHANISM_INVALID, p11.CKR_MECHANISM_PARAM_INVALID,
		p11.CKR_ATTRIBUTE_SENSITIVE, p11.CKR_ATTRIBUTE_TYPE_INVALID:
		return true
	}
	return false
}

// isRV reports whether err is the PKCS#11 return value of one of rvs.
func isRV(err error, rvs ...p11.Error) bool {
	var rv p11.Error
	return errors.As(err, &rv) && slices.Contains(rvs, rv)
}

// fail names the PKCS#11 function that returned err and gives it the
// Kind its return value says.
func fail(function string, err error) error {
	return kms.Errorf(kindOfRV(err), "%s: %w", function, err)
}

// kindOfRV is the Kind of a PKCS#11 function's failure. The failures of
// a decryption that say the ciphertext is not the key's are the caller's
// to judge (see openWith).
func kindOfRV(err error) kms.Kind {
	var rv p11.Error
	if !errors.As(err, &rv) {
		return kms.Failed
	}
	switch rv {
	case p11.CKR_PIN_INCORRECT, p11.CKR_PIN_INVALID, p11.CKR_PIN_LEN_RANGE, p11.CKR_PIN_EXPIRED, p11.CKR_PIN_LOCKED,
		p11.CKR_USER_PIN_NOT_INITIALIZED:
		return kms.Denied
	case p11.CKR_KEY_FUNCTION_NOT_PERMITTED:
		return kms.Disabled
	case p11.CKR_KEY_HANDLE_INVALID, p11.CKR_OBJECT_HANDLE_INVALID:
		return kms.NotFound
	case p11.CKR_DEVICE_ERROR, p11.CKR_DEVICE_MEMORY, p11.CKR_DEVICE_REMOVED, p11.CKR_HOST_MEMORY,
		p11.CKR_TOKEN_NOT_PRESENT, p11.CKR_TOKEN_NOT_RECOGNIZED, p11.CKR_SLOT_ID_INVALID,
		p11.CKR_SESSION_COUNT, p11.CKR_SESSION_HANDLE_INVALID, p11.CKR_SESSION_CLOSED,
		p11.CKR_USER_NOT_LOGGED_IN, p11.CKR_OPERATION_ACTIVE, p11.CKR_FUNCTION_CANCELED,
		p11.CKR_CRYPTOKI_NOT_INITIALIZED, p11.CKR_CANT_LOCK:
		return kms.Unavailable
	}
	return kms.Failed
}

// kindOf is the Kind a provider error carries, 0 for none.
func kindOf(err error) kms.Kind {
	var pe *kms.ProviderError
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return 0
}
