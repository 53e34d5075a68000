package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"sigs.k8s.io/yaml"
)

// imageUsers are the users the other images in compose run as, taken from
// their Dockerfiles (an assumption: no image can be pulled here):
// docker-library's haproxy image runs as haproxy, uid and gid 99;
// prom/prometheus as busybox's nobody:nogroup, 65534:65534. kpipe's own
// image runs as deploy/compose/Dockerfile's USER.
var imageUsers = map[string]string{"haproxy": "99:99", "prom/prometheus": "65534:65534"}

type composeService struct {
	Image      string   `json:"image"`
	User       string   `json:"user"`
	Entrypoint []string `json:"entrypoint"`
	Command    []string `json:"command"`
	Volumes    []string `json:"volumes"`
	DependsOn  any      `json:"depends_on"`
}

type mount struct{ src, dst string }

func (s composeService) mounts() []mount {
	var ms []mount
	for _, v := range s.Volumes {
		f := strings.Split(v, ":")
		if len(f) >= 2 {
			ms = append(ms, mount{f[0], f[1]})
		}
	}
	return ms
}

// volumeAt is the named volume s mounts at dst, if any.
func (s composeService) volumeAt(dst string) string {
	for _, m := range s.mounts() {
		if m.dst == dst && !strings.HasPrefix(m.src, ".") && !strings.HasPrefix(m.src, "/") {
			return m.src
		}
	}
	return ""
}

// condition is how s waits for dep: "" when it does not.
func (s composeService) condition(dep string) string {
	switch d := s.DependsOn.(type) {
	case []any:
		if slices.Contains(d, any(dep)) {
			return "service_started"
		}
	case map[string]any:
		if c, ok := d[dep].(map[string]any); ok {
			cond, _ := c["condition"].(string)
			return cond
		}
	}
	return ""
}

// pkiCopy is a step that runs `install -o UID -g GID -m MODE -t DIR FILE...`.
type pkiCopy struct {
	owner, group string
	mode         os.FileMode
	dir          string
	sources      []string
}

func parseInstall(argv []string) (pkiCopy, error) {
	var c pkiCopy
	if len(argv) == 0 || argv[0] != "install" {
		return c, fmt.Errorf("entrypoint %q is not install", argv)
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "-") {
			c.sources = append(c.sources, a)
			continue
		}
		if i+1 == len(argv) {
			return c, fmt.Errorf("install %s needs a value", a)
		}
		i++
		switch a {
		case "-o":
			c.owner = argv[i]
		case "-g":
			c.group = argv[i]
		case "-m":
			m, err := strconv.ParseUint(argv[i], 8, 32)
			if err != nil {
				return c, fmt.Errorf("install -m %s: %v", argv[i], err)
			}
			c.mode = os.FileMode(m)
		case "-t":
			c.dir = argv[i]
		default:
			return c, fmt.Errorf("install %s: not an option this test knows", a)
		}
	}
	if c.owner == "" || c.group == "" || c.mode == 0 || c.dir == "" || len(c.sources) == 0 {
		return c, fmt.Errorf("install %q: want -o, -g, -m, -t and files", argv[1:])
	}
	return c, nil
}

// readableOnlyBy reports whether a file c installs can be read by uid:gid
// and by no one else: every permission class that grants anything is
// theirs, and others get nothing.
func (c pkiCopy) readableOnlyBy(uid, gid string) bool {
	ownerOK := c.mode&0o700 == 0 || c.owner == uid
	groupOK := c.mode&0o070 == 0 || c.group == gid
	readable := (c.owner == uid && c.mode&0o400 != 0) || (c.group == gid && c.mode&0o040 != 0)
	return ownerOK && groupOK && c.mode&0o007 == 0 && readable
}

// The PKI's keys are 0600 and its directory 0700, owned by the pki step's
// user. A service running as another user gets the files it reads, and
// only those, copied into a volume of its own, readable by it alone.
func TestDeployComposePKIFilesReadableOnlyByTheirUsers(t *testing.T) {
	var compose struct {
		Services map[string]composeService `json:"services"`
	}
	if err := yaml.Unmarshal(readDeploy(t, "compose/compose.yaml"), &compose); err != nil {
		t.Fatal(err)
	}
	kpipeUser := ""
	for _, line := range strings.Split(string(readDeploy(t, "compose/Dockerfile")), "\n") {
		if u, ok := strings.CutPrefix(line, "USER "); ok {
			kpipeUser = strings.TrimSpace(u)
		}
	}
	userOf := func(name string) (uid, gid string) {
		s := compose.Services[name]
		image, _, _ := strings.Cut(s.Image, ":")
		u := s.User
		switch {
		case u != "":
		case s.Image == "kpipe:dev":
			u = kpipeUser
		default:
			u = imageUsers[image]
		}
		if u == "" {
			t.Fatalf("service %s: no user, and image %s is not in imageUsers", name, s.Image)
		}
		uid, gid, _ = strings.Cut(u, ":")
		return uid, gid
	}

	pki, ok := compose.Services["pki"]
	i := slices.Index(pki.Command, "--dir")
	if !ok || i < 0 || i+1 == len(pki.Command) || pki.volumeAt(pki.Command[i+1]) == "" {
		t.Fatalf("no pki service writing `pki init --dir` into a named volume: %+v", pki)
	}
	pkiVolume := pki.volumeAt(pki.Command[i+1])
	ownerUID, _ := userOf("pki")

	// The copy steps, by the volume each fills.
	copies := map[string]pkiCopy{}
	copier := map[string]string{}
	for name, s := range compose.Services {
		if len(s.Entrypoint) == 0 || s.Entrypoint[0] != "install" {
			continue
		}
		c, err := parseInstall(s.Entrypoint)
		if err != nil {
			t.Fatalf("service %s: %v", name, err)
		}
		out := s.volumeAt(c.dir)
		if out == "" || out == pkiVolume {
			t.Fatalf("service %s installs into %s, which is not a volume of its own", name, c.dir)
		}
		for _, src := range c.sources {
			if s.volumeAt(filepath.Dir(src)) != pkiVolume {
				t.Errorf("service %s copies %s, which is not in the %s volume", name, src, pkiVolume)
			}
		}
		if s.condition("pki") != "service_completed_successfully" {
			t.Errorf("service %s does not wait for pki to complete", name)
		}
		copies[out], copier[out] = c, name
	}

	// What each service reads: paths under its named volumes' mount points
	// in its command line and in the files it bind-mounts.
	needed := map[string][]string{} // volume -> base names read from it
	for name, s := range compose.Services {
		if name == "pki" {
			continue
		}
		if len(s.Entrypoint) > 0 && s.Entrypoint[0] == "install" {
			continue
		}
		var texts []string
		texts = append(texts, strings.Join(s.Command, " "))
		for _, m := range s.mounts() {
			if !strings.HasPrefix(m.src, ".") {
				continue
			}
			filepath.WalkDir(filepath.Join(deployDir, "compose", m.src), func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					b, _ := os.ReadFile(p)
					texts = append(texts, string(b))
				}
				return nil
			})
		}
		for _, m := range s.mounts() {
			vol := s.volumeAt(m.dst)
			c, copied := copies[vol]
			if vol == "" || vol != pkiVolume && !copied {
				continue // not PKI
			}
			uid, gid := userOf(name)
			ref := regexp.MustCompile(`(?:^|[^A-Za-z0-9/._-])` + regexp.QuoteMeta(m.dst) + `/([A-Za-z0-9._-]+)`)
			var reads []string
			for _, text := range texts {
				for _, r := range ref.FindAllStringSubmatch(text, -1) {
					reads = append(reads, r[1])
				}
			}
			switch {
			case vol == pkiVolume && uid != ownerUID:
				t.Errorf("service %s mounts the %s volume as uid %s, but its files are uid %s's, keys 0600 in a 0700 directory", name, vol, uid, ownerUID)
			case vol == pkiVolume:
			case len(reads) == 0:
				t.Errorf("service %s mounts %s but reads none of it", name, vol)
			case !c.readableOnlyBy(uid, gid):
				t.Errorf("service %s (%s:%s) reads files %s installs as %s:%s mode %04o: not readable by it alone", name, uid, gid, copier[vol], c.owner, c.group, c.mode)
			case s.condition(copier[vol]) != "service_completed_successfully":
				t.Errorf("service %s does not wait for %s to complete", name, copier[vol])
			}
			if copied {
				needed[vol] = append(needed[vol], reads...)
			}
		}
	}
	for vol, c := range copies {
		var installed []string
		for _, src := range c.sources {
			installed = append(installed, filepath.Base(src))
		}
		slices.Sort(installed)
		want := slices.Compact(slices.Sorted(slices.Values(needed[vol])))
		if !slices.Equal(installed, want) {
			t.Errorf("%s copies %v into %s; its readers read %v", copier[vol], installed, vol, want)
		}
	}
	if len(copies) == 0 {
		return
	}

	// As root, run each copy for real on what pki init writes: install does
	// what the arguments above were read to mean.
	if os.Geteuid() != 0 {
		t.Log("not root: the copies are not run")
		return
	}
	if _, err := exec.LookPath("install"); err != nil {
		t.Log("no install on PATH: the copies are not run")
		return
	}
	dir := filepath.Join(t.TempDir(), "pki")
	args := slices.Clone(pki.Command)
	args[i+1] = dir
	if out, err := run(t, args...); err != nil {
		t.Fatalf("pki init: %v\n%s", err, out)
	}
	for vol, c := range copies {
		out := t.TempDir()
		argv := []string{"-o", c.owner, "-g", c.group, "-m", fmt.Sprintf("%04o", c.mode), "-t", out}
		for _, src := range c.sources {
			argv = append(argv, filepath.Join(dir, filepath.Base(src)))
		}
		if b, err := exec.Command("install", argv...).CombinedOutput(); err != nil {
			t.Fatalf("%s: install %v: %v\n%s", copier[vol], argv, err, b)
		}
		for _, src := range c.sources {
			st, err := os.Stat(filepath.Join(out, filepath.Base(src)))
			if err != nil {
				t.Fatal(err)
			}
			sys := st.Sys().(*syscall.Stat_t)
			if got := fmt.Sprintf("%d:%d %04o", sys.Uid, sys.Gid, st.Mode().Perm()); got != fmt.Sprintf("%s:%s %04o", c.owner, c.group, c.mode) {
				t.Errorf("%s installed %s as %s", copier[vol], src, got)
			}
		}
	}
}
