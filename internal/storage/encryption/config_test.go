package encryption

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	key16  = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 16))
	key32  = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	key32b = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32))
)

func parse(t *testing.T, yaml string) *Config {
	t.Helper()
	c, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	return c
}

const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"

func TestParseErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: Other\nresources: []", "kind: must be EncryptionConfiguration"},
		{"apiVersion", "apiVersion: v1\nkind: EncryptionConfiguration\n", "apiVersion: must be apiserver.config.k8s.io/v1"},
		{"unknown field", header + "resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n  bogus: 1\n", `unknown field "bogus"`},
		{"no resources", header, "resources: at least one entry"},
		{"no providers", header + "resources:\n- resources: [secrets]\n", "resources[0].providers: at least one provider"},
		{"two types", header + "resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n    aescbc: {keys: [{name: k, secret: " + key32 + "}]}\n", "resources[0].providers[0]: exactly one provider type"},
		{"bad base64", header + "resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: k, secret: '!!'}]}\n", "resources[0].providers[0].aescbc.keys[0].secret: not valid base64"},
		{"short key", header + "resources:\n- resources: [secrets]\n  providers:\n  - aesgcm: {keys: [{name: k, secret: " + base64.StdEncoding.EncodeToString([]byte("short")) + "}]}\n", "resources[0].providers[0].aesgcm.keys[0].secret: key is 5 bytes"},
		{"secretbox 16", header + "resources:\n- resources: [secrets]\n  providers:\n  - secretbox: {keys: [{name: k, secret: " + key16 + "}]}\n", "secretbox.keys[0].secret: key is 16 bytes, want one of [32]"},
		{"no name", header + "resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{secret: " + key32 + "}]}\n", "aescbc.keys[0].name: required"},
		{"no keys", header + "resources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: []}\n", "aescbc.keys: at least one key"},
		{"kms", header + "resources:\n- resources: [secrets]\n  providers:\n  - kms: {name: x}\n", "kms: the KMS provider is not supported"},
		{"star", header + "resources:\n- resources: ['*']\n  providers:\n  - identity: {}\n", `resources[0].resources[0]: "*" is not allowed`},
		{"duplicate", header + "resources:\n- resources: [secrets]\n  providers:\n  - identity: {}\n- resources: [Secrets]\n  providers:\n  - identity: {}\n", `resources[1].resources[0]: "secrets" is already listed at resources[0].resources[0]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadFileNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "enc.yaml")
	if err := os.WriteFile(p, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(p)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "resources:") {
		t.Fatalf("err = %v", err)
	}
}

func TestForMatchesInFileOrder(t *testing.T) {
	c := parse(t, header+`resources:
- resources: [secrets, deployments.apps]
  providers: [{aescbc: {keys: [{name: a, secret: `+key32+`}]}}]
- resources: ["*."]
  providers: [{aesgcm: {keys: [{name: core, secret: `+key32+`}]}}]
- resources: ["*.*"]
  providers: [{secretbox: {keys: [{name: all, secret: `+key32+`}]}}]
`)
	ctx := context.Background()
	for gr, prefix := range map[schema.GroupResource]string{
		{Resource: "secrets"}:                                   "k8s:enc:aescbc:v1:a:",
		{Group: "apps", Resource: "deployments"}:                "k8s:enc:aescbc:v1:a:",
		{Resource: "configmaps"}:                                "k8s:enc:aesgcm:v1:core:",
		{Group: "apps", Resource: "statefulsets"}:               "k8s:enc:secretbox:v1:all:",
		{Group: "rbac.authorization.k8s.io", Resource: "roles"}: "k8s:enc:secretbox:v1:all:",
	} {
		tr := c.For(gr)
		if tr == nil {
			t.Fatalf("%s: no transformer", gr)
		}
		out, err := tr.TransformToStorage(ctx, []byte("x"), "/k")
		if err != nil || !bytes.HasPrefix(out, []byte(prefix)) {
			t.Errorf("%s: %q, %v; want prefix %q", gr, out, err, prefix)
		}
	}
	if (*Config)(nil).For(schema.GroupResource{Resource: "secrets"}) != nil {
		t.Error("a nil config encrypts")
	}
	only := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n")
	if only.For(schema.GroupResource{Resource: "configmaps"}) != nil {
		t.Error("configmaps matched a secrets-only config")
	}
}

// Each provider reads back what it wrote, and the stored bytes hide the
// plaintext.
func TestRoundTripEveryProvider(t *testing.T) {
	ctx := context.Background()
	plain := []byte(`{"data":{"password":"cGFzc3dvcmQ="}}`)
	for _, p := range []string{"aescbc", "aesgcm", "secretbox"} {
		c := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{"+p+": {keys: [{name: k1, secret: "+key32+"}]}}]\n")
		tr := c.For(schema.GroupResource{Resource: "secrets"})
		sealed, err := tr.TransformToStorage(ctx, plain, "/registry/secrets/ns/a")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(sealed, []byte("password")) || !bytes.HasPrefix(sealed, []byte("k8s:enc:"+p+":v1:k1:")) {
			t.Fatalf("%s: stored %q", p, sealed)
		}
		again, _ := tr.TransformToStorage(ctx, plain, "/registry/secrets/ns/a")
		if bytes.Equal(again, sealed) {
			t.Errorf("%s: two encryptions of one value are equal: the IV/nonce is not random", p)
		}
		got, stale, err := tr.TransformFromStorage(ctx, sealed, "/registry/secrets/ns/a")
		if err != nil || stale || !bytes.Equal(got, plain) {
			t.Fatalf("%s: read %q stale=%v err=%v", p, got, stale, err)
		}
		sealed[len(sealed)-1] ^= 1
		if _, _, err := tr.TransformFromStorage(ctx, sealed, "/registry/secrets/ns/a"); err == nil && p != "aescbc" {
			t.Errorf("%s: a tampered value opened", p)
		}
	}
}

// aesgcm binds a value to its key: copied under another name it does not open.
func TestGCMBindsTheKey(t *testing.T) {
	ctx := context.Background()
	c := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{aesgcm: {keys: [{name: k1, secret: "+key32+"}]}}]\n")
	tr := c.For(schema.GroupResource{Resource: "secrets"})
	sealed, _ := tr.TransformToStorage(ctx, []byte("v"), "/registry/secrets/ns/a")
	if _, _, err := tr.TransformFromStorage(ctx, sealed, "/registry/secrets/ns/b"); err == nil {
		t.Fatal("a value moved to another key opened")
	}
}

// Rotation as kube documents it: add the new key second, then first; old
// values stay readable and are reported stale until rewritten; identity
// reads what was stored before encryption was turned on.
func TestRotation(t *testing.T) {
	ctx := context.Background()
	gr := schema.GroupResource{Resource: "secrets"}
	old := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: k1, secret: "+key32+"}]}}, {identity: {}}]\n").For(gr)
	rotated := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: k2, secret: "+key32b+"}, {name: k1, secret: "+key32+"}]}}, {identity: {}}]\n").For(gr)
	v1, _ := old.TransformToStorage(ctx, []byte("one"), "/k")
	got, stale, err := rotated.TransformFromStorage(ctx, v1, "/k")
	if err != nil || !stale || string(got) != "one" {
		t.Fatalf("old key under the rotated config: %q stale=%v err=%v", got, stale, err)
	}
	v2, _ := rotated.TransformToStorage(ctx, []byte("two"), "/k")
	if !bytes.HasPrefix(v2, []byte("k8s:enc:aescbc:v1:k2:")) {
		t.Fatalf("rotated config writes %q", v2)
	}
	if _, stale, _ := rotated.TransformFromStorage(ctx, v2, "/k"); stale {
		t.Error("a value under the current key is stale")
	}
	if got, stale, err := rotated.TransformFromStorage(ctx, []byte(`{"plain":true}`), "/k"); err != nil || !stale || string(got) != `{"plain":true}` {
		t.Errorf("plaintext through identity: %q stale=%v err=%v", got, stale, err)
	}
	// Without the old key, its values are an error, not garbage.
	k2only := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: k2, secret: "+key32b+"}]}}, {identity: {}}]\n").For(gr)
	if _, _, err := k2only.TransformFromStorage(ctx, v1, "/k"); err == nil || !strings.Contains(err.Error(), "no configured provider") {
		t.Errorf("value of a removed key: %v", err)
	}
	// Encryption turned off (identity first) still reads encrypted values.
	off := parse(t, header+"resources:\n- resources: [secrets]\n  providers: [{identity: {}}, {aescbc: {keys: [{name: k2, secret: "+key32b+"}]}}]\n").For(gr)
	if got, stale, err := off.TransformFromStorage(ctx, v2, "/k"); err != nil || !stale || string(got) != "two" {
		t.Errorf("identity-first config reading a k2 value: %q stale=%v err=%v", got, stale, err)
	}
	if out, _ := off.TransformToStorage(ctx, []byte("p"), "/k"); string(out) != "p" {
		t.Errorf("identity-first writes %q", out)
	}
}
