package tokenfile

import (
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{"tok,alice,1,\"a,b\"\n", "# c\n\n,x,y\n", "a,\"b\n", "t,,u\n", "t,u\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		users, _, err := parse("f.csv", strings.NewReader(in))
		if err != nil {
			return
		}
		for tok, u := range users {
			if tok == "" || u.Name == "" {
				t.Fatalf("parsed token %q user %+v", tok, u)
			}
		}
	})
}
