package serviceaccount

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func newTokens(t *testing.T, o Options) *Tokens {
	t.Helper()
	tk, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func ecKey(t *testing.T) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func claims(now time.Time, exp time.Duration, auds ...string) *Claims {
	return &Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject: Username("ns", "sa"), Audience: auds, ID: "id-1",
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(exp)),
		},
		Kubernetes: Private{Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "uid-1"}},
	}
}

func TestVerify(t *testing.T) {
	key := ecKey(t)
	tk := newTokens(t, Options{Signer: key})
	other := newTokens(t, Options{Signer: ecKey(t)})
	otherIssuer := newTokens(t, Options{Signer: key, Issuer: "https://elsewhere"})
	now := time.Now()
	api := DefaultIssuer

	sign := func(tk *Tokens, c *Claims) string {
		s, err := tk.Sign(c)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tests := []struct {
		name    string
		token   string
		want    []string
		wantOK  bool
		wantErr string
		matched []string
	}{
		{name: "valid for the API", token: sign(tk, claims(now, time.Hour, api)), wantOK: true, matched: []string{api}},
		{name: "valid for a requested audience", token: sign(tk, claims(now, time.Hour, "vault", api)), want: []string{"vault"}, wantOK: true, matched: []string{"vault"}},
		{name: "other audience", token: sign(tk, claims(now, time.Hour, "vault")), wantErr: `token audiences ["vault"] is invalid for the target audiences ["` + api + `"]`},
		{name: "expired", token: sign(tk, claims(now.Add(-3*time.Hour), time.Hour, api)), wantErr: "service account token has expired"},
		{name: "expired within the leeway", token: sign(tk, claims(now.Add(-time.Hour-30*time.Second), time.Hour, api)), wantOK: true, matched: []string{api}},
		{name: "not yet valid", token: sign(tk, claims(now.Add(time.Hour), time.Hour, api)), wantErr: "service account token"},
		{name: "signed by another key", token: sign(other, claims(now, time.Hour, api)), wantErr: "invalid signature"},
		{name: "another issuer is not ours", token: sign(otherIssuer, claims(now, time.Hour, api))},
		{name: "not a JWT", token: "abc.def"},
		{name: "garbage payload", token: "a.b.c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, matched, ok, err := tk.Verify(tt.token, tt.want)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v (err %v), want %v", ok, err, tt.wantOK)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if ok {
				if strings.Join(matched, ",") != strings.Join(tt.matched, ",") {
					t.Errorf("matched = %v, want %v", matched, tt.matched)
				}
				if c.Kubernetes.ServiceAccount.UID != "uid-1" {
					t.Errorf("claims = %+v", c)
				}
			}
		})
	}
}

func TestUserFor(t *testing.T) {
	c := claims(time.Now(), time.Hour)
	c.Kubernetes.Pod = &Ref{Name: "p", UID: "pod-uid"}
	c.Kubernetes.Node = &Ref{Name: "n", UID: "node-uid"}
	u := UserFor(c)
	if u.Name != "system:serviceaccount:ns:sa" || u.UID != "uid-1" || strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:ns" {
		t.Errorf("user = %+v", u)
	}
	want := map[string]string{CredentialIDKey: "JTI=id-1", PodNameKey: "p", PodUIDKey: "pod-uid", NodeNameKey: "n", NodeUIDKey: "node-uid"}
	for k, v := range want {
		if got := u.Extra[k]; len(got) != 1 || got[0] != v {
			t.Errorf("extra[%s] = %v, want %s", k, got, v)
		}
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	dir := t.TempDir()
	k1, generated, err := LoadOrCreateKey(dir)
	if err != nil || !generated {
		t.Fatalf("first start: generated %v, err %v", generated, err)
	}
	k2, generated, err := LoadOrCreateKey(dir)
	if err != nil || generated {
		t.Fatalf("second start: generated %v, err %v", generated, err)
	}
	if !k1.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(k2.Public()) {
		t.Error("the key changed across starts")
	}
	if fi, err := os.Stat(filepath.Join(dir, GeneratedKey)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("sa.key mode = %v, %v; want 0600", fi.Mode(), err)
	}
	// The public key file verifies tokens the private key signs.
	pubs, err := LoadPublicKeys(filepath.Join(dir, GeneratedPubKey))
	if err != nil {
		t.Fatal(err)
	}
	signer := newTokens(t, Options{Signer: k1})
	verifier := newTokens(t, Options{PublicKeys: pubs})
	tok, err := signer.Sign(claims(time.Now(), time.Hour, DefaultIssuer))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := verifier.Verify(tok, nil); !ok || err != nil {
		t.Errorf("verify with sa.pub: ok %v err %v", ok, err)
	}
	if _, err := verifier.Sign(claims(time.Now(), time.Hour)); err == nil {
		t.Error("a verifier without a signing key signed")
	}
	if _, err := LoadSigningKey(filepath.Join(dir, GeneratedPubKey)); err == nil {
		t.Error("sa.pub loaded as a signing key")
	}
	// A lost sa.pub comes back from sa.key, the same key.
	if err := os.Remove(filepath.Join(dir, GeneratedPubKey)); err != nil {
		t.Fatal(err)
	}
	if _, generated, err := LoadOrCreateKey(dir); err != nil || generated {
		t.Fatalf("start without sa.pub: generated %v, err %v", generated, err)
	}
	again, err := LoadPublicKeys(filepath.Join(dir, GeneratedPubKey))
	if err != nil || len(again) != 1 || !k1.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(again[0]) {
		t.Errorf("sa.pub after it was lost: %v %v", again, err)
	}
}
