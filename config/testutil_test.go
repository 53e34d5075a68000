package config

import "os"

func writeRaw(p, body string) error { return os.WriteFile(p, []byte(body), 0o600) }
