package vault

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/s3seal/s3seal/kms"
)

// A Vault that is sealed, gone, or does not answer is Unavailable, and a
// Service gives up on it within its bounds. The test starts a server of
// its own, to seal and kill.
func TestUnavailable(t *testing.T) {
	needDev(t)
	bin, _ := vaultBinary()
	d, err := startDev(bin, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.stop)
	if err := d.setUp(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	name := keyName(t)
	d.createKey(t, "transit", name, nil)
	p := d.open(t, "transit", name, rootToken)
	_, sealed, _, err := p.GenerateKey(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := kms.NewService(kms.Options{CacheTTL: -1, Timeout: time.Second, Attempts: 2, Backoff: 10 * time.Millisecond, Logger: quietOptions(0).Logger}, p)
	if err != nil {
		t.Fatal(err)
	}

	// Sealed: Vault answers 503.
	if err := d.root.Sys().Seal(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Decrypt(ctx, name, sealed, nil); kindOf(err) != kms.Unavailable {
		t.Errorf("Decrypt with Vault sealed: %v, want Unavailable", err)
	}
	if err := p.Check(ctx, name); kindOf(err) != kms.Unavailable {
		t.Errorf("Check with Vault sealed: %v, want Unavailable", err)
	}

	// Killed: the connection is refused.
	d.stop()
	start := time.Now()
	if _, err := p.Decrypt(ctx, name, sealed, nil); kindOf(err) != kms.Unavailable {
		t.Errorf("Decrypt with Vault gone: %v, want Unavailable", err)
	}
	err = svc.Check(ctx, "hcvault:"+name)
	if kms.KindOf(err) != kms.Unavailable {
		t.Errorf("Service.Check with Vault gone: %v, want Unavailable", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("Vault gone: answered in %v", el)
	}
}

// A server that takes the connection and never answers: the call ends
// at its deadline, Unavailable.
func TestNoAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	defer func() {
		l.Close()
		for len(held) > 0 {
			(<-held).Close()
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			select {
			case held <- c:
			default:
				c.Close()
			}
		}
	}()
	p, _, err := Open("hcvault://"+l.Addr().String()+"/transit?tls=false", envOf(map[string]string{"VAULT_TOKEN": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, _, err := p.GenerateKey(ctx, "k", nil); kindOf(err) != kms.Unavailable {
		t.Errorf("GenerateKey from a server that does not answer: %v, want Unavailable", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v, past the 300ms deadline", el)
	}
	svc, err := kms.NewService(kms.Options{Timeout: 200 * time.Millisecond, Attempts: 3, Backoff: 10 * time.Millisecond, Logger: quietOptions(0).Logger}, p)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if err := svc.Check(context.Background(), "hcvault:k"); kms.KindOf(err) != kms.Unavailable {
		t.Errorf("Service.Check: %v, want Unavailable", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Service.Check took %v for 3 tries of 200ms", el)
	}
}
